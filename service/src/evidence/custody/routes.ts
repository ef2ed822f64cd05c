// GET /api/v1/fractals/{id}/custody (an addition to the spec, issue 17): the fractal's custody
// log, oldest entry first, paged with ?limit=&offset= (at most 1,000 a page), and the verdict of
// checking the whole chain. Viewers of the fractal read it (API keys with `query`). There is no
// route that changes or removes an entry.
import { Type } from 'typebox';
import type { App } from '../../http/app.ts';
import { ok } from '../../http/envelope.ts';
import { pageOf } from '../../http/paging.ts';
import { IdParams } from '../../http/schemas.ts';
import type { CustodyStore } from './custody-store.ts';

const Page = Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) });

export async function custodyRoutes(app: App, { custody }: { custody: CustodyStore }) {
  app.get(
    '/api/v1/fractals/:id/custody',
    { config: { access: { scope: 'fractal', param: 'id', role: 'viewer' } }, schema: { params: IdParams, querystring: Page } },
    async (req) => {
      const page = pageOf(req.query);
      const id = req.params.id;
      return ok({ fractal_id: id, total: custody.count(id), entries: custody.list(id, page), verify: custody.verify(id) });
    },
  );
}

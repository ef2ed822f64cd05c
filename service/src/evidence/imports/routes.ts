// Imports of evidence files (an addition to the spec, issue 17; docs/evidence.md):
//   POST /api/v1/fractals/{id}/imports?name=<file name>&normalizer_id=<id>&timestamp_fields=a,b
//        the file as the raw body (any content type; the content is sniffed), or
//        multipart/form-data with one or more `file` parts. The body is stored (hashed, counted)
//        and the answer comes as soon as it is: 201 with the import (raw body) or the imports
//        (multipart, an array), `status` running; the events are read in the background.
//   GET  /api/v1/fractals/{id}/imports            newest first, ?limit=&offset=, X-Total-Count
//   GET  /api/v1/fractals/{id}/imports/{import_id}
// Analysts and admins of the fractal import, signed in (the custody log names a person); viewers
// read. The body is read by this route itself, never buffered: its own scope takes every content
// type as the request stream, with no size limit (a 2 GB file streams to disk).
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { App } from '../../http/app.ts';
import { ok } from '../../http/envelope.ts';
import { badRequest, notFound } from '../../http/errors.ts';
import { pageOf, withTotal } from '../../http/paging.ts';
import { IdParams, Uuid } from '../../http/schemas.ts';
import { cleanName, type Imports } from './imports-logic.ts';
import { importView } from './imports-store.ts';
import { boundaryOf } from './multipart.ts';

const StartQuery = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 1000 })),
  normalizer_id: Type.Optional(Uuid),
  timestamp_fields: Type.Optional(Type.String({ maxLength: 2000 })),
});
const Page = Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) });
const OneParams = Type.Object({ id: Uuid, import_id: Uuid });

const analyst = { access: { scope: 'fractal' as const, param: 'id', role: 'analyst' as const, usersOnly: true } };
const viewer = { access: { scope: 'fractal' as const, param: 'id', role: 'viewer' as const } };

export async function importRoutes(app: App, { imports }: { imports: Imports }) {
  // The body reaches the handler as the request stream, whatever its type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  app.post('/api/v1/fractals/:id/imports', { config: analyst, schema: { params: IdParams, querystring: StartQuery } }, async (req, reply) => {
    const p = req.principal!;
    const q = req.query;
    const options = {
      fractalId: req.params.id,
      normalizerId: q.normalizer_id ?? null,
      timestampFields: (q.timestamp_fields ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      createdBy: p.kind === 'user' ? p.user.username : `api key ${p.key.name}`,
    };
    imports.check(options);
    const body = (req.body ?? req.raw) as Readable;
    const type = String(req.headers['content-type'] ?? '');
    if (/^multipart\/form-data\b/i.test(type)) {
      const boundary = boundaryOf(type);
      if (!boundary) throw badRequest('The Content-Type multipart/form-data names no boundary.');
      return reply.code(201).send(ok(await imports.fromMultipart(options, boundary, body)));
    }
    const name = cleanName(q.name ?? '');
    if (!name) throw badRequest('The query parameter "name" is required with a raw body: the file name the custody log records.');
    if (req.headers['content-length'] === '0') throw badRequest('The request body is empty; send the file as the body.');
    return reply.code(201).send(ok(await imports.fromBody(options, name, body)));
  });

  app.get('/api/v1/fractals/:id/imports', { config: viewer, schema: { params: IdParams, querystring: Page } }, async (req, reply) => {
    const page = pageOf(req.query);
    return withTotal(reply, imports.store.count(req.params.id), imports.store.list(req.params.id, page).map(importView));
  });

  app.get('/api/v1/fractals/:id/imports/:import_id', { config: viewer, schema: { params: OneParams } }, async (req) => {
    const row = imports.store.get(req.params.import_id);
    if (!row || row.fractal_id !== req.params.id) throw notFound(`Import ${req.params.import_id} not found.`);
    return ok(importView(row));
  });
}

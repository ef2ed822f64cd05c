// Prisms: views across several fractals. Adding a fractal to a prism needs the admin role on
// that fractal; reading through a prism shows each reader only the members they may read
// themselves, decided at every read (auth/read-scope.ts readsThroughPrism), so a prism is a view,
// never a grant. A fractal's admins see and remove its memberships from the fractal's side
// (fractal-routes.ts).
import { Type } from 'typebox';
import type { Principal } from '../auth/principal.ts';
import { readableMembers, readsThroughPrism } from '../auth/read-scope.ts';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { conflict, forbidden, notFound } from '../http/errors.ts';
import { Description, IdParams, Name, Uuid } from '../http/schemas.ts';
import type { App } from '../http/app.ts';
import type { PrismRow } from './prisms-store.ts';

const role = (r: 'viewer' | 'admin') => ({ access: { scope: 'prism' as const, param: 'id', role: r } });

export async function prismRoutes(app: App, ctx: Context) {
  /** The prism as `who` sees it: only the members it shows them. */
  const view = (p: PrismRow, who: Principal) => {
    const ids = readableMembers(ctx, who, p.id);
    return {
      id: p.id,
      name: p.name,
      description: p.description,
      fractal_ids: ids,
      fractals: ids.map((id) => ({ id, name: ctx.fractals.get(id)?.name ?? '' })),
      created_at: p.created_at,
      updated_at: p.updated_at,
    };
  };
  const mayAdd = (who: Principal, fractalId: string) => {
    const f = ctx.fractals.get(fractalId);
    const r = f ? ctx.roles.roleOf(who, 'fractal', fractalId) : null;
    if (!f || r === null) throw notFound(`Fractal ${fractalId} not found.`);
    if (r !== 'admin') throw forbidden(`Adding fractal "${f.name}" to a prism needs the admin role on it.`);
  };
  const nameClash = (name: string, except?: string) => {
    const clash = ctx.prisms.list().find((p) => p.name.toLowerCase() === name.toLowerCase() && p.id !== except);
    if (clash) throw conflict(`A prism named "${name}" already exists.`);
  };

  app.get('/api/v1/prisms', { config: { access: { authenticated: true } } }, async (req) => {
    const visible = ctx.roles.visibleIds(req.principal!, 'prism');
    return ok(ctx.prisms.list().filter((p) => visible === 'all' || visible.has(p.id)).map((p) => view(p, req.principal!)));
  });

  app.post(
    '/api/v1/prisms',
    {
      config: { access: { authenticated: true, usersOnly: true } },
      schema: { body: Type.Object({ name: Name, description: Type.Optional(Description), fractal_ids: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })) }) },
    },
    async (req, reply) => {
      const who = req.principal!;
      const name = req.body.name.trim();
      const ids = [...new Set(req.body.fractal_ids ?? [])];
      for (const id of ids) mayAdd(who, id);
      nameClash(name);
      const prism = ctx.db.transaction(() => {
        const p = ctx.prisms.create({ name, description: req.body.description ?? '', fractalIds: ids });
        // The creator administers what they made, unless they already do everywhere.
        if (who.kind === 'user' && who.user.is_admin !== 1) ctx.permissions.grant('prism', p.id, { userId: who.user.id }, 'admin');
        return p;
      })();
      return reply.code(201).send(ok(view(prism, who)));
    },
  );

  app.get('/api/v1/prisms/:id', { config: role('viewer'), schema: { params: IdParams } }, async (req) => ok(view(ctx.prisms.get(req.params.id)!, req.principal!)));

  app.put(
    '/api/v1/prisms/:id',
    {
      config: role('admin'),
      schema: {
        params: IdParams,
        body: Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description), fractal_ids: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })) }),
      },
    },
    async (req) => {
      const b = req.body;
      if (b.name) nameClash(b.name.trim(), req.params.id);
      const who = req.principal!;
      const current = ctx.prisms.memberIds(req.params.id);
      let ids = b.fractal_ids ? [...new Set(b.fractal_ids)] : undefined;
      for (const id of ids ?? []) if (!current.includes(id)) mayAdd(who, id);
      // The list replaces the members the caller sees; those the prism does not show them stay.
      if (ids) ids = [...new Set([...ids, ...current.filter((id) => !readsThroughPrism(ctx, who, id))])];
      return ok(view(ctx.prisms.update(req.params.id, { name: b.name?.trim(), description: b.description, fractalIds: ids }), who));
    },
  );

  app.delete('/api/v1/prisms/:id', { config: role('admin'), schema: { params: IdParams } }, async (req) => {
    ctx.prisms.delete(req.params.id);
    return ok({ deleted: true });
  });

  app.post('/api/v1/prisms/:id/select', { config: role('viewer'), schema: { params: IdParams } }, async (req) => {
    const p = req.principal!;
    if (p.kind === 'user') ctx.users.select(p.user.id, 'prism', req.params.id);
    const prism = ctx.prisms.get(req.params.id)!;
    return ok({ selected: { type: 'prism', id: prism.id, name: prism.name } });
  });

  app.post(
    '/api/v1/prisms/:id/members',
    { config: role('admin'), schema: { params: IdParams, body: Type.Object({ fractal_id: Uuid }) } },
    async (req, reply) => {
      mayAdd(req.principal!, req.body.fractal_id);
      if (!ctx.prisms.addMember(req.params.id, req.body.fractal_id)) throw conflict('That fractal is already a member of this prism.');
      return reply.code(201).send(ok(view(ctx.prisms.get(req.params.id)!, req.principal!)));
    },
  );

  app.delete(
    '/api/v1/prisms/:id/members/:fractalID',
    { config: role('admin'), schema: { params: Type.Object({ id: Uuid, fractalID: Uuid }) } },
    async (req) => {
      if (!ctx.prisms.removeMember(req.params.id, req.params.fractalID)) throw notFound(`Fractal ${req.params.fractalID} is not a member of this prism.`);
      return ok(view(ctx.prisms.get(req.params.id)!, req.principal!));
    },
  );
}

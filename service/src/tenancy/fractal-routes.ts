// Fractals: CRUD, selection, stats, retention and quota.
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { conflict, notFound } from '../http/errors.ts';
import { Description, IdParams, Name, Nullable, StringEnum, Uuid } from '../http/schemas.ts';
import type { App } from '../http/app.ts';
import { createFractal, deleteFractal, refreshAllStats } from './fractals-logic.ts';
import { publicFractal } from './fractals-store.ts';

const role = (r: 'viewer' | 'analyst' | 'admin') => ({ access: { scope: 'fractal' as const, param: 'id', role: r } });

export async function fractalRoutes(app: App, ctx: Context) {
  const fractal = (id: string) => ctx.fractals.get(id) ?? (() => { throw notFound(`Fractal ${id} not found.`); })();

  app.get('/api/v1/fractals', { config: { access: { authenticated: true } } }, async (req) => {
    const visible = ctx.roles.visibleIds(req.principal!, 'fractal');
    return ok(ctx.fractals.list().filter((f) => visible === 'all' || visible.has(f.id)).map(publicFractal));
  });

  app.post(
    '/api/v1/fractals',
    { config: { access: { globalAdmin: true } }, schema: { body: Type.Object({ name: Name, description: Type.Optional(Description) }) } },
    async (req, reply) => {
      const name = req.body.name.trim();
      if (ctx.fractals.byName(name)) throw conflict(`A fractal named "${name}" already exists.`);
      const { fractal: f, token } = createFractal(ctx, { name, description: req.body.description ?? '' });
      return reply.code(201).send(ok({ ...publicFractal(f), default_ingest_token: token }));
    },
  );

  app.get('/api/v1/fractals/:id', { config: role('viewer'), schema: { params: IdParams } }, async (req) => ok(publicFractal(fractal(req.params.id))));

  app.put(
    '/api/v1/fractals/:id',
    { config: role('admin'), schema: { params: IdParams, body: Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) }) } },
    async (req) => {
      const name = req.body.name?.trim();
      const clash = name ? ctx.fractals.byName(name) : undefined;
      if (clash && clash.id !== req.params.id) throw conflict(`A fractal named "${name}" already exists.`);
      return ok(publicFractal(ctx.fractals.update(req.params.id, { name, description: req.body.description })));
    },
  );

  app.delete('/api/v1/fractals/:id', { config: role('admin'), schema: { params: IdParams } }, async (req) => {
    const f = fractal(req.params.id);
    if (f.is_default === 1) throw conflict('The default fractal cannot be deleted; it receives logs for new sessions.');
    await deleteFractal(ctx, f.id);
    return ok({ deleted: true });
  });

  app.post('/api/v1/fractals/:id/select', { config: role('viewer'), schema: { params: IdParams } }, async (req) => {
    const p = req.principal!;
    if (p.kind === 'user') ctx.users.select(p.user.id, 'fractal', req.params.id);
    const f = fractal(req.params.id);
    return ok({ selected: { type: 'fractal', id: f.id, name: f.name } });
  });

  app.get('/api/v1/fractals/:id/stats', { config: role('viewer'), schema: { params: IdParams } }, async (req) => {
    const stats = await ctx.logs.stats(req.params.id);
    ctx.fractals.saveStats(req.params.id, stats);
    return ok({ fractal_id: req.params.id, ...stats });
  });

  app.post('/api/v1/fractals/stats/refresh', { config: { access: { globalAdmin: true } } }, async () => {
    const all = await refreshAllStats(ctx);
    return ok(all);
  });

  // The prisms that hold this fractal, for its admins: a member added by a prism's admin who has
  // since lost the fractal is seen and removed here.
  app.get('/api/v1/fractals/:id/prisms', { config: role('admin'), schema: { params: IdParams } }, async (req) =>
    ok(ctx.prisms.containing(req.params.id).map((id) => ({ id, name: ctx.prisms.get(id)?.name ?? '' }))),
  );

  app.delete(
    '/api/v1/fractals/:id/prisms/:prismId',
    { config: role('admin'), schema: { params: Type.Object({ id: Uuid, prismId: Uuid }) } },
    async (req) => {
      if (!ctx.prisms.removeMember(req.params.prismId, req.params.id)) throw notFound(`This fractal is not a member of prism ${req.params.prismId}.`);
      return ok({ removed: true });
    },
  );

  app.put(
    '/api/v1/fractals/:id/retention',
    { config: role('admin'), schema: { params: IdParams, body: Type.Object({ retention_days: Nullable(Type.Integer({ minimum: 1, maximum: 36500 })) }) } },
    async (req) => {
      const f = ctx.fractals.update(req.params.id, { retention_days: req.body.retention_days });
      await ctx.retention.enforce(f); // takes effect now, not at the next tick
      return ok(publicFractal(f));
    },
  );

  app.put(
    '/api/v1/fractals/:id/archive-retention',
    {
      config: role('admin'),
      schema: { params: IdParams, body: Type.Object({ archive_retention_days: Nullable(Type.Integer({ minimum: 1, maximum: 36500 })) }) },
    },
    async (req) => ok(publicFractal(ctx.fractals.update(req.params.id, { archive_retention_days: req.body.archive_retention_days }))),
  );

  app.put(
    '/api/v1/fractals/:id/disk-quota',
    {
      config: role('admin'),
      schema: {
        params: IdParams,
        body: Type.Object({ quota_bytes: Nullable(Type.Integer({ minimum: 1 })), action: Type.Optional(StringEnum(['reject', 'rollover'] as const)) }),
      },
    },
    async (req) => {
      const f = ctx.fractals.update(req.params.id, { quota_bytes: req.body.quota_bytes, quota_action: req.body.action });
      await ctx.retention.enforce(f);
      return ok(publicFractal(ctx.fractals.get(f.id)!));
    },
  );
}

// The archive's API (conventions "Archive"): settings (global admins), a fractal's archive status,
// restore jobs (fractal admins); reconcile and the job list are additions (a restore over everything
// archived; a fractal's jobs, newest first).
import { Type } from 'typebox';
import { enforceScopeRule } from '../auth/access.ts';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { IdParams, Nullable, StringEnum } from '../http/schemas.ts';
import type { App } from '../http/app.ts';
import { publicSettings } from './archive-logic.ts';
import { publicJob } from './restore.ts';

const admin = { access: { globalAdmin: true as const } };
const role = (r: 'viewer' | 'admin') => ({ access: { scope: 'fractal' as const, param: 'id', role: r } });
const Text = (max: number) => Type.String({ maxLength: max });

export async function archiveRoutes(app: App, ctx: Context) {
  const archive = ctx.archive;

  app.get('/api/v1/archive', { config: admin }, async () => ok(publicSettings(archive.settings(), ctx.config.dataDir)));

  app.put(
    '/api/v1/archive',
    {
      config: admin,
      schema: {
        body: Type.Object(
          {
            enabled: Type.Optional(Type.Boolean()),
            backend: Type.Optional(StringEnum(['local', 's3'])),
            path: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1000 }))),
            s3_endpoint: Type.Optional(Nullable(Text(500))),
            s3_bucket: Type.Optional(Nullable(Text(63))),
            s3_prefix: Type.Optional(Text(500)),
            s3_region: Type.Optional(Nullable(Text(100))),
            s3_access_key: Type.Optional(Nullable(Text(500))),
            s3_secret_key: Type.Optional(Nullable(Text(500))),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => ok(publicSettings(await archive.update(req.body), ctx.config.dataDir)),
  );

  app.get('/api/v1/fractals/:id/archive', { config: role('viewer'), schema: { params: IdParams } }, async (req) => ok(archive.status(req.params.id)));

  app.post(
    '/api/v1/fractals/:id/archive/restore',
    { config: role('admin'), schema: { params: IdParams, body: Type.Object({ start: Type.String({ maxLength: 64 }), end: Type.String({ maxLength: 64 }) }) } },
    async (req, reply) => {
      const start = new Date(req.body.start);
      const end = new Date(req.body.end);
      if (Number.isNaN(start.getTime())) throw badRequest(`start "${req.body.start}" is not an RFC 3339 time.`);
      if (Number.isNaN(end.getTime())) throw badRequest(`end "${req.body.end}" is not an RFC 3339 time.`);
      if (end <= start) throw badRequest('end must be after start.');
      const job = archive.restores.start(req.params.id, start, end, req.principal?.kind === 'user' ? req.principal.user.id : null);
      return reply.code(202).send(ok(publicJob(job)));
    },
  );

  app.post('/api/v1/fractals/:id/archive/reconcile', { config: role('admin'), schema: { params: IdParams } }, async (req, reply) => {
    const job = archive.reconcile(req.params.id, req.principal?.kind === 'user' ? req.principal.user.id : null);
    return reply.code(202).send(ok(publicJob(job)));
  });

  // An addition: the fractal's last 50 restore and reconcile jobs, newest first (the page's history).
  app.get('/api/v1/fractals/:id/archive/jobs', { config: role('admin'), schema: { params: IdParams } }, async (req) =>
    ok(archive.store.jobsOf(req.params.id, 50).map(publicJob)),
  );

  // A job belongs to a fractal: only its admins see or cancel it (others: not found).
  const jobFor = (req: { params: { id: string }; principal: unknown }) => {
    const job = archive.store.job(req.params.id);
    if (!job) throw notFound(`Restore job ${req.params.id} not found.`);
    const p = (req as { principal: Parameters<typeof enforceScopeRule>[0] }).principal;
    enforceScopeRule(p, { scope: 'fractal', role: 'admin' }, ctx.roles.resolve(p, 'fractal', job.fractal_id), { notFound: `Restore job ${req.params.id} not found.` });
    return job;
  };

  app.get('/api/v1/archive/jobs/:id', { config: { access: { authenticated: true } }, schema: { params: IdParams } }, async (req) => ok(publicJob(jobFor(req))));

  app.delete('/api/v1/archive/jobs/:id', { config: { access: { authenticated: true } }, schema: { params: IdParams } }, async (req) => {
    jobFor(req);
    return ok(publicJob(archive.restores.cancel(req.params.id)!));
  });
}

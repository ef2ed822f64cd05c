// Case archives (an addition to the spec, which names no such endpoint; docs/evidence.md):
//   POST /api/v1/fractals/{id}/case-export             analysts and admins of the fractal (signed in)
//   GET  /api/v1/fractals/{id}/case-exports[/{job_id}] the fractal's export jobs
//   GET  /api/v1/fractals/{id}/case-exports/{job_id}/archive   the archive, as a download
//   DELETE /api/v1/fractals/{id}/case-exports/{job_id}  the job and its archive file
//   POST /api/v1/case-import?name=…&file_name=…       global admins; the archive as the raw body, or the part
//                                                     `file` of multipart/form-data
//   GET  /api/v1/case-imports[/{job_id}]              global admins
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { actorName } from '../shared/documents.ts';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { badRequest, conflict, HttpError, notFound } from '../http/errors.ts';
import { Name, Uuid } from '../http/schemas.ts';
import { boundaryOf } from '../evidence/imports/multipart.ts';
import { CaseArchiveRefused, saveMultipartUpload, saveUpload, verifyArchive } from './archive-reader.ts';
import { exportFile, runCaseExport } from './case-export.ts';
import { freeFractalName, runCaseImport } from './case-import.ts';
import type { CaseJob, CaseJobs } from './case-jobs.ts';

export interface CaseDeps {
  ctx: Context;
  jobs: CaseJobs;
}

const exportRule = { access: { scope: 'fractal' as const, param: 'id', role: 'analyst' as const, usersOnly: true } };
const JobParams = Type.Object({ id: Uuid, job_id: Uuid });

export async function caseRoutes(app: App, { ctx, jobs }: CaseDeps) {
  const exportJob = (fractalId: string, jobId: string): CaseJob => {
    const job = jobs.get(jobId);
    if (!job || job.kind !== 'export' || job.fractal_id !== fractalId) throw notFound(`Case export ${jobId} not found (the newest 200 jobs are kept).`);
    return job;
  };

  app.post('/api/v1/fractals/:id/case-export', { config: exportRule, schema: { params: Type.Object({ id: Uuid }) } }, async (req, reply) => {
    const fractal = ctx.fractals.get(req.params.id)!;
    const busy = jobs.list((j) => j.kind === 'export' && j.fractal_id === fractal.id && j.status === 'running')[0];
    if (busy) throw conflict(`An export of fractal "${fractal.name}" is already running (job ${busy.id}); wait for it to finish.`);
    const actor = actorName(req.principal!);
    const job = jobs.start('export', { fractal_id: fractal.id, fractal_name: fractal.name, created_by: actor, phase: 'starting' });
    jobs.run(runCaseExport(ctx, jobs, job, fractal, actor));
    return reply.code(202).send(ok(job));
  });

  app.get('/api/v1/fractals/:id/case-exports', { config: exportRule, schema: { params: Type.Object({ id: Uuid }) } }, async (req) =>
    ok(jobs.list((j) => j.kind === 'export' && j.fractal_id === req.params.id)),
  );

  app.get('/api/v1/fractals/:id/case-exports/:job_id', { config: exportRule, schema: { params: JobParams } }, async (req) =>
    ok(exportJob(req.params.id, req.params.job_id)),
  );

  app.get('/api/v1/fractals/:id/case-exports/:job_id/archive', { config: exportRule, schema: { params: JobParams } }, async (req, reply) => {
    const job = exportJob(req.params.id, req.params.job_id);
    if (job.status !== 'done' || !job.archive) throw new HttpError(409, job.status === 'failed' ? 'This export failed; its archive was not kept. Start a new export.' : 'This export is still running; download it when its status is done.');
    return reply
      .header('content-type', 'application/gzip')
      .header('content-length', String(job.archive.size))
      .header('content-disposition', `attachment; filename="${job.archive.file_name}"`)
      .header('x-archive-sha256', job.archive.sha256)
      .send(createReadStream(exportFile(ctx, job.id)));
  });

  app.delete('/api/v1/fractals/:id/case-exports/:job_id', { config: exportRule, schema: { params: JobParams } }, async (req) => {
    const job = exportJob(req.params.id, req.params.job_id);
    if (job.status === 'running') throw conflict('This export is still running; delete it once it has finished.');
    jobs.delete(job.id);
    return ok({ deleted: true });
  });

  const admins = { access: { globalAdmin: true as const } };
  app.get('/api/v1/case-imports', { config: admins }, async () => ok(jobs.list((j) => j.kind === 'import')));
  app.get('/api/v1/case-imports/:job_id', { config: admins, schema: { params: Type.Object({ job_id: Uuid }) } }, async (req) => {
    const job = jobs.get(req.params.job_id);
    if (!job || job.kind !== 'import') throw notFound(`Case import ${req.params.job_id} not found (the newest 200 jobs are kept).`);
    return ok(job);
  });

  // The upload is read by the handler as a stream (no size limit, never in memory): this scope
  // takes any content type and hands the body on unread.
  await app.register(async (raw: App) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    raw.post(
      '/api/v1/case-import',
      { config: admins, schema: { querystring: Type.Object({ name: Type.Optional(Name), file_name: Type.Optional(Type.String({ maxLength: 255 })) }) } },
      async (req, reply) => {
        const wanted = req.query.name?.trim();
        if (wanted && ctx.fractals.byName(wanted)) throw conflict(`A fractal named "${wanted}" already exists; choose another name.`);
        const actor = actorName(req.principal!);
        const job = jobs.start('import', { fractal_id: null, fractal_name: wanted ?? '', created_by: actor, phase: 'receiving the archive' });
        const incoming = path.join(ctx.config.dataDir, 'cases', 'incoming');
        await mkdir(incoming, { recursive: true });
        const file = path.join(incoming, `${job.id}.upload`);
        try {
          const type = String(req.headers['content-type'] ?? '');
          const body = req.body as AsyncIterable<Buffer>;
          const onBytes = (n: number) => (job.bytes_done = n);
          let fileName = req.query.file_name ?? '';
          let received: { size: number; sha256: string };
          if (/^multipart\/form-data\b/i.test(type)) {
            const boundary = boundaryOf(type);
            if (!boundary) throw new CaseArchiveRefused('The Content-Type multipart/form-data names no boundary.');
            const part = await saveMultipartUpload(body, boundary, file, onBytes);
            fileName ||= part.fileName;
            received = part;
          } else received = await saveUpload(body, file, onBytes);
          jobs.enter(job, 'verifying every file against the manifest');
          const verified = await verifyArchive(file, (n) => {
            job.bytes_done = n;
            job.progress = 0.1 * Math.min(1, n / received.size);
          });
          const name = wanted ?? freeFractalName(ctx, verified.manifest.fractal?.name || 'imported case');
          job.fractal_name = name;
          job.archive = { file_name: fileName.slice(0, 255), size: received.size, sha256: received.sha256, manifest_sha256: verified.manifestSha256 };
          job.progress = 0.1;
          jobs.run(runCaseImport(ctx, jobs, job, file, verified, name, actor).finally(() => rm(file, { force: true })));
          return reply.code(202).send(ok(job));
        } catch (err) {
          await rm(file, { force: true });
          const refused = err instanceof CaseArchiveRefused;
          for (const p of (err as { problems?: string[] }).problems ?? []) job.errors.push(p);
          jobs.finish(job, refused ? err.message : `The upload could not be read: ${(err as Error).message}`);
          if (refused) throw badRequest(err.message);
          throw err;
        }
      },
    );
  });
}

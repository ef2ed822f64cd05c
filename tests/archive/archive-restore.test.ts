// Restore and reconcile from a local archive: a window of event time comes back into the hot store
// exactly (ids, text, nanosecond times), logs already there are skipped, a damaged file is named
// and the rest restored; a job is read and refused to other tenants like its fractal; a fractal's
// jobs are listed newest first.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createFractal, expectError, expectOk } from '../support/api.ts';
import { ADMIN_PASSWORD, Client, defaultIngest, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { storedLogs } from '../support/logs.ts';
import { sendNdjson } from '../support/ingest.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
before(async () => {
  // Rolls are cut by the test (flush), not by time.
  app = await startTestAppliance({ SVC_ARCHIVE_ROLL_S: '3600' });
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  expectOk(await admin.put('/api/v1/archive', { enabled: true }));
});
after(() => app.dispose());

const send = (token: string, records: unknown[]) => sendNdjson(app.url, token, records);

async function archiveNow(fractalId: string, logs: number): Promise<void> {
  await waitFor(`${logs} logs to be archived`, async () => {
    await app.context.archive.archiver.flush();
    return app.context.archive.status(fractalId).logs >= logs;
  });
}

async function finished(id: string, as = admin) {
  return waitFor('the restore job to finish', async () => {
    const j = expectOk(await as.get(`/api/v1/archive/jobs/${id}`));
    return j.status === 'running' ? undefined : j;
  });
}

const wipeHot = (fractalId: string) => app.context.logs.deleteFractal(fractalId);

test('restore a window, again (all skipped), reconcile the rest; a damaged file is named and the rest restored', async () => {
  const { fractalId, token } = defaultIngest(app);
  const day1 = Array.from({ length: 120 }, (_, i) => ({ timestamp: `2024-03-01T10:00:00.${String(i).padStart(3, '0')}123456Z`, msg: `day one ${i}` }));
  const day2 = Array.from({ length: 80 }, (_, i) => ({ timestamp: `2024-03-02T10:00:00.${String(i).padStart(3, '0')}000001Z`, msg: `day two ${i}`, a: { b: i } }));
  await send(token, day1);
  await archiveNow(fractalId, 120);
  await send(token, day2);
  await archiveNow(fractalId, 200);
  const original = await waitFor('the hot store', async () => {
    const l = await storedLogs(app, fractalId);
    return l.length === 200 ? l : undefined;
  });
  await wipeHot(fractalId);
  assert.equal((await storedLogs(app, fractalId)).length, 0);

  expectError(await admin.post(`/api/v1/fractals/${fractalId}/archive/restore`, { start: 'yesterday', end: '2024-03-02T00:00:00Z' }), 400, 'start');
  expectError(await admin.post(`/api/v1/fractals/${fractalId}/archive/restore`, { start: '2024-03-02T00:00:00Z', end: '2024-03-01T00:00:00Z' }), 400, 'after');

  const window = { start: '2024-03-01T00:00:00Z', end: '2024-03-02T00:00:00Z' };
  const started = expectOk(await admin.post(`/api/v1/fractals/${fractalId}/archive/restore`, window), 202);
  assert.equal(started.status, 'running');
  const job = await finished(started.id);
  assert.equal(job.status, 'done');
  assert.equal(job.restored, 120);
  assert.equal(job.skipped, 0);
  assert.equal(job.progress, 1);
  const restored = await storedLogs(app, fractalId);
  const want = original.filter((l) => l.raw.includes('day one'));
  assert.deepEqual(
    restored.map((l) => [l.log_id, l.timestamp, l.ingest_timestamp, l.raw]),
    want.map((l) => [l.log_id, l.timestamp, l.ingest_timestamp, l.raw]),
    'the same logs, to the nanosecond',
  );

  const again = await finished(expectOk(await admin.post(`/api/v1/fractals/${fractalId}/archive/restore`, window), 202).id);
  assert.deepEqual([again.restored, again.skipped], [0, 120], 'nothing twice');

  const reconcile = await finished(expectOk(await admin.post(`/api/v1/fractals/${fractalId}/archive/reconcile`), 202).id);
  assert.deepEqual([reconcile.status, reconcile.restored, reconcile.skipped], ['done', 80, 120]);
  const all = await storedLogs(app, fractalId);
  assert.deepEqual(all.map((l) => [l.log_id, l.timestamp, l.raw, l.fields_json]), original.map((l) => [l.log_id, l.timestamp, l.raw, l.fields_json]));

  // Damage the file holding day one; restoring both days restores day two and names the file.
  await wipeHot(fractalId);
  const files = app.context.archive.store.files(fractalId);
  assert.equal(files.length, 2);
  const damaged = files.find((f) => f.minTsUs < Date.parse('2024-03-02T00:00:00Z') * 1000)!;
  writeFileSync(path.join(app.dataDir, 'archive', fractalId, damaged.key), 'not parquet at all');
  const partial = await finished(expectOk(await admin.post(`/api/v1/fractals/${fractalId}/archive/restore`, { start: '2024-03-01T00:00:00Z', end: '2024-03-03T00:00:00Z' }), 202).id);
  assert.equal(partial.status, 'done');
  assert.equal(partial.restored, 80);
  assert.equal(partial.damaged_files.length, 1);
  assert.ok(partial.damaged_files[0].startsWith(damaged.key), partial.damaged_files[0]);
  assert.match(partial.error, /could not be read/);
});

test('restore jobs belong to their fractal: other users neither start, read nor cancel them', async () => {
  const other = await createFractal(admin, 'restore-other');
  const job = expectOk(await admin.post(`/api/v1/fractals/${other.id}/archive/restore`, { start: '2024-01-01T00:00:00Z', end: '2024-01-02T00:00:00Z' }), 202);
  const outsider = await makeUser(admin, 'restore-outsider');
  expectError(await outsider.post(`/api/v1/fractals/${other.id}/archive/restore`, { start: '2024-01-01T00:00:00Z', end: '2024-01-02T00:00:00Z' }), 404);
  expectError(await outsider.get(`/api/v1/archive/jobs/${job.id}`), 404);
  expectError(await outsider.del(`/api/v1/archive/jobs/${job.id}`), 404);
  expectError(await outsider.get(`/api/v1/fractals/${other.id}/archive/jobs`), 404);
  const done = await finished(job.id);
  assert.deepEqual([done.status, done.restored, done.files_total], ['done', 0, 0]);

  // The fractal's job list: newest first, only its own jobs, in the job's shape.
  const second = await finished(expectOk(await admin.post(`/api/v1/fractals/${other.id}/archive/reconcile`), 202).id);
  const listed = expectOk(await admin.get(`/api/v1/fractals/${other.id}/archive/jobs`));
  assert.deepEqual(listed.map((j: { id: string }) => j.id), [second.id, job.id]);
  assert.deepEqual(listed[1], done);
  const { fractalId } = defaultIngest(app);
  assert.ok(expectOk(await admin.get(`/api/v1/fractals/${fractalId}/archive/jobs`)).every((j: { fractal_id: string }) => j.fractal_id === fractalId));
});

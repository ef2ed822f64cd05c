// Case jobs across a kill -9 of the appliance and a start on the same data directory: a finished
// export is still listed and its archive still downloads, byte for byte; an export and a case
// import the kill cut short are reported as failed, saying what happened and what to do, and the
// events the import had already stored (under the id of a fractal it never created) are removed,
// so no half-imported case is left behind.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { loadConfig } from '../../service/src/config.ts';
import { openAnalytics } from '../../service/src/storage/clickhouse.ts';
import { expectOk } from '../support/api.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client } from '../support/appliance.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-case-jobs-kill-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

const EVENTS = 120_000;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function download(c: Client, fractalId: string, jobId: string): Promise<{ status: number; body: Buffer }> {
  const r = await fetch(`${c.base}/api/v1/fractals/${fractalId}/case-exports/${jobId}/archive`, { headers: { cookie: c.cookie } });
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
}

async function rowsUnder(fractalId: string, count: (q: string) => Promise<number>): Promise<number> {
  return count(`SELECT count() AS n FROM logs WHERE fractal_id = '${fractalId}'`);
}

test('SIGKILL during a case export and a case import: the finished export survives, the cut ones fail, the import leaves no events', async () => {
  const service = await startServiceProcess({ dataDir, env: { SVC_ADMIN_PASSWORD: ADMIN_PASSWORD } });
  const admin = await signIn(service.base, 'admin', ADMIN_PASSWORD);
  const fractal = (await admin.get('/api/v1/fractals')).body.data[0];
  const token = (await admin.get(`/api/v1/fractals/${fractal.id}/ingest-tokens`)).body.data[0].token;
  const t0 = Date.now() - 3 * 86_400_000;
  for (let b = 0; b < EVENTS; b += 5_000) {
    const body = Array.from({ length: 5_000 }, (_, i) => JSON.stringify({ timestamp: new Date(t0 + (b + i) * 2_000).toISOString(), n: b + i, msg: 'x'.repeat(300) })).join('\n');
    const r = await fetch(`${service.base}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body });
    assert.equal(r.status, 200, await r.text());
  }
  await waitFor('the events to be stored', async () => (await admin.get(`/api/v1/fractals/${fractal.id}/stats`)).body.data.log_count >= EVENTS, 300_000);

  // A finished export, then a second export and an import of the first one's archive, cut short.
  const first = expectOk(await admin.post(`/api/v1/fractals/${fractal.id}/case-export`, {}), 202);
  const done = await waitFor('the first export', async () => {
    const j = expectOk(await admin.get(`/api/v1/fractals/${fractal.id}/case-exports/${first.id}`));
    return j.status !== 'running' && j;
  }, 300_000);
  assert.equal(done.status, 'done', JSON.stringify(done.errors));
  const archive = await download(admin, fractal.id, first.id);
  assert.equal(sha256(archive.body), done.archive.sha256);

  const imported = await fetch(`${service.base}/api/v1/case-import?name=cut-short`, { method: 'POST', headers: { cookie: admin.cookie, 'content-type': 'application/gzip' }, body: archive.body as unknown as BodyInit });
  const importJob = expectOk({ status: imported.status, headers: imported.headers, body: await imported.json() }, 202);
  // Kill once the import has stored a first batch of events (it stores them 16 MiB at a time,
  // about 30,000 of these) and is still going, and a second export has begun writing.
  await waitFor('the import to be part-way through storing events', async () => {
    const j = expectOk(await admin.get(`/api/v1/case-imports/${importJob.id}`));
    assert.equal(j.status, 'running', `the import ended before the kill: ${JSON.stringify(j)}`);
    return j.phase === 'storing events' && j.events_done >= 40_000;
  }, 300_000);
  const second = expectOk(await admin.post(`/api/v1/fractals/${fractal.id}/case-export`, {}), 202);
  await waitFor('the second export to be writing events', async () => {
    const j = expectOk(await admin.get(`/api/v1/fractals/${fractal.id}/case-exports/${second.id}`));
    assert.equal(j.status, 'running', 'the second export is still being written at the kill');
    return j.events_done > 0;
  }, 60_000);
  await service.stop('SIGKILL');

  // What the kill left: the import's events in storage under a fractal id no fractal has.
  const meta = new Database(path.join(dataDir, 'metadata.sqlite'), { readonly: true });
  const { target_fractal_id: target } = meta.prepare('SELECT target_fractal_id FROM case_jobs WHERE id = ?').get(importJob.id) as { target_fractal_id: string };
  assert.equal((meta.prepare('SELECT count(*) AS n FROM fractals WHERE id = ?').get(target) as { n: number }).n, 0);
  meta.close();
  const engine = await openAnalytics(loadConfig({ SVC_DATA_DIR: dataDir }));
  const count = async (ch: typeof engine, q: string) => {
    const rs = await ch.client.query({ query: q.replace('FROM logs', `FROM ${ch.table('logs')}`), format: 'JSONEachRow' });
    return Number(((await rs.json()) as Array<{ n: string }>)[0]!.n);
  };
  const leftBehind = await rowsUnder(target, (q) => count(engine, q));
  await engine.close();
  assert.ok(leftBehind > 0 && leftBehind < EVENTS, `the kill left ${leftBehind} events of the import stored`);

  const app = await startTestAppliance({}, dataDir);
  try {
    const again = await signIn(app.url, 'admin', ADMIN_PASSWORD);
    const imp = expectOk(await again.get(`/api/v1/case-imports/${importJob.id}`));
    assert.equal(imp.status, 'failed');
    assert.match(imp.errors.at(-1), /^The appliance stopped during this import \(storing events\); nothing of it was kept\. Send the archive again\.$/);
    assert.equal(imp.fractal_id, null);
    assert.equal(await rowsUnder(target, (q) => count(app.context.ch, q)), 0, 'the half-stored events are gone');
    assert.deepEqual(expectOk(await again.get('/api/v1/fractals')).map((f: any) => f.id), [fractal.id], 'no fractal was created');

    const exports = expectOk(await again.get(`/api/v1/fractals/${fractal.id}/case-exports`));
    assert.deepEqual(exports.map((j: any) => [j.id, j.status]), [[second.id, 'failed'], [first.id, 'done']]);
    assert.match(exports[0].errors.at(-1), /^The appliance stopped during this export \(.+\); the unfinished archive was removed\. Start the export again\.$/);
    assert.equal((await download(again, fractal.id, second.id)).status, 409);
    const kept = await download(again, fractal.id, first.id);
    assert.equal(kept.status, 200);
    assert.equal(sha256(kept.body), done.archive.sha256, 'the finished archive downloads as it was');
    assert.deepEqual(readdirSync(path.join(dataDir, 'cases', 'exports')), [`${first.id}.tar.gz`], 'only the finished archive is kept');
    const custody = expectOk(await again.get(`/api/v1/fractals/${fractal.id}/custody`));
    assert.deepEqual(custody.entries.filter((e: any) => e.kind === 'export').map((e: any) => e.details.archive_sha256), [done.archive.sha256], 'only the finished export is in the custody log');
  } finally {
    await app.stop();
  }
});

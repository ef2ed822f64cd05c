// Archive retention drops exactly the ingest-day partitions older than archive_retention_days (a
// new snapshot without them, their files deleted once no kept snapshot names them); hot retention
// deletes only logs the archive already holds while the archive is on.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { expectOk } from '../support/api.ts';
import { ADMIN_PASSWORD, Client, defaultIngest, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { readIcebergTable, readParquetWithDuckDb } from '../support/archive-reader.ts';
import { storedLogs } from '../support/logs.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
before(async () => {
  app = await startTestAppliance({ SVC_ARCHIVE_ROLL_S: '3600', SVC_ARCHIVE_SNAPSHOT_KEEP_S: '0' });
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  expectOk(await admin.put('/api/v1/archive', { enabled: true }));
});
after(() => app.dispose());

const dayAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

/** Spools rows ingested on an earlier day, as the pipeline writes them (the archive reads the spool). */
async function spoolIngestedOn(fractalId: string, day: string, n: number): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) =>
    JSON.stringify({ fractal_id: fractalId, timestamp: `${day} 10:00:00.${String(i).padStart(9, '0')}`, ingest_timestamp: `${day} 11:00:00.000000000`, log_id: randomUUID(), raw: JSON.stringify({ msg: `ingested ${day}`, i }) }),
  ).join('\n');
  await app.ingest.spool.append({ id: randomUUID(), fractalId, count: n, table: 'logs_ingest', rows: Buffer.from(rows + '\n') });
}

test('archive retention removes exactly the expired ingest-day partitions, in a new snapshot', async () => {
  const { fractalId, token } = defaultIngest(app);
  await spoolIngestedOn(fractalId, dayAgo(5), 30);
  await spoolIngestedOn(fractalId, dayAgo(2), 20);
  const r = await fetch(`${app.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify([{ msg: 'today' }, { msg: 'today too' }]) });
  assert.equal(r.status, 200);
  await waitFor('all 52 archived', async () => {
    await app.context.archive.archiver.flush();
    return app.context.archive.status(fractalId).logs === 52;
  });
  const tableDir = path.join(app.dataDir, 'archive', fractalId);
  const beforeRetention = await readIcebergTable(app.context.ch, tableDir);
  assert.deepEqual([...new Set(beforeRetention.files.map((f) => f.day))].sort(), [dayAgo(5), dayAgo(2), dayAgo(0)]);
  const oldFile = beforeRetention.files.find((f) => f.day === dayAgo(5))!.path;

  expectOk(await admin.put(`/api/v1/fractals/${fractalId}/archive-retention`, { archive_retention_days: 3 }));
  await app.context.archive.maintainAll();

  const afterRetention = await readIcebergTable(app.context.ch, tableDir);
  assert.deepEqual([...new Set(afterRetention.files.map((f) => f.day))].sort(), [dayAgo(2), dayAgo(0)], 'only the partition older than 3 days is gone');
  const current = afterRetention.metadata.snapshots.find((s: any) => s['snapshot-id'] === afterRetention.metadata['current-snapshot-id']);
  assert.equal(current.summary.operation, 'delete');
  assert.equal(current.summary['deleted-records'], '30');
  const rows = await readParquetWithDuckDb(afterRetention.files.map((f) => f.path));
  assert.equal(rows.length, 22);
  assert.ok(!rows.some((x) => x.raw.includes(dayAgo(5))));
  assert.equal(existsSync(oldFile), false, 'its data file is deleted once no kept snapshot names it');
  const status = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/archive`));
  assert.equal(status.logs, 22);
  assert.ok(status.last_maintenance);
});

test('with the archive on, hot retention deletes only logs the archive holds', async () => {
  const { fractalId, token } = defaultIngest(app);
  const old = new Date(Date.now() - 10 * 86_400_000).toISOString();
  const r = await fetch(`${app.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify([{ timestamp: old, msg: 'old event, not archived yet' }]) });
  assert.equal(r.status, 200);
  await waitFor('the hot store', async () => (await storedLogs(app, fractalId)).some((l) => l.raw.includes('not archived yet')));
  // The roll is not cut (an hour): the log is not archived, so retention keeps it.
  expectOk(await admin.put(`/api/v1/fractals/${fractalId}/retention`, { retention_days: 1 }));
  assert.ok((await storedLogs(app, fractalId)).some((l) => l.raw.includes('not archived yet')), 'kept until archived');
  await app.context.archive.archiver.flush();
  await waitFor('retention to delete it once archived', async () => {
    await app.context.retention.enforce(fractalId);
    return !(await storedLogs(app, fractalId)).some((l) => l.raw.includes('not archived yet'));
  });
});

test('compaction rewrites the small files of a finished day into one, the same rows, in a replace snapshot', async () => {
  const { fractalId } = defaultIngest(app);
  const day = dayAgo(1);
  for (let i = 0; i < 3; i++) {
    await spoolIngestedOn(fractalId, day, 10 + i);
    await app.context.archive.archiver.flush();
  }
  const tableDir = path.join(app.dataDir, 'archive', fractalId);
  const beforeCompaction = (await readIcebergTable(app.context.ch, tableDir)).files.filter((f) => f.day === day);
  assert.equal(beforeCompaction.length, 3);
  const rowsBefore = await readParquetWithDuckDb(beforeCompaction.map((f) => f.path));
  await app.context.archive.maintainAll();
  const table = await readIcebergTable(app.context.ch, tableDir);
  const compacted = table.files.filter((f) => f.day === day);
  assert.equal(compacted.length, 1);
  assert.equal(compacted[0]!.records, 33);
  const current = table.metadata.snapshots.find((s: any) => s['snapshot-id'] === table.metadata['current-snapshot-id']);
  assert.equal(current.summary.operation, 'replace');
  const rowsAfter = await readParquetWithDuckDb(compacted.map((f) => f.path));
  assert.deepEqual(rowsAfter, rowsBefore, 'the same rows');
  assert.ok(beforeCompaction.every((f) => !existsSync(f.path)), 'the small files are deleted once no snapshot names them');
});

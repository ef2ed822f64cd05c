// The archive in S3-compatible object storage: a real S3 server on loopback (s3rver). Settings are
// checked against the store (a missing bucket and refused credentials are 400s saying which), the
// secret is sealed and never returned, logs are archived as Iceberg + Parquet objects other readers
// accept, and a restore reads them back through the engine's s3() function.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import S3rver from 's3rver';
import { expectError, expectOk, readMetadataTable } from '../support/api.ts';
import { ADMIN_PASSWORD, Client, defaultIngest, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { readParquetWithDuckDb } from '../support/archive-reader.ts';
import { storedLogs } from '../support/logs.ts';
import { ingestFractal, sendNdjson } from '../support/ingest.ts';
import { waitFor } from '../support/wait.ts';

const s3dir = mkdtempSync(path.join(tmpdir(), 'svc-s3rver-'));
const copies = mkdtempSync(path.join(tmpdir(), 'svc-s3-copies-'));
let server: S3rver;
let endpoint: string;
let app: TestAppliance;
let admin: Client;
before(async () => {
  server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3dir, configureBuckets: [{ name: 'logs-archive', configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  endpoint = `http://127.0.0.1:${port}`;
  app = await startTestAppliance({ SVC_ARCHIVE_ROLL_S: '3600' });
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await app.dispose();
  await server.close();
  rmSync(s3dir, { recursive: true, force: true });
  rmSync(copies, { recursive: true, force: true });
});

// s3rver's own credentials (it refuses an unknown access key).
const s3 = (over: Record<string, unknown> = {}) => ({
  enabled: true,
  backend: 's3',
  s3_endpoint: endpoint,
  s3_bucket: 'logs-archive',
  s3_prefix: 'appliance-1',
  s3_region: 'us-east-1',
  s3_access_key: 'S3RVER',
  s3_secret_key: 'S3RVER',
  ...over,
});

test('S3 settings: checked against the store, the secret sealed and never returned', async () => {
  expectError(await admin.put('/api/v1/archive', s3({ s3_bucket: 'no-such-bucket' })), 400, 'no-such-bucket', 'does not exist');
  expectError(await admin.put('/api/v1/archive', s3({ s3_access_key: 'nobody' })), 400, 'credentials');
  expectError(await admin.put('/api/v1/archive', s3({ s3_endpoint: 'http://127.0.0.1:1' })), 400, 'cannot be reached');
  expectError(await admin.put('/api/v1/archive', s3({ s3_endpoint: 'ftp://x' })), 400, 's3_endpoint');
  const saved = expectOk(await admin.put('/api/v1/archive', s3()));
  assert.equal(saved.backend, 's3');
  assert.equal(saved.s3_secret_key_set, true);
  assert.equal('s3_secret_key' in saved, false);
  const read = expectOk(await admin.get('/api/v1/archive'));
  assert.equal('s3_secret_key' in read, false);
  const [row] = readMetadataTable(app, 'archive_settings');
  assert.match(String(row!.s3_secret_sealed), /^v1:/, 'sealed with the secret box');
  // Changing other fields keeps the stored secret.
  expectOk(await admin.put('/api/v1/archive', { s3_region: 'us-east-1' }));
  assert.equal(app.context.archive.settings().s3_secret_key, 'S3RVER');
});

test('logs are archived to the bucket as Iceberg + Parquet, and restored from it through the engine', async () => {
  const { fractalId, token } = defaultIngest(app);
  const records = Array.from({ length: 150 }, (_, i) => ({ timestamp: `2024-05-05T05:05:05.${String(i).padStart(3, '0')}000007Z`, msg: `to s3 ${i}` }));
  const r = await fetch(`${app.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(records) });
  assert.equal(r.status, 200);
  await waitFor('150 logs in the bucket', async () => {
    await app.context.archive.archiver.flush();
    return app.context.archive.status(fractalId).logs === 150;
  });
  const backend = app.context.archive.backend!;
  const keys = await backend.list(`${fractalId}/`);
  assert.ok(keys.includes(`${fractalId}/metadata/v1.metadata.json`), keys.join(' '));
  assert.ok(keys.includes(`${fractalId}/metadata/version-hint.text`));
  const metadata = JSON.parse((await backend.get(`${fractalId}/metadata/v1.metadata.json`)).toString());
  assert.equal(metadata.location, `s3://logs-archive/appliance-1/${fractalId}`);
  // Another reader: copies of the objects, read by DuckDB.
  const parquet = keys.filter((k) => k.endsWith('.parquet'));
  assert.equal(parquet.length, 1);
  const local = path.join(copies, 'data.parquet');
  mkdirSync(copies, { recursive: true });
  writeFileSync(local, await backend.get(parquet[0]!));
  const rows = await readParquetWithDuckDb([local]);
  assert.equal(rows.length, 150);

  const original = await waitFor('the hot store', async () => {
    const l = await storedLogs(app, fractalId);
    return l.length === 150 ? l : undefined;
  });
  await app.context.logs.deleteFractal(fractalId);
  const job = expectOk(await admin.post(`/api/v1/fractals/${fractalId}/archive/restore`, { start: '2024-05-05T00:00:00Z', end: '2024-05-06T00:00:00Z' }), 202);
  const done = await waitFor('the restore', async () => {
    const j = expectOk(await admin.get(`/api/v1/archive/jobs/${job.id}`));
    return j.status === 'running' ? undefined : j;
  });
  assert.deepEqual([done.status, done.restored, done.damaged_files], ['done', 150, []]);
  const back = await storedLogs(app, fractalId);
  assert.deepEqual(back.map((l) => [l.log_id, l.timestamp, l.raw]), original.map((l) => [l.log_id, l.timestamp, l.raw]));
});

test('search in place reads the bucket through the engine: old days answered from S3, marked, the secret never shown', async () => {
  const f = await ingestFractal(admin, 's3-search');
  const day = (d: string, n: number) => Array.from({ length: n }, (_, i) => ({ timestamp: `2024-06-0${d}T08:00:00.${String(i).padStart(3, '0')}Z`, msg: `june ${d} ${i}`, user: i % 2 ? 'ann' : 'ben' }));
  await sendNdjson(app.url, f.token, [...day('6', 40), ...day('7', 30)]);
  await waitFor('70 logs in the bucket', async () => {
    await app.context.archive.archiver.flush();
    return app.context.archive.status(f.id).logs === 70;
  });
  await waitFor('the hot store', async () => (await storedLogs(app, f.id)).length === 70);
  const ch = app.context.ch;
  await ch.client.command({
    query: `ALTER TABLE ${ch.table('logs')} DELETE WHERE fractal_id = {id:UUID} AND timestamp < '2024-06-07 00:00:00'`,
    query_params: { id: f.id },
    clickhouse_settings: { mutations_sync: '2' },
  });
  const window = { fractal_id: f.id, start: '2024-06-06T00:00:00Z', end: '2024-06-07T23:59:59Z' };
  const r = await admin.post('/api/v1/query', { query: '', ...window });
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 400));
  assert.equal(r.body.count, 70);
  assert.equal(new Set(r.body.results.map((x: any) => x.log_id)).size, 70);
  assert.deepEqual(r.body.results.filter((x: any) => x.from_archive).map((x: any) => x.msg).sort(), day('6', 40).map((l) => l.msg).sort());
  assert.equal(r.body.archive.files_scanned, 1);
  assert.equal(r.body.archive.rows_scanned, 70, 'the file holds both days (one ingest day)');
  assert.ok(r.body.sql.includes("s3('http://127.0.0.1"), 'the answer shows it read the bucket');
  assert.ok(!r.body.sql.includes("'S3RVER'"), 'the credentials are hidden in the sql shown');
  const grouped = await admin.post('/api/v1/query', { query: 'user=ann | groupBy(user)', ...window });
  assert.deepEqual(grouped.body.results.map((x: any) => [x.user, x._count]), [['ann', 35]]);
});

// The archive in a local folder: logs accepted while it is on are written as Parquet with Iceberg
// metadata that other readers accept (manifests through the engine's Avro reader, data through
// DuckDB), the same rows as the hot store; the settings and status API as the spec describes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { expectError, expectOk } from '../support/api.ts';
import { ADMIN_PASSWORD, Client, defaultIngest, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { readIcebergTable, readParquetWithDuckDb } from '../support/archive-reader.ts';
import { storedLogs } from '../support/logs.ts';
import { sendNdjson } from '../support/ingest.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
before(async () => {
  app = await startTestAppliance({ SVC_ARCHIVE_ROLL_S: '1' });
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
});
after(() => app.dispose());

const send = (token: string, records: unknown[]) => sendNdjson(app.url, token, records);

test('archive settings: off by default, a local folder by default, bad values refused with a sentence', async () => {
  const s = expectOk(await admin.get('/api/v1/archive'));
  assert.equal(s.enabled, false);
  assert.equal(s.backend, 'local');
  assert.equal(s.path, path.join(app.dataDir, 'archive'));
  assert.equal('s3_secret_key' in s, false, 'the secret is never returned');
  expectError(await admin.put('/api/v1/archive', { path: 'relative/dir' }), 400, 'absolute');
  expectError(await admin.put('/api/v1/archive', { backend: 's3', enabled: true }), 400, 's3_endpoint');
  const aFile = path.join(app.dataDir, 'not-a-folder');
  writeFileSync(aFile, 'x');
  expectError(await admin.put('/api/v1/archive', { enabled: true, path: path.join(aFile, 'archive') }), 400, 'cannot be written');
  assert.equal(expectOk(await admin.get('/api/v1/archive')).enabled, false, 'a refused change changes nothing');
});

test('logs accepted with the archive on are archived: Iceberg metadata and Parquet another reader accepts, same rows as the hot store', async () => {
  const { fractalId, token } = defaultIngest(app);
  await send(token, [{ msg: 'before the archive' }]);
  const on = expectOk(await admin.put('/api/v1/archive', { enabled: true }));
  assert.equal(on.enabled, true);

  const records = Array.from({ length: 300 }, (_, i) => ({ msg: `archived ${i}`, nested: { n: i }, host: `h${i % 3}` }));
  await send(token, records.slice(0, 100));
  await send(token, records.slice(100, 250));
  await send(token, records.slice(250));

  const status = await waitFor('the archive to hold the 300 logs', async () => {
    const s = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/archive`));
    return s.logs === 300 && s.lag_logs === 0 ? s : undefined;
  });
  assert.ok(status.files >= 1 && status.size_bytes > 0);
  assert.ok(status.oldest && status.newest);

  const tableDir = path.join(app.dataDir, 'archive', fractalId);
  const table = await readIcebergTable(app.context.ch, tableDir);
  assert.equal(table.metadata['format-version'], 2);
  assert.equal(table.metadata['partition-specs'][0].fields[0].transform, 'day');
  const today = new Date().toISOString().slice(0, 10);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  assert.ok(table.files.every((f) => f.day === today || f.day === yesterday), `partitioned by ingest day: ${table.files.map((f) => f.day)}`);
  assert.equal(table.files.reduce((n, f) => n + f.records, 0), 300);

  const archived = await readParquetWithDuckDb(table.files.map((f) => f.path));
  const hot = (await storedLogs(app, fractalId)).filter((l) => l.raw.includes('"archived '));
  assert.equal(archived.length, 300);
  assert.deepEqual(
    archived.map((r) => r.log_id).sort(),
    hot.map((l) => l.log_id).sort(),
    'the archive holds exactly the logs the hot store got while it was on',
  );
  const byId = new Map(hot.map((l) => [l.log_id, l]));
  for (const r of archived) {
    const h = byId.get(r.log_id)!;
    assert.equal(r.raw, h.raw);
    // The exact nanoseconds the hot store keeps.
    const ns = BigInt(r.timestamp_ns);
    const iso = new Date(Number(ns / 1_000_000n)).toISOString().replace('T', ' ').replace('Z', '');
    assert.ok(h.timestamp.startsWith(iso), `${h.timestamp} vs ${iso}`);
    // Flattened records carry their fields text; the record's own text stands for it otherwise.
    assert.deepEqual(JSON.parse(r.fields || r.raw)['nested.n'], JSON.parse(h.raw).nested.n);
  }
});

test('the archive lag is reported in system/pressure and metrics', async () => {
  const p = expectOk(await admin.get('/api/v1/system/pressure'));
  assert.equal(p.archive.enabled, true);
  assert.equal(typeof p.archive.lag_logs, 'number');
  assert.equal(p.archive.active, false);
  const metrics = await app.context.metrics.registry.metrics();
  assert.match(metrics, /svc_archive_lag_logs \d+/);
  assert.match(metrics, /svc_archive_logs_archived [1-9]\d*/);
});

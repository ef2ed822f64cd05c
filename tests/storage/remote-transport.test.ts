// The remote transport (SVC_CLICKHOUSE_URL): the same appliance code over ClickHouse's HTTP
// interface, against a loopback server that executes on the embedded engine.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startClickHouseHttpBridge } from '../support/clickhouse-http-bridge.ts';
import { ADMIN_PASSWORD, makeUser, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { waitForLogs } from '../support/logs.ts';

const chDir = mkdtempSync(path.join(tmpdir(), 'remote-ch-'));
let bridge: Awaited<ReturnType<typeof startClickHouseHttpBridge>>;
let a: TestAppliance;
let admin: Client;

before(async () => {
  bridge = await startClickHouseHttpBridge({ dataDir: chDir, user: 'svc', password: 'remote-secret' });
  // Credentials in the URL too (the same ones), which /api/v1/status must never show.
  a = await startTestAppliance({
    SVC_CLICKHOUSE_URL: bridge.url.replace('http://', 'http://svc:remote-secret@'),
    SVC_CLICKHOUSE_USER: 'svc',
    SVC_CLICKHOUSE_PASSWORD: 'remote-secret',
    SVC_CLICKHOUSE_DATABASE: 'logs_remote',
  });
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await a?.dispose();
  await bridge?.close();
  rmSync(chDir, { recursive: true, force: true });
});

test('start-up creates the database and applies the migrations over HTTP', async () => {
  assert.ok(bridge.queries.some((q) => /CREATE DATABASE IF NOT EXISTS logs_remote/.test(q)));
  assert.ok(bridge.queries.some((q) => /CREATE TABLE IF NOT EXISTS logs_remote\.logs/.test(q)));
  const status = (await admin.get('/api/v1/status')).body.data;
  assert.equal(status.clickhouse.transport, 'remote');
  assert.equal(status.clickhouse.status, 'healthy');
  assert.equal(status.clickhouse.database, 'logs_remote');
  assert.equal(status.clickhouse.url, bridge.url, 'a global admin sees where the engine is, without its credentials');
  assert.ok(!JSON.stringify(status).includes('remote-secret'));
  const ch = (await admin.get('/api/v1/health/clickhouse')).body.data;
  assert.equal(ch.transport, 'remote');
  assert.equal((await fetch(`${a.url}/api/v1/health`)).status, 200);
});

test("the engine's URL is shown to global administrators only", async () => {
  const viewer = await makeUser(admin, 'remote-viewer');
  const status = (await viewer.get('/api/v1/status')).body.data;
  assert.equal(status.clickhouse.transport, 'remote');
  assert.equal('url' in status.clickhouse, false);
});

test('ingest, stats and fractal deletion work the same over the remote transport', async () => {
  const f = (await admin.post('/api/v1/fractals', { name: 'remote' })).body.data;
  const r = await fetch(`${a.url}/api/v1/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.default_ingest_token}` },
    body: '{"msg":"over http","n":1}\n{"msg":"second","n":2}',
  });
  assert.equal(r.status, 200);
  const rows = await waitForLogs(a, f.id, 2);
  assert.deepEqual(rows.map((x) => x.fields.msg).sort(), ['over http', 'second']);
  // Ingest writes its rows through the entry table (clickhouse-migrations.ts, version 2).
  assert.ok(bridge.queries.some((q) => /INSERT INTO logs_remote\.logs_ingest FORMAT JSONEachRow/.test(q)));
  assert.equal((await admin.get(`/api/v1/fractals/${f.id}/stats`)).body.data.log_count, 2);
  assert.equal((await admin.del(`/api/v1/fractals/${f.id}`)).status, 200);
  const rs = await a.context.ch.client.query({
    query: 'SELECT count() AS n FROM logs_remote.logs WHERE fractal_id = {id:UUID}',
    query_params: { id: f.id },
    format: 'JSONEachRow',
  });
  assert.equal(Number(((await rs.json()) as Array<{ n: string }>)[0]!.n), 0);
});

test('a restart against the same server applies no migration twice', async () => {
  const before = bridge.queries.filter((q) => /CREATE TABLE IF NOT EXISTS logs_remote\.logs/.test(q)).length;
  await a.stop();
  a = await startTestAppliance(
    { SVC_CLICKHOUSE_URL: bridge.url, SVC_CLICKHOUSE_USER: 'svc', SVC_CLICKHOUSE_PASSWORD: 'remote-secret', SVC_CLICKHOUSE_DATABASE: 'logs_remote' },
    a.dataDir,
  );
  const afterCount = bridge.queries.filter((q) => /CREATE TABLE IF NOT EXISTS logs_remote\.logs/.test(q)).length;
  assert.equal(afterCount, before);
});

test('wrong credentials stop start-up with a message naming the server', async () => {
  await assert.rejects(
    startTestAppliance({ SVC_CLICKHOUSE_URL: bridge.url, SVC_CLICKHOUSE_USER: 'svc', SVC_CLICKHOUSE_PASSWORD: 'wrong' }),
    (e: Error) => e.message.includes(`ClickHouse at ${bridge.url}`) && /Authentication failed|516/.test(e.message),
  );
});

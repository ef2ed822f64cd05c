// Search in place with a remote ClickHouse (SVC_CLICKHOUSE_URL, here the loopback HTTP bridge) and a
// local archive folder: the server cannot read the appliance's folder, and the answer says so —
// include_archive is a 400 naming the fix, an old window is answered from the hot store with a warning.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClickHouseHttpBridge } from '../support/clickhouse-http-bridge.ts';
import { startRemoteTestAppliance, type RemoteTestAppliance } from '../support/remote-appliance.ts';
import { expectOk } from '../support/api.ts';
import { ADMIN_PASSWORD, defaultIngest, signIn, type Client, type TestAppliance } from '../support/appliance.ts';
import { sendNdjson } from '../support/ingest.ts';
import { waitFor } from '../support/wait.ts';

let remote: RemoteTestAppliance;
let bridge: ClickHouseHttpBridge;
let a: TestAppliance;
let admin: Client;

before(async () => {
  ({ a, bridge } = remote = await startRemoteTestAppliance({
    SVC_CLICKHOUSE_USER: 'svc',
    SVC_CLICKHOUSE_PASSWORD: 'remote-secret',
    SVC_ARCHIVE_ROLL_S: '3600',
  }, { user: 'svc', password: 'remote-secret' }));
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(() => remote?.dispose());

test('a remote engine cannot read a local archive folder: include_archive refused with the fix, old windows answered hot-only with a warning', async () => {
  const { fractalId, token } = defaultIngest(a);
  expectOk(await admin.put('/api/v1/archive', { enabled: true }));
  await sendNdjson(a.url, token, [
    { timestamp: '2024-01-01T10:00:00Z', msg: 'old' },
    { timestamp: '2024-01-02T10:00:00Z', msg: 'newer' },
  ]);
  await waitFor('the archive to hold both logs', async () => {
    await a.context.archive.archiver.flush();
    return a.context.archive.status(fractalId).logs === 2;
  });
  const ch = a.context.ch;
  await waitFor('the hot store', async () => {
    const rs = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('logs')}`, format: 'JSONEachRow' });
    return Number(((await rs.json()) as Array<{ n: string }>)[0]!.n) === 2;
  });
  await ch.client.command({ query: `ALTER TABLE ${ch.table('logs')} DELETE WHERE timestamp < '2024-01-02 00:00:00'`, clickhouse_settings: { mutations_sync: '2' } });

  const window = { fractal_id: fractalId, start: '2024-01-01T00:00:00Z', end: '2024-01-02T23:59:59Z' };
  const refused = await admin.post('/api/v1/query', { query: '', ...window, include_archive: true });
  assert.equal(refused.status, 400);
  assert.match(refused.body.error, /local folder/);
  assert.match(refused.body.error, /remote ClickHouse server cannot read/);
  assert.match(refused.body.error, /S3 backend/);

  const hotOnly = await admin.post('/api/v1/query', { query: '', ...window });
  assert.equal(hotOnly.status, 200);
  assert.deepEqual(hotOnly.body.results.map((r: any) => r.msg), ['newer']);
  assert.equal(hotOnly.body.archive, undefined);
  assert.equal(hotOnly.body.warnings.length, 1);
  assert.match(hotOnly.body.warnings[0], /archived logs were not searched/);
});

// Health, status, version, runtime settings, unknown routes and the Prometheus listener, over
// real HTTP against a real appliance. Settings are checked across a real restart on the same
// data directory; metrics on a second listener the appliance opens when enabled.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { startClickHouseHttpBridge, type ClickHouseHttpBridge } from '../support/clickhouse-http-bridge.ts';
import { expectError, expectErrorSentence, expectOk, isListening, unknownId } from '../support/api.ts';
import { freePort } from '../support/service-process.ts';

const PACKAGE_VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

const DEFAULTS = {
  shared_links_enabled: false,
  query_timeout_s: 60,
  alert_interval_s: 60,
  timestamp_fields: [] as string[],
  max_query_rows: 10000,
};

let app: TestAppliance;
let dataDir: string;
let admin: Client;
let anon: Client;
/** A signed-in user without the admin flag. */
let rita: Client;
/** The address given to the first appliance as SVC_METRICS_ADDR, without enabling metrics. */
let idleMetricsPort: number;

before(async () => {
  idleMetricsPort = await freePort();
  app = await startTestAppliance({ SVC_METRICS_ADDR: `127.0.0.1:${idleMetricsPort}` });
  dataDir = app.dataDir;
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  rita = await makeUser(admin, 'rita');
});
after(async () => {
  await app?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Stops the running appliance and starts a new one on the same data directory. */
async function restart(env: Record<string, string> = {}) {
  await app.stop();
  app = await startTestAppliance(env, dataDir);
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  rita = await signIn(app.url, 'rita', 'rita-password-1');
}

describe('health, status and version', () => {
  test('/api/v1/health needs no credentials and says healthy', async () => {
    const r = await anon.get('/api/v1/health');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(r.body.status, 'healthy');
    assert.equal(r.body.success, true);
    // Stale or made-up credentials do not turn a health check into a failure.
    const stale = new Client(app.url);
    stale.cookie = 'svc_session=long-gone-session';
    assert.equal((await stale.get('/api/v1/health')).body.status, 'healthy');
    assert.equal((await anon.get('/api/v1/health', { authorization: 'Bearer svc_' + 'f'.repeat(32) })).status, 200);
    assert.equal((await admin.get('/api/v1/health')).body.status, 'healthy');
  });

  test('/api/v1/status reports the analytical and the relational store', async () => {
    for (const who of [admin, rita]) {
      const s = expectOk<{
        status: string;
        version: string;
        clickhouse: { status: string; transport: string; latency_ms: number };
        sqlite: { status: string; latency_ms: number };
      }>(await who.get('/api/v1/status'));
      assert.equal(s.status, 'healthy');
      assert.equal(s.clickhouse.status, 'healthy');
      assert.equal(s.clickhouse.transport, 'embedded');
      assert.equal(typeof s.clickhouse.latency_ms, 'number');
      assert.equal(s.sqlite.status, 'healthy');
      assert.equal(typeof s.sqlite.latency_ms, 'number');
      assert.equal(s.version, PACKAGE_VERSION);
    }
    expectError(await anon.get('/api/v1/status'), 401);
  });

  test('/api/v1/health/clickhouse checks the analytical store', async () => {
    const c = expectOk<{ status: string; latency_ms: number }>(await rita.get('/api/v1/health/clickhouse'));
    assert.equal(c.status, 'healthy');
    assert.ok(c.latency_ms >= 0);
    expectError(await anon.get('/api/v1/health/clickhouse'), 401);
  });

  test('/api/v1/version reports the version in package.json', async () => {
    const v = expectOk<{ version: string }>(await rita.get('/api/v1/version'));
    assert.equal(v.version, PACKAGE_VERSION);
    expectError(await anon.get('/api/v1/version'), 401);
  });
});

describe('settings', () => {
  test('GET shows the defaults', async () => {
    assert.deepEqual(expectOk(await admin.get('/api/v1/settings')), DEFAULTS);
    expectError(await anon.get('/api/v1/settings'), 401);
  });

  test('PUT takes a partial object, returns the whole, and GET shows the change', async () => {
    const one = expectOk(await admin.put('/api/v1/settings', { query_timeout_s: 120 }));
    assert.deepEqual(one, { ...DEFAULTS, query_timeout_s: 120 });
    assert.deepEqual(expectOk(await admin.get('/api/v1/settings')), one);

    const more = expectOk(
      await admin.put('/api/v1/settings', {
        shared_links_enabled: true,
        timestamp_fields: ['event_time', 'log.ts'],
        max_query_rows: 2500,
        alert_interval_s: 30,
      }),
    );
    const want = { shared_links_enabled: true, query_timeout_s: 120, alert_interval_s: 30, timestamp_fields: ['event_time', 'log.ts'], max_query_rows: 2500 };
    assert.deepEqual(more, want, 'the earlier change is kept');
    assert.deepEqual(expectOk(await admin.get('/api/v1/settings')), want);

    assert.deepEqual(expectOk(await admin.put('/api/v1/settings', {})), want, 'an empty PUT changes nothing');
    const ignored = expectOk<Record<string, unknown>>(await admin.put('/api/v1/settings', { not_a_setting: 5, timestamp_fields: [] }));
    assert.deepEqual(ignored, { ...want, timestamp_fields: [] }, 'unknown fields are ignored');
    assert.ok(!('not_a_setting' in ignored));
    expectOk(await admin.put('/api/v1/settings', { timestamp_fields: ['event_time', 'log.ts'] }));
  });

  test('a value of the wrong type or out of range is a 400 naming the field, and nothing changes', async () => {
    const before = expectOk(await admin.get('/api/v1/settings'));
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ query_timeout_s: '120' }, 'query_timeout_s'],
      [{ query_timeout_s: 1.5 }, 'query_timeout_s'],
      [{ query_timeout_s: 0 }, 'query_timeout_s'],
      [{ alert_interval_s: true }, 'alert_interval_s'],
      [{ alert_interval_s: -5 }, 'alert_interval_s'],
      [{ shared_links_enabled: 'yes' }, 'shared_links_enabled'],
      [{ shared_links_enabled: 1 }, 'shared_links_enabled'],
      [{ timestamp_fields: 'ts' }, 'timestamp_fields'],
      [{ timestamp_fields: [1] }, 'timestamp_fields'],
      [{ timestamp_fields: [''] }, 'timestamp_fields'],
      [{ max_query_rows: -1 }, 'max_query_rows'],
      [{ max_query_rows: 'many' }, 'max_query_rows'],
      [{ max_query_rows: null }, 'max_query_rows'],
      // One good and one bad field: all or nothing.
      [{ query_timeout_s: 90, max_query_rows: 'x' }, 'max_query_rows'],
    ];
    for (const [body, field] of bad) {
      const r = await admin.put('/api/v1/settings', body);
      assert.equal(r.status, 400, `${JSON.stringify(body)} answered ${r.status}`);
      expectError(r, 400, field);
    }
    expectError(await admin.put('/api/v1/settings', '[]'), 400);
    expectError(await admin.put('/api/v1/settings', '{"query_timeout_s": '), 400);
    assert.deepEqual(expectOk(await admin.get('/api/v1/settings')), before);
  });

  test('only an administrator may change settings (403 for others, 401 signed out)', async () => {
    const before = expectOk(await admin.get('/api/v1/settings'));
    expectError(await rita.put('/api/v1/settings', { query_timeout_s: 5 }), 403, 'administrator');
    expectError(await rita.put('/api/v1/settings', { shared_links_enabled: false }), 403);
    expectError(await anon.put('/api/v1/settings', { query_timeout_s: 5 }), 401);
    assert.deepEqual(expectOk(await admin.get('/api/v1/settings')), before);
  });

  test('changed settings survive a restart on the same data directory', async () => {
    const want = expectOk(await admin.put('/api/v1/settings', { query_timeout_s: 45, max_query_rows: 777 }));
    assert.equal((want as { query_timeout_s: number }).query_timeout_s, 45);
    await restart({ SVC_METRICS_ADDR: `127.0.0.1:${idleMetricsPort}` });
    assert.equal(app.firstStart, null, 'the second start is not a first start');
    assert.deepEqual(expectOk(await admin.get('/api/v1/settings')), want);
    assert.deepEqual(expectOk(await admin.get('/api/v1/settings')), {
      shared_links_enabled: true,
      query_timeout_s: 45,
      alert_interval_s: 30,
      timestamp_fields: ['event_time', 'log.ts'],
      max_query_rows: 777,
    });
  });
});

describe('unknown routes', () => {
  test('an unknown /api/v1 route is a 404 in the error envelope, for any method, signed in or not', async () => {
    const paths = ['/api/v1/does-not-exist', `/api/v1/fractals/${unknownId()}/no-such-thing`, '/api/v1/settings/extra', '/api/v2/fractals'];
    for (const who of [admin, anon]) {
      for (const p of paths) {
        for (const [method, body] of [['GET'], ['POST', { a: 1 }], ['PUT', { a: 1 }], ['DELETE']] as Array<[string, unknown?]>) {
          const r = await who.req(method, p, body);
          assert.equal(r.status, 404, `${method} ${p} answered ${r.status}`);
          assert.match(r.headers.get('content-type') ?? '', /application\/json/, `${method} ${p} is JSON, not the web UI`);
          expectError(r, 404);
        }
      }
    }
    const r = await admin.get('/api/v1/does-not-exist?x=1');
    expectError(r, 404, '/api/v1/does-not-exist');
  });

  test('a malformed URL under /api/v1 is a 400 in the error envelope', async () => {
    expectError(await admin.get('/api/v1/%E0%A4%A'), 400, 'URL');
    expectError(await anon.post('/api/v1/users/%ZZ', { a: 1 }), 400, 'URL');
  });

  test('an over-long path segment is refused in the error envelope, not with a bare framework body', async () => {
    const long = 'a'.repeat(300);
    for (const [method, url] of [['GET', `/api/v1/users/${long}`], ['DELETE', `/api/v1/users/${long}`], ['PUT', `/api/v1/groups/${long}`]]) {
      const r = await admin.req(method!, url!, method === 'PUT' ? { name: 'x' } : undefined);
      assert.ok([404, 414].includes(r.status), `${method} answered ${r.status}`);
      expectError(r, r.status);
    }
  });
});

describe('metrics', () => {
  test('metrics are off by default: nothing listens on the metrics address, and the API port does not serve them', async () => {
    assert.equal(await isListening(idleMetricsPort), false, `something answers on ${idleMetricsPort}`);
    const r = await fetch(`${app.url}/metrics`);
    const text = await r.text();
    assert.ok(!text.includes('svc_http_requests_total'), 'metrics leak through the API port');
  });

  test('with SVC_METRICS_ENABLED=true the metrics listener serves request counts by route pattern and process metrics', async () => {
    // Port 0: the system picks a free port, which the appliance reports (no port chosen beforehand to race for).
    await restart({ SVC_METRICS_ENABLED: 'true', SVC_METRICS_ADDR: '127.0.0.1:0' });
    const metricsUrl = new URL(app.metricsUrl!);
    const port = Number(metricsUrl.port);
    assert.ok(port > 0 && metricsUrl.pathname === '/metrics', `metrics at ${app.metricsUrl}`);
    assert.equal(await isListening(port), true);

    const fractals = expectOk<Array<{ id: string; name: string }>>(await admin.get('/api/v1/fractals'));
    const def = fractals.find((f) => f.name === 'default')!;
    expectOk(await admin.get(`/api/v1/fractals/${def.id}`));
    expectOk(await admin.get(`/api/v1/fractals/${def.id}`));
    const missing = unknownId();
    expectError(await admin.get(`/api/v1/fractals/${missing}`), 404);

    const r = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
    const text = await r.text();

    const series = (labels: Record<string, string>) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('svc_http_requests_total{') && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)))
        .map((l) => Number(l.split(' ').pop()));
    assert.deepEqual(series({ method: 'GET', route: '/api/v1/fractals/:id', status: '200' }), [2], text.slice(0, 2000));
    assert.deepEqual(series({ method: 'GET', route: '/api/v1/fractals/:id', status: '404' }), [1]);
    assert.ok(series({ method: 'POST', route: '/api/v1/auth/login', status: '200' })[0]! >= 1, 'sign-ins are counted');
    assert.ok(!text.includes(def.id) && !text.includes(missing), 'raw URLs (with ids) never become labels');
    assert.match(text, /^svc_process_cpu_user_seconds_total \d/m, 'process metrics are exported');
    assert.match(text, /^svc_http_request_duration_seconds_bucket\{.*route="\/api\/v1\/fractals\/:id"/m, 'latency by route');

    // Only /metrics, and only on the metrics listener.
    assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404);
    const onApi = await (await fetch(`${app.url}/metrics`)).text();
    assert.ok(!onApi.includes('svc_http_requests_total'));
  });

  test('a metrics address already in use stops start-up with an error naming it, and leaves nothing behind', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const busy = (blocker.address() as net.AddressInfo).port;
    const apiPort = await freePort();
    await app.stop();
    try {
      await assert.rejects(
        startTestAppliance({ SVC_PORT: String(apiPort), SVC_METRICS_ENABLED: 'true', SVC_METRICS_ADDR: `127.0.0.1:${busy}` }, dataDir),
        (err: Error) => err.message.includes(String(busy)),
      );
      assert.equal(await isListening(apiPort), false, 'the API port was released');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    // Once the address is free the same configuration starts, on the same API port.
    app = await startTestAppliance({ SVC_PORT: String(apiPort), SVC_METRICS_ENABLED: 'true', SVC_METRICS_ADDR: `127.0.0.1:${busy}` }, dataDir);
    assert.equal(app.port, apiPort);
    assert.equal((await fetch(`http://127.0.0.1:${busy}/metrics`)).status, 200);
    admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
    anon = new Client(app.url);
  });
});

describe('an API port already taken', () => {
  test('stops start-up with an error naming it and releases the engine, so the same process can start again', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const busy = (blocker.address() as net.AddressInfo).port;
    await app.stop();
    try {
      await assert.rejects(startTestAppliance({ SVC_HOST: '127.0.0.1', SVC_PORT: String(busy) }, dataDir), (err: Error) =>
        err.message.includes(`SVC_PORT ${busy}`),
      );
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    // The engine, the spool and the metadata store were let go: the same data directory starts
    // again in this process, on the port that was taken, and its data is all there.
    app = await startTestAppliance({ SVC_HOST: '127.0.0.1', SVC_PORT: String(busy) }, dataDir);
    assert.equal(app.port, busy);
    admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
    anon = new Client(app.url);
    rita = await signIn(app.url, 'rita', 'rita-password-1');
    assert.equal((await anon.get('/api/v1/health')).body.status, 'healthy');
  });
});

describe('when the analytical store stops answering', () => {
  // The appliance runs on the remote transport against a loopback ClickHouse HTTP server, which
  // is then shut down: a real outage as seen from the service.
  let bridge: ClickHouseHttpBridge | undefined;
  const chDir = mkdtempSync(path.join(tmpdir(), 'svc-health-ch-'));
  after(async () => {
    await app?.stop();
    await bridge?.close();
    rmSync(chDir, { recursive: true, force: true });
  });

  test('health says unhealthy (503) in the envelope, status reports which store is down', async () => {
    await app.stop(); // one embedded engine per process: the bridge takes it over
    bridge = await startClickHouseHttpBridge({ dataDir: chDir });
    app = await startTestAppliance({ SVC_CLICKHOUSE_URL: bridge.url }, dataDir);
    admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
    anon = new Client(app.url);
    assert.equal((await anon.get('/api/v1/health')).body.status, 'healthy');

    await bridge.close();

    const h = await anon.get('/api/v1/health');
    assert.equal(h.status, 503);
    assert.equal(h.body.status, 'unhealthy');
    expectError(h, 503);

    const ch = await admin.get('/api/v1/health/clickhouse');
    expectErrorSentence(ch, 503, 'ClickHouse');
    assert.equal(ch.body.data?.status, 'unreachable');

    const s = expectOk<{ status: string; clickhouse: { status: string; transport: string }; sqlite: { status: string } }>(
      await admin.get('/api/v1/status'),
    );
    assert.equal(s.status, 'degraded');
    assert.deepEqual([s.clickhouse.status, s.clickhouse.transport], ['unreachable', 'remote']);
    assert.equal(s.sqlite.status, 'healthy');
    // Signing in and the settings live in SQLite and keep working.
    expectOk(await admin.get('/api/v1/settings'));
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig, redactedUrl } from '../../service/src/config.ts';

const root = path.resolve(import.meta.dirname, '../..');

test('defaults follow conventions.md', () => {
  const c = loadConfig({});
  assert.equal(c.host, '0.0.0.0');
  assert.equal(c.port, 8080);
  assert.equal(c.dataDir, path.resolve('./data'));
  assert.equal(c.clickhouse, null);
  assert.equal(c.clickhouseDatabase, 'svc');
  assert.equal(c.adminUsername, 'admin');
  assert.equal(c.adminPassword, null);
  assert.equal(c.maxBodySize, 209715200);
  assert.equal(c.ingestRateLimit, 10000);
  assert.equal(c.ingestRateBurst, 20000);
  assert.equal(c.ingestQueueSize, 100);
  assert.equal(c.ingestWorkers, 4);
  assert.equal(c.metricsEnabled, false);
  assert.equal(c.metricsPort, 9090);
  assert.equal(c.queryTimeoutS, 60);
  assert.equal(c.queryMaxMemoryBytes, 1024 * 1024 * 1024);
  assert.equal(c.alertIntervalS, 60);
  assert.equal(c.ai, null);
  assert.equal(c.logLevel, 'info');
  assert.equal(c.trustProxy, false);
  assert.equal(c.secureCookie, 'auto');
});

test('SVC_TRUST_PROXY and SVC_SECURE_COOKIE forms', () => {
  assert.equal(loadConfig({ SVC_TRUST_PROXY: 'true' }).trustProxy, true);
  assert.equal(loadConfig({ SVC_TRUST_PROXY: 'off' }).trustProxy, false);
  assert.deepEqual(loadConfig({ SVC_TRUST_PROXY: '10.0.0.5, 192.168.1.0/24,::1' }).trustProxy, ['10.0.0.5', '192.168.1.0/24', '::1']);
  assert.equal(loadConfig({ SVC_SECURE_COOKIE: 'true' }).secureCookie, 'always');
  assert.equal(loadConfig({ SVC_SECURE_COOKIE: 'FALSE' }).secureCookie, 'never');
  assert.equal(loadConfig({ SVC_SECURE_COOKIE: 'auto' }).secureCookie, 'auto');
});

test('remote ClickHouse settings are read together', () => {
  const c = loadConfig({
    SVC_CLICKHOUSE_URL: 'http://ch.lan:8123/',
    SVC_CLICKHOUSE_USER: 'svc',
    SVC_CLICKHOUSE_PASSWORD: 'pw',
    SVC_CLICKHOUSE_DATABASE: 'logs_prod',
  });
  assert.deepEqual(c.clickhouse, { url: 'http://ch.lan:8123', user: 'svc', password: 'pw', database: 'logs_prod' });
  assert.equal(c.clickhouseDatabase, 'logs_prod');
});

test('a URL shown or printed loses its credentials and query string', () => {
  assert.equal(redactedUrl('http://u:p%40ss@ch.lan:8123/?password=x'), 'http://ch.lan:8123');
  assert.equal(redactedUrl('https://user@ch.lan/proxy/path?user=a&password=b'), 'https://ch.lan/proxy/path');
  assert.equal(redactedUrl('http://ch.lan:8123'), 'http://ch.lan:8123');
});

test('metrics address forms', () => {
  assert.deepEqual([loadConfig({ SVC_METRICS_ADDR: '127.0.0.1:9100' }).metricsHost, loadConfig({ SVC_METRICS_ADDR: '127.0.0.1:9100' }).metricsPort], ['127.0.0.1', 9100]);
  assert.equal(loadConfig({ SVC_METRICS_ADDR: ':9200' }).metricsPort, 9200);
  assert.equal(loadConfig({ SVC_METRICS_ADDR: '[::1]:9300' }).metricsHost, '::1');
});

const invalid: Array<[Record<string, string>, string]> = [
  [{ SVC_PORT: 'eighty' }, 'SVC_PORT'],
  [{ SVC_PORT: '70000' }, 'SVC_PORT'],
  [{ SVC_CLICKHOUSE_URL: 'ch.lan:8123' }, 'SVC_CLICKHOUSE_URL'],
  [{ SVC_CLICKHOUSE_URL: 'ftp://ch.lan' }, 'SVC_CLICKHOUSE_URL'],
  [{ SVC_CLICKHOUSE_DATABASE: 'drop table;' }, 'SVC_CLICKHOUSE_DATABASE'],
  [{ SVC_METRICS_ENABLED: 'maybe' }, 'SVC_METRICS_ENABLED'],
  [{ SVC_METRICS_ADDR: 'localhost' }, 'SVC_METRICS_ADDR'],
  [{ SVC_INGEST_WORKERS: '0' }, 'SVC_INGEST_WORKERS'],
  [{ SVC_INGEST_QUEUE_SIZE: '-1' }, 'SVC_INGEST_QUEUE_SIZE'],
  [{ SVC_MAX_BODY_SIZE: '1.5' }, 'SVC_MAX_BODY_SIZE'],
  [{ SVC_QUERY_TIMEOUT_S: 'x' }, 'SVC_QUERY_TIMEOUT_S'],
  [{ SVC_LOG_LEVEL: 'loud' }, 'SVC_LOG_LEVEL'],
  [{ SVC_BASE_URL: 'appliance.lan' }, 'SVC_BASE_URL'],
  [{ SVC_AI_BASE_URL: 'not a url' }, 'SVC_AI_BASE_URL'],
  [{ SVC_ADMIN_PASSWORD: 'short' }, 'SVC_ADMIN_PASSWORD'],
  [{ SVC_SECRET_KEY: 'tiny' }, 'SVC_SECRET_KEY'],
  [{ SVC_TRUST_PROXY: 'proxy.lan' }, 'SVC_TRUST_PROXY'],
  [{ SVC_QUERY_MAX_MEMORY_MB: '10' }, 'SVC_QUERY_MAX_MEMORY_MB'],
  [{ SVC_SECURE_COOKIE: 'sometimes' }, 'SVC_SECURE_COOKIE'],
];

for (const [env, name] of invalid) {
  test(`${name}=${Object.values(env)[0]} is refused with a message naming ${name}`, () => {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && e.message.startsWith(name),
    );
  });
}

test('start-up stops with one line naming the bad variable', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'service/src/main.ts'], {
    cwd: root,
    env: { ...process.env, SVC_PORT: 'not-a-port', SVC_DATA_DIR: '/nonexistent-should-not-be-created' },
    encoding: 'utf8',
    timeout: 120_000, // loading the service's modules alone took over 30 s on a loaded machine
  });
  assert.equal(r.status, 2, r.error?.message ?? r.stderr);
  const lines = r.stderr.trim().split('\n').filter((l) => !l.includes('ExperimentalWarning'));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /SVC_PORT/);
  assert.equal(r.stdout.trim(), '');
});

test('the README documents every variable the parser reads', async () => {
  const { readFileSync } = await import('node:fs');
  const source = readFileSync(path.join(root, 'service/src/config.ts'), 'utf8');
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const names = new Set([...source.matchAll(/'(SVC_[A-Z_]+)'/g)].map((m) => m[1]!));
  assert.ok(names.size >= 20);
  for (const n of names) {
    const short = n.replace(/^SVC_(CLICKHOUSE|AI|INGEST_RATE)_(USER|PASSWORD|DATABASE|API_KEY|MODEL|BURST)$/, '_$2');
    assert.ok(readme.includes(n) || readme.includes(short), `README does not mention ${n}`);
  }
});

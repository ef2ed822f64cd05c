// Resource test: the service as `npm start` runs it (a child process, so its own memory is what is
// measured), flooded by a caller with no token and no account: gzip bombs (150 KB inflating to
// 150 MB) and large plain bodies at the three ingest endpoints, the Elasticsearch-compatibility
// writes, sign-in and unknown routes, many at once. Its resident memory stays under the 1.5 GB
// target throughout, it answers health during the flood, nothing is stored, and a shipper with a
// token is served afterwards. (The query that would take the engine's memory is refused with a
// limit sentence in tests/query/query-limits.test.ts.)
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const TARGET_BYTES = 1.5 * 1024 ** 3;
const PASSWORD = 'flood-admin-password-1';
const dataDir = mkdtempSync(path.join(tmpdir(), 'floods-'));
let svc: ServiceProcess;

before(async () => {
  svc = await startServiceProcess({ dataDir, env: { SVC_ADMIN_PASSWORD: PASSWORD }, timeoutMs: 120_000 });
});
after(async () => {
  await svc?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The service's resident memory now and its peak since start (bytes), from /proc. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${svc.child.pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Sends and reads the answer's status; a connection the server ended early counts as refused (0). */
async function attempt(url: string, init: RequestInit): Promise<number> {
  try {
    const r = await fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

test('floods without credentials keep the service under 1.5 GB and answering health', { timeout: 600_000 }, async (t) => {
  const bomb = gzipSync(Buffer.alloc(150 * 1024 * 1024, 0x20), { level: 9 });
  assert.ok(bomb.length < 300 * 1024, `the bomb is ${bomb.length} bytes`);
  const plain = Buffer.alloc(40 * 1024 * 1024, 0x7b);
  const template = Buffer.from(JSON.stringify({ index_patterns: ['x-*'], template: { settings: { pad: 'p'.repeat(1024 * 1024 - 100) } } }));
  const gz = { 'content-encoding': 'gzip', 'content-type': 'application/json' };

  const waves: Array<() => Promise<number>> = [];
  for (let round = 0; round < 3; round++) {
    for (const p of ['/api/v1/ingest', '/_bulk', '/v1/logs']) {
      for (let i = 0; i < 8; i++) waves.push(() => attempt(svc.base + p, { method: 'POST', headers: gz, body: bomb }));
      waves.push(() => attempt(svc.base + p, { method: 'POST', headers: { authorization: 'Bearer svc_ingest_' + '0'.repeat(32) }, body: plain }));
    }
    for (const kind of ['_index_template', '_template', '_component_template', '_ilm/policy', '_ingest/pipeline']) {
      for (let i = 0; i < 8; i++) waves.push(() => attempt(`${svc.base}/${kind}/t${round}-${i}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: template }));
    }
    for (let i = 0; i < 4; i++) {
      waves.push(() => attempt(`${svc.base}/api/v1/auth/login`, { method: 'POST', headers: gz, body: bomb }));
      waves.push(() => attempt(`${svc.base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: plain }));
      waves.push(() => attempt(`${svc.base}/api/v1/no-such-route`, { method: 'POST', headers: gz, body: bomb }));
      waves.push(() => attempt(`${svc.base}/api/v1/dictionaries/x/import`, { method: 'POST', headers: { 'content-type': 'text/csv' }, body: plain }));
    }
  }

  let peakSeen = 0;
  let healthAnswers = 0;
  let flooding = true;
  const watch = (async () => {
    while (flooding) {
      peakSeen = Math.max(peakSeen, memory().rss);
      const h = await attempt(`${svc.base}/api/v1/health`, {});
      assert.equal(h, 200, 'health answers during the flood');
      healthAnswers++;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const statuses: number[] = [];
  // 16 at a time, as many as a LAN attacker's one machine keeps busy.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < waves.length) statuses.push(await waves[next++]!());
    }),
  );
  flooding = false;
  await watch;

  const m = memory();
  t.diagnostic(`${waves.length} requests; service peak RSS ${(m.peak / 1024 ** 2).toFixed(0)} MiB (sampled during the flood ${(peakSeen / 1024 ** 2).toFixed(0)} MiB); ${healthAnswers} health answers`);
  assert.ok(m.peak < TARGET_BYTES, `peak resident memory ${(m.peak / 1024 ** 2).toFixed(0)} MiB`);
  assert.ok(peakSeen < TARGET_BYTES);
  assert.ok(healthAnswers >= 1);
  assert.ok(statuses.every((s) => s === 0 || (s >= 400 && s < 500)), `statuses: ${[...new Set(statuses)].join(', ')}`);
  assert.ok(statuses.filter((s) => s === 401).length >= (3 * 3 * 8) / 2, 'the ingest bombs are refused for want of a token');

  // Nothing was stored, and a shipper with a token is served.
  const login = await fetch(`${svc.base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  assert.equal(login.status, 200);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const fractals = (await (await fetch(`${svc.base}/api/v1/fractals`, { headers: { cookie } })).json()) as { data: Array<{ id: string; log_count?: number }> };
  const f = (await (await fetch(`${svc.base}/api/v1/fractals`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'after-flood' }) })).json()) as {
    data: { id: string; default_ingest_token: string };
  };
  const ok = await fetch(`${svc.base}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${f.data.default_ingest_token}` }, body: '{"msg":"after the flood"}' });
  assert.equal(ok.status, 200);
  const templates = (await (await fetch(`${svc.base}/_index_template`, { headers: { authorization: `Bearer ${f.data.default_ingest_token}` } })).json()) as { index_templates: unknown[] };
  assert.deepEqual(templates.index_templates, [], 'no template sent without a token was kept');
  for (const fr of fractals.data) {
    const stats = (await (await fetch(`${svc.base}/api/v1/fractals/${fr.id}/stats`, { headers: { cookie } })).json()) as { data: { log_count: number } };
    assert.equal(stats.data.log_count, 0, 'nothing sent without a token was stored');
  }
});

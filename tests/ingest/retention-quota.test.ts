// Retention and disk quota take effect without a restart; stats report what is stored.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, makeUser, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { storedLogs, waitForLogs } from '../support/logs.ts';

let a: TestAppliance;
let admin: Client;
before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(() => a.dispose());

const send = (token: string, lines: object[]) =>
  fetch(`${a.url}/api/v1/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: lines.map((l) => JSON.stringify(l)).join('\n'),
  }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() }));

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

test('retention removes logs older than the window as soon as it is set', async () => {
  const f = await ingestFractal(admin, 'retained');
  await send(f.token, [
    { age: 'old', timestamp: daysAgo(40) },
    { age: 'older', timestamp: daysAgo(400) },
    { age: 'new', timestamp: daysAgo(1) },
  ]);
  await waitForLogs(a, f.id, 3);
  const r = await admin.put(`/api/v1/fractals/${f.id}/retention`, { retention_days: 30 });
  assert.equal(r.status, 200);
  assert.equal(r.body.data.retention_days, 30);
  assert.deepEqual((await storedLogs(a, f.id)).map((x) => x.fields.age), ['new']);
  const stats = (await admin.get(`/api/v1/fractals/${f.id}/stats`)).body.data;
  assert.equal(stats.log_count, 1);
  assert.ok(stats.size_bytes > 0);
  assert.ok(Date.parse(stats.oldest) > Date.now() - 2 * 86_400_000);
  assert.equal(stats.oldest, stats.newest);
});

test('a reject quota refuses new logs with 429 until it is raised, and the pressure report says why', async () => {
  const f = await ingestFractal(admin, 'quota-reject');
  await send(f.token, Array.from({ length: 50 }, (_, i) => ({ i, pad: 'p'.repeat(100) })));
  await waitForLogs(a, f.id, 50);
  const q = await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 1000, action: 'reject' });
  assert.equal(q.status, 200);
  assert.deepEqual([q.body.data.quota_bytes, q.body.data.quota_action], [1000, 'reject']);
  const refused = await send(f.token, [{ more: true }]);
  assert.equal(refused.status, 429);
  assert.match(refused.body.error, /disk quota/);
  assert.ok(refused.headers.get('retry-after'));
  const p = (await admin.get('/api/v1/system/pressure')).body.data;
  assert.ok(p.active.includes('disk_quota'));
  assert.deepEqual(p.layers.disk_quota.fractals_over_quota, [f.id]);
  assert.ok(!JSON.stringify(p).includes(f.id) || p.layers.disk_quota.fractals_over_quota.length === 1);
  // Another tenant's user sees that a quota refuses work, never which fractal's.
  const outsider = await makeUser(admin, 'quota-outsider');
  const theirs = (await outsider.get('/api/v1/system/pressure')).body.data;
  assert.ok(theirs.active.includes('disk_quota'));
  assert.deepEqual(theirs.layers.disk_quota.fractals_over_quota, []);
  assert.ok(!JSON.stringify(theirs).includes(f.id), JSON.stringify(theirs));

  await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: null });
  assert.equal((await send(f.token, [{ more: true }])).status, 200);
});

test('a rollover quota drops the oldest logs until the fractal fits', async () => {
  const f = await ingestFractal(admin, 'quota-rollover');
  const lines = Array.from({ length: 100 }, (_, i) => ({ i, timestamp: daysAgo(100 - i), pad: 'q'.repeat(200) }));
  await send(f.token, lines);
  const all = await waitForLogs(a, f.id, 100);
  const total = all.reduce((n, r) => n + Buffer.byteLength(r.raw), 0);
  const r = await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: Math.floor(total / 2), action: 'rollover' });
  assert.equal(r.status, 200);
  const left = await storedLogs(a, f.id);
  assert.ok(left.length > 0 && left.length <= 50, `kept ${left.length}`);
  const kept = left.map((x) => x.fields.i as number).sort((x, y) => x - y);
  assert.equal(kept.at(-1), 99, 'the newest logs are kept');
  assert.equal(kept[0], 100 - kept.length, 'the oldest went first');
  // rollover never refuses
  assert.equal((await send(f.token, [{ after: true }])).status, 200);
});

test('quota and retention bodies are validated', async () => {
  const f = await ingestFractal(admin, 'validate');
  const bad = await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 10, action: 'explode' });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /action/);
  const bad2 = await admin.put(`/api/v1/fractals/${f.id}/retention`, { retention_days: 'ten' });
  assert.equal(bad2.status, 400);
  assert.match(bad2.body.error, /retention_days/);
});

// The query entry other domains use without a caller (query-service.ts runScopeQuery): a query over
// a fractal's or prism's logs in a window of arrival time, as the alert engine runs it each tick.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runScopeQueries, runScopeQuery, prepareScopeQuery, QueryInputError } from '../../service/src/query/query-service.ts';
import { BATCH_MAX_QUERIES } from '../../service/src/query/batch.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { ingestFractal } from '../support/ingest.ts';
import { ingest } from '../support/query.ts';
import { storedLogs } from '../support/logs.ts';

let a: TestAppliance;
let web: { id: string; token: string };
let db: { id: string; token: string };
let prismId: string;

before(async () => {
  a = await startTestAppliance();
  const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  web = await ingestFractal(admin, 'web');
  db = await ingestFractal(admin, 'db');
  prismId = expectOk(await admin.post('/api/v1/prisms', { name: 'all', fractal_ids: [web.id, db.id] }), 201).id;
});
after(() => a.dispose());

const scope = (type: 'fractal' | 'prism', id: string) => ({ type, id });

test('a window of arrival finds a late log whose event time is days old, and consecutive windows share no log', async () => {
  const t0 = a.ingest.settledBefore();
  // Event time two days ago: a 24 h search by event time would not see it; its arrival is now.
  await ingest(a, web.token, web.id, [{ timestamp: new Date(Date.now() - 2 * 86_400_000).toISOString(), user: 'late', action: 'login' }]);
  const t1 = a.ingest.settledBefore();
  await ingest(a, web.token, web.id, [{ user: 'next', action: 'login' }]);
  const t2 = a.ingest.settledBefore();
  assert.ok(t0 <= t1 && t1 <= t2);

  const first = await runScopeQuery(a.context, { query: 'action=login', scope: scope('fractal', web.id), start: t0, end: t1 });
  assert.deepEqual(first.rows.map((r) => r.user), ['late']);
  const second = await runScopeQuery(a.context, { query: 'action=login', scope: scope('fractal', web.id), start: t1, end: t2 });
  assert.deepEqual(second.rows.map((r) => r.user), ['next']);
  // The same window by event time does not hold the late log.
  const byEvent = await runScopeQuery(a.context, { query: 'action=login', scope: scope('fractal', web.id), start: t0, end: t2, timeColumn: 'timestamp' });
  assert.deepEqual(byEvent.rows.map((r) => r.user), ['next']);
});

test('the window excludes its end: a log stamped exactly at the end belongs to the next window', async () => {
  await ingest(a, db.token, db.id, [{ user: 'edge', action: 'query' }]);
  const [log] = (await storedLogs(a, db.id)).filter((l) => l.raw.includes('edge'));
  const at = new Date(`${log!.ingest_timestamp.replace(' ', 'T').slice(0, 23)}Z`);
  const ending = await runScopeQuery(a.context, { query: 'user=edge', scope: scope('fractal', db.id), start: new Date(at.getTime() - 1000), end: at });
  assert.equal(ending.rows.length, 0);
  const starting = await runScopeQuery(a.context, { query: 'user=edge', scope: scope('fractal', db.id), start: at, end: new Date(at.getTime() + 1) });
  assert.equal(starting.rows.length, 1);
});

test('a prism scope reads its member fractals; aggregations come back as rows', async () => {
  const end = a.ingest.settledBefore();
  const start = new Date(end.getTime() - 3_600_000);
  const r = await runScopeQuery(a.context, { query: '* | groupBy(user) | sort(user, order=asc)', scope: scope('prism', prismId), start, end });
  assert.deepEqual(r.rows.map((x) => x.user), ['edge', 'late', 'next']);
  assert.equal(r.compiled.isAggregated, true);
});

test('a query that does not compile, a bad regex and a scope that is gone are input errors', async () => {
  const w = { start: new Date(Date.now() - 60_000), end: new Date() };
  await assert.rejects(prepareScopeQuery(a.context, { query: 'groupBy(', scope: scope('fractal', web.id), ...w }), (e) => e instanceof QueryInputError && !!e.errorPos);
  await assert.rejects(prepareScopeQuery(a.context, { query: 'user=/(/', scope: scope('fractal', web.id), ...w }), (e) => e instanceof QueryInputError && /regular expression/.test(e.message));
  await assert.rejects(prepareScopeQuery(a.context, { query: '*', scope: scope('fractal', '00000000-0000-4000-8000-000000000000'), ...w }), (e) => e instanceof QueryInputError && /no longer exists/.test(e.message));
});

test('several queries over one window: filter-only ones share a scan and each gets exactly what it gets alone', async () => {
  const end = a.ingest.settledBefore();
  const start = new Date(end.getTime() - 3_600_000);
  const queries = ['action=login', 'user=late OR user=edge', 'user=/^n/', 'action=query user!=x', '* | groupBy(user)', 'groupBy(', 'user=nobody'];
  const batch = await runScopeQueries(a.context, { queries, scope: scope('prism', prismId), start, end });
  for (const [i, q] of queries.entries()) {
    const o = batch[i]!;
    if (q === 'groupBy(') {
      assert.equal(o.ok, false);
      assert.ok(!o.ok && o.error instanceof QueryInputError);
      continue;
    }
    assert.ok(o.ok, q);
    const alone = await runScopeQuery(a.context, { query: q, scope: scope('prism', prismId), start, end });
    // Aggregated rows have no order unless a command sets one (query-language.md, "Default
    // order"): compare them as a set; events keep their newest-first order.
    const key = (rows: Array<Record<string, unknown>>) => {
      const each = rows.map((r) => JSON.stringify(r));
      return JSON.stringify(alone.compiled.isAggregated ? each.sort() : each);
    };
    assert.equal(key(o.result.rows), key(alone.rows), q);
  }
});

test('more queries than one statement combines (a synced feed) are split into several scans, each query still exact', async () => {
  const end = a.ingest.settledBefore();
  const start = new Date(end.getTime() - 3_600_000);
  const users = ['late', 'next', 'edge', 'nobody'];
  // Each query distinct (a condition that never excludes), 2.5 statements' worth.
  const queries = Array.from({ length: Math.ceil(BATCH_MAX_QUERIES * 2.5) }, (_, i) => `user=${users[i % users.length]} user!=never${i}`);
  const batch = await runScopeQueries(a.context, { queries, scope: scope('prism', prismId), start, end });
  const expected = new Map<string, string[]>();
  for (const u of users) expected.set(u, (await runScopeQuery(a.context, { query: `user=${u}`, scope: scope('prism', prismId), start, end })).rows.map((r) => String(r.log_id)));
  assert.deepEqual([...expected.values()].map((ids) => ids.length), [1, 1, 1, 0]);
  for (const [i, o] of batch.entries()) {
    assert.ok(o.ok, queries[i]);
    assert.deepEqual(o.result.rows.map((r) => String(r.log_id)), expected.get(users[i % users.length]!), queries[i]);
  }
});

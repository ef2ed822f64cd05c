// The query and logs endpoints around the language: scope and keys, prisms, streaming,
// validation, reference, field statistics and catalog, paging, the logs reads, metrics.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { col, ingest, ok, query, queryStream, sampleEvents, sseFrames } from '../support/query.ts';

let a: TestAppliance;
let admin: Client;
let fa: { id: string; token: string };
let fb: { id: string; token: string };

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  fa = await ingestFractal(admin, 'alpha');
  fb = await ingestFractal(admin, 'beta');
  await ingest(a, fa.token, fa.id, sampleEvents());
  await ingest(a, fb.token, fb.id, [
    { timestamp: new Date(Date.now() - 90_000).toISOString(), user: 'mallory', host: 'vpn', status: 403 },
    { timestamp: new Date(Date.now() - 30_000).toISOString(), user: 'trent', host: 'vpn', status: 200 },
  ]);
});
after(() => a.dispose());

describe('scope', () => {
  test('a key scoped to one fractal reads it and cannot read another', async () => {
    const key = (await admin.post(`/api/v1/fractals/${fa.id}/api-keys`, { name: 'reader' })).body.data.key as string;
    const byKey = new Client(a.url, { authorization: `Bearer ${key}` });
    const own = await ok(byKey, 'count()', { fractal_id: fa.id });
    assert.equal(own.results[0]._count, 8);
    const implicit = await ok(byKey, 'count()');
    assert.equal(implicit.results[0]._count, 8, 'without fractal_id a key reads its own scope');
    const other = await query(byKey, 'count()', { fractal_id: fb.id });
    assert.equal(other.status, 404);
    assert.doesNotMatch(JSON.stringify(other.body), /mallory/);
    const viaPrism = await query(byKey, 'count()', { prism_id: (await admin.post('/api/v1/prisms', { name: 'p-key', fractal_ids: [fa.id, fb.id] })).body.data.id });
    assert.equal(viaPrism.status, 404);
  });

  test('a key without the query permission is refused', async () => {
    const key = (await admin.post(`/api/v1/fractals/${fa.id}/api-keys`, { name: 'commenter', permissions: { query: false, comment: true } })).body.data.key;
    const r = await query(new Client(a.url, { authorization: `Bearer ${key}` }), 'count()', { fractal_id: fa.id });
    assert.equal(r.status, 403);
    assert.match(r.body.error!, /query/);
  });

  test('a user sees only fractals they hold a role on', async () => {
    const eve = await makeUser(admin, 'eve');
    assert.equal((await query(eve, '*', { fractal_id: fa.id })).status, 404);
    await admin.post(`/api/v1/fractals/${fa.id}/permissions`, { username: 'eve', role: 'viewer' });
    assert.equal((await ok(eve, 'count()', { fractal_id: fa.id })).results[0]._count, 8);
    assert.equal((await query(eve, '*', { fractal_id: fb.id })).status, 404);
  });

  test('a prism query returns rows from each member, telling which fractal each came from', async () => {
    const prism = (await admin.post('/api/v1/prisms', { name: 'both', fractal_ids: [fa.id, fb.id] })).body.data;
    const r = await ok(admin, '*', { prism_id: prism.id });
    assert.equal(r.count, 10);
    assert.deepEqual(new Set(col(r, 'fractal_id')), new Set([fa.id, fb.id]));
    assert.equal(r.results.find((x) => x.user === 'mallory')!.fractal_id, fb.id);
    const g = await ok(admin, 'groupBy(fractal_id)', { prism_id: prism.id });
    assert.deepEqual(Object.fromEntries(g.results.map((x) => [x.fractal_id, x._count])), { [fa.id]: 8, [fb.id]: 2 });
  });

  test('the time range bounds the events, inclusive', async () => {
    const r = await ok(admin, '*', { fractal_id: fa.id, start: new Date(Date.now() - 4.5 * 60_000).toISOString(), end: new Date().toISOString() });
    assert.equal(r.count, 4);
    const none = await ok(admin, '*', { fractal_id: fa.id, start: '2020-01-01T00:00:00Z', end: '2020-01-02T00:00:00Z' });
    assert.equal(none.count, 0);
  });
});

describe('stream', () => {
  test('frames meta, rows, histogram and done carry the same answer as /query', async () => {
    const res = await queryStream(admin, { query: 'status=200', fractal_id: fa.id });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /text\/event-stream/);
    const frames = await sseFrames(res);
    assert.equal(frames[0].event, 'meta');
    assert.deepEqual(frames[0].data.field_order, ['timestamp', 'norm_log', 'log_id', 'fractal_id']);
    const rows = frames.filter((f) => f.event === 'rows').flatMap((f) => f.data.rows);
    assert.equal(rows.length, 4);
    const done = frames.find((f) => f.event === 'done')!;
    assert.equal(done.data.count, 4);
    assert.equal(typeof done.data.execution_ms, 'number');
    const hist = frames.find((f) => f.event === 'histogram');
    if (hist) assert.equal(hist.data.histogram.reduce((n: number, b: { count: number }) => n + b.count, 0), 4);
    else assert.equal(done.data.histogram_pending, true);
  });

  test('a histogram counted from the rows equals the one the engine counts, which later commands never change', async () => {
    const range = { fractal_id: fa.id, start: new Date(Date.now() - 3600_000).toISOString(), end: new Date().toISOString() };
    const fromRows = await ok(admin, 'status=200 OR user=bob', range);
    assert.equal(fromRows.bucket_seconds, 30);
    const counted = (fromRows.histogram as Array<{ count: number }>).filter((b) => b.count > 0);
    assert.ok(counted.length >= 3, 'the events fall into several 30 s buckets');
    // head() keeps one row, so the histogram cannot come from the rows: the engine counts the filters.
    const frames = await sseFrames(await queryStream(admin, { query: 'status=200 OR user=bob | head(1)', ...range }));
    assert.equal(frames.filter((f) => f.event === 'rows').flatMap((f) => f.data.rows).length, 1);
    const scanned = frames.find((f) => f.event === 'histogram')!.data;
    assert.deepEqual(scanned.histogram, fromRows.histogram);
    assert.deepEqual([scanned.time_start, scanned.time_end], [fromRows.time_start, fromRows.time_end]);
  });

  test('a bad query answers 400 before the stream starts', async () => {
    const res = await queryStream(admin, { query: 'status>=', fractal_id: fa.id });
    assert.equal(res.status, 400);
    assert.deepEqual((await res.json()).error_pos, { start: 8, end: 8 });
  });
});

describe('validate and reference', () => {
  const validate = (q: string, extra: Record<string, unknown> = {}) => admin.post('/api/v1/query/validate', { query: q, fractal_id: fa.id, ...extra });

  test('a valid query, an empty one, and errors with positions', async () => {
    assert.equal((await validate('status=200 | groupBy(user)')).body.valid, true);
    assert.equal((await validate('   ')).body.valid, true);
    const bad = (await validate('user="Zoë" | groupBy(host')).body;
    assert.equal(bad.valid, false);
    assert.equal(bad.error, 'Parse error: expected token RPAREN, got EOF');
    assert.equal(bad.error_type, 'parse');
    assert.deepEqual(bad.error_pos, { start: 25, end: 25 });
    const emoji = (await validate('tag="🔥" | #')).body;
    assert.deepEqual(emoji.error_pos, { start: 10, end: 11 });
    const unknown = (await validate('* | grupBy(user)')).body;
    assert.equal(unknown.error_type, 'translate');
    assert.equal(unknown.error, 'Query error: unsupported command: grupby — did you mean groupBy?');
    assert.equal((await validate('* | foo(x)')).body.error, 'Query error: unsupported command: foo');
  });

  test('variables are substituted before validation and execution', async () => {
    const v = await validate('user=@who | groupBy(host', { variables: [{ name: 'who', value: 'alice' }] });
    assert.deepEqual(v.body.error_pos, { start: 25, end: 25 }, 'positions refer to the text after substitution');
    const r = await ok(admin, 'user=@who', { fractal_id: fa.id, variables: [{ name: 'who', value: 'bob' }] });
    assert.equal(r.count, 2);
  });

  test('an over-long query is refused with its size', async () => {
    const r = await query(admin, `"${'x'.repeat(10_001)}"`, { fractal_id: fa.id });
    assert.equal(r.status, 400);
    assert.match(r.body.error!, /^Query too long \(10003 chars, max 10000\)$/);
  });

  test('the reference lists every command the planner knows, with signatures', async () => {
    const ref = (await admin.get('/api/v1/query/reference')).body.data;
    const names = ref.commands.map((c: { name: string }) => c.name);
    for (const n of ['groupBy', 'count', 'table', 'sort', 'head', 'tail', 'dedup', 'timechart', 'regex', 'in', 'cidr']) assert.ok(names.includes(n), n);
    const gb = ref.commands.find((c: { name: string }) => c.name === 'groupBy');
    assert.match(gb.signature, /^groupBy\(/);
    assert.equal(gb.tier, 'CORE');
    // match()'s example reads a dictionary: with one of that name, it validates like the rest.
    const dict = await admin.post('/api/v1/dictionaries', { name: 'threat_intel', columns: ['ip', 'threat_score', 'category'], is_global: true });
    assert.equal(dict.status, 201, JSON.stringify(dict.body));
    for (const c of ref.commands) {
      const r = await validate(c.example);
      assert.equal(r.body.valid, true, `${c.name} example "${c.example}" does not validate: ${r.body.error}`);
    }
  });
});

describe('field statistics and catalog', () => {
  test('fieldstats gives top values with share, distinct count and numeric stats', async () => {
    const r = await admin.post('/api/v1/query/fieldstats', { query: '*', field: 'user', fractal_id: fa.id });
    assert.equal(r.status, 200);
    const s = r.body.data;
    assert.equal(s.total, 8);
    assert.equal(s.distinct, 5);
    assert.deepEqual(s.top[0], { value: 'alice', count: 3, share: 37.5 });
    assert.equal(s.numeric, undefined);
    const b = (await admin.post('/api/v1/query/fieldstats', { query: 'host=web1', field: 'bytes', fractal_id: fa.id })).body.data;
    assert.equal(b.total, 4);
    assert.deepEqual(b.numeric, { min: 9, max: 300, avg: 164.75 });
    const g = (await admin.post('/api/v1/query/fieldstats', { query: 'groupBy(user)', field: '_count', fractal_id: fa.id })).body.data;
    assert.equal(g.total, 5);
    assert.deepEqual(g.numeric, { min: 1, max: 3, avg: 1.6 });
  });

  test('the fields catalog lists names, types and how often each appears', async () => {
    const r = await admin.get(`/api/v1/query/fields?fractal_id=${fa.id}`);
    assert.equal(r.status, 200);
    const fields = r.body.data.fields as Array<{ name: string; type: string; count: number; share: number }>;
    const src = fields.find((f) => f.name === 'src_ip')!;
    assert.equal(src.count, 7);
    assert.equal(src.share, 87.5);
    assert.equal(fields.find((f) => f.name === 'bytes')!.type, 'Int64');
    assert.equal(fields.find((f) => f.name === 'user')!.type, 'String');
    const names = (await admin.get(`/api/v1/logs/fields?fractal_id=${fa.id}`)).body.data;
    assert.ok(names.includes('msg') && names.includes('image'));
  });
});

describe('logs endpoints', () => {
  test('recent gives at most 50 events of the last day, newest first', async () => {
    const r = await admin.get(`/api/v1/logs/recent?fractal_id=${fa.id}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.data.length, 8);
    assert.equal(r.body.data[0].user, 'alice');
  });

  test('histogram counts per minute, coarser for long ranges and says so', async () => {
    const end = new Date();
    const start = new Date(end.getTime() - 3600_000);
    const r = (await admin.get(`/api/v1/logs/histogram?fractal_id=${fa.id}&start=${start.toISOString()}&end=${end.toISOString()}`)).body.data;
    assert.equal(r.bucket_seconds, 60);
    assert.equal(r.buckets.reduce((n: number, b: { count: number }) => n + b.count, 0), 8);
    assert.equal(r.note, undefined);
    const week = (await admin.get(`/api/v1/logs/histogram?fractal_id=${fa.id}&start=${new Date(end.getTime() - 7 * 86400_000).toISOString()}`)).body.data;
    assert.ok(week.bucket_seconds > 60);
    assert.match(week.note, /longer than a day/);
  });

  test('by-timestamp returns one log in full with its original record', async () => {
    const row = (await ok(admin, 'user=carol', { fractal_id: fa.id })).results[0];
    const r = await admin.post('/api/v1/logs/by-timestamp', { timestamp: row.timestamp, log_id: row.log_id, fractal_id: fa.id });
    assert.equal(r.status, 200);
    assert.equal(r.body.data.fields.user, 'carol');
    assert.equal(JSON.parse(r.body.data.raw).msg, 'select ok');
    assert.match(r.body.data.timestamp, /Z$/);
    const missing = await admin.post('/api/v1/logs/by-timestamp', { timestamp: row.timestamp, log_id: row.log_id, fractal_id: fb.id });
    assert.equal(missing.status, 404);
  });
});

describe('row cap and paging', () => {
  test('the row cap from settings reports limit_hit "search"', async () => {
    await admin.put('/api/v1/settings', { max_query_rows: 3 });
    try {
      const r = await ok(admin, '*', { fractal_id: fa.id });
      assert.equal(r.count, 3);
      assert.equal(r.limit_hit, 'search');
      // A limit written in the query never lifts the cap; a smaller one is kept.
      const own = await ok(admin, 'limit(5)', { fractal_id: fa.id });
      assert.equal(own.count, 3);
      assert.equal(own.limit_hit, 'search');
      const smaller = await ok(admin, 'limit(2)', { fractal_id: fa.id });
      assert.equal(smaller.count, 2);
      assert.equal(smaller.limit_hit, undefined);
    } finally {
      await admin.put('/api/v1/settings', { max_query_rows: 10_000 });
    }
  });

  test('with the cap off, event searches page by 200 with a cursor', async () => {
    const many = Array.from({ length: 450 }, (_, i) => ({ timestamp: new Date(Date.now() - 3600_000 - i * 1000).toISOString(), n: i }));
    const f = await ingestFractal(admin, 'paging');
    await ingest(a, f.token, f.id, many);
    await admin.put('/api/v1/settings', { max_query_rows: 0 });
    try {
      const seen: number[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page++) {
        const r = await ok(admin, '*', { fractal_id: f.id, ...(cursor ? { cursor } : {}) });
        seen.push(...r.results.map((x) => Number(x.n)));
        if (!r.has_more) break;
        assert.equal(r.count, 200);
        cursor = r.next_cursor as string;
      }
      assert.deepEqual(seen, many.map((_, i) => i));
      const bad = await query(admin, '*', { fractal_id: f.id, cursor: 'not-a-cursor' });
      assert.equal(bad.status, 400);
    } finally {
      await admin.put('/api/v1/settings', { max_query_rows: 10_000 });
    }
  });
});

describe('metrics', () => {
  test('queries are counted by outcome', async () => {
    await query(admin, 'status>=', { fractal_id: fa.id });
    const text = await a.context.metrics.registry.metrics();
    assert.match(text, /svc_queries_total\{endpoint="query",outcome="ok"\} [1-9]/);
    assert.match(text, /svc_queries_total\{endpoint="query",outcome="parse"\} [1-9]/);
    assert.match(text, /svc_query_duration_seconds_count\{endpoint="query"\} [1-9]/);
    assert.match(text, /svc_query_rows_total\{endpoint="query"\} [1-9]/);
  });
});

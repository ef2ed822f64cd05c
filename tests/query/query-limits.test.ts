// Limits that need volume: the time-out stops the query inside the engine (408), a stream whose
// client disconnects stops its query, and a response over 50 MiB is cut to 1,000 rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { ok, query, queryStream } from '../support/query.ts';

let a: TestAppliance;
let admin: Client;
let big: string;
let wide: string;

/** Generates rows inside the engine: far faster than ingesting millions over HTTP. */
async function generate(fractalId: string, n: number, fieldsSql: string): Promise<void> {
  const ch = a.context.ch;
  await ch.client.command({
    query: `INSERT INTO ${ch.table('logs')} (fractal_id, timestamp, ingest_timestamp, log_id, raw, fields)
      SELECT {fid:UUID}, now64(9) - toIntervalMillisecond(number * 10), now64(9), generateUUIDv4(number), f, f
      FROM (SELECT number, ${fieldsSql} AS f FROM numbers({n:UInt64}))`,
    query_params: { fid: fractalId, n },
  });
}

/**
 * Whether the engine is still working on a query whose text contains `marker`: its rows read
 * keep growing. (An embedded stream's entry can linger in system.processes after it stopped.)
 */
async function working(marker: string): Promise<boolean> {
  const readRows = async () => {
    const rs = await a.context.ch.client.query({
      query: `SELECT sum(read_rows) AS n, count() AS q FROM system.processes
              WHERE position(query, {m:String}) > 0 AND position(query, 'system.processes') = 0 AND is_cancelled = 0`,
      query_params: { m: marker },
      format: 'JSONEachRow',
    });
    const [r] = (await rs.json()) as Array<{ n: string; q: string }>;
    return Number(r.q) === 0 ? -1 : Number(r.n);
  };
  const first = await readRows();
  if (first === -1) return false;
  await new Promise((r) => setTimeout(r, 400));
  const second = await readRows();
  return second !== -1 && second > first;
}

/** Waits up to `ms` for the engine to stop working on the marked query. */
async function stops(marker: string, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; ) if (!(await working(marker))) return true;
  return false;
}

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  big = (await admin.post('/api/v1/fractals', { name: 'big' })).body.data.id;
  wide = (await admin.post('/api/v1/fractals', { name: 'wide' })).body.data.id;
  await generate(
    big,
    2_000_000,
    `concat('{"user":"u', toString(number % 5000), '","host":"h', toString(number % 200), '","msg":"', repeat(hex(cityHash64(number)), 12), '"}')`,
  );
  await generate(wide, 1100, `concat('{"n":', toString(number), ',"blob":"', repeat('x', 60000), '"}')`);
});
after(() => a.dispose());

// Twenty absent terms over two million serialized events: seconds of work for the engine.
const heavy = Array.from({ length: 20 }, (_, i) => `"absent-term-${i}"`).join(' OR ');

describe('time-out and cancellation', () => {
  test('the query time-out answers 408 and the engine stops the query', async () => {
    await admin.put('/api/v1/settings', { query_timeout_s: 1 });
    try {
      const started = Date.now();
      const r = await query(admin, heavy, { fractal_id: big });
      assert.equal(r.status, 408, JSON.stringify(r.body));
      assert.equal(r.body.error_type, 'timeout');
      assert.equal(r.body.error, 'Query timeout: Consider adding more specific filters or reducing time range for raw log searches');
      assert.ok(Date.now() - started < 10_000);
      assert.ok(await stops('absent-term-19', 3000), 'the engine stopped the query at the time-out');
      assert.equal((await ok(admin, 'count()', { fractal_id: big })).results[0]._count, 2_000_000, 'the service keeps serving');
    } finally {
      await admin.put('/api/v1/settings', { query_timeout_s: 60 });
    }
  });

  test('a stream whose client goes away stops its query in the engine', async () => {
    const controller = new AbortController();
    const res = await queryStream(admin, { query: `${heavy} | groupBy(user)`, fractal_id: big }, controller.signal);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /event: meta/);
    let started = false;
    for (const end = Date.now() + 10_000; !started && Date.now() < end; ) started = await working('absent-term-19');
    assert.ok(started, 'the query is running');
    controller.abort();
    assert.ok(await stops('absent-term-19', 3000), 'the engine stopped the query after the client left');
  });
});

describe('response size', () => {
  test('over 50 MiB the result is cut to 1,000 rows with a warning and no chart', async () => {
    const r = await ok(admin, '*', { fractal_id: wide });
    assert.equal(r.count, 1000);
    assert.equal(r.results.length, 1000);
    assert.equal(r.limit_hit, 'truncated');
    assert.equal(
      r.error,
      'Warning: Result set was very large and has been truncated to 1000 rows. Consider adding more specific filters or using head() to limit results.',
    );
    assert.equal(r.chart_type, undefined);
    assert.equal(r.chart_config, undefined);
    const small = await ok(admin, 'table(n)', { fractal_id: wide });
    assert.equal(small.count, 1100, 'narrow rows of the same events are not cut');
  });
});

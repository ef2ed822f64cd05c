// Limits that need volume: the time-out stops the query inside the engine (408), a stream whose
// client disconnects stops its query, a response over 50 MiB is cut to 1,000 rows (and rows are
// never all held first: a byte budget stops them), a limit written in the query never lifts the row
// cap, and a query that would take the engine's memory answers 400 with a sentence while the service
// keeps serving (every read of the query and logs endpoints runs under the same limits).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { queryLimits } from '../../service/src/query/run.ts';
import { ok, query, queryStream, sseFrames } from '../support/query.ts';

let a: TestAppliance;
let admin: Client;
let big: string;
let wide: string;
let sneaky: string;
let many: string;

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
  // 1,100 rows of about 50 kB (the blob twice: as a field and in norm_log): over §5's 50 MiB estimate,
  // while 1,000 of them stay within the result budget.
  await generate(wide, 1100, `concat('{"n":', toString(number), ',"blob":"', repeat('x', 25000), '"}')`);
  // Ten small events on top of 700 of 60 kB: §5's estimate (the first 10 rows) sees a small result.
  sneaky = (await admin.post('/api/v1/fractals', { name: 'sneaky' })).body.data.id;
  await generate(sneaky, 710, `concat('{"n":', toString(number), ',"blob":"', repeat('x', if(number < 10, 10, 60000)), '"}')`);
  many = (await admin.post('/api/v1/fractals', { name: 'many' })).body.data.id;
  await generate(many, 30_000, `concat('{"n":', toString(number), ',"user":"u', toString(number % 20000), '"}')`);
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

describe('the row cap', () => {
  test('a limit written in the query is kept when smaller, and never lifts the cap', async () => {
    for (const q of ['limit(50000)', 'head(20000)', 'tail(20000)', 'groupBy(user, limit=20000)', 'table(user, limit=30000)', 'groupBy(n) | limit(12000)']) {
      const r = await ok(admin, q, { fractal_id: many });
      assert.equal(r.count, 10_000, q);
      assert.equal(r.limit_hit, 'search', q);
    }
    const small = await ok(admin, 'limit(10)', { fractal_id: many });
    assert.equal(small.count, 10);
    assert.equal(small.limit_hit, undefined);
  });

  test('with the cap off, a written limit stops at the aggregated cap', async () => {
    await admin.put('/api/v1/settings', { max_query_rows: 0 });
    try {
      assert.equal((await ok(admin, 'limit(50000)', { fractal_id: many })).count, 10_000);
      assert.equal((await ok(admin, 'groupBy(user, limit=20000)', { fractal_id: many })).count, 10_000);
    } finally {
      await admin.put('/api/v1/settings', { max_query_rows: 10_000 });
    }
  });

  test('rows are cut at the byte budget even when the first rows are small', async () => {
    // §5's estimate from the first 10 rows stays far below 50 MiB; the rows (over 100 kB each, the
    // blob as a field and in norm_log) pass the 64 MiB budget after some 570.
    const r = await ok(admin, '*', { fractal_id: sneaky });
    assert.equal(r.limit_hit, 'truncated');
    assert.ok(r.count > 10 && r.count < 700 && (r.count - 1) * 100_000 < queryLimits.resultBudgetBytes, `${r.count} rows`);
    assert.equal(r.error, `Warning: Result set was very large and has been truncated to ${r.count} rows. Consider adding more specific filters or using head() to limit results.`);
    const res = await queryStream(admin, { query: '*', fractal_id: sneaky });
    const frames = await sseFrames(res);
    const rows = frames.filter((f) => f.event === 'rows').reduce((n, f) => n + f.data.rows.length, 0);
    const done = frames.find((f) => f.event === 'done')!.data;
    assert.equal(done.limit_hit, 'truncated');
    assert.equal(done.count, rows);
    assert.ok(rows > 10 && rows < 700 && (rows - 1) * 100_000 < queryLimits.resultBudgetBytes, `${rows} rows streamed`);
  });
});

describe('memory', () => {
  test('a sprintf width that would ask for gigabytes is refused before the query runs', async () => {
    const r = await query(admin, '* | head(1) | sprintf("%10000000s", host, as=s)', { fractal_id: big });
    assert.equal(r.status, 400);
    assert.match(r.body.error!, /sprintf\(\): a width of 10000000 is more than the 1000 allowed/);
  });

  test('a query designed to take the engine\'s memory answers 400 with a limit sentence, and the service keeps serving', async () => {
    const q = `* | sprintf("${'%1000s'.repeat(1600)}", as=s) | table(s)`;
    const r = await query(admin, q, { fractal_id: big });
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.error_type, 'limit');
    assert.match(r.body.error!, /^Query limit: the query needs more than the 1024 MB of memory one query may use/);
    const res = await queryStream(admin, { query: q, fractal_id: big });
    const error = (await sseFrames(res)).find((f) => f.event === 'error');
    assert.equal(error?.data.error_type, 'limit');
    assert.equal((await ok(admin, 'count()', { fractal_id: big })).results[0]._count, 2_000_000);
  });

  test('the field catalog, field statistics and the logs reads run under the same limits', async () => {
    const saved = queryLimits.maxMemoryBytes;
    queryLimits.maxMemoryBytes = 64 * 1024; // far below what reading any block needs
    try {
      const scope = `fractal_id=${big}&start=2000-01-01T00:00:00Z`;
      const reads = [
        await admin.get(`/api/v1/query/fields?${scope}`),
        await admin.post('/api/v1/query/fieldstats', { query: '*', fractal_id: big, field: 'user' }),
        await admin.get(`/api/v1/logs/histogram?${scope}`),
        await admin.get(`/api/v1/logs/fields?${scope}`),
        await admin.get(`/api/v1/logs/recent?fractal_id=${big}`),
      ];
      for (const r of reads) {
        assert.equal(r.status, 400, `${JSON.stringify(r.body).slice(0, 200)}`);
        assert.match(r.body.error, /^Query limit: the query needs more than/);
      }
    } finally {
      queryLimits.maxMemoryBytes = saved;
    }
    assert.equal((await admin.get(`/api/v1/query/fields?fractal_id=${big}`)).status, 200);
  });
});

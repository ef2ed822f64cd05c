// STANDARD aggregate commands of query-language.md §3.2 against real events ingested through the
// real endpoint: the statistics (median, percentile, stddev, skewness, kurtosis, iqr, mad, multi)
// checked against numbers computed here from the same data with the population formulas, and
// selectFirst/selectLast, top, frequency, headTail, bucket, analyzeFields with their columns,
// field_order, ordering and is_aggregated.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileQuery } from '../../service/src/query/compile.ts';
import { col, query, queryDataset } from '../support/query.ts';

// Ten events, one a minute from the start of the previous hour (so 5-minute buckets are known).
const BASE = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
const at = (minute: number) => new Date(BASE + minute * 60_000);
const DATA = [
  { minute: 1, user: 'alice', host: 'web1', image: 'powershell.exe', bytes: 100, rt: 12, event_name: 'logon' },
  { minute: 2, user: 'bob', host: 'web1', image: 'explorer.exe', bytes: 250, rt: 30, event_name: 'logon' },
  { minute: 3, user: 'alice', host: 'web2', image: 'powershell.exe', bytes: 50, rt: 7, event_name: 'process' },
  { minute: 4, user: 'carol', host: 'db1', image: 'postgres', bytes: 1000, rt: 95, event_name: 'query', proc: { pid: 4242 } },
  { minute: 5, user: 'alice', host: 'web1', image: 'explorer.exe', bytes: 300, rt: 20, event_name: 'logon' },
  { minute: 6, user: 'dave', host: 'web2', image: 'cmd.exe', bytes: 0, rt: 3, event_name: 'process' },
  { minute: 7, user: 'bob', host: 'db1', image: 'postgres', bytes: 75, rt: 41, event_name: 'query', proc: { pid: 77 } },
  { minute: 8, user: 'alice', host: 'web1', image: 'powershell.exe', bytes: 9, rt: 'n/a', event_name: 'logon' },
  { minute: 9, user: 'bob', host: 'web2', image: 'powershell.exe', bytes: 500, rt: 18, event_name: 'logoff' },
  { minute: 10, user: 'erin', host: 'web1', bytes: 60, rt: 25 },
];
type Event = (typeof DATA)[number];

// ---- the statistics, by hand (population formulas) ----------------------------------------------
const numbers = (rows: Event[], f: 'rt' | 'bytes') =>
  rows.map((r) => r[f]).filter((v): v is number => typeof v === 'number');
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const moment = (xs: number[], k: number) => {
  const m = mean(xs);
  return xs.reduce((a, x) => a + (x - m) ** k, 0) / xs.length;
};
const stddevPop = (xs: number[]) => Math.sqrt(moment(xs, 2));
const skewPop = (xs: number[]) => moment(xs, 3) / moment(xs, 2) ** 1.5;
const excessKurtosis = (xs: number[]) => moment(xs, 4) / moment(xs, 2) ** 2 - 3;
/** Inclusive (linear interpolation) quantile, as numpy's default and Excel's PERCENTILE.INC. */
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  return s[lo] + (h - lo) * ((s[Math.min(lo + 1, s.length - 1)] ?? s[lo]) - s[lo]);
};
const median = (xs: number[]) => quantile(xs, 0.5);
const mad = (xs: number[]) => median(xs.map((x) => Math.abs(x - median(xs))));
const round2 = (x: number) => Math.round(x * 100) / 100;
const of = (user: string) => DATA.filter((r) => r.user === user);

const close = (actual: unknown, expected: number, what = '') => {
  assert.equal(typeof actual, 'number', `${what}: ${JSON.stringify(actual)} is not a number`);
  assert.ok(Math.abs((actual as number) - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual} ≠ ${expected}`);
};
const closeAll = (actual: unknown, expected: number[], what = '') => {
  assert.ok(Array.isArray(actual), `${what}: ${JSON.stringify(actual)} is not a list`);
  assert.equal(actual.length, expected.length, what);
  expected.forEach((e, i) => close((actual as unknown[])[i], e, `${what}[${i}]`));
};
/** Text form of an event time, as the response gives times. */
const timeText = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');

const data = queryDataset('statistics', () => DATA.map(({ minute, ...fields }) => ({ timestamp: at(minute).toISOString(), ...fields })));

const { run } = data;
const fail = async (q: string) => {
  const r = await query(data.admin, q, { fractal_id: data.fractal });
  assert.equal(r.status, 400, JSON.stringify(r.body));
  return r.body;
};
const row = (body: { results: Array<Record<string, any>> }, key: string, value: string) => {
  const r = body.results.find((x) => x[key] === value);
  assert.ok(r, `no row with ${key}=${value}`);
  return r;
};

describe('statistics against hand-computed values', () => {
  const rt = numbers(DATA, 'rt');
  const bytes = numbers(DATA, 'bytes');

  test('median(f) → _median; non-numeric values are ignored', async () => {
    const r = await run('* | median(rt)');
    assert.deepEqual(r.field_order, ['_median']);
    assert.equal(r.is_aggregated, true);
    assert.equal(rt.length, 9);
    close(r.results[0]._median, median(rt), '_median');
    close((await run('median(bytes)')).results[0]._median, median(bytes), 'median(bytes)');
  });

  test('percentile(f) → percentile_<f> = [p50, p75, p99]; chained → _percentile', async () => {
    const r = await run('* | percentile(rt)');
    assert.deepEqual(r.field_order, ['percentile_rt']);
    closeAll(r.results[0].percentile_rt, [quantile(rt, 0.5), quantile(rt, 0.75), quantile(rt, 0.99)], 'percentile_rt');
    // Extra arguments are ignored.
    closeAll((await run('percentile(rt, 90)')).results[0].percentile_rt, [quantile(rt, 0.5), quantile(rt, 0.75), quantile(rt, 0.99)]);

    const g = await run('* | groupBy(host) | percentile(rt) | sort(host)');
    assert.deepEqual(g.field_order, ['host', '_count', 'percentile_rt']);
    assert.deepEqual(col(g, 'host'), ['db1', 'web1', 'web2']);
    const web1 = numbers(DATA.filter((e) => e.host === 'web1'), 'rt');
    closeAll(row(g, 'host', 'web1').percentile_rt, [0.5, 0.75, 0.99].map((q) => quantile(web1, q)), 'web1');

    const c = await run('* | groupBy(user) | percentile(_count)');
    assert.deepEqual(c.field_order, ['_percentile']);
    const counts = ['alice', 'bob', 'carol', 'dave', 'erin'].map((u) => of(u).length);
    closeAll(c.results[0]._percentile, [0.5, 0.75, 0.99].map((q) => quantile(counts, q)), '_percentile');
  });

  test('stddev(f) (stdDev) → stddev_<f>, population; chained → _stddev; with iqr(f) in one row', async () => {
    const r = await run('* | stddev(rt) | iqr(rt)');
    assert.deepEqual(r.field_order, ['stddev_rt', '_q1', '_q3', '_iqr']);
    assert.equal(r.count, 1);
    close(r.results[0].stddev_rt, stddevPop(rt), 'stddev_rt');
    close(r.results[0]._q1, quantile(rt, 0.25), '_q1');
    close(r.results[0]._q3, quantile(rt, 0.75), '_q3');
    close(r.results[0]._iqr, quantile(rt, 0.75) - quantile(rt, 0.25), '_iqr');
    close((await run('stdDev(bytes)')).results[0].stddev_bytes, stddevPop(bytes), 'stdDev alias');
    const counts = ['alice', 'bob', 'carol', 'dave', 'erin'].map((u) => of(u).length);
    const c = await run('groupBy(user) | stddev(_count)');
    assert.deepEqual(c.field_order, ['_stddev']);
    close(c.results[0]._stddev, stddevPop(counts), '_stddev');
  });

  test('skewness(f) (skew) → _skewness, population', async () => {
    const r = await run('skewness(rt)');
    assert.deepEqual(r.field_order, ['_skewness']);
    close(r.results[0]._skewness, skewPop(rt), '_skewness');
    close((await run('* | skew(bytes)')).results[0]._skewness, skewPop(bytes), 'skew alias');
  });

  test('kurtosis(f) (kurt) → _kurtosis, excess (normal = 0)', async () => {
    const r = await run('kurtosis(rt)');
    assert.deepEqual(r.field_order, ['_kurtosis']);
    close(r.results[0]._kurtosis, excessKurtosis(rt), '_kurtosis');
    close((await run('* | kurt(bytes)')).results[0]._kurtosis, excessKurtosis(bytes), 'kurt alias');
  });

  test('per group after groupBy: one value per group, after _count', async () => {
    const r = await run('* | groupBy(user) | median(bytes) | stddev(bytes) | skewness(bytes) | kurtosis(bytes) | iqr(bytes)');
    assert.deepEqual(r.field_order, ['user', '_count', '_median', 'stddev_bytes', '_skewness', '_kurtosis', '_q1', '_q3', '_iqr']);
    const alice = numbers(of('alice'), 'bytes');
    const x = row(r, 'user', 'alice');
    assert.equal(x._count, 4);
    close(x._median, median(alice), 'median');
    close(x.stddev_bytes, stddevPop(alice), 'stddev');
    close(x._skewness, skewPop(alice), 'skewness');
    close(x._kurtosis, excessKurtosis(alice), 'kurtosis');
    close(x._q1, quantile(alice, 0.25), 'q1');
    close(x._q3, quantile(alice, 0.75), 'q3');
    close(x._iqr, quantile(alice, 0.75) - quantile(alice, 0.25), 'iqr');
  });

  test('mad(f) → one row _median, _mad over all rows, even after groupBy; per group function=mad(f)', async () => {
    const r = await run('* | mad(bytes)');
    assert.deepEqual(r.field_order, ['_median', '_mad']);
    close(r.results[0]._median, median(bytes), '_median');
    close(r.results[0]._mad, mad(bytes), '_mad');
    const g = await run('* | groupBy(user) | mad(bytes)');
    assert.deepEqual(g.field_order, ['_median', '_mad']);
    assert.equal(g.count, 1);
    close(g.results[0]._mad, mad(bytes), '_mad after groupBy');
    const per = await run('* | groupBy(user, function=mad(bytes)) | sort(user)');
    assert.deepEqual(per.field_order, ['user', 'mad_bytes']);
    close(row(per, 'user', 'alice').mad_bytes, mad(numbers(of('alice'), 'bytes')), 'mad_bytes alice');
    close(row(per, 'user', 'bob').mad_bytes, mad(numbers(of('bob'), 'bytes')), 'mad_bytes bob');
  });

  test('multi(): sub-function names, collect(), iqr naming inside multi', async () => {
    const r = await run(
      '* | groupBy(user) | multi(count(), count(image), count(image, distinct=true), median(rt), percentile(rt), stddev(rt), skew(rt), kurt(rt), mad(rt), iqr(rt), collect(image), selectfirst(image), selectlast(timestamp), sum(bytes), avg(bytes))',
    );
    assert.deepEqual(r.field_order, [
      'user', '_count', '_count', 'total', 'unique_image', 'median_rt', 'percentile_rt', 'stddev_rt', 'skewness_rt', 'kurtosis_rt',
      'mad_rt', 'iqr_q1_rt', 'iqr_q3_rt', 'iqr_rt', 'collect_image', 'first_image', 'last_timestamp', '_sum', '_avg',
    ].filter((n, i, all) => all.indexOf(n) === i));
    const alice = of('alice');
    const rtA = numbers(alice, 'rt');
    const x = row(r, 'user', 'alice');
    assert.equal(x._count, 4);
    assert.equal(x.total, 4);
    assert.equal(x.unique_image, 2);
    close(x.median_rt, median(rtA), 'median_rt');
    closeAll(x.percentile_rt, [0.5, 0.75, 0.99].map((q) => quantile(rtA, q)), 'percentile_rt');
    close(x.stddev_rt, stddevPop(rtA), 'stddev_rt');
    close(x.skewness_rt, skewPop(rtA), 'skewness_rt');
    close(x.kurtosis_rt, excessKurtosis(rtA), 'kurtosis_rt');
    close(x.mad_rt, mad(rtA), 'mad_rt');
    close(x.iqr_q1_rt, quantile(rtA, 0.25), 'iqr_q1_rt');
    close(x.iqr_q3_rt, quantile(rtA, 0.75), 'iqr_q3_rt');
    close(x.iqr_rt, quantile(rtA, 0.75) - quantile(rtA, 0.25), 'iqr_rt');
    assert.deepEqual([...x.collect_image].sort(), alice.map((e) => e.image!).sort());
    assert.equal(x.first_image, 'powershell.exe');
    assert.equal(x.last_timestamp, timeText(at(8)));
    assert.equal(x._sum, 459);
    close(x._avg, mean(numbers(alice, 'bytes')), '_avg');
    // erin has no image: collect gives an empty list, count(image) 0.
    assert.deepEqual(row(r, 'user', 'erin').collect_image, []);
    assert.equal(row(r, 'user', 'erin').total, 0);

    const renamed = await run('groupBy(user, function=multi(collect(image, as=images), iqr(bytes))) | sort(user) | limit(1)');
    assert.deepEqual(renamed.field_order, ['user', 'images', 'iqr_q1_bytes', 'iqr_q3_bytes', 'iqr_bytes']);
    assert.deepEqual(col(await run('multi([count(), sum(bytes)])'), '_sum'), [2344]);
  });

  test('collect() exists only in multi(); unknown sub-functions are named', async () => {
    assert.equal((await fail('* | multi(collect(image), nope(x))')).error, 'Query error: unknown aggregation function in multi(): "nope"');
    assert.match((await fail('* | collect(image)')).error!, /unsupported command: collect/);
  });
});

describe('selectFirst, selectLast, top', () => {
  test('* | groupBy(user) | selectLast(timestamp) → user, _count, last_timestamp', async () => {
    const r = await run('* | groupBy(user) | selectLast(timestamp) | sort(user)');
    assert.deepEqual(r.field_order, ['user', '_count', 'last_timestamp']);
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.results[0], { user: 'alice', _count: 4, last_timestamp: timeText(at(8)) });
    assert.deepEqual(row(r, 'user', 'bob'), { user: 'bob', _count: 3, last_timestamp: timeText(at(9)) });
  });

  test('selectFirst(f) → first_<f> from the earliest event of each group; standalone one row', async () => {
    const r = await run('* | groupBy(user) | selectFirst(image) | selectFirst(timestamp) | sort(user)');
    assert.deepEqual(r.field_order, ['user', '_count', 'first_image', 'first_timestamp']);
    assert.deepEqual(row(r, 'user', 'bob'), { user: 'bob', _count: 3, first_image: 'explorer.exe', first_timestamp: timeText(at(2)) });
    assert.equal(row(r, 'user', 'alice').first_image, 'powershell.exe');
    const s = await run('selectLast(user) | selectFirst(user)');
    assert.deepEqual(s.results, [{ last_user: 'erin', first_user: 'alice' }]);
    assert.deepEqual(s.field_order, ['last_user', 'first_user']);
  });

  test('* | groupBy(user) | top(image, percent=true, limit=3) → user, _count, top_image', async () => {
    const r = await run('* | groupBy(user) | top(image, percent=true, limit=3)');
    assert.deepEqual(r.field_order, ['user', '_count', 'top_image']);
    assert.equal(r.is_aggregated, true);
    // alice: powershell 3 of 4 rows, explorer 1 of 4.
    assert.deepEqual(row(r, 'user', 'alice').top_image, [['powershell.exe', 75], ['explorer.exe', 25]]);
    // bob: three different images, one each (33.33% of 3 rows).
    assert.deepEqual(
      [...row(r, 'user', 'bob').top_image].sort(),
      [['explorer.exe', 33.33], ['postgres', 33.33], ['powershell.exe', 33.33]],
    );
    // erin has no image: nothing to list.
    assert.deepEqual(row(r, 'user', 'erin').top_image, []);
  });

  test('top(f): most frequent first; limit= caps the list; as= renames', async () => {
    const r = await run('top(image)');
    assert.deepEqual(r.field_order, ['top_image']);
    const top = r.results[0].top_image as string[];
    assert.equal(top[0], 'powershell.exe');
    assert.deepEqual([...top].sort(), ['cmd.exe', 'explorer.exe', 'postgres', 'powershell.exe']);
    assert.equal(top[3], 'cmd.exe');
    assert.deepEqual((await run('top(image, limit=1, as=favourite)')).results, [{ favourite: ['powershell.exe'] }]);
    assert.deepEqual((await run('top(image, percent=true, limit=1)')).results, [{ top_image: [['powershell.exe', 40]] }]);
    assert.match((await fail('top(image, bogus=1)')).error!, /top\(\): unknown argument "bogus"/);
  });
});

describe('frequency and headTail', () => {
  // event_name over 9 events that have one (erin's has none): logon 4, process 2, query 2, logoff 1.
  const expected = [
    { value: 'logon', _count: 4, _percentage: round2(400 / 9), _cumulative_pct: round2(400 / 9) },
    { value: 'process', _count: 2, _percentage: round2(200 / 9), _cumulative_pct: round2(600 / 9) },
    { value: 'query', _count: 2, _percentage: round2(200 / 9), _cumulative_pct: round2(800 / 9) },
    { value: 'logoff', _count: 1, _percentage: round2(100 / 9), _cumulative_pct: 100 },
  ];

  test('frequency(f) → value, _count, _percentage, _cumulative_pct, 2 decimals, by _count desc', async () => {
    const r = await run('* | frequency(event_name)');
    assert.deepEqual(r.field_order, ['value', '_count', '_percentage', '_cumulative_pct']);
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.results, expected);
    assert.deepEqual(r.results[1]._percentage, 22.22);
  });

  test('* | frequency(event_name) | _percentage > 1.0', async () => {
    assert.deepEqual((await run('* | frequency(event_name) | _percentage > 1.0')).results, expected);
  });

  test('conditions on the window columns apply after they exist: the percentages stay of the whole', async () => {
    // The extension: a windowed stage filters with QUALIFY, after the running totals are computed.
    assert.deepEqual((await run('frequency(event_name) | _percentage > 20')).results, expected.slice(0, 3));
    assert.deepEqual((await run('frequency(event_name) | _count < 2')).results, [expected[3]]);
    assert.deepEqual((await run('frequency(event_name) | _cumulative_pct >= 80 AND value != logoff')).results, [expected[2]]);
    assert.deepEqual(col(await run('frequency(event_name) | value=process OR value=logon'), 'value'), ['logon', 'process']);
    const c = compileQuery('frequency(event_name) | _percentage > 20', {
      table: 'logs',
      fractalIds: [],
      start: new Date(0),
      end: new Date(),
      maxRows: 100,
    });
    assert.match(c.sql, /HAVING \(s0_0 != ''\) QUALIFY \([^>]*s0_2[^>]* > \{p\d+:Float64\}\) ORDER BY/);
  });

  test('sort() replaces the default order; filters before apply to events; later stages read the rows', async () => {
    assert.deepEqual(col(await run('frequency(event_name) | sort(value)'), 'value'), ['logoff', 'logon', 'process', 'query']);
    const alice = await run('user=alice | frequency(event_name)');
    assert.deepEqual(alice.results, [
      { value: 'logon', _count: 3, _percentage: 75, _cumulative_pct: 75 },
      { value: 'process', _count: 1, _percentage: 25, _cumulative_pct: 100 },
    ]);
    assert.deepEqual((await run('frequency(event_name) | count()')).results, [{ _count: 4 }]);
    assert.deepEqual((await run('frequency(image) | limit(1)')).results, [{ value: 'powershell.exe', _count: 4, _percentage: 44.44, _cumulative_pct: 44.44 }]);
    assert.deepEqual(col(await run('frequency(event_name) | head(2)'), 'value'), ['logon', 'process']);
  });

  test('headTail(f, threshold=80) adds _segment: head while _cumulative_pct ≤ threshold', async () => {
    const r = await run('* | headTail(event_name)');
    assert.deepEqual(r.field_order, ['value', '_count', '_percentage', '_cumulative_pct', '_segment']);
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.results.map((x) => [x.value, x._segment]), [['logon', 'head'], ['process', 'head'], ['query', 'tail'], ['logoff', 'tail']]);
    assert.deepEqual(col(await run('headTail(event_name, 50)'), '_segment'), ['head', 'tail', 'tail', 'tail']);
    assert.deepEqual(col(await run('headTail(event_name, threshold=88.89)'), '_segment'), ['head', 'head', 'head', 'tail']);
    assert.deepEqual(col(await run('headTail(event_name) | _segment=tail'), 'value'), ['query', 'logoff']);
    assert.equal(
      (await fail('headTail(event_name, threshold=lots)')).error,
      'Query error: headTail(): invalid threshold: expected numeric value, got "lots"',
    );
  });

  test('a field is required', async () => {
    const r = await fail('frequency()');
    assert.equal(r.error, 'Query error: frequency() requires a field, e.g. frequency(event_name)');
  });
});

describe('bucket', () => {
  const bucketStart = (minute: number) => timeText(at(minute)).slice(0, 19);

  test('bucket("span", "sum(f)") → time_bucket, bucket_sum, by time', async () => {
    const r = await run('* | bucket("5m", "sum(bytes)")');
    assert.deepEqual(r.field_order, ['time_bucket', 'bucket_sum']);
    assert.equal(r.is_aggregated, true);
    // minutes 1–4, 5–9, 10 of the hour.
    assert.deepEqual(r.results, [
      { time_bucket: bucketStart(0), bucket_sum: 100 + 250 + 50 + 1000 },
      { time_bucket: bucketStart(5), bucket_sum: 300 + 0 + 75 + 9 + 500 },
      { time_bucket: bucketStart(10), bucket_sum: 60 },
    ]);
  });

  test('count() is the default; span= and function= are accepted; other functions add nothing', async () => {
    assert.deepEqual(col(await run('bucket("5m")'), 'bucket_count'), [4, 5, 1]);
    const named = await run('bucket(span=1h, function=count())');
    assert.deepEqual(named.results, [{ time_bucket: bucketStart(0), bucket_count: 10 }]);
    const avg = await run('bucket("5m", "avg(bytes)")');
    assert.deepEqual(avg.field_order, ['time_bucket']);
    assert.equal(avg.count, 3);
    assert.deepEqual(col(await run('bucket("5m") | sort(bucket_count, order=desc) | limit(1)'), 'bucket_count'), [5]);
  });

  test('it needs event times', async () => {
    assert.equal(
      (await fail('count() | bucket()')).error,
      'Query error: bucket() needs event times: place it before other aggregations (groupBy(x) | bucket("5m") is fine)',
    );
  });

  test('after groupBy the group stays a key', async () => {
    const r = await run('* | groupBy(host) | bucket("1h", "count()") | sort(host)');
    assert.deepEqual(r.field_order, ['host', 'time_bucket', 'bucket_count']);
    assert.deepEqual(r.results.map((x) => [x.host, x.bucket_count]), [['db1', 2], ['web1', 5], ['web2', 3]]);
  });
});

describe('analyzeFields', () => {
  test('analyzeFields(f1, …) → per listed field: _events, _distinct_vals and numeric statistics', async () => {
    const r = await run('* | analyzeFields(bytes, rt)');
    assert.deepEqual(r.field_order, ['field_name', '_events', '_distinct_vals', '_mean', '_min', '_max', '_stdev']);
    assert.equal(r.is_aggregated, true);
    const bytes = numbers(DATA, 'bytes');
    const rt = numbers(DATA, 'rt');
    assert.deepEqual(r.results, [
      { field_name: 'bytes', _events: 10, _distinct_vals: 10, _mean: round2(mean(bytes)), _min: 0, _max: 1000, _stdev: round2(stddevPop(bytes)) },
      // rt is present on every event, but "n/a" is not a number: the statistics read 9 values.
      { field_name: 'rt', _events: 10, _distinct_vals: 10, _mean: round2(mean(rt)), _min: 3, _max: 95, _stdev: round2(stddevPop(rt)) },
    ]);
  });

  test('without fields: every field of the scanned events, nested ones dotted, by _events desc', async () => {
    const r = await run('analyzeFields()');
    const names = col(r, 'field_name');
    for (const f of ['user', 'host', 'bytes', 'rt', 'image', 'event_name', 'proc.pid']) assert.ok(names.includes(f), `${f} in ${names}`);
    const events = col(r, '_events');
    assert.deepEqual([...events].sort((x, y) => y - x), events);
    assert.deepEqual(row(r, 'field_name', 'proc.pid'), {
      field_name: 'proc.pid', _events: 2, _distinct_vals: 2, _mean: 2159.5, _min: 77, _max: 4242, _stdev: 2082.5,
    });
    const text = row(r, 'field_name', 'user');
    assert.deepEqual(text, { field_name: 'user', _events: 10, _distinct_vals: 5, _mean: null, _min: null, _max: null, _stdev: null });
    assert.equal(row(r, 'field_name', 'image')._events, 9);
  });

  test('* | analyzeFields() | _events < 10: filters apply to its rows; limit= caps the scanned events', async () => {
    const r = await run('* | analyzeFields() | _events < 10 | sort(field_name)');
    assert.deepEqual(col(r, 'field_name'), ['event_name', 'image', 'proc.pid']);
    assert.deepEqual((await run('analyzeFields(bytes, limit=3)')).results.map((x) => x._events), [3]);
    assert.deepEqual((await run('analyzeFields(bytes, limit=max)')).results.map((x) => x._events), [10]);
    assert.deepEqual((await run('user=bob | analyzeFields(user, image)')).results.map((x) => [x.field_name, x._events, x._distinct_vals]), [
      ['image', 3, 3],
      ['user', 3, 1],
    ]);
  });

  test('after an aggregation it reads the aggregated rows', async () => {
    const r = await run('groupBy(user) | analyzeFields(_count)');
    assert.deepEqual(r.results, [{ field_name: '_count', _events: 5, _distinct_vals: 3, _mean: 2, _min: 1, _max: 4, _stdev: round2(stddevPop([4, 3, 1, 1, 1])) }]);
  });
});

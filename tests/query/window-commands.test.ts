// Window functions of query-language.md §3.9 (modifiedZScore, madOutlier) against real events sent
// through the ingest endpoint, and the planner's window statistics (plan/pipeline.ts StageWindow):
// statistics over all rows of the stage, conditions on window columns after them (§1.9 rule 5),
// event conditions still first (rule 1). Expected numbers are worked out by hand below.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { col, fractalWith, ok, query, queryDataset } from '../support/query.ts';

// Event 1 is the newest. bytes of event 13 is not a number.
const ROWS: Array<[string, string, number | string, number]> = [
  ['alice', 'login', 100, 200], //  1
  ['alice', 'get', 200, 200], //    2
  ['alice', 'get', 300, 404], //    3
  ['alice', 'get', 400, 200], //    4
  ['alice', 'get', 100, 200], //    5
  ['alice', 'put', 200, 500], //    6
  ['alice', 'get', 300, 200], //    7
  ['alice', 'logout', 5000, 200], // 8
  ['bob', 'login', 100, 200], //    9
  ['bob', 'get', 200, 404], //     10
  ['carol', 'get', 300, 200], //   11
  ['dave', 'login', 400, 500], //  12
  ['dave', 'get', '-', 200], //    13
  ['erin', 'get', 200, 200], //    14
  ['erin', 'get', 100, 301], //    15
  ['erin', 'put', 300, 200], //    16
  ['frank', 'get', 2.5, 200], //   17
];

// bytes, 16 numbers: 2.5 100×4 200×4 300×4 400×2 5000 → median (200+200)/2 = 200;
// |x − 200|: 0×4 100×8 197.5 200×2 4800 → MAD (100+100)/2 = 100. So _modified_z is
// 0.6745·(x − 200)/100: 100 → -0.6745, 200 → 0, 300 → 0.6745, 400 → 1.349, 5000 → 32.376,
// 2.5 → -1.3321375 → -1.3321; "-" has no score.
const Z: Record<string, number | null> = { '100': -0.6745, '200': 0, '300': 0.6745, '400': 1.349, '5000': 32.376, '2.5': -1.3321, '-': null };
const BYTES = ROWS.map((r) => String(r[2]));

// _count per user: alice 8, bob 2, carol 1, dave 2, erin 3, frank 1 → sorted 1 1 2 2 3 8, median 2;
// |c − 2|: 6 0 1 0 1 1 → sorted 0 0 1 1 1 6, MAD 1. _modified_z = 0.6745·(c − 2): alice 4.047.
const USER_Z: Record<string, number> = { alice: 4.047, bob: 0, carol: -0.6745, dave: 0, erin: 0.6745, frank: -0.6745 };

const data = queryDataset('windows', () => {
  const base = Date.now();
  return ROWS.map(([user, action, bytes, status], i) => ({ timestamp: new Date(base - (i + 1) * 60_000).toISOString(), user, action, bytes, status }));
});

const { run } = data;

async function fails(q: string, message: string): Promise<void> {
  const r = await query(data.admin, q, { fractal_id: data.fractal });
  assert.equal(r.status, 400, `${q}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.error, `Query error: ${message}`);
  assert.equal(r.body.error_type, 'translate');
}

const EVENT_ORDER = ['timestamp', 'log_id', 'fractal_id', 'norm_log'];

describe('modifiedZScore', () => {
  test('on events: _median and _mad over all events, _modified_z per event, the _mz_val helper', async () => {
    const r = await run('* | modifiedZScore(bytes)');
    assert.equal(r.count, 17);
    assert.equal(r.is_aggregated, false);
    assert.equal(r.chart_type, '');
    assert.deepEqual(r.field_order, [...EVENT_ORDER, '_median', '_mad', '_modified_z']);
    assert.deepEqual(col(r, 'bytes'), BYTES, 'still events, newest first, with their fields');
    assert.deepEqual(col(r, '_modified_z'), BYTES.map((b) => Z[b]));
    assert.deepEqual(new Set(col(r, '_median')), new Set([200]));
    assert.deepEqual(new Set(col(r, '_mad')), new Set([100]));
    assert.deepEqual(col(r, '_mz_val'), BYTES.map((b) => (b === '-' ? null : Number(b))));
    assert.equal(r.results[12]._is_outlier, undefined);
  });

  test('aliases modifiedz and mzscore; field= works too', async () => {
    for (const q of ['* | modifiedz(bytes)', '* | mzscore(field=bytes)', '* | MODIFIEDZSCORE(bytes)']) {
      assert.deepEqual(col(await run(q), '_modified_z'), BYTES.map((b) => Z[b]), q);
    }
  });

  test('on aggregate outputs: over the groups, after the group columns and outputs', async () => {
    const r = await run('* | groupBy(user) | modifiedZScore(_count) | sort(user)');
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['user', '_count', '_median', '_mad', '_modified_z']);
    assert.deepEqual(
      r.results,
      Object.entries({ alice: 8, bob: 2, carol: 1, dave: 2, erin: 3, frank: 1 }).map(([user, n]) => ({
        user,
        _count: n,
        _median: 2,
        _mad: 1,
        _modified_z: USER_Z[user],
      })),
    );
  });

  test('MAD = 0 gives every number a score of 0', async () => {
    // status: 200 ×12, 404 ×2, 500 ×2, 301 → median 200, more than half are 200 → MAD 0.
    const r = await run('* | modifiedZScore(status)');
    assert.deepEqual(new Set(col(r, '_modified_z')), new Set([0]));
    assert.deepEqual(new Set(col(r, '_mad')), new Set([0]));
  });

  test('a field is required', async () => {
    await fails('* | modifiedZScore()', 'modifiedZScore() requires a field, e.g. modifiedZScore(bytes)');
  });
});

describe('madOutlier', () => {
  test('§3.9 example: groupBy(user) | madOutlier(_count) | _is_outlier = 1', async () => {
    const r = await run('* | groupBy(user) | madOutlier(_count) | _is_outlier = 1');
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['user', '_count', '_median', '_mad', '_modified_z', '_is_outlier']);
    // 4.047 > 3.5, the default threshold; everyone else is within 0.6745.
    assert.deepEqual(r.results, [{ user: 'alice', _count: 8, _median: 2, _mad: 1, _modified_z: 4.047, _is_outlier: '1' }]);
  });

  test('on events: _is_outlier "1" when |z| > 3.5, "0" otherwise and without a score', async () => {
    const r = await run('* | madOutlier(bytes)');
    assert.deepEqual(r.field_order, [...EVENT_ORDER, '_median', '_mad', '_modified_z', '_is_outlier']);
    assert.deepEqual(col(r, '_is_outlier'), BYTES.map((b) => (b === '5000' ? '1' : '0')));
    assert.equal(r.results[12]._modified_z, null);
    assert.equal(r.results[12]._is_outlier, '0');
  });

  test('threshold positional or named; alias outlier', async () => {
    // |z| > 1: 400 ×2 (1.349), 5000, 2.5 (1.3321); > 1.34: not 2.5.
    assert.deepEqual(col(await run('* | madOutlier(bytes, 1) | _is_outlier = 1'), 'bytes'), ['400', '5000', '400', '2.5']);
    assert.deepEqual(col(await run('* | madOutlier(bytes, threshold=1.34) | _is_outlier = 1'), 'bytes'), ['400', '5000', '400']);
    assert.deepEqual(col(await run('* | outlier(field=bytes, threshold="1.34") | _is_outlier = 1'), 'bytes'), ['400', '5000', '400']);
    assert.deepEqual(col(await run('* | outlier(bytes, 40) | _is_outlier = 1'), 'bytes'), []);
  });

  test('a non-numeric threshold fails; so does a missing field', async () => {
    await fails('* | madOutlier(bytes, threshold=abc)', 'madOutlier(): invalid threshold: expected numeric value, got "abc"');
    await fails('* | madOutlier(bytes, high)', 'madOutlier(): invalid threshold: expected numeric value, got "high"');
    await fails('* | outlier(bytes, threshold="3.5x")', 'madOutlier(): invalid threshold: expected numeric value, got "3.5x"');
    await fails('* | madOutlier()', 'madOutlier() requires a field, e.g. madOutlier(bytes)');
  });

  test('user values are bound parameters, not SQL text', async () => {
    const r = await run("user=alice | madOutlier(bytes, threshold=1.2345) | _is_outlier = 1");
    assert.equal(typeof r.sql, 'string');
    assert.doesNotMatch(String(r.sql), /alice|1\.2345/);
    // Field names are read as quoted JSON subcolumn identifiers, never as values.
    assert.doesNotMatch(String(r.sql).replaceAll('fields.`bytes`', ''), /bytes/);
  });
});

describe('window statistics in the pipeline (§1.9 rule 5)', () => {
  test('a condition on a window column applies after the statistics: they stay over all rows', async () => {
    const r = await run('* | madOutlier(bytes, 1) | _is_outlier = 1');
    assert.equal(r.count, 4);
    assert.deepEqual(new Set(col(r, '_median')), new Set([200]));
    assert.deepEqual(new Set(col(r, '_mad')), new Set([100]));
    assert.deepEqual(col(await run('* | modifiedZScore(bytes) | _modified_z < -1'), 'bytes'), ['2.5']);
    assert.deepEqual(col(await run('* | modifiedZScore(bytes) | _modified_z = 0.6745'), 'user'), ['alice', 'alice', 'carol', 'erin']);
  });

  test('sorting and limits act on the rows after the window columns exist', async () => {
    const top = await run('* | modifiedZScore(bytes) | sort(_modified_z, order=desc) | limit(3)');
    assert.deepEqual(col(top, 'bytes'), ['5000', '400', '400']);
    // head(2): the two earliest events, scored against all 17.
    const h = await run('* | modifiedZScore(bytes) | head(2)');
    assert.deepEqual(col(h, 'user'), ['frank', 'erin']);
    assert.deepEqual(col(h, '_median'), [200, 200]);
    assert.deepEqual(col(h, '_modified_z'), [-1.3321, 0.6745]);
  });

  test('an event condition written after the window still filters events first (rule 1)', async () => {
    // alice's bytes: 100 100 200 200 300 300 400 5000 → median 250; |x − 250|: 50×4 150×3 4750 → MAD 100.
    const r = await run('* | madOutlier(bytes) | user=alice');
    assert.equal(r.count, 8);
    assert.deepEqual(new Set(col(r, '_median')), new Set([250]));
    assert.deepEqual(new Set(col(r, '_mad')), new Set([100]));
    assert.deepEqual(col(r, '_is_outlier'), ['0', '0', '0', '0', '0', '0', '0', '1']);
  });

  test('a stage ANDing a window condition with an event condition is split; OR is evaluated after', async () => {
    const and = await run('* | madOutlier(bytes) | _modified_z > 0 AND user=alice');
    assert.deepEqual(col(and, 'bytes'), ['300', '400', '300', '5000']);
    assert.deepEqual(new Set(col(and, '_median')), new Set([250]), 'user=alice filtered events before the statistics');
    const or = await run('* | madOutlier(bytes) | _is_outlier = 1 OR user=frank');
    assert.deepEqual(col(or, 'bytes'), ['5000', '2.5']);
    assert.deepEqual(new Set(col(or, '_median')), new Set([200]));
  });

  test('on groups: a condition before the window narrows its rows, one after does not', async () => {
    // Groups with _count > 1: 8 2 2 3 → median 2.5; |c − 2.5|: 5.5 0.5 0.5 0.5 → MAD 0.5;
    // alice 0.6745·5.5/0.5 = 7.4195.
    const before = await run('* | groupBy(user) | _count > 1 | madOutlier(_count) | sort(user)');
    assert.deepEqual(col(before, 'user'), ['alice', 'bob', 'dave', 'erin']);
    assert.deepEqual(col(before, '_median'), [2.5, 2.5, 2.5, 2.5]);
    assert.deepEqual(col(before, '_mad'), [0.5, 0.5, 0.5, 0.5]);
    assert.deepEqual(col(before, '_modified_z'), [7.4195, -0.6745, -0.6745, 0.6745]);
    assert.deepEqual(col(before, '_is_outlier'), ['1', '0', '0', '0']);
    const after = await run('* | groupBy(user) | madOutlier(_count) | _count > 1 | sort(user)');
    assert.deepEqual(col(after, 'user'), ['alice', 'bob', 'dave', 'erin']);
    assert.deepEqual(col(after, '_median'), [2, 2, 2, 2]);
    assert.deepEqual(col(after, '_modified_z'), [4.047, 0, 0, 0.6745]);
    const mixed = await run('* | groupBy(user) | madOutlier(_count) | _is_outlier = 0 AND _count > 1 | sort(user)');
    assert.deepEqual(col(mixed, 'user'), ['bob', 'dave', 'erin']);
  });

  test('window columns feed later commands of the stage: aggregation, assignments, table()', async () => {
    const g = await run('* | madOutlier(bytes, 1) | groupBy(_is_outlier) | sort(_is_outlier)');
    assert.equal(g.is_aggregated, true);
    assert.deepEqual(g.results, [
      { _is_outlier: '0', _count: 13 },
      { _is_outlier: '1', _count: 4 },
    ]);
    assert.deepEqual((await run('* | madOutlier(bytes) | _is_outlier = 1 | count()')).results, [{ _count: 1 }]);
    const z2 = await run('* | modifiedZScore(bytes) | z2 := _modified_z * 2 | z2 > 2');
    assert.deepEqual(col(z2, 'bytes'), ['400', '5000', '400']);
    assert.deepEqual(col(z2, 'z2'), [2.698, 64.752, 2.698]);
    const t = await run('* | modifiedZScore(bytes) | table(user, bytes, _modified_z) | sort(bytes) | sort(user) | limit(2)');
    assert.deepEqual(t.field_order, ['user', 'bytes', '_modified_z', 'timestamp', 'fractal_id']);
    assert.deepEqual(
      t.results.map((x) => [x.user, x.bytes, x._modified_z]),
      [
        ['frank', '2.5', -1.3321],
        ['alice', '100', -0.6745],
      ],
    );
  });

  test('after table() the window columns join the listed ones', async () => {
    const r = await run('* | table(user, bytes) | modifiedZScore(bytes) | limit(1)');
    assert.deepEqual(r.field_order, ['user', 'bytes', '_median', '_mad', '_modified_z', 'timestamp', 'fractal_id']);
    const { timestamp, fractal_id, log_id, ...rest } = r.results[0];
    assert.ok(timestamp && fractal_id && log_id);
    assert.deepEqual(rest, { user: 'alice', bytes: '100', _median: 200, _mad: 100, _modified_z: -0.6745 });
  });

  test('a window over a window column, or after a projection of groups, reads a new stage', async () => {
    // The _modified_z of the users: 4.047 0 -0.6745 0 0.6745 -0.6745 → median 0, MAD 0.6745.
    const r = await run('* | groupBy(user) | modifiedZScore(_count) | madOutlier(_modified_z) | _is_outlier = 1');
    assert.deepEqual(col(r, 'user'), ['alice']);
    assert.deepEqual(r.results[0]._median, 0);
    assert.deepEqual(r.results[0]._mad, 0.6745);
    const t = await run('* | groupBy(user) | table(user, _count) | madOutlier(_count) | sort(user)');
    assert.deepEqual(t.field_order, ['user', '_count', '_median', '_mad', '_modified_z', '_is_outlier']);
    assert.deepEqual(col(t, '_modified_z'), ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'].map((u) => USER_Z[u]));
  });

  test('paging with the row cap off: every page is scored against all rows, not the rest after the cursor', async () => {
    // 205 events with bytes 1…205, newest first: median 103; |x − 103|: 0, 1 1, 2 2, … 102 102 → MAD 51.
    const base = Date.now();
    const fractal_id = await fractalWith(
      data.a,
      data.admin,
      'windows-paged',
      Array.from({ length: 205 }, (_, i) => ({ timestamp: new Date(base - (205 - i) * 1000).toISOString(), bytes: i + 1 })),
    );
    assert.equal((await data.admin.put('/api/v1/settings', { max_query_rows: 0 })).status, 200);
    try {
      const one = await ok(data.admin, '* | madOutlier(bytes)', { fractal_id });
      assert.equal(one.count, 200);
      assert.equal(one.has_more, true);
      const two = await ok(data.admin, '* | madOutlier(bytes)', { fractal_id, cursor: one.next_cursor });
      assert.deepEqual(col(two, 'bytes'), ['5', '4', '3', '2', '1']);
      for (const page of [one, two]) {
        assert.deepEqual(new Set(col(page, '_median')), new Set([103]));
        assert.deepEqual(new Set(col(page, '_mad')), new Set([51]));
      }
      // 0.6745 · (1 − 103) / 51 = -1.349
      assert.equal(two.results[4]._modified_z, -1.349);
    } finally {
      await data.admin.put('/api/v1/settings', { max_query_rows: 10000 });
    }
  });
});

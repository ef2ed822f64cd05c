// `case { … }` (query-language.md §3.3) against real events ingested through the real endpoint:
// first matching branch wins, `*` is the default, literal segments, per-row transforms only on
// the branch's rows, conditional aggregates named <output>_<position>, count() after a case,
// and errors with the `case branch: ` prefix and whole-query spans.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileQuery } from '../../service/src/query/compile.ts';
import { col, query, queryDataset, spanOf } from '../support/query.ts';

const DATA = [
  { minute: 1, user: 'alice', host: 'web1', status_code: 200, image: 'C:\\Windows\\powershell.exe', bytes: 100 },
  { minute: 2, user: 'bob', host: 'web1', status_code: 404, image: 'explorer.exe', bytes: 250 },
  { minute: 3, user: 'alice', host: 'web2', status_code: 500, image: 'pwsh powershell', bytes: 50 },
  { minute: 4, user: 'carol', host: 'db1', status_code: 200, image: 'postgres', bytes: 1000 },
  { minute: 5, user: 'alice', host: 'web1', status_code: 503, image: 'explorer.exe', bytes: 300 },
  { minute: 6, user: 'dave', host: 'web2', status_code: 301, image: 'cmd.exe', bytes: 0 },
  { minute: 7, user: 'bob', host: 'db1', status_code: 401, image: 'POWERSHELL.EXE', bytes: 75 },
  { minute: 8, user: 'erin', host: 'web1', status_code: 200, bytes: 9 },
];
const BASE = Date.now() - 60 * 60_000;

const data = queryDataset('cases', () => DATA.map(({ minute, ...fields }) => ({ timestamp: new Date(BASE + minute * 60_000).toISOString(), ...fields })));

const { run } = data;
/** Event rows oldest first (minute 1 … 8), so they line up with DATA. */
const chronological = async (q: string) => (await run(`${q} | sort(timestamp)`)).results;
const fail = async (q: string) => {
  const r = await query(data.admin, q, { fractal_id: data.fractal });
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.error_type, 'translate');
  return r.body;
};

describe('branches and literal segments', () => {
  test('§3.3 example: severity by status_code, then groupBy(severity)', async () => {
    const r = await run(
      '* | case { status_code>=500 | severity := "critical" ; status_code>=400 | severity := "warning" ; * | severity := "info" } | groupBy(severity) | sort(severity)',
    );
    assert.deepEqual(r.field_order, ['severity', '_count']);
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.results, [
      { severity: 'critical', _count: 2 },
      { severity: 'info', _count: 4 },
      { severity: 'warning', _count: 2 },
    ]);
  });

  test('on events a case is a per-row command: its columns first, then the event columns', async () => {
    const r = await run('* | case { status_code>=500 | severity := "critical" ; * | severity := "info" }');
    assert.equal(r.is_aggregated, false);
    assert.deepEqual(r.field_order, ['severity', 'timestamp', 'log_id', 'fractal_id', 'norm_log']);
    assert.equal(r.count, 8);
    assert.equal(r.results[0].user, 'erin');
    assert.equal(r.results[0].severity, 'info');
  });

  test('the first matching branch wins; * is the default wherever it is written', async () => {
    const rows = await chronological('case { status_code>=400 | level := "error" ; status_code>=500 | level := "fatal" ; * | level := "ok" }');
    assert.deepEqual(col({ results: rows } as any, 'level'), ['ok', 'error', 'error', 'ok', 'error', 'ok', 'error', 'ok']);
    const star = await chronological('case { * | who := "other" ; user=alice | who := "alice" }');
    assert.deepEqual(star.map((r) => r.who), ['alice', 'other', 'alice', 'other', 'alice', 'other', 'other', 'other']);
  });

  test('field = value and a bare value (case_result) set literal text; x := other stores "other"', async () => {
    const rows = await chronological('case { user=alice | team = "red" | x := host | high ; user=bob | low ; }');
    assert.deepEqual(rows.map((r) => [r.user, r.team, r.x, r.case_result]), [
      ['alice', 'red', 'host', 'high'],
      ['bob', '', '', 'low'],
      ['alice', 'red', 'host', 'high'],
      ['carol', '', '', ''],
      ['alice', 'red', 'host', 'high'],
      ['dave', '', '', ''],
      ['bob', '', '', 'low'],
      ['erin', '', '', ''],
    ]);
    // A number is text too; a field set only by a branch not taken is empty.
    const n = await chronological('case { user=carol | code := 42 }');
    assert.deepEqual(n.map((r) => r.code), ['', '', '', '42', '', '', '', '']);
  });

  test('a condition function or another filter after the condition narrows the branch', async () => {
    const rows = await chronological(
      'case { image=~powershell | in(user, values=[bob]) | who := "bob-ps" ; image=~powershell | who := "ps" ; status_code>=400 | user!=alice | who := "bob-error" ; * | who := "rest" }',
    );
    assert.deepEqual(rows.map((r) => r.who), ['ps', 'bob-error', 'ps', 'rest', 'rest', 'rest', 'bob-ps', 'rest']);
  });

  test('later stages filter and group on the case columns', async () => {
    const r = await run('case { status_code>=500 | sev := "crit" ; * | sev := "ok" } | sev=crit');
    assert.deepEqual(col(r, 'user'), ['alice', 'alice']);
  });

  test('a mapping table of hundreds of branches runs, with SQL linear in the branches', async () => {
    const branches = Array.from({ length: 250 }, (_, i) => `bytes=${i} | d := "v${i}"`).join(' ; ');
    const q = `case { ${branches} ; * | d := "other" }`;
    assert.ok(Buffer.byteLength(q) <= 10_000);
    const sql = compileQuery(q, { table: 'logs', fractalIds: [], start: new Date(0), end: new Date(), maxRows: 100 }).sql;
    assert.ok(sql.length < 40 * q.length, `${sql.length} bytes of SQL for ${q.length} of query`);
    const rows = await chronological(q);
    assert.deepEqual(rows.map((r) => r.d), ['v100', 'other', 'v50', 'other', 'other', 'v0', 'v75', 'v9']);
  });

  test('after an aggregation a case works on the aggregated rows', async () => {
    const r = await run('groupBy(user) | case { _count>=2 | size := "many" ; * | size := "one" } | sort(user)');
    assert.deepEqual(r.field_order, ['user', '_count', 'size']);
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.results.map((x) => [x.user, x.size]), [['alice', 'many'], ['bob', 'many'], ['carol', 'one'], ['dave', 'one'], ['erin', 'one']]);
  });
});

describe('count() after a case', () => {
  test('groups by the assigned fields: case { a | t:="x"; * | t:="y" } | count() → t, _count', async () => {
    const r = await run('case { user=alice | t:="x"; * | t:="y" } | count() | sort(t)');
    assert.deepEqual(r.field_order, ['t', '_count']);
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.results, [{ t: 'x', _count: 3 }, { t: 'y', _count: 5 }]);
  });

  test('or by case_result, and by several assigned fields in the order they were first set', async () => {
    const r = await run('case { status_code>=400 | bad ; * | good } | count() | sort(case_result)');
    assert.deepEqual(r.field_order, ['case_result', '_count']);
    assert.deepEqual(r.results, [{ case_result: 'bad', _count: 4 }, { case_result: 'good', _count: 4 }]);
    const two = await run('case { host=web1 | tier := "front" | zone := "a" ; * | zone := "b" } | count() | sort(zone)');
    assert.deepEqual(two.field_order, ['tier', 'zone', '_count']);
    assert.deepEqual(two.results, [{ tier: 'front', zone: 'a', _count: 4 }, { tier: '', zone: 'b', _count: 4 }]);
  });
});

describe('per-row transforms inside a branch', () => {
  test('regex() sets its outputs only on the rows taking the branch', async () => {
    const rows = await chronological('case { image=~powershell | regex("(?i)(?<exe>[a-z]+)\\\\.exe", field=image) ; * | exe := "none" }');
    assert.deepEqual(rows.map((r) => r.exe), ['powershell', 'none', '', 'none', 'none', 'none', 'POWERSHELL', 'none']);
  });

  test('a transform overwriting a field leaves the other rows their own value', async () => {
    const rows = await chronological('case { user=alice | regex("(?<host>[a-z]+)", field=host) }');
    assert.deepEqual(rows.map((r) => r.host), ['web', 'web1', 'web', 'db1', 'web', 'web2', 'db1', 'web1']);
  });
});

describe('aggregations inside branches', () => {
  test('§3.3 example → count_1, sum_2, count_3, count_4 over each branch\'s rows, one row', async () => {
    const r = await run('* | case { image=~powershell | count() | sum(bytes); image=~explorer | count(); * | count() }');
    assert.deepEqual(r.field_order, ['count_1', 'sum_2', 'count_3', 'count_4']);
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.results, [{ count_1: 3, sum_2: 225, count_3: 2, count_4: 3 }]);
  });

  test('names drop the leading _ of the output; multi() is one position; as= is kept', async () => {
    const r = await run('case { image=~powershell | multi(count(), avg(bytes)) ; * | median(bytes) | stddev(bytes) | sum(bytes, as=rest_bytes) }');
    assert.deepEqual(r.field_order, ['count_1', 'avg_1', 'median_2', 'stddev_bytes_3', 'rest_bytes']);
    const rest = [250, 1000, 300, 0, 9];
    const mean = rest.reduce((x, y) => x + y, 0) / rest.length;
    const sd = Math.sqrt(rest.reduce((x, y) => x + (y - mean) ** 2, 0) / rest.length);
    const [row] = r.results;
    assert.equal(row.count_1, 3);
    assert.equal(row.avg_1, 75);
    assert.equal(row.median_2, 250);
    assert.ok(Math.abs(row.stddev_bytes_3 - sd) < 1e-9, `${row.stddev_bytes_3} ≠ ${sd}`);
    assert.equal(row.rest_bytes, 1559);
  });

  test('an aggregate reads what the branch computed before it', async () => {
    const r = await run('case { image=~powershell | regex("(?i)(?<exe>[a-z]+)\\\\.exe", field=image) | count(exe, unique=true) ; * | count() }');
    assert.deepEqual(r.results, [{ count_1: 2, count_2: 5 }]);
  });

  test('after groupBy the aggregates read the groups', async () => {
    const r = await run('groupBy(user) | case { _count>=2 | count() | sum(_count) ; * | count() }');
    assert.deepEqual(r.field_order, ['count_1', 'sum_2', 'count_3']);
    assert.deepEqual(r.results, [{ count_1: 2, sum_2: 5, count_3: 3 }]);
  });
});

describe('errors', () => {
  test('a forbidden command names itself and points into the whole query', async () => {
    const q = 'user!="日本" | case { user=alice | groupBy(host) ; * | x := "1" }';
    const r = await fail(q);
    assert.equal(r.error, 'Query error: case branch: groupBy() cannot be used inside a case branch; place it after the case');
    assert.deepEqual(r.error_pos, spanOf(q, 'groupBy(host)'));
    for (const [cmd, name] of [['sort(user)', 'sort'], ['head(5)', 'head'], ['table(user)', 'table'], ['timechart()', 'timechart'], ['outlier(bytes)', 'madOutlier'], ['analyzeFields()', 'analyzeFields']]) {
      assert.equal((await fail(`case { * | ${cmd} }`)).error, `Query error: case branch: ${name}() cannot be used inside a case branch; place it after the case`);
    }
    assert.equal(
      (await fail('case { * | frequency(user) }')).error,
      'Query error: case branch: frequency() cannot be used inside a case branch; place it after the case',
    );
  });

  test('field := cmd(…) suggests | cmd(…)', async () => {
    const q = 'case { * | who := regex("x") }';
    const r = await fail(q);
    assert.match(r.error!, /^Query error: case branch: who := regex\("x"\).*write "\| regex\("x"\)" instead$/);
    assert.deepEqual(r.error_pos, spanOf(q, 'regex("x")'));
  });

  test('errors in conditions, unknown commands and bad syntax carry the prefix and a whole-query span', async () => {
    const q = '* | case { bytes > lots | x := "1" }';
    const r = await fail(q);
    assert.equal(r.error, 'Query error: case branch: numeric comparison: expected numeric value, got "lots"');
    assert.deepEqual(r.error_pos, spanOf(q, 'lots'));
    const u = 'case { * | nope(x) }';
    const unknown = await fail(u);
    assert.equal(unknown.error, 'Query error: case branch: unsupported command: nope');
    assert.deepEqual(unknown.error_pos, spanOf(u, 'nope'));
    const p = 'msg="Zoë" | case { user= }';
    const parse = await fail(p);
    assert.match(parse.error!, /^Query error: case branch: expected value/);
    assert.deepEqual(parse.error_pos, spanOf(p, '}'));
    const nc = 'case { x := "1" }';
    const noCondition = await fail(nc);
    assert.match(noCondition.error!, /^Query error: case branch: a branch starts with a condition or \*/);
    assert.deepEqual(noCondition.error_pos, spanOf(nc, 'x := "1"'));
  });
});

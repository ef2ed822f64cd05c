// CORE filters and commands of query-language.md against real events in the embedded engine:
// rows, column names and order, chart_type and is_aggregated.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { col, fractalWith, ok, query, queryDataset, sampleEvents } from '../support/query.ts';

const data = queryDataset('investigation', sampleEvents);

const { run } = data;
const users = async (q: string) => col(await run(q), 'user');

describe('event search', () => {
  test('* returns every event newest first with the plain-search field order and a histogram', async () => {
    const r = await run('*');
    assert.equal(r.count, 8);
    assert.deepEqual(r.field_order, ['timestamp', 'norm_log', 'log_id', 'fractal_id']);
    assert.equal(r.is_aggregated, false);
    assert.equal(r.chart_type, '');
    assert.deepEqual(col(r, 'user'), ['alice', 'bob', 'alice', 'carol', 'alice', 'dave', 'bob', 'erin']);
    const first = r.results[0];
    assert.match(first.timestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
    assert.equal(first.fractal_id, data.fractal);
    assert.equal(first.status, '200');
    assert.match(first.norm_log, /"user":"alice"/);
    assert.ok(Array.isArray(r.histogram));
    assert.equal((r.histogram as Array<{ count: number }>).reduce((n, b) => n + b.count, 0), 8);
    assert.equal(r.bucket_seconds, 900);
  });

  test('an empty query and a leading pipe select all events', async () => {
    assert.equal((await run('')).count, 8);
    assert.equal((await run('| count()')).results[0]._count, 8);
  });

  test('equality compares text; lists, negation and wildcards', async () => {
    assert.deepEqual(await users('status=500'), ['alice', 'bob']);
    assert.equal((await run('status=200,301')).count, 5);
    assert.equal((await run('status!=200')).count, 4);
    assert.equal((await run('status=200.0')).count, 0);
    assert.equal((await run('user=*')).count, 8);
    assert.deepEqual(await users('src_ip!=*'), ['erin']);
    assert.equal((await run('user!="alice","bob"')).count, 3);
    assert.equal((await run('nosuchfield=x')).count, 0);
    assert.equal((await run('nosuchfield!=x')).count, 8);
  });

  test('contains, starts-with and ends-with lists are case-insensitive literals', async () => {
    assert.deepEqual(await users('image=~powershell'), ['alice', 'erin']);
    assert.deepEqual(await users('image=^"C:\\\\Windows"'), ['alice', 'alice']);
    assert.equal((await run('image=$".EXE"')).count, 3);
    assert.equal((await run('msg=~zoë')).count, 1);
    assert.equal((await run('msg=~ZOË')).count, 1);
    assert.equal((await run('image=~postgres,nginx')).count, 5);
    assert.equal((await run('image=*powershell*')).count, 0);
  });

  test('regex operands use RE2 and the i flag', async () => {
    assert.equal((await run('msg=/^login/')).count, 2);
    assert.equal((await run('msg=/ERROR/')).count, 0);
    assert.equal((await run('msg=/Error/')).count, 1);
    assert.equal((await run('msg=/error/i')).count, 1);
    assert.equal((await run('msg!=/ok/')).count, 5);
  });

  test('numeric comparisons treat absent and non-numeric as 0', async () => {
    assert.deepEqual(col(await run('bytes>100'), 'bytes'), ['250', '1000', '300']);
    assert.equal((await run('bytes<=9')).count, 2);
    assert.equal((await run('missing<5')).count, 8);
    assert.equal((await run('bytes>=1e3')).count, 1);
    assert.equal((await run('bytes > -1')).count, 8);
  });

  test('bare strings search the whole event case-insensitively, literally', async () => {
    assert.equal((await run('"zoë"')).count, 1);
    assert.equal((await run('"DEADLOCK" OR "moved"')).count, 2);
    assert.equal((await run('"/admin"')).count, 1);
    assert.equal((await run('"l.gin"')).count, 0);
    assert.equal((await run('"C:\\\\Windows\\\\System32"')).count, 1);
    assert.equal((await run('/dead.ock/')).count, 1);
    assert.equal((await run('NOT "login"')).count, 6);
  });

  test('AND binds tighter than OR; NOT negates one term; stages AND together', async () => {
    assert.equal((await run('NOT user=alice')).count, 5);
    assert.equal((await run('user=alice status=200 OR user=bob')).count, 4);
    assert.equal((await run('user=alice | status=200 OR status=500')).count, 3);
    assert.equal((await run('(user=alice OR user=bob) AND NOT status=500')).count, 3);
    assert.equal((await run('! user=alice')).count, 5);
  });

  test('in() and cidr() are conditions in any stage, negatable', async () => {
    assert.deepEqual(await users('in(user, values=[carol, dave])'), ['carol', 'dave']);
    assert.equal((await run('* | !in(user, values=[alice])')).count, 5);
    assert.equal((await run('in(status, "200,301")')).count, 5);
    assert.equal((await run('cidr(src_ip, "10.0.0.0/8")')).count, 3);
    assert.equal((await run('* | !cidr(src_ip, "10.0.0.0/8")')).count, 5);
    assert.equal((await run('cidr(src_ip, "10.0.0.0/8") OR cidr(src_ip, "192.168.0.0/16")')).count, 5);
  });

  test('values crafted to break out of SQL are only values', async () => {
    assert.equal((await run(`user="x' OR 1=1 --"`)).count, 0);
    assert.equal((await run('user="a\\"; DROP TABLE logs; --"')).count, 0);
    assert.equal((await run("msg=~\"'); SELECT 1; /*\"")).count, 0);
    assert.equal((await run('*')).count, 8);
  });
});

test('numeric comparisons and sums read a number however it was stored: integer, fraction or numeric text', async () => {
  const values: unknown[] = [500, 499, 500.5, '600', ' 7', true, 'abc', 9007199254740993n, undefined];
  // 2^53 + 1 as a JSON number (stored exactly, as text): JSON.stringify cannot write a bigint.
  const events = values.map((v, i) => (v === undefined ? { i } : { i, v: typeof v === 'bigint' ? `@big${i}` : v }));
  const fractal_id = await fractalWith(data.a, data.admin, 'stored-numbers', events.map((e) => JSON.parse(JSON.stringify(e).replace(/"@big\d+"/, '9007199254740993'))));
  const run = (q: string) => ok(data.admin, q, { fractal_id });
  const ids = async (q: string) => col(await run(q), 'i').map(Number).sort((x, y) => x - y);
  // §2: a value that is not a number (true, text, absent) counts as 0.
  assert.deepEqual(await ids('v>=500'), [0, 2, 3, 7]);
  assert.deepEqual(await ids('v<500'), [1, 4, 5, 6, 8]);
  assert.deepEqual(await ids('v>0 v<1000'), [0, 1, 2, 3], 'text with a space before the digits is not a number');
  // Aggregates skip what is not a number.
  assert.equal((await run('v<1000 | sum(v)')).results[0]._sum, 499 + 500 + 500.5 + 600);
});

describe('aggregation', () => {
  test('count() in its forms', async () => {
    const r = await run('count()');
    assert.deepEqual(r.results, [{ _count: 8 }]);
    assert.deepEqual(r.field_order, ['_count']);
    assert.equal(r.is_aggregated, true);
    assert.equal((await run('* | count(src_ip)')).results[0]._count, 7);
    assert.equal((await run('* | count(user, unique=true)')).results[0]._count, 5);
    assert.equal((await run('* | count(user, distinct=true)')).results[0]._count, 5);
  });

  test('groupBy adds _count; later aggregates join the group; sort and limit act on groups', async () => {
    const r = await run('groupBy(user) | sort(_count, order=desc) | limit(1)');
    assert.deepEqual(r.results, [{ user: 'alice', _count: 3 }]);
    assert.deepEqual(r.field_order, ['user', '_count']);
    const s = await run('* | groupBy(user) | sum(bytes) | sort(user)');
    assert.deepEqual(s.field_order, ['user', '_count', '_sum']);
    assert.deepEqual(s.results[0], { user: 'alice', _count: 3, _sum: 450 });
    assert.equal((await run('groupBy(host, user)')).count, 7);
  });

  test('groupBy then count() counts the groups; chained aggregates read the previous outputs', async () => {
    assert.deepEqual((await run('* | groupBy(user) | count()')).results, [{ _count: 5 }]);
    assert.deepEqual((await run('* | groupBy(user) | avg(_count)')).results, [{ _avg: 1.6 }]);
    assert.equal((await run('* | groupBy(user) | groupBy(_count)')).count, 3);
  });

  test('standalone aggregates combine into one row', async () => {
    const r = await run('* | sum(bytes) | count()');
    assert.deepEqual(r.results, [{ _sum: 1784, _count: 8 }]);
    assert.deepEqual(r.field_order, ['_sum', '_count']);
    assert.deepEqual((await run('avg(bytes)')).results, [{ _avg: 223 }]);
    assert.deepEqual((await run('min(bytes) | max(bytes)')).results, [{ _min: 0, _max: 1000 }]);
    const t = await run('max(timestamp)');
    assert.deepEqual(t.field_order, ['max_timestamp']);
    assert.match(t.results[0].max_timestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
  });

  test('groupBy(function=…) and multi()', async () => {
    const r = await run('groupBy(user, function=sum(bytes)) | sort(_sum, order=desc)');
    assert.deepEqual(r.field_order, ['user', '_sum']);
    assert.deepEqual(r.results[0], { user: 'carol', _sum: 1000 });
    const u = await run('groupBy(user, function=count(field=host, unique=true)) | sort(user)');
    assert.deepEqual(u.field_order, ['user', 'unique_host']);
    assert.deepEqual(u.results[0], { user: 'alice', unique_host: 2 });
    const m = await run('* | groupBy(user) | multi(count(field=host, distinct=true, as=hosts), count(field=host, as=total)) | sort(user)');
    assert.deepEqual(m.field_order, ['user', '_count', 'hosts', 'total']);
    assert.deepEqual(m.results[0], { user: 'alice', _count: 3, hosts: 2, total: 3 });
  });

  test('a condition on an aggregate output filters the groups', async () => {
    assert.deepEqual(col(await run('groupBy(user) | _count > 1 | sort(user)'), 'user'), ['alice', 'bob']);
    assert.deepEqual(col(await run('groupBy(user) | _count > 1 AND user=bob'), 'user'), ['bob']);
  });

  test('filters after head() still apply to events first', async () => {
    assert.equal((await run('* | head(10) | status=500')).count, 2);
    assert.equal((await run('* | limit(10) | groupBy(host)')).count, 3);
  });
});

describe('display commands', () => {
  test('table() keeps listed columns, then timestamp and fractal_id', async () => {
    const r = await run('table(user, status)');
    assert.deepEqual(r.field_order, ['user', 'status', 'timestamp', 'fractal_id']);
    assert.equal(r.results[0].user, 'alice');
    assert.equal(r.results[0].host, undefined);
    const t = await run('* | table(timestamp, user, limit=2)');
    assert.deepEqual(t.field_order, ['timestamp', 'user', 'fractal_id']);
    assert.equal(t.count, 2);
  });

  test('table() after an aggregation projects outputs and is not itself aggregated', async () => {
    const r = await run('* | groupBy(user) | sort(user) | table(user, count)');
    assert.deepEqual(r.field_order, ['user', '_count']);
    assert.equal(r.is_aggregated, false);
    assert.equal(r.results.length, 5);
  });

  test('table() with inline aggregates groups by the other columns', async () => {
    const r = await run('table(host, count, sum(bytes)) | sort(host)');
    assert.deepEqual(r.field_order, ['host', '_count', '_sum']);
    assert.deepEqual(r.results[0], { host: 'db1', _count: 2, _sum: 1075 });
    assert.equal(r.is_aggregated, true);
  });

  test('sort() orders numbers numerically, text as text, with secondary keys', async () => {
    assert.deepEqual(col(await run('sort(bytes, order=desc) | limit(3)'), 'bytes'), ['1000', '300', '250']);
    assert.deepEqual(col(await run('sort(bytes) | limit(3)'), 'bytes'), ['0', '9', '50']);
    assert.deepEqual(col(await run('sort(user, desc) | limit(2)'), 'user'), ['erin', 'dave']);
    assert.deepEqual(col(await run('sort(user) | sort(bytes, order=desc) | limit(3)'), 'bytes'), ['300', '100', '50']);
  });

  test('head() gives the earliest events oldest first, tail() the latest newest first', async () => {
    assert.deepEqual(await users('head(2)'), ['erin', 'bob']);
    assert.deepEqual(await users('tail(2)'), ['alice', 'bob']);
    assert.equal((await run('head()')).count, 8);
    const g = await run('groupBy(user) | sort(user) | head(2)');
    assert.deepEqual(col(g, 'user'), ['alice', 'bob']);
    const t = await run('groupBy(user) | sort(user) | tail(2)');
    assert.deepEqual(col(t, 'user'), ['erin', 'dave']);
  });

  test('limit(0) returns nothing; a bad limit is ignored', async () => {
    assert.equal((await run('limit(0)')).count, 0);
    assert.equal((await run('limit(abc)')).count, 8);
  });

  test('dedup() keeps the most recent event per combination', async () => {
    const r = await run('dedup(user)');
    assert.equal(r.count, 5);
    assert.equal(r.results.find((x) => x.user === 'alice')!.status, '200');
    const bad = await query(data.admin, '* | groupBy(user) | dedup(host)', { fractal_id: data.fractal });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error!, /dedup\(host\): "host" is not produced by the preceding aggregation/);
  });
});

describe('per-row commands and assignments', () => {
  test('regex() extracts named groups without filtering rows', async () => {
    const r = await run('regex("(?<word>\\\\w+) ok", field=msg)');
    assert.equal(r.count, 8);
    assert.deepEqual(r.field_order, ['word', 'timestamp', 'log_id', 'fractal_id', 'norm_log']);
    assert.deepEqual(col(r, 'word'), ['login', '', '', 'select', '', '', '', 'login']);
    const as = await run('regex("not (\\\\w+)", field=msg, as=what) | what=*');
    assert.deepEqual(col(as, 'what'), ['found']);
  });

  test(':= computes per event before aggregation and per row after', async () => {
    const r = await run('x := bytes * 2 | groupBy(user, function=sum(x)) | sort(_sum, order=desc) | limit(1)');
    assert.deepEqual(r.results, [{ user: 'carol', _sum: 2000 }]);
    const c = await run('groupBy(user) | c := _count * 10 | sort(user) | limit(1)');
    assert.deepEqual(c.results, [{ user: 'alice', _count: 3, c: 30 }]);
    const t = await run('label := "seen" | copy := user | head(1)');
    assert.equal(t.results[0].label, 'seen');
    assert.equal(t.results[0].copy, 'erin');
    assert.deepEqual(t.field_order.slice(0, 2), ['label', 'copy']);
  });
});

describe('timechart', () => {
  test('counts per bucket, ordered by time_bucket', async () => {
    const r = await run('timechart(span=1m)');
    assert.equal(r.chart_type, 'timechart');
    assert.deepEqual(r.chart_config, { span: '1m' });
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['time_bucket', '_count']);
    assert.equal(r.results.reduce((n, x) => n + x._count, 0), 8);
    const buckets = col(r, 'time_bucket');
    assert.deepEqual([...buckets].sort(), buckets);
  });

  test('after groupBy one series per group; sum(f) as the value', async () => {
    const r = await run('* | groupBy(status) | timechart(span=1h, function=count())');
    assert.deepEqual(r.field_order, ['status', 'time_bucket', '_count']);
    const s = await run('timechart(span=1d, function=sum(bytes))');
    assert.deepEqual(s.field_order, ['time_bucket', '_sum']);
    assert.equal(s.results.reduce((n, x) => n + x._sum, 0), 1784);
  });
});

describe('errors', () => {
  test('an unknown command is a translate error without a position', async () => {
    const r = await query(data.admin, '* | foo(x)', { fractal_id: data.fractal });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'Query error: unsupported command: foo');
    assert.equal(r.body.error_type, 'translate');
    assert.equal(r.body.error_pos, undefined);
  });

  test('a syntax error has a code point span', async () => {
    const r = await query(data.admin, 'status>=', { fractal_id: data.fractal });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'Parse error: expected value, got EOF');
    assert.equal(r.body.error_type, 'parse');
    assert.deepEqual(r.body.error_pos, { start: 8, end: 8 });
  });

  test('a non-numeric comparison value and a bad regex are 400s naming the problem', async () => {
    const n = await query(data.admin, 'bytes>abc', { fractal_id: data.fractal });
    assert.equal(n.status, 400);
    assert.equal(n.body.error, 'Query error: numeric comparison: expected numeric value, got "abc"');
    const re = await query(data.admin, 'msg=/(unclosed/', { fractal_id: data.fractal });
    assert.equal(re.status, 400);
    assert.match(re.body.error!, /invalid regular expression "\(unclosed"/);
    assert.equal((await run('*')).count, 8);
  });

  test('a bad time range is refused', async () => {
    const r = await query(data.admin, '*', { fractal_id: data.fractal, start: 'yesterday' });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'Invalid time range. Use RFC3339 format.');
    const rev = await query(data.admin, '*', { fractal_id: data.fractal, start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' });
    assert.equal(rev.status, 400);
  });
});

describe('planner corner cases', () => {
  test('in() and cidr() after an aggregation read its output columns', async () => {
    assert.deepEqual((await run('groupBy(user) | in(_count, values=[2, 3]) | sort(user)')).results.map((r) => r.user), ['alice', 'bob']);
    assert.deepEqual((await run('count() | in(_count, values=[8])')).results, [{ _count: 8 }]);
  });

  test('a filter on an aggregate renamed with as= filters the aggregated rows', async () => {
    const r = await run('groupBy(host) | multi(count(field=user, distinct=true, as=people)) | people=3');
    assert.deepEqual(r.results, [{ host: 'web1', _count: 4, people: 3 }]);
  });

  test('dedup() before groupBy dedups the events first', async () => {
    const r = await run('dedup(user) | groupBy(host) | sort(host)');
    assert.deepEqual(r.results, [
      { host: 'db1', _count: 1 },
      { host: 'web1', _count: 3 },
      { host: 'web2', _count: 1 },
    ]);
  });

  test('table() after an aggregation with a name it does not produce shows it empty', async () => {
    const r = await run('groupBy(user) | sort(user) | table(user, nothing)');
    assert.deepEqual(r.field_order, ['user', 'nothing']);
    assert.deepEqual(r.results[0], { user: 'alice', nothing: '' });
  });

  test('a non-numeric operand in arithmetic gives an empty value', async () => {
    const r = await run('x := bytes * 2A | head(1)');
    assert.equal(r.results[0].x, null);
  });
});

describe('timechart placement', () => {
  test('after a standalone aggregation there are no event times: a 400 that says where to put it', async () => {
    const r = await query(data.admin, 'iqr(bytes) | timechart()', { fractal_id: data.fractal });
    assert.equal(r.status, 400);
    assert.match(r.body.error!, /timechart\(\) needs event times/);
  });
});

describe('field names crafted to break out of SQL', () => {
  test('quoted names with backquotes, backslashes and SQL stay field names', async () => {
    const r = await data.run('groupBy("x` FROM system.one --")');
    assert.deepEqual(r.results, [{ 'x` FROM system.one --': '', _count: 8 }]);
    const b = await data.run('count(field="a\\\\`b", unique=true)');
    assert.deepEqual(b.results, [{ _count: 0 }]);
    assert.equal((await data.run('groupBy("user")')).count, 5);
  });
});

// join() and chain() (query-language.md §3.7, §3.8) against events ingested through the real
// endpoint: the spec's examples scaled to this data, join types, include=, max=, joins after an
// aggregation, sequence counting (within bound, overlaps, order, several identity fields), the
// hidden chain columns and the endpoint's _chain_events, and every error with its prefix and span.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { col, fractalWith, ok, query, queryStream, spanOf, sseFrames } from '../support/query.ts';

let a: TestAppliance;
let admin: Client;
let joins: string;
let chains: string;
let dense: string;
let random: string;

/** Whole seconds, three hours ago: every event is inside the default 24 h range. */
const base = Math.floor((Date.now() - 3 * 3600_000) / 1000) * 1000;
const at = (ms: number) => new Date(base + ms).toISOString();

/**
 * Failed logins and successful ones by source address. denied: .1 ×3, .2 ×2, .3 ×1;
 * login_success: .1 ×4, .2 ×1, .9 ×2.
 */
function joinEvents() {
  const denied = ['10.0.0.1', '10.0.0.1', '10.0.0.1', '10.0.0.2', '10.0.0.2', '10.0.0.3'];
  const success = ['10.0.0.1', '10.0.0.1', '10.0.0.1', '10.0.0.1', '10.0.0.2', '10.0.0.9', '10.0.0.9'];
  return [
    ...denied.map((ip, i) => ({ timestamp: at(i * 1000), action: 'denied', src_ip: ip, user: `u${i}`, bytes: 10 * i })),
    ...success.map((ip, i) => ({ timestamp: at(60_000 + i * 1000), action: 'login_success', src_ip: ip, user: `s${i}`, bytes: 100 + i })),
  ];
}

const logon = (user: Record<string, string>, t: number) => ({ timestamp: at(t), event_id: '4624', ...user });
const pwsh = (user: Record<string, string>, t: number, image = 'C:\\Windows\\System32\\WindowsPowerShell\\powershell.exe') => ({
  timestamp: at(t),
  event_id: '1',
  image,
  ...user,
});

/** Logons (4624) followed by PowerShell starts (1), user by user; offsets in ms from `base`. */
function chainEvents() {
  return [
    // alice: two complete sequences within 5 minutes, then a third start without a logon.
    logon({ user: 'alice' }, 0),
    pwsh({ user: 'alice' }, 60_000),
    logon({ user: 'alice' }, 120_000),
    pwsh({ user: 'alice' }, 180_000, 'POWERSHELL.EXE'),
    pwsh({ user: 'alice' }, 240_000),
    // a process that is not PowerShell matches no step.
    pwsh({ user: 'alice' }, 250_000, 'cmd.exe'),
    // bob: PowerShell 10 minutes after the logon: too slow for within=5m.
    logon({ user: 'bob' }, 0),
    pwsh({ user: 'bob' }, 600_000),
    // carol: two logons, two starts interleaved: the occurrences overlap, counted once.
    logon({ user: 'carol' }, 0),
    logon({ user: 'carol' }, 30_000),
    pwsh({ user: 'carol' }, 60_000),
    pwsh({ user: 'carol' }, 90_000),
    // dave: the steps in the wrong order.
    pwsh({ user: 'dave' }, 0),
    logon({ user: 'dave' }, 60_000),
    // henry: exactly 5 minutes apart (within is inclusive); ian: one millisecond more.
    logon({ user: 'henry' }, 0),
    pwsh({ user: 'henry' }, 300_000),
    logon({ user: 'ian' }, 0),
    pwsh({ user: 'ian' }, 300_001),
    // gina: both steps in the same millisecond: not one after the other.
    logon({ user: 'gina' }, 7_000),
    pwsh({ user: 'gina' }, 7_000),
    // erin logs on as the target of frank's logon, then starts PowerShell herself.
    logon({ user: 'frank', target_user: 'erin' }, 1_000),
    pwsh({ user: 'erin' }, 31_000),
  ];
}

/**
 * Three steps for `tri`; and identities with thousands of first-step events: `dense` whose second
 * step comes an hour after the last of them, `dense2` whose second step follows the last at once.
 */
function denseEvents() {
  const ev = (user: string, step: string, t: number) => ({ timestamp: at(t), user, step });
  const out = [
    ...[['a', 0], ['b', 10], ['c', 20], ['a', 30], ['b', 50], ['a', 55], ['b', 60], ['c', 70], ['c', 75]].map(([st, sec]) => ev('tri', st as string, (sec as number) * 1000)),
  ];
  for (let i = 0; i < 3000; i++) out.push(ev('dense', 'a', i * 1000), ev('dense2', 'a', i * 1000));
  out.push(ev('dense', 'b', 2999_000 + 3600_000), ev('dense2', 'b', 2999_000 + 500));
  return out;
}

/** Seeded pseudo-random events: users r0…r5, `step` 0…3 (3 matches no step), times on a 1 s grid ± 1 ms. */
function randomEvents(seed: number) {
  let x = seed;
  const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: 360 }, () => {
    const t = Math.floor(rnd() * 90) * 1000 + (rnd() < 0.2 ? 1 : 0);
    return { timestamp: at(t), user: `r${Math.floor(rnd() * 6)}`, step: String(Math.floor(rnd() * 4)), t };
  });
}

/**
 * The ordered count as §3.8 states it, directly: events by millisecond; per step the latest
 * partial sequence; a step strictly after the previous one, at most `within` after it; a
 * completed occurrence counts and clears every partial (occurrences do not overlap).
 */
function greedyCount(events: Array<{ t: number; step: string }>, steps: number, within?: number): number {
  const masks = new Map<number, number>();
  for (const e of events) if (Number(e.step) < steps) masks.set(e.t, (masks.get(e.t) ?? 0) | (1 << Number(e.step)));
  let partial: Array<number | undefined> = new Array(steps).fill(undefined);
  let count = 0;
  for (const t of [...masks.keys()].sort((p, q) => p - q)) {
    const m = masks.get(t)!;
    const next = partial.map((_, k) =>
      m & (1 << k) && (k === 0 || (partial[k - 1] !== undefined && (within === undefined || t - partial[k - 1]! <= within))) ? t : undefined,
    );
    if (next[steps - 1] !== undefined) {
      count++;
      partial = new Array(steps).fill(undefined);
    } else partial = partial.map((v, k) => next[k] ?? v);
  }
  return count;
}

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  joins = await fractalWith(a, admin, 'joins', joinEvents());
  chains = await fractalWith(a, admin, 'chains', chainEvents());
  dense = await fractalWith(a, admin, 'dense', denseEvents());
  random = await fractalWith(a, admin, 'random', randomEvents(7).map(({ t: _t, ...e }) => e));
});
after(() => a.dispose());

const inJoins = (q: string) => ok(admin, q, { fractal_id: joins });
const inChains = (q: string) => ok(admin, q, { fractal_id: chains });
const fails = async (q: string, fractal = joins) => {
  const r = await query(admin, q, { fractal_id: fractal });
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.success, false);
  return r.body;
};

describe('join', () => {
  test("the spec's example: denied events from addresses with more than 3 successful logins", async () => {
    const r = await inJoins('action="denied" | join(src_ip) { action="login_success" | groupBy(src_ip) } | _join__count > 3');
    assert.equal(r.count, 3);
    assert.deepEqual(new Set(col(r, 'src_ip')), new Set(['10.0.0.1']));
    assert.deepEqual(col(r, '_join__count'), [4, 4, 4]);
    assert.deepEqual(r.field_order, ['timestamp', 'norm_log', 'log_id', 'fractal_id', '_join__count']);
    assert.equal(r.is_aggregated, false);
    // Event rows keep their fields and order (newest first); the histogram counts the joined events.
    assert.deepEqual(col(r, 'user'), ['u2', 'u1', 'u0']);
    assert.equal((r.histogram as Array<{ count: number }>).reduce((n, b) => n + b.count, 0), 3);
  });

  test('inner keeps the matched outer rows, left keeps all with empty join columns', async () => {
    const inner = await inJoins('action=denied | join(src_ip) { action=login_success | groupBy(src_ip) }');
    assert.equal(inner.count, 5);
    assert.deepEqual(col(inner, 'user'), ['u4', 'u3', 'u2', 'u1', 'u0']);
    assert.deepEqual(col(inner, '_join__count'), [1, 1, 4, 4, 4]);
    const left = await inJoins('action=denied | join(src_ip, type=left) { action=login_success | groupBy(src_ip) }');
    assert.equal(left.count, 6);
    assert.deepEqual(col(left, 'user'), ['u5', 'u4', 'u3', 'u2', 'u1', 'u0']);
    assert.deepEqual(col(left, '_join__count'), [null, 1, 1, 4, 4, 4]);
    const upper = await inJoins('action=denied | join(src_ip, type=LEFT) { action=login_success | groupBy(src_ip) }');
    assert.equal(upper.count, 6);
  });

  test('include= keeps only the listed subquery columns; the rest are prefixed _join_ in their order', async () => {
    const sub = '{ action=login_success | groupBy(src_ip, function=multi(count(), max(bytes), min(bytes))) }';
    const all = await inJoins(`action=denied src_ip="10.0.0.1" | join(src_ip) ${sub} | head(1)`);
    assert.deepEqual(all.field_order, ['timestamp', 'norm_log', 'log_id', 'fractal_id', '_join__count', '_join__max', '_join__min']);
    assert.deepEqual([all.results[0]._join__count, all.results[0]._join__max, all.results[0]._join__min], [4, 103, 100]);
    const some = await inJoins(`action=denied src_ip="10.0.0.1" | join(src_ip, include=[_max]) ${sub} | head(1)`);
    assert.deepEqual(some.field_order, ['timestamp', 'norm_log', 'log_id', 'fractal_id', '_join__max']);
    assert.equal(some.results[0]._join__max, 103);
    assert.equal('_join__count' in some.results[0], false);
  });

  test('an event subquery: its event columns, or the fields include= names; one subquery row per key', async () => {
    const r = await inJoins('action=denied | join(src_ip, include=[user, bytes]) { action=login_success } | table(user, src_ip, _join_user)');
    // Each denied event appears once although its address logged in several times.
    assert.equal(r.count, 5);
    for (const row of r.results) assert.match(row._join_user, /^s\d$/);
    assert.deepEqual(r.field_order, ['user', 'src_ip', '_join_user', 'timestamp', 'fractal_id']);
    const plain = await inJoins('action=denied src_ip="10.0.0.2" | join(src_ip) { action=login_success } | head(1)');
    assert.match(plain.results[0]._join_norm_log, /"action":"login_success"/);
    assert.match(plain.results[0]._join_timestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
    assert.deepEqual(plain.field_order.slice(4), ['_join_timestamp', '_join_log_id', '_join_fractal_id', '_join_norm_log']);
  });

  test('max= caps the subquery rows', async () => {
    const q = (max: string) => `action=denied | join(src_ip, max=${max}) { action=login_success | groupBy(src_ip) | sort(_count, order=desc) }`;
    // The subquery's rows by count: 10.0.0.1 (4), 10.0.0.9 (2), 10.0.0.2 (1).
    assert.equal((await inJoins(q('1'))).count, 3);
    assert.equal((await inJoins(q('2'))).count, 3);
    assert.equal((await inJoins(q('3'))).count, 5);
    assert.equal((await inJoins(q('500000'))).count, 5);
  });

  test('after an aggregation the key is a group column; conditions on _join_* apply after the join', async () => {
    const q = 'action=denied | groupBy(src_ip) | join(src_ip, type=left) { action=login_success | groupBy(src_ip) } | sort(src_ip)';
    const r = await inJoins(q);
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['src_ip', '_count', '_join__count']);
    assert.deepEqual(r.results, [
      { src_ip: '10.0.0.1', _count: 3, _join__count: 4 },
      { src_ip: '10.0.0.2', _count: 2, _join__count: 1 },
      { src_ip: '10.0.0.3', _count: 1, _join__count: null },
    ]);
    const filtered = await inJoins(`${q} | _join__count >= 1`);
    assert.deepEqual(col(filtered, 'src_ip'), ['10.0.0.1', '10.0.0.2']);
    // §1.9 rule 5: an AND of a join output and an event condition is split; the event part filters events.
    const split = await inJoins(`${q} | _join__count >= 1 AND user!=u0`);
    assert.deepEqual(split.results, [
      { src_ip: '10.0.0.1', _count: 2, _join__count: 4 },
      { src_ip: '10.0.0.2', _count: 2, _join__count: 1 },
    ]);
    const sorted = await inJoins('action=denied | groupBy(src_ip) | join(src_ip) { action=login_success | groupBy(src_ip) } | sort(_join__count, order=desc)');
    assert.deepEqual(col(sorted, '_join__count'), [4, 1]);
  });

  test('join outputs on events feed later aggregations', async () => {
    const r = await inJoins('action=denied | join(src_ip, type=left) { action=login_success | groupBy(src_ip) } | groupBy(_join__count) | sort(_count)');
    assert.deepEqual(r.results, [
      { _join__count: '', _count: 1 },
      { _join__count: '1', _count: 2 },
      { _join__count: '4', _count: 3 },
    ]);
  });

  test('user values in the subquery are only values', async () => {
    const r = await inJoins(`action=denied | join(src_ip, type=left) { action="x' OR 1=1 --" | groupBy(src_ip) }`);
    assert.equal(r.count, 6);
    assert.deepEqual(col(r, '_join__count'), [null, null, null, null, null, null]);
  });
});

describe('join errors', () => {
  test('missing key, type, max and include', async () => {
    let q = 'join() { * }';
    let e = await fails(q);
    assert.equal(e.error, 'Query error: join() requires a join key field, e.g. join(user) { ... }');
    assert.equal(e.error_type, 'translate');
    q = 'join(src_ip, type=outer) { * }';
    assert.equal((await fails(q)).error, "Query error: join() type must be 'inner' or 'left', got 'outer'");
    for (const v of ['0', '-1', '1.5', 'abc']) {
      q = `join(src_ip, max="${v}") { * }`;
      assert.equal((await fails(q)).error, `Query error: join() max must be a positive integer, got '${v}'`);
    }
    q = 'join(src_ip, include=[_count, nope]) { groupBy(src_ip) }';
    e = await fails(q);
    assert.equal(e.error, 'Query error: join() include: "nope" is not a column of the subquery, which returns [src_ip, _count]');
  });

  test('the subquery must output the key, with a hint after a bare count()', async () => {
    let q = 'join(src_ip) { groupBy(user) }';
    let e = await fails(q);
    assert.equal(e.error, 'Query error: join() subquery must output the join key "src_ip", but returns [user, _count]');
    assert.deepEqual(e.error_pos, spanOf(q, '{ groupBy(user) }'));
    q = 'action=denied | join(src_ip) { groupBy(src_ip) | count() }';
    e = await fails(q);
    assert.match(e.error!, /^Query error: join\(\) subquery must output the join key "src_ip", but returns \[_count\] \(.*count\(\) after groupBy\(\).*\)$/);
  });

  test('the outer rows need the key: after an aggregation a group column', async () => {
    const e = await fails('groupBy(user) | join(src_ip) { groupBy(src_ip) }');
    assert.match(e.error!, /^Query error: join\(\): the outer rows have no column "src_ip"/);
  });

  test('nested joins', async () => {
    const q = 'join(src_ip) { groupBy(src_ip) | join(src_ip) { * } }';
    const e = await fails(q);
    assert.equal(e.error, 'Query error: join() does not support nested joins');
    assert.deepEqual(e.error_pos, spanOf(q, 'join', 5));
  });

  test('subquery failures are prefixed and located in the whole query', async () => {
    let q = 'action=denied | join(src_ip) { bytes > abc | groupBy(src_ip) }';
    let e = await fails(q);
    assert.equal(e.error, 'Query error: join() subquery translation error: numeric comparison: expected numeric value, got "abc"');
    assert.equal(e.error_type, 'translate');
    assert.deepEqual(e.error_pos, spanOf(q, 'abc'));
    q = 'action=denied | join(src_ip) { groupBy(src_ip) | nosuch(x) }';
    e = await fails(q);
    assert.match(e.error!, /^Query error: join\(\) subquery translation error: unsupported command: nosuch/);
    assert.deepEqual(e.error_pos, spanOf(q, 'nosuch(x)'));
    q = 'action=denied | join(src_ip) { action= }';
    e = await fails(q);
    assert.equal(e.error, 'Query error: join() subquery parse error: expected value, got RBRACE');
    assert.equal(e.error_type, 'translate');
    assert.deepEqual(e.error_pos, spanOf(q, '}'));
    // Validation answers the same.
    const v = await admin.post('/api/v1/query/validate', { query: 'action=denied | join(src_ip) { bytes > abc }', fractal_id: joins });
    assert.equal(v.body.valid, false);
    assert.equal(v.body.error, 'Query error: join() subquery translation error: numeric comparison: expected numeric value, got "abc"');
    assert.deepEqual(v.body.error_pos, { start: 39, end: 42 });
  });
});

describe('chain', () => {
  const spec = 'chain(user, within=5m) { event_id=4624; event_id=1 | image=/powershell/i }';

  test("the spec's example: users with more than one logon → PowerShell sequence within 5 minutes", async () => {
    const r = await inChains(`${spec} | chain_count > 1`);
    assert.deepEqual(r.field_order, ['user', 'chain_count']);
    assert.equal(r.is_aggregated, true);
    assert.equal(r.count, 1);
    const row = r.results[0];
    assert.equal(row.user, 'alice');
    assert.equal(row.chain_count, 2);
    // Hidden columns ride in the rows: the first match's step times and the latest step event.
    assert.deepEqual(row._chain_ts, [base, base + 60_000]);
    assert.equal(row._chain_done, base + 240_000);
    assert.equal('_chain_ids' in row, false);
    // The endpoint's additions: the events of the match and the fields the steps test.
    assert.deepEqual(row._chain_fields, ['event_id', 'image']);
    assert.equal(row._chain_events.length, 2);
    assert.deepEqual(
      row._chain_events.map((e: Record<string, unknown>) => [e.step, e.timestamp]),
      [
        [1, at(0).replace('T', ' ').replace('Z', '')],
        [2, at(60_000).replace('T', ' ').replace('Z', '')],
      ],
    );
    assert.match(row._chain_events[0].norm_log, /"event_id":"4624"/);
    assert.match(row._chain_events[1].norm_log, /powershell/i);
    assert.match(row._chain_events[0].log_id, /^[0-9a-f-]{36}$/);
    assert.notEqual(row._chain_events[0].log_id, row._chain_events[1].log_id);
  });

  test('within bounds each gap (inclusive, in milliseconds); overlapping occurrences count once; order by chain_count', async () => {
    const r = await inChains(spec);
    assert.deepEqual(r.results.map((x) => [x.user, x.chain_count]), [
      ['alice', 2],
      ['carol', 1],
      ['henry', 1],
    ]);
    // bob's PowerShell came 10 minutes after the logon: only without within=.
    const open = await inChains('chain(user) { event_id=4624; event_id=1 | image=/powershell/i }');
    assert.deepEqual(open.results.map((x) => [x.user, x.chain_count]), [
      ['alice', 2],
      ['bob', 1],
      ['carol', 1],
      ['henry', 1],
      ['ian', 1],
    ]);
    // carol's match is the earliest completion: the later logon, then the first start.
    const carol = open.results.find((x) => x.user === 'carol')!;
    assert.deepEqual(carol._chain_ts, [base + 30_000, base + 60_000]);
    assert.equal(carol._chain_done, base + 90_000);
  });

  test('several identity fields: _entity, an event joining every non-empty value', async () => {
    const r = await inChains('chain(user, target_user, within=1m) { event_id=4624; event_id=1 | image=/powershell/i }');
    assert.deepEqual(r.field_order, ['_entity', 'chain_count']);
    assert.deepEqual(r.results.map((x) => [x._entity, x.chain_count]), [
      ['alice', 2],
      ['carol', 1],
      ['erin', 1],
    ]);
    const erin = await inChains('chain(user, target_user) { event_id=4624; event_id=1 } | _entity=erin');
    assert.equal(erin.count, 1);
    assert.match(erin.results[0]._chain_events[0].norm_log, /"user":"frank"/);
  });

  test('order=false: every step in any order, the smallest per-step count', async () => {
    const r = await inChains('chain(user, order=false) { event_id=1 | image=/powershell/i; event_id=4624 }');
    const counts = Object.fromEntries(r.results.map((x) => [x.user, x.chain_count]));
    assert.deepEqual(counts, { alice: 2, bob: 1, carol: 2, dave: 1, gina: 1, henry: 1, ian: 1 });
    assert.equal(r.results[0].chain_count, 2);
    const dave = r.results.find((x) => x.user === 'dave')!;
    // Each step's earliest event: the PowerShell start came first.
    assert.deepEqual(dave._chain_ts, [base, base + 60_000]);
    assert.deepEqual(dave._chain_events.map((e: { step: number }) => e.step), [1, 2]);
    for (const v of ['no', '0', 'FALSE']) {
      const same = await inChains(`chain(user, order=${v}) { event_id=1 | image=/powershell/i; event_id=4624 }`);
      assert.equal(same.count, 7);
    }
    // Ordered, dave's steps are reversed and gina's fall in one millisecond: no match.
    const ordered = await inChains('chain(user, order=yes) { event_id=4624; event_id=1 | image=/powershell/i }');
    assert.equal(ordered.results.some((x) => x.user === 'dave' || x.user === 'gina'), false);
  });

  test('steps take in(), cidr(), negation, OR and *; event filters before or after apply to events', async () => {
    const r = await inChains('chain(user) { in(event_id, values=[4624]) ; * | !cidr(src_ip, "10.0.0.0/8") | event_id=1 OR event_id=9 }');
    assert.deepEqual(col(r, 'user').slice(0, 1), ['alice']);
    const filtered = await inChains(`user!=alice | ${spec}`);
    assert.equal(filtered.results.some((x) => x.user === 'alice'), false);
    const after = await inChains(`${spec} | user=carol`);
    assert.deepEqual(col(after, 'user'), ['carol']);
  });

  test('three steps; thousands of first steps per identity stay cheap and exact', async () => {
    const inDense = (q: string) => ok(admin, q, { fractal_id: dense });
    const counts = async (q: string) => Object.fromEntries((await inDense(q)).results.map((x) => [x.user, x.chain_count]));
    assert.deepEqual(await counts('chain(user, within=15s) { step=a; step=b; step=c }'), { tri: 2 });
    const tri = (await inDense('chain(user, within=15s) { step=a; step=b; step=c } | user=tri')).results[0];
    assert.deepEqual(tri._chain_ts, [base, base + 10_000, base + 20_000]);
    assert.deepEqual(tri._chain_events.map((e: { step: number }) => e.step), [1, 2, 3]);
    assert.deepEqual(await counts('chain(user) { step=a; step=b; step=c }'), { tri: 2 });
    assert.deepEqual(await counts('chain(user, order=false) { step=a; step=b; step=c }'), { tri: 3 });
    assert.deepEqual(await counts('chain(user, within=5m) { step=a; step=b }'), { dense2: 1, tri: 3 });
    assert.deepEqual(await counts('chain(user) { step=a; step=b }'), { dense: 1, dense2: 1, tri: 3 });
  });

  test('the stream endpoint carries the same rows with _chain_events', async () => {
    const frames = await sseFrames(await queryStream(admin, { query: `${spec} | chain_count > 1`, fractal_id: chains }));
    assert.deepEqual(frames[0].data.field_order, ['user', 'chain_count']);
    const rows = frames.filter((f) => f.event === 'rows').flatMap((f) => f.data.rows);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]._chain_events.length, 2);
    assert.deepEqual(rows[0]._chain_fields, ['event_id', 'image']);
  });
});

describe('chain against a direct implementation', () => {
  test('random events: the same counts for 2 and 3 steps, with and without within', async () => {
    const events = randomEvents(7);
    const users = [...new Set(events.map((e) => e.user))].sort();
    let bounded = 0;
    for (const steps of [2, 3]) {
      for (const within of [undefined, 1, 3, 10]) {
        const q = `chain(user${within === undefined ? '' : `, within=${within}s`}) { ${Array.from({ length: steps }, (_, k) => `step=${k}`).join('; ')} }`;
        const r = await ok(admin, q, { fractal_id: random });
        const got = Object.fromEntries(r.results.map((x) => [x.user, x.chain_count]));
        for (const u of users) {
          const mine = events.filter((e) => e.user === u);
          const want = greedyCount(mine, steps, within === undefined ? undefined : within * 1000);
          assert.equal(got[u] ?? 0, want, `${q} for ${u}`);
          if (within !== undefined && want !== greedyCount(mine, steps)) bounded++;
        }
      }
    }
    assert.ok(bounded > 0, 'within= changed some counts');
  });
});

describe('chain errors', () => {
  const err = async (q: string) => fails(q, chains);

  test('fields, steps, order and within', async () => {
    assert.equal((await err('chain() { a=1; b=2 }')).error, 'Query error: chain() requires at least one grouping field, e.g. chain(user)');
    assert.equal((await err('chain(user) { a=1 }')).error, 'Query error: chain() requires at least 2 steps, got 1');
    assert.equal((await err('chain(user) { a=1; }')).error, 'Query error: chain() requires at least 2 steps, got 1');
    assert.equal((await err('chain(user, order=false, within=5m) { a=1; b=2 }')).error, 'Query error: chain(): within= cannot be combined with order=false');
  });

  test('steps are row conditions only', async () => {
    let q = 'chain(user) { event_id=4624 | groupBy(host); event_id=1 }';
    let e = await err(q);
    assert.equal(e.error, 'Query error: chain(): chain step: only row conditions are allowed; groupBy() changes the shape of the result');
    assert.equal(e.error_type, 'translate');
    assert.deepEqual(e.error_pos, spanOf(q, 'groupBy'));
    for (const cmd of ['regex("x")', 'count()', 'sort(user)', 'head(1)', 'table(user)']) {
      q = `chain(user) { event_id=4624; event_id=1 | ${cmd} }`;
      e = await err(q);
      const name = { 'regex("x")': 'regex', 'count()': 'count', 'sort(user)': 'sort', 'head(1)': 'head', 'table(user)': 'table' }[cmd];
      assert.equal(e.error, `Query error: chain(): chain step: only row conditions are allowed; ${name}() changes the shape of the result`);
      assert.deepEqual(e.error_pos, spanOf(q, name!));
    }
    q = 'chain(user) { event_id=4624 | match(dict=x, field=user); event_id=1 }';
    e = await err(q);
    assert.match(e.error!, /^Query error: chain\(\): chain step: match\(\) is not allowed/);
    assert.deepEqual(e.error_pos, spanOf(q, 'match'));
    q = 'chain(user) { event_id=4624 | x := 1; event_id=1 }';
    e = await err(q);
    assert.match(e.error!, /^Query error: chain\(\): chain step: assignments are not allowed/);
    assert.deepEqual(e.error_pos, spanOf(q, 'x := 1'));
  });

  test('step condition and syntax errors carry the prefix and a whole-query span', async () => {
    let q = 'event_id=* | chain(user) { event_id=4624; bytes > abc }';
    let e = await err(q);
    assert.equal(e.error, 'Query error: chain(): chain step: numeric comparison: expected numeric value, got "abc"');
    assert.deepEqual(e.error_pos, spanOf(q, 'abc'));
    q = 'chain(user) { event_id=4624; event_id= }';
    e = await err(q);
    assert.equal(e.error, 'Query error: chain(): chain step: expected value, got RBRACE');
    assert.equal(e.error_type, 'translate');
    assert.deepEqual(e.error_pos, spanOf(q, '}'));
  });
});

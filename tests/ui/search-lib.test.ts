// Pure logic of the search workspace (renderer/src/lib/search): the SSE frame parser, CSV/NDJSON export,
// value quoting and filters, @variables and error positions, time ranges, the view in the address, and
// the per-user history and saved queries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseParser, type SseFrame } from '../../renderer/src/lib/search/sse.ts';
import { cellText, csvField, exportFileName, toCsv, toNdjson } from '../../renderer/src/lib/search/export.ts';
import {
  appendFilter,
  codePointToOffset,
  errorRange,
  filterClause,
  findVariables,
  isFieldName,
  offsetToCodePoint,
  quoteString,
  substituteVariables,
  valueLiteral,
} from '../../renderer/src/lib/search/query-text.ts';
import { formatTime, parseEventTime, parseTime, rangeLabel, resolveRange } from '../../renderer/src/lib/search/time.ts';
import { defaultView, sameView, viewFromParams, viewHash, viewToParams } from '../../renderer/src/lib/search/view-state.ts';
import { HistoryCursor, HISTORY_MAX, QueryHistory, SavedQueries } from '../../renderer/src/lib/search/query-store.ts';
import { parseHash } from '../../renderer/src/lib/route.ts';
import { addToHistogram } from '../../renderer/src/lib/search/histogram.ts';

// ---- SSE ------------------------------------------------------------------------------------------------

const STREAM =
  'event: meta\ndata: {"field_order":["timestamp"]}\n\n' +
  'event: rows\ndata: {"rows":[{"a":"x\\ny"}]}\n\n' +
  ': keep-alive comment\n\n' +
  'event: done\r\ndata: {"count":1}\r\n\r\n';

test('SSE: frames with event names, comments ignored, any line ending', () => {
  const p = new SseParser();
  const frames = [...p.push(STREAM), ...p.end()];
  assert.deepEqual(
    frames.map((f) => f.event),
    ['meta', 'rows', 'done'],
  );
  assert.deepEqual(JSON.parse(frames[1]!.data), { rows: [{ a: 'x\ny' }] });
  assert.equal(frames[2]!.data, '{"count":1}');
});

test('SSE: the same frames whatever the chunking, even a CRLF split in two', () => {
  const whole = new SseParser().push(STREAM);
  for (let size = 1; size <= 7; size++) {
    const p = new SseParser();
    const got: SseFrame[] = [];
    for (let i = 0; i < STREAM.length; i += size) got.push(...p.push(STREAM.slice(i, i + size)));
    got.push(...p.end());
    assert.deepEqual(got, whole, `chunks of ${size}`);
  }
  // A CR at the end of one chunk and the LF at the start of the next are one line ending, not two.
  const p = new SseParser();
  const got = [...p.push('event: a\r'), ...p.push('\ndata: 1\r'), ...p.push('\n\r'), ...p.push('\n')];
  assert.deepEqual(got, [{ event: 'a', data: '1' }]);
});

test('SSE: multi-line data, default event name, one space stripped, unfinished event dropped', () => {
  const p = new SseParser();
  const got = p.push('data: a\ndata:b\ndata:  c\n\nevent: x\n\ndata: tail');
  assert.deepEqual(got, [{ event: 'message', data: 'a\nb\n c' }]);
  assert.deepEqual(p.end(), [], 'no blank line after "tail": not dispatched');
  assert.deepEqual(new SseParser().push('id: 7\ndata: z\n\n'), [{ event: 'message', data: 'z', id: '7' }]);
});

// ---- export ---------------------------------------------------------------------------------------------

test('CSV: RFC 4180 quoting, CRLF records, header = field order, absent values empty', () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('two\nlines'), '"two\nlines"');
  assert.equal(csvField('cr\r'), '"cr\r"');
  const csv = toCsv(
    ['timestamp', 'user', 'n', 'tags'],
    [
      { timestamp: '2026-01-01 00:00:00.000', user: 'a,"b"', n: 5, tags: ['x', 'y'], extra: 'not exported' },
      { timestamp: '2026-01-01 00:00:01.000', n: null },
    ],
  );
  assert.equal(csv, 'timestamp,user,n,tags\r\n2026-01-01 00:00:00.000,"a,""b""",5,"[""x"",""y""]"\r\n2026-01-01 00:00:01.000,,,\r\n');
  assert.equal(cellText(undefined), '');
  assert.equal(cellText(false), 'false');
  assert.equal(cellText({ a: 1 }), '{"a":1}');
});

test('CSV for spreadsheets (the dictionary export): a cell that would run as a formula is written as text', () => {
  const rows = [{ k: '=1+1', v: '@SUM(A1)' }, { k: '+x', v: '-2' }, { k: 'a=b', v: ' =not first' }];
  assert.equal(toCsv(['k', 'v'], rows, { spreadsheetSafe: true }), "k,v\r\n'=1+1,'@SUM(A1)\r\n'+x,'-2\r\na=b, =not first\r\n");
  assert.equal(toCsv(['k', 'v'], rows), 'k,v\r\n=1+1,@SUM(A1)\r\n+x,-2\r\na=b, =not first\r\n', 'search results stay exact');
});

test('NDJSON: one object per line, field order first, nothing lost', () => {
  const out = toNdjson(['b', 'a'], [{ a: 1, b: 'x', c: 'C:\\x' }, { a: 2 }]);
  const lines = out.split('\n');
  assert.equal(lines.length, 3);
  assert.equal(lines[2], '');
  assert.equal(lines[0], '{"b":"x","a":1,"c":"C:\\\\x"}');
  assert.deepEqual(JSON.parse(lines[1]!), { a: 2 });
  assert.equal(exportFileName('web logs/2', 'csv', new Date('2026-01-02T03:04:05.678Z')), 'search-web-logs-2-2026-01-02T03-04-05Z.csv');
});

// ---- quoting and filters ------------------------------------------------------------------------------

test('values: bare when they read back as one token, quoted with \\ and " escaped otherwise', () => {
  assert.equal(valueLiteral('web1'), 'web1');
  assert.equal(valueLiteral('200'), '200');
  assert.equal(valueLiteral('10.0.0.5'), '10.0.0.5');
  assert.equal(valueLiteral('2026-01-01'), '2026-01-01');
  assert.equal(valueLiteral('src-ip'), 'src-ip');
  assert.equal(valueLiteral('login ok'), '"login ok"');
  assert.equal(valueLiteral('and'), '"and"', 'a keyword would not be a value');
  assert.equal(valueLiteral('NOT'), '"NOT"');
  assert.equal(valueLiteral('*'), '"*"');
  assert.equal(valueLiteral('a*b'), '"a*b"');
  assert.equal(valueLiteral('-5'), '"-5"');
  assert.equal(valueLiteral('12:30'), '"12:30"');
  assert.equal(valueLiteral('Zoë'), '"Zoë"');
  assert.equal(valueLiteral(''), '""');
  assert.equal(quoteString('C:\\Windows\\cmd.exe'), '"C:\\\\Windows\\\\cmd.exe"');
  assert.equal(quoteString('say "hi"'), '"say \\"hi\\""');
});

test('filters: field=value, field!=value, empty values, names that cannot be written', () => {
  assert.equal(filterClause('user', 'alice'), 'user=alice');
  assert.equal(filterClause('user', 'alice', true), 'user!=alice');
  assert.equal(filterClause('image', 'C:\\x "y"'), 'image="C:\\\\x \\"y\\""');
  assert.equal(filterClause('event.name', 'a b'), 'event.name="a b"');
  assert.equal(filterClause('src_ip', ''), 'src_ip!=*', 'empty means absent or empty');
  assert.equal(filterClause('src_ip', '', true), 'src_ip=*');
  assert.equal(filterClause('@timestamp', 'x'), null);
  assert.equal(filterClause('has space', 'x'), null);
  assert.equal(filterClause('or', 'x'), null);
  assert.ok(isFieldName('_count') && isFieldName('src-ip') && isFieldName('héllo'));
  assert.ok(!isFieldName('1abc'));
});

test('appending a filter narrows any query as a new stage', () => {
  assert.equal(appendFilter('', 'a=1'), 'a=1');
  assert.equal(appendFilter('  * ', 'a=1'), 'a=1');
  assert.equal(appendFilter('x=1 OR y=2', 'a=1'), 'x=1 OR y=2 | a=1');
  assert.equal(appendFilter('status=500 | groupBy(host)', 'host=web1'), 'status=500 | groupBy(host) | host=web1');
  assert.equal(appendFilter('status=500 | ', 'a=1'), 'status=500 | a=1');
});

// ---- variables and positions ---------------------------------------------------------------------------

test('@variables: found by the service rules (not in quotes, not after a word character)', () => {
  assert.deepEqual(findVariables('user=@user host=@host | head(@n) user=@user'), ['user', 'host', 'n']);
  assert.deepEqual(findVariables('email=bob@example.com "@quoted" \'@also\' x=@ok'), ['ok']);
  assert.deepEqual(findVariables('a="x\\"@no" b=@yes'), ['yes']);
  assert.deepEqual(findVariables('@1 @_a'), ['_a']);
  const s = substituteVariables('user=@u | head(@n) @missing', new Map([['u', 'alice'], ['n', '']]));
  assert.equal(s.text, 'user=alice | head(*) @missing');
});

test('error positions: code points → UTF-16, mapped back through substituted variables', () => {
  // §6 example 4: "#" is code point 10, UTF-16 offset 11.
  const q = 'tag="🔥" | #';
  assert.equal(codePointToOffset(q, 10), 11);
  assert.equal(offsetToCodePoint(q, 11), 10);
  assert.deepEqual(errorRange(q, new Map(), { start: 10, end: 11 }), { from: 11, to: 12 });
  // Zero-width at the end (§6 example 2).
  const z = 'user="Zoë" | groupBy(host';
  assert.deepEqual(errorRange(z, new Map(), { start: 25, end: 25 }), { from: 25, to: 25 });
  // After substitution "status=@v" with v = ">=" reads "status=>=": the error inside the value
  // underlines the whole @v; a position after it shifts back by the length difference.
  const v = 'status=@v | x=~';
  const vars = new Map([['v', 'a b']]);
  const sub = substituteVariables(v, vars);
  assert.equal(sub.text, 'status=a b | x=~');
  assert.deepEqual(errorRange(v, vars, { start: 9, end: 10 }), { from: 7, to: 9 });
  assert.deepEqual(errorRange(v, vars, { start: 16, end: 16 }), { from: 15, to: 15 }, "EOF of the substituted text is EOF of the query");
  assert.equal(sub.toOriginal(7), 7, 'the start of a value is the start of its @name');
  assert.equal(sub.toOriginal(10), 9, 'the end of a value is the end of its @name');
});

// ---- time ---------------------------------------------------------------------------------------------

test('ranges: presets from now, all data from the span, absolute as given', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  const r = resolveRange({ kind: 'relative', preset: '15m' }, now);
  assert.equal(r.start.toISOString(), '2026-03-01T11:45:00.000Z');
  assert.equal(r.end.toISOString(), now.toISOString());
  const span = { oldest: new Date('2025-01-01T00:00:00Z'), newest: new Date('2025-01-02T00:00:00Z') };
  const all = resolveRange({ kind: 'all' }, now, span);
  assert.equal(all.start.toISOString(), '2025-01-01T00:00:00.000Z');
  assert.equal(all.end.toISOString(), '2025-01-02T00:00:00.001Z', 'inclusive of the newest event');
  assert.equal(rangeLabel({ kind: 'relative', preset: '7d' }, 'utc'), 'Last 7 days');
  assert.equal(
    rangeLabel({ kind: 'absolute', start: new Date('2026-01-01T10:00:00Z'), end: new Date('2026-01-01T11:30:00Z') }, 'utc'),
    '2026-01-01 10:00:00 → 11:30:00',
  );
});

test('typed times: in UTC or local, with their own offset, rejected when not a date', () => {
  assert.equal(parseTime('2026-01-02 03:04:05', 'utc')!.toISOString(), '2026-01-02T03:04:05.000Z');
  assert.equal(parseTime('2026-01-02T03:04', 'utc')!.toISOString(), '2026-01-02T03:04:00.000Z');
  assert.equal(parseTime('2026-01-02', 'utc')!.toISOString(), '2026-01-02T00:00:00.000Z');
  assert.equal(parseTime('2026-01-02 03:04:05.678912', 'utc')!.toISOString(), '2026-01-02T03:04:05.678Z');
  assert.equal(parseTime('2026-01-02T03:04:05+02:00', 'local')!.toISOString(), '2026-01-02T01:04:05.000Z');
  assert.equal(parseTime('2026-01-02T03:04:05Z', 'local')!.toISOString(), '2026-01-02T03:04:05.000Z');
  const local = parseTime('2026-07-02 03:04:05', 'local')!;
  assert.equal(local.getTime(), new Date(2026, 6, 2, 3, 4, 5).getTime());
  assert.equal(parseTime('2026-02-31', 'utc'), null);
  assert.equal(parseTime('yesterday', 'utc'), null);
  assert.equal(parseTime('2026-01-02 25:00', 'utc'), null);
  const now = new Date('2026-03-01T00:00:00Z');
  assert.equal(parseTime(' now ', 'utc', now)!.getTime(), now.getTime());
  // Round trip through the display format.
  const d = new Date('2026-05-06T07:08:09.010Z');
  assert.equal(parseTime(formatTime(d, 'local', true), 'local')!.getTime(), d.getTime());
  assert.equal(formatTime(d, 'utc', true), '2026-05-06 07:08:09.010');
});

test('event times are UTC text with milliseconds', () => {
  assert.equal(parseEventTime('2026-11-22 00:34:20.463')!.toISOString(), '2026-11-22T00:34:20.463Z');
  assert.equal(parseEventTime('2026-11-22 00:34:20.463000000')!.toISOString(), '2026-11-22T00:34:20.463Z');
  assert.equal(parseEventTime('2026-11-22T00:34:20Z')!.toISOString(), '2026-11-22T00:34:20.000Z');
  assert.equal(parseEventTime(''), null);
  assert.equal(parseEventTime(17), null);
});

// ---- the view in the address --------------------------------------------------------------------------

test('hash state: query, range, scope and variables survive a round trip through the address', () => {
  const views = [
    defaultView(),
    {
      q: 'user="a b" | groupBy(host) & + %',
      range: { kind: 'relative' as const, preset: '15m' as const },
      scope: { type: 'fractal' as const, id: 'c5ed2436-73dc-4282-b140-caf406331d78' },
      vars: { host: 'web 1', n: '' },
    },
    { q: '', range: { kind: 'all' as const }, scope: { type: 'prism' as const, id: 'p1' }, vars: {} },
    {
      q: 'tag="🔥"',
      range: { kind: 'absolute' as const, start: new Date('2026-01-01T00:00:00Z'), end: new Date('2026-01-02T00:00:00.500Z') },
      scope: null,
      vars: {},
    },
  ];
  for (const v of views) {
    const hash = viewHash(v);
    assert.ok(hash.startsWith('#/search?'));
    assert.ok(!hash.includes('+'), 'spaces are %20, so a "+" in a query cannot be misread');
    const parsed = parseHash(hash);
    assert.equal(parsed.path, '/search');
    const back = viewFromParams(parsed.query);
    assert.ok(sameView(back, v), `${hash} → ${JSON.stringify(back)}`);
    assert.equal(back.q, v.q);
  }
  assert.equal(viewToParams(views[1]!), 'q=user%3D%22a%20b%22%20%7C%20groupBy%28host%29%20%26%20%2B%20%25&t=15m&scope=fractal%3Ac5ed2436-73dc-4282-b140-caf406331d78&v.host=web%201&v.n=');
});

test('hash state: missing or malformed parts take their defaults', () => {
  const v = viewFromParams({ t: 'bogus', from: 'x', scope: 'nope', 'v.1x': 'a' });
  assert.deepEqual(v, defaultView());
  const backwards = viewFromParams({ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' });
  assert.equal(backwards.range.kind, 'relative');
});

// ---- history and saved queries ------------------------------------------------------------------------

function memoryStore() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), m };
}

test('history: per user, newest first, no duplicates, capped; arrow recall returns to the draft', () => {
  const store = memoryStore();
  const alice = new QueryHistory(store, 'alice');
  const bob = new QueryHistory(store, 'bob');
  alice.add('a=1');
  alice.add('b=2');
  alice.add('a=1');
  alice.add('   ');
  bob.add('x=9');
  assert.deepEqual(alice.list(), ['a=1', 'b=2']);
  assert.deepEqual(bob.list(), ['x=9']);
  for (let i = 0; i < HISTORY_MAX + 10; i++) alice.add(`q${i}`);
  assert.equal(alice.list().length, HISTORY_MAX);
  store.setItem('svc.search.history.carol', '{not json');
  assert.deepEqual(new QueryHistory(store, 'carol').list(), []);

  const h = new QueryHistory(memoryStore(), 'u');
  h.add('first');
  h.add('second');
  const c = new HistoryCursor(() => h.list());
  assert.equal(c.newer(), null);
  assert.equal(c.older('draft text'), 'second');
  assert.equal(c.older('second'), 'first');
  assert.equal(c.older('first'), null, 'no older entry');
  assert.equal(c.newer(), 'second');
  assert.equal(c.newer(), 'draft text', 'back to what was being typed');
  assert.equal(c.newer(), null);
});

test('saved queries: per user, by name, replace on the same name, removable', () => {
  const store = memoryStore();
  const s = new SavedQueries(store, 'alice');
  s.save('errors', 'status>=500');
  s.save('Admins', 'user=admin');
  s.save('errors', 'status>=500 | groupBy(host)');
  assert.deepEqual(
    s.list().map((x) => [x.name, x.query]),
    [
      ['Admins', 'user=admin'],
      ['errors', 'status>=500 | groupBy(host)'],
    ],
  );
  assert.deepEqual(new SavedQueries(store, 'bob').list(), []);
  assert.throws(() => s.save('  ', 'x'), /name/);
  s.remove('Admins');
  assert.deepEqual(
    s.list().map((x) => x.name),
    ['errors'],
  );
});

test('live tail counts new events into the histogram, extending it past its end', () => {
  const h = {
    histogram: [
      { time: '2026-01-01T00:00:00.000Z', count: 1 },
      { time: '2026-01-01T00:00:30.000Z', count: 0 },
    ],
    time_start: '2026-01-01T00:00:00.000Z',
    time_end: '2026-01-01T00:01:00.000Z',
    bucket_seconds: 30,
  };
  const out = addToHistogram(h, [{ timestamp: '2026-01-01 00:00:31.000' }, { timestamp: '2026-01-01 00:01:10.000' }])!;
  assert.deepEqual(
    out.histogram.map((b) => b.count),
    [1, 1, 1],
  );
  assert.equal(out.histogram[2]!.time, '2026-01-01T00:01:00.000Z');
  assert.equal(out.time_end, '2026-01-01T00:01:30.000Z');
  assert.equal(h.histogram[1]!.count, 0, 'the input is not changed');
});

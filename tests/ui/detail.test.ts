// Pure logic of the log detail and the field sidebar (renderer/src/lib/detail): the original record
// pretty-printed without rewriting values, the fields listed and searched, the "same …" choices, the
// surrounding list's summaries and times, field presence and value bars, comment tags.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errorField, isEdited, parseTags, sortComments, tagsText, type Comment } from '../../renderer/src/lib/detail/comments.ts';
import {
  compareNames,
  detailEntries,
  logRef,
  rowTimeText,
  sameFieldChoices,
  searchEntries,
  summaryOf,
  type FullLog,
} from '../../renderer/src/lib/detail/fields.ts';
import {
  fieldPresence,
  formatNumber,
  formatPercent,
  searchFields,
  statsKey,
  timeParam,
  valueBars,
} from '../../renderer/src/lib/detail/presence.ts';
import { prettyRecord, reindentJson } from '../../renderer/src/lib/detail/pretty.ts';
import { cellText } from '../../renderer/src/lib/search/export.ts';
import { commentTime, formatInZone, offsetText, parseRowTime, zoneName } from '../../renderer/src/lib/detail/time.ts';

describe('prettyRecord', () => {
  test('JSON objects are indented by two spaces', () => {
    const r = prettyRecord('{"a":1,"b":{"c":[1,2,{"d":"x"}]},"e":[],"f":{}}');
    assert.equal(r.kind, 'json');
    assert.equal(
      r.text,
      ['{', '  "a": 1,', '  "b": {', '    "c": [', '      1,', '      2,', '      {', '        "d": "x"', '      }', '    ]', '  },', '  "e": [],', '  "f": {}', '}'].join('\n'),
    );
  });

  test('values are copied, not re-encoded: big integers, trailing zeros, escapes, unicode', () => {
    const raw = '{"id": 123456789012345678901, "price": 1.10, "exp": 1E+3, "s": "a\\"b\\\\c\\u00e9 {not: json}, [x]", "z": "Zoë"}';
    const r = prettyRecord(raw);
    assert.equal(r.kind, 'json');
    assert.ok(r.text.includes('"id": 123456789012345678901,'), r.text);
    assert.ok(r.text.includes('"price": 1.10,'));
    assert.ok(r.text.includes('"exp": 1E+3,'));
    assert.ok(r.text.includes('"s": "a\\"b\\\\c\\u00e9 {not: json}, [x]",'), 'string content with braces and commas untouched');
    assert.ok(r.text.includes('"z": "Zoë"'));
    assert.deepEqual(JSON.parse(r.text), JSON.parse(raw), 'still the same JSON');
  });

  test('already indented JSON is re-indented the same way; whitespace around is dropped', () => {
    assert.equal(prettyRecord('  {\n\t"a" :  [ 1 ,2 ] }\n').text, '{\n  "a": [\n    1,\n    2\n  ]\n}');
    assert.equal(prettyRecord('[ ]').text, '[]');
    assert.equal(prettyRecord('[{ }, [ ]]').text, '[\n  {},\n  []\n]');
  });

  test('anything else is shown exactly as stored', () => {
    const syslog = '<34>Oct 11 22:14:15 mymachine su: \'su root\' failed for lonvick on /dev/pts/8';
    assert.deepEqual(prettyRecord(syslog), { kind: 'text', text: syslog });
    assert.deepEqual(prettyRecord('{"broken": '), { kind: 'text', text: '{"broken": ' });
    assert.deepEqual(prettyRecord('"just a string"'), { kind: 'text', text: '"just a string"' });
    assert.deepEqual(prettyRecord('42'), { kind: 'text', text: '42' });
    assert.deepEqual(prettyRecord('user=alice action=login  status=ok\n'), { kind: 'text', text: 'user=alice action=login  status=ok\n' });
    assert.deepEqual(prettyRecord(''), { kind: 'text', text: '' });
  });

  test('reindentJson with another width', () => {
    assert.equal(reindentJson('{"a":[1]}', 4), '{\n    "a": [\n        1\n    ]\n}');
  });
});

const log: FullLog = {
  log_id: '0b6f3b9e-8f5c-4c1e-9a57-3d5c2f1e0a11',
  fractal_id: '5d1c7e9a-1b2c-4d3e-8f4a-5b6c7d8e9f00',
  timestamp: '2026-01-02T03:04:05.678Z',
  ingest_timestamp: '2026-01-02T03:04:06.001Z',
  raw: '{"host":"web1"}',
  fields: { host: 'web1', 'http.status': '404', Action: 'get', item10: 'x', item2: 'y', empty: '' },
};
const row = {
  host: 'web1',
  'http.status': '404',
  Action: 'get',
  item10: 'x',
  item2: 'y',
  empty: '',
  shout: 'WEB1', // computed by the query (eval), not stored
  timestamp: '2026-01-02 03:04:05.678',
  log_id: log.log_id,
  fractal_id: log.fractal_id,
  norm_log: '{"host":"web1"}',
};

describe('detail fields', () => {
  test('reserved columns first, then stored fields by name, then values the query computed', () => {
    const e = detailEntries(row, log);
    assert.deepEqual(
      e.map((x) => x.name),
      ['timestamp', 'ingest_timestamp', 'log_id', 'fractal_id', 'Action', 'empty', 'host', 'http.status', 'item2', 'item10', 'shout'],
    );
    const by = (n: string) => e.find((x) => x.name === n)!;
    assert.equal(by('timestamp').value, '2026-01-02 03:04:05.678');
    assert.equal(by('ingest_timestamp').value, '2026-01-02 03:04:06.001');
    assert.equal(by('timestamp').filterable, false, 'a time is not a filter');
    assert.equal(by('log_id').filterable, true);
    assert.equal(by('host').filterable, true);
    assert.deepEqual([by('shout').fromQuery, by('shout').filterable], [true, false]);
    assert.equal(e.some((x) => x.name === 'norm_log'), false, 'norm_log is never listed');
  });

  test('before the full log arrives the row stands in', () => {
    const e = detailEntries(row, null);
    assert.deepEqual(
      e.map((x) => x.name),
      ['timestamp', 'log_id', 'fractal_id', 'Action', 'empty', 'host', 'http.status', 'item2', 'item10', 'shout'],
    );
    assert.equal(e.every((x) => !x.fromQuery), true);
    assert.equal(detailEntries({ n: 5, o: { a: 1 }, z: null }, null).map((x) => x.value).join('|'), '5|{"a":1}|');
  });

  test('search matches names and values, case-insensitively', () => {
    const e = detailEntries(row, log);
    assert.deepEqual(searchEntries(e, 'HTTP').map((x) => x.name), ['http.status']);
    assert.deepEqual(searchEntries(e, 'web1').map((x) => x.name), ['host', 'shout']);
    assert.equal(searchEntries(e, '  ').length, e.length);
    assert.deepEqual(searchEntries(e, 'nothing-like-this'), []);
  });

  test('names sort like a person reads them', () => {
    assert.deepEqual(['b', 'A', 'item10', 'item2', 'a'].sort(compareNames), ['A', 'a', 'b', 'item2', 'item10']);
  });

  test('cellText (shared with the results table) and rowTimeText', () => {
    assert.equal(cellText(undefined), '');
    assert.equal(cellText(false), 'false');
    assert.equal(cellText([1, 'a']), '[1,"a"]');
    assert.equal(rowTimeText('2026-01-02T03:04:05Z'), '2026-01-02 03:04:05.000');
    assert.equal(rowTimeText('2026-01-02T03:04:05.6Z'), '2026-01-02 03:04:05.600');
    assert.equal(rowTimeText('2026-01-02 03:04:05.678901234'), '2026-01-02 03:04:05.678');
    assert.equal(rowTimeText('garbage'), 'garbage');
  });

  test('logRef: the row names its log; aggregated rows do not', () => {
    assert.deepEqual(logRef(row, 'other'), { timestamp: row.timestamp, log_id: row.log_id, fractal_id: row.fractal_id });
    assert.deepEqual(logRef({ ...row, fractal_id: undefined }, 'f-1')?.fractal_id, 'f-1');
    assert.equal(logRef({ host: 'web1', _count: 3 }, 'f-1'), null);
    assert.equal(logRef({ timestamp: row.timestamp, log_id: 'nope' }, 'f-1'), null);
  });
});

describe('same-field choices and summaries', () => {
  test('only fields the log has, most telling first', () => {
    assert.deepEqual(sameFieldChoices({ source: 'nginx', host: 'web1', user: 'bob' }), [
      { field: 'host', value: 'web1' },
      { field: 'source', value: 'nginx' },
    ]);
    assert.deepEqual(sameFieldChoices({ 'host.name': 'dc01', host: '' }), [{ field: 'host.name', value: 'dc01' }]);
    assert.deepEqual(sameFieldChoices({ user: 'bob' }), []);
    assert.equal(sameFieldChoices({ host: 'a', hostname: 'b', source: 'c', service: 'd', program: 'e' }).length, 4);
  });

  test('a summary is the message when there is one, else the fields', () => {
    assert.equal(summaryOf({ msg: 'login   ok\nnext', host: 'web1' }), 'login ok next');
    assert.equal(summaryOf({ host: 'web1', user: 'bob', timestamp: 't', log_id: 'x', norm_log: '{}' }), 'host=web1 user=bob');
    assert.equal(summaryOf({ host: 'web1', user: 'bob' }, ['host']), 'user=bob', 'the field every row shares is left out');
    assert.equal(summaryOf({ message: 'x'.repeat(500) }, [], 20), `${'x'.repeat(19)}…`);
  });
});

describe('times', () => {
  test('row times and RFC 3339 parse to the same instant', () => {
    assert.equal(parseRowTime('2026-01-02 03:04:05.678')!.toISOString(), '2026-01-02T03:04:05.678Z');
    assert.equal(parseRowTime('2026-01-02T05:04:05.678+02:00')!.toISOString(), '2026-01-02T03:04:05.678Z');
    assert.equal(parseRowTime('yesterday'), null);
  });

  test('formatted in UTC with milliseconds; local zone named by its offset', () => {
    const d = new Date('2026-01-02T03:04:05.006Z');
    assert.equal(formatInZone(d, 'utc'), '2026-01-02 03:04:05.006');
    assert.equal(formatInZone(d, 'utc', true), '03:04:05.006');
    assert.equal(zoneName('utc'), 'UTC');
    assert.match(zoneName('local', d), /^UTC([+-]\d{2}:\d{2})?$/);
    assert.equal(commentTime('2026-01-02T03:04:05.006Z', 'utc'), '2026-01-02 03:04');
  });

  test('offsets from the opened log read in the largest sensible unit', () => {
    assert.equal(offsetText(0), '+0 ms');
    assert.equal(offsetText(-250), '−250 ms');
    assert.equal(offsetText(1500), '+1.5 s');
    assert.equal(offsetText(10_000), '+10 s');
    assert.equal(offsetText(-(3 * 60_000 + 2000)), '−3 min 2 s');
    assert.equal(offsetText(2 * 3600_000), '+2 h');
    assert.equal(offsetText(3 * 86_400_000 + 4 * 3600_000), '+3 d 4 h');
  });
});

describe('field presence', () => {
  const rows = [
    { timestamp: 't1', host: 'web1', user: 'alice', norm_log: '{}' },
    { timestamp: 't2', host: 'web2', user: '', norm_log: '{}' },
    { timestamp: 't3', host: 'web1', status: null, norm_log: '{}' },
    { timestamp: 't4', bytes: 0 },
  ];

  test('counts rows with a non-empty value; norm_log is not a field', () => {
    const p = fieldPresence(rows, ['timestamp', 'host']);
    assert.deepEqual(
      p.map((f) => [f.name, f.count]),
      [
        ['timestamp', 4],
        ['host', 3],
        ['bytes', 1],
        ['user', 1],
      ],
    );
    assert.equal(p.find((f) => f.name === 'host')!.share, 75);
    assert.equal(p.some((f) => f.name === 'status'), false, 'null everywhere: not present');
  });

  test('ties follow the result columns, then names; or everything by name', () => {
    const tie = [{ b: 1, a: 1, c: 1 }];
    assert.deepEqual(fieldPresence(tie, ['c']).map((f) => f.name), ['c', 'a', 'b']);
    assert.deepEqual(fieldPresence(rows, [], 'name').map((f) => f.name), ['bytes', 'host', 'timestamp', 'user']);
    assert.deepEqual(fieldPresence([]), []);
  });

  test('search by name', () => {
    assert.deepEqual(searchFields(fieldPresence(rows), 'ST').map((f) => f.name), ['timestamp', 'host'], 'in the order of the list');
  });
});

describe('value bars', () => {
  test('bars are the share of all rows, as labelled', () => {
    const bars = valueBars({
      total: 200,
      present: 180,
      distinct: 3,
      top: [
        { value: 'web1', count: 100, share: 50 },
        { value: 'web2', count: 75, share: 37.5 },
        { value: 'db1', count: 5, share: 2.5 },
      ],
    });
    assert.deepEqual(
      bars.map((b) => [b.value, b.width, b.label]),
      [
        ['web1', 50, '50%'],
        ['web2', 37.5, '38%'],
        ['db1', 2.5, '2.5%'],
      ],
    );
    assert.deepEqual(valueBars({ total: 0, present: 0, distinct: 0, top: [] }), []);
    const tiny = valueBars({ total: 100000, present: 100000, distinct: 2, top: [{ value: 'a', count: 99999, share: 100 }, { value: 'b', count: 1, share: 0 }] });
    assert.deepEqual([tiny[0]!.width, tiny[1]!.width], [100, 1], 'a value that exists keeps a visible bar');
  });

  test('percentages, counts, numbers', () => {
    assert.equal(formatPercent(0), '0%');
    assert.equal(formatPercent(0.04), '<0.1%');
    assert.equal(formatPercent(4.26), '4.3%');
    assert.equal(formatPercent(42.5), '43%');
    assert.equal(formatPercent(100), '100%');
    assert.equal(formatNumber(1234567), '1,234,567');
    assert.equal(formatNumber(2.5), '2.5');
    assert.equal(formatNumber(1234.5678), '1,234.6');
    assert.equal(formatNumber(0.123456), '0.1235');
  });

  test('the stats cache key changes with query, scope and range only', () => {
    const k = statsKey({ query: 'host=web1', scope: { fractal_id: 'f' }, start: 'a', end: 'b' });
    assert.equal(k, statsKey({ query: 'host=web1', scope: { fractal_id: 'f' }, start: 'a', end: 'b' }));
    assert.notEqual(k, statsKey({ query: 'host=web2', scope: { fractal_id: 'f' }, start: 'a', end: 'b' }));
    assert.notEqual(k, statsKey({ query: 'host=web1', scope: { prism_id: 'f' }, start: 'a', end: 'b' }));
    assert.equal(timeParam(new Date('2026-01-02T03:04:05Z')), '2026-01-02T03:04:05.000Z');
    assert.equal(timeParam('2026-01-02T03:04:05Z'), '2026-01-02T03:04:05Z');
  });
});

describe('comments', () => {
  test('tags typed comma-separated', () => {
    assert.deepEqual(parseTags(' triage, phishing ,, triage,Triage '), ['triage', 'phishing', 'Triage']);
    assert.deepEqual(parseTags(''), []);
    assert.equal(tagsText(['a', 'b c']), 'a, b c');
  });

  test('edited when changed more than a second after it was written; oldest first', () => {
    const c = (id: string, created: string, updated = created) => ({ id, created_at: created, updated_at: updated }) as Comment;
    assert.equal(isEdited(c('1', '2026-01-02T03:04:05.000Z', '2026-01-02T03:04:05.400Z')), false);
    assert.equal(isEdited(c('1', '2026-01-02T03:04:05.000Z', '2026-01-02T03:09:00.000Z')), true);
    const sorted = sortComments([c('b', '2026-01-02T03:00:00Z'), c('a', '2026-01-02T02:00:00Z'), c('c', '2026-01-02T03:00:00Z')]);
    assert.deepEqual(sorted.map((x) => x.id), ['a', 'b', 'c']);
  });

  test('a refusal marks the input it names', () => {
    assert.equal(errorField('The field "content" must not be empty.'), 'content');
    assert.equal(errorField('The field "tags" holds the tag ""x""; tags cannot contain commas, quotes or control characters.'), 'tags');
    assert.equal(errorField('Writing comments needs the analyst role on fractal "soc"; you have viewer.'), null);
    assert.equal(errorField(null), null);
  });
});

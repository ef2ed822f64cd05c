// Event timestamps: parseTimestampNs (formats and units), resolveTimestamp (field precedence),
// formatNs (ClickHouse DateTime64(9) text) and nowNs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatNs,
  nowNs,
  parseTimestampNs,
  resolveTimestamp,
} from '../../service/src/ingest/timestamps.ts';
import { BigNumberText } from '../../service/src/shared/exact-json.ts';

/** ns of a UTC date-time (month 1-12) plus extra nanoseconds, computed independently via Date.UTC. */
function ns(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, extraNs = 0n): bigint {
  return BigInt(Date.UTC(y, mo - 1, d, h, mi, s)) * 1_000_000n + extraNs;
}

const BASE = ns(2026, 1, 2, 3, 4, 5); // 2026-01-02T03:04:05Z
const MAX = 9_223_372_036_854_775_807n;

test('RFC 3339 and ISO 8601 text', () => {
  const cases: Array<[string, bigint]> = [
    ['2026-01-02T03:04:05Z', BASE],
    ['2026-01-02T03:04:05.123456789Z', BASE + 123_456_789n],
    ['2026-01-02T03:04:05.000000001Z', BASE + 1n],
    ['2026-01-02T03:04:05.1Z', BASE + 100_000_000n],
    ['2026-01-02T03:04:05.123Z', BASE + 123_000_000n],
    ['2026-01-02T03:04:05.123456Z', BASE + 123_456_000n],
    ['2026-01-02T03:04:05.1234567899Z', BASE + 123_456_789n], // beyond 9 digits: cut off
    ['2026-01-02t03:04:05z', BASE],
    ['2026-01-02T05:04:05+02:00', BASE],
    ['2026-01-01T22:04:05-05:00', BASE],
    ['2026-01-02T08:34:05+05:30', BASE],
    ['2026-01-02T05:04:05+0200', BASE],
    ['2026-01-02T05:04:05+02', BASE],
    ['2026-01-02 05:04:05 +0200', BASE],
    ['2026-01-02 05:04:05.5 +02:00', BASE + 500_000_000n],
    ['2026-01-02T03:04:05.250-00:00', BASE + 250_000_000n],
    ['2026-01-02 03:04:05', BASE], // space, no zone = UTC
    ['2026-01-02T03:04:05', BASE],
    ['2026-01-02 03:04:05,123', BASE + 123_000_000n], // comma decimal separator
    ['2026-01-02 03:04:05.987654321', BASE + 987_654_321n],
    ['2026-01-02 03:04:05 UTC', BASE],
    ['2026-01-02 03:04:05UTC', BASE],
    ['2026-01-02T03:04:05 GMT', BASE],
    ['2026-01-02T03:04', BASE - 5_000_000_000n], // no seconds
    ['2026-01-02T03:04Z', BASE - 5_000_000_000n],
    ['2026-01-02', ns(2026, 1, 2)], // date only: midnight UTC
    ['2026-01-02T00:30:00+01:00', ns(2026, 1, 1, 23, 30)], // offset crosses midnight
    ['2024-02-29T12:00:00Z', ns(2024, 2, 29, 12)], // leap day
    ['2000-02-29', ns(2000, 2, 29)],
    ['2016-12-31T23:59:60Z', ns(2017, 1, 1)], // leap second: the next second
    ['  2026-01-02T03:04:05Z\n', BASE], // surrounding white space
    ['1970-01-01T00:00:00.000000001Z', 1n],
    ['2262-04-11T23:47:16.854775807Z', MAX], // the last DateTime64(9) instant
  ];
  for (const [input, want] of cases) {
    assert.equal(parseTimestampNs(input), want, JSON.stringify(input));
  }
});

test('text that is not a timestamp', () => {
  const cases = [
    'hello',
    '',
    '   ',
    '2026-13-45',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
    '2026-02-30',
    '2025-02-29', // not a leap year
    '1900-02-29',
    '2026-1-2',
    '2026-01-02X03:04:05',
    '2026-01-02T24:00:00Z',
    '2026-01-02T03:60:00Z',
    '2026-01-02T03:04:61Z',
    '2026-01-02T3:04:05Z',
    '2026-01-02T03:04:05.Z',
    '2026-01-02T03:04:05,Z',
    '2026-01-02T03:04:05Zjunk',
    '2026-01-02T03:04:05+25:00',
    '2026-01-02T03:04:05+02:60',
    '2026-01-02T03:04:05+02:0',
    '2026-01-02T03:04:05+2',
    '2026-01-02T03:04:05 EST',
    '2026-01-02T',
    '1969-12-31T23:59:59Z', // before the epoch
    '1970-01-01T00:00:00Z', // the epoch itself: "unset"
    '2262-04-11T23:47:16.854775808Z', // one ns past Int64
    '9999-12-31T00:00:00Z',
    '0000-01-01',
    '-1700000000',
    '+1700000000',
    '1.7e9',
    '0x10',
    '1700000000.',
    '.5',
    '1700000000.5.5',
    '17000 00000',
    '12:00',
    'NaN',
    'Infinity',
    '0',
    '000',
    '0.0',
  ];
  for (const input of cases) {
    assert.equal(parseTimestampNs(input), null, JSON.stringify(input));
  }
});

test('unix numbers: the unit follows the magnitude', () => {
  // < 1e11 seconds, < 1e14 milliseconds, < 1e17 microseconds, else nanoseconds; results beyond
  // 2262-04-11 (Int64 ns) are null, which also shows which unit a boundary value was read in.
  const cases: Array<[number, bigint | null]> = [
    [1700000000, 1_700_000_000_000_000_000n], // seconds
    [1, 1_000_000_000n],
    [1700000000.5, 1_700_000_000_500_000_000n],
    [1700000000.123, 1_700_000_000_123_000_000n], // exact, not 1700000000.123 * 1e9 in doubles
    [1700000000.000001, 1_700_000_000_000_001_000n],
    [9223372036, 9_223_372_036_000_000_000n], // the last whole second of the range
    [9223372037, null], // seconds beyond 2262
    [9223372036854, 9_223_372_036_854_000_000n], // the last whole millisecond of the range
    [9223372036855, null],
    [99999999999, null], // just below 1e11: still seconds (as ms it would be 1973)
    [100000000000, 100_000_000_000_000_000n], // 1e11: milliseconds
    [1700000000123, 1_700_000_000_123_000_000n],
    [1700000000123.456, 1_700_000_000_123_456_000n],
    [99999999999999, null], // just below 1e14: still milliseconds (as µs it would be 1973)
    [100000000000000, 100_000_000_000_000_000n], // 1e14: microseconds
    [1700000000123456, 1_700_000_000_123_456_000n],
    [1700000000123456.5, 1_700_000_000_123_456_500n],
    [100000000000000000, 100_000_000_000_000_000n], // 1e17: nanoseconds
    [1700000000123456800, 1_700_000_000_123_456_800n], // a double: already rounded by JSON.parse
  ];
  for (const [input, want] of cases) {
    assert.equal(parseTimestampNs(input), want, String(input));
  }
});

test('unix numbers that are not timestamps', () => {
  for (const v of [0, -1, -1700000000, -0.5, NaN, Infinity, -Infinity, 1e-7, 1e21, 1e300, 9.3e18]) {
    assert.equal(parseTimestampNs(v), null, String(v));
  }
});

test('numeric text keeps every digit, also beyond 2^53', () => {
  const cases: Array<[string, bigint | null]> = [
    ['1700000000', 1_700_000_000_000_000_000n],
    ['00001700000000', 1_700_000_000_000_000_000n], // leading zeros do not change the unit
    ['1700000000.123456789', 1_700_000_000_123_456_789n],
    ['1700000000.123456789123', 1_700_000_000_123_456_789n], // below a ns: cut off
    ['1700000000123', 1_700_000_000_123_000_000n],
    ['1700000000123.4567', 1_700_000_000_123_456_700n],
    ['1700000000123456', 1_700_000_000_123_456_000n],
    ['1700000000123456.789', 1_700_000_000_123_456_789n],
    ['1700000000123456789', 1_700_000_000_123_456_789n], // ns beyond 2^53, exact
    ['1700000000123456789.9', 1_700_000_000_123_456_789n],
    ['1700000000999999999', 1_700_000_000_999_999_999n],
    ['9223372036854775807', MAX],
    ['9223372036854775808', null], // beyond Int64
    ['9223372036854775', 9_223_372_036_854_775_000n], // µs at the top of the range
    ['99999999999999999', null], // 1e17-1 µs is beyond 2262
    ['123456789012345678901', null],
    [' 1700000000 ', 1_700_000_000_000_000_000n],
  ];
  for (const [input, want] of cases) {
    assert.equal(parseTimestampNs(input), want, input);
  }
});

test('BigNumberText and bigint values', () => {
  assert.equal(parseTimestampNs(new BigNumberText('1700000000123456789')), 1_700_000_000_123_456_789n);
  assert.equal(parseTimestampNs(new BigNumberText('9223372036854775807')), MAX);
  assert.equal(parseTimestampNs(new BigNumberText('9223372036854775808')), null);
  assert.equal(parseTimestampNs(new BigNumberText('-1700000000123456789')), null);
  assert.equal(parseTimestampNs(new BigNumberText('1e400')), null);
  assert.equal(parseTimestampNs(1_700_000_000_123_456_789n), 1_700_000_000_123_456_789n);
  assert.equal(parseTimestampNs(1_700_000_000n), 1_700_000_000_000_000_000n);
  assert.equal(parseTimestampNs(0n), null);
  assert.equal(parseTimestampNs(-5n), null);
});

test('values of other types are not timestamps', () => {
  for (const v of [true, false, null, undefined, {}, [], [1700000000], { text: '1700000000' }, () => 1, Symbol('t')]) {
    assert.equal(parseTimestampNs(v), null, String(typeof v));
  }
  assert.equal(parseTimestampNs(new Date(0)), null);
});

test('resolveTimestamp: token fields, then settings fields, then the defaults, in order', () => {
  const T1 = '2026-01-01T00:00:01Z';
  const T2 = '2026-01-01T00:00:02Z';
  const T3 = '2026-01-01T00:00:03Z';
  const n1 = ns(2026, 1, 1, 0, 0, 1);
  const n2 = ns(2026, 1, 1, 0, 0, 2);
  const n3 = ns(2026, 1, 1, 0, 0, 3);
  const all = { event_time: T1, logged: T2, timestamp: T3, '@timestamp': T3, time: T3, ts: T3, _time: T3 };

  assert.deepEqual(resolveTimestamp(all, ['event_time'], ['logged']), { ns: n1, field: 'event_time' });
  assert.deepEqual(resolveTimestamp(all, [], ['logged']), { ns: n2, field: 'logged' });
  assert.deepEqual(resolveTimestamp(all, ['missing'], ['logged']), { ns: n2, field: 'logged' });
  assert.deepEqual(resolveTimestamp(all, ['logged', 'event_time'], []), { ns: n2, field: 'logged' }, 'token order');
  assert.deepEqual(resolveTimestamp(all, [], ['event_time', 'logged']), { ns: n1, field: 'event_time' }, 'settings order');
  assert.deepEqual(resolveTimestamp(all, [], []), { ns: n3, field: 'timestamp' });

  // A present field that does not parse is passed over.
  const bad = { a: 'not a time', b: true, c: T1, timestamp: T2 };
  assert.deepEqual(resolveTimestamp(bad, ['a', 'b'], ['c']), { ns: n1, field: 'c' });
  assert.deepEqual(resolveTimestamp(bad, ['a'], ['b']), { ns: n2, field: 'timestamp' });
  assert.deepEqual(resolveTimestamp({ x: null, ts: 1767225601 }, ['x'], []), { ns: n1, field: 'ts' });
});

test('resolveTimestamp: the default fields in their order', () => {
  const order = ['timestamp', '@timestamp', 'time', 'ts', '_time'];
  for (let k = 0; k < order.length; k++) {
    const fields: Record<string, unknown> = { date: '2030-01-01' }; // not a default field
    for (let j = k; j < order.length; j++) fields[order[j]] = `2026-01-01T00:00:0${j}Z`;
    assert.deepEqual(
      resolveTimestamp(fields, [], []),
      { ns: ns(2026, 1, 1, 0, 0, k), field: order[k] },
      `with ${order.slice(k).join(', ')}`,
    );
  }
});

test('resolveTimestamp: ingestion time when nothing parses', () => {
  const before = BigInt(Date.now()) * 1_000_000n;
  const r = resolveTimestamp({ date: '2026-01-01', timestamp: 'garbage', ts: -5 }, ['nope'], ['date2']);
  const after = BigInt(Date.now()) * 1_000_000n;
  assert.equal(r.field, null);
  assert.ok(r.ns >= before && r.ns <= after, `${r.ns} within [${before}, ${after}]`);
  // A timestamp field configured on the token is honoured even if it is not a default name.
  assert.equal(resolveTimestamp({ date: '2026-01-01' }, ['date'], []).field, 'date');
});

test('formatNs writes DateTime64(9) text in UTC', () => {
  const cases: Array<[bigint, string]> = [
    [1n, '1970-01-01 00:00:00.000000001'],
    [BASE + 123_456_789n, '2026-01-02 03:04:05.123456789'],
    [BASE, '2026-01-02 03:04:05.000000000'],
    [BASE + 5n, '2026-01-02 03:04:05.000000005'], // same second as above: cached prefix, new fraction
    [BASE + 1_000_000_000n, '2026-01-02 03:04:06.000000000'],
    [BASE + 999_999_999n, '2026-01-02 03:04:05.999999999'],
    [ns(2000, 2, 29, 23, 59, 59), '2000-02-29 23:59:59.000000000'],
    [ns(1999, 12, 31, 23, 59, 59, 1n), '1999-12-31 23:59:59.000000001'],
    [MAX, '2262-04-11 23:47:16.854775807'],
    [0n, '1970-01-01 00:00:00.000000000'],
  ];
  for (const [input, want] of cases) {
    assert.equal(formatNs(input), want, String(input));
  }
});

test('formatNs agrees with Date across the years and round-trips through parseTimestampNs', () => {
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (let k = 0; k < 2000; k++) {
    const ms = Math.floor(rand() * 9_000_000_000_000) + 1; // up to the year 2255
    const sub = BigInt(Math.floor(rand() * 1_000_000));
    const v = BigInt(ms) * 1_000_000n + sub;
    const text = formatNs(v);
    assert.equal(text.slice(0, 23), new Date(ms).toISOString().replace('T', ' ').slice(0, 23), String(v));
    assert.match(text, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{9}$/);
    assert.equal(parseTimestampNs(text), v, text);
  }
});

test('nowNs is the wall clock in ns', () => {
  const before = BigInt(Date.now()) * 1_000_000n;
  const now = nowNs();
  const after = BigInt(Date.now()) * 1_000_000n;
  assert.equal(typeof now, 'bigint');
  assert.ok(now >= before && now <= after);
});

// Event timestamps of ingested records: reading them from field values, choosing the field by the
// spec's precedence, and writing them in the text form ClickHouse DateTime64(9) accepts.
//
// Everything is in nanoseconds since the Unix epoch as a bigint, so a nanosecond value sent by a
// shipper (OTLP timeUnixNano, or a JSON number beyond 2^53 kept as BigNumberText) survives exactly.
//
// Accepted values (parseTimestampNs):
// - numbers, bigints, numeric strings and BigNumberText: unix time, the unit told apart by the size
//   of the integer part:
//       integer part < 1e11  → seconds       (1e11 s  is the year 5138)
//       integer part < 1e14  → milliseconds  (1e11 ms is 1973, 1e14 ms is 5138)
//       integer part < 1e17  → microseconds  (1e14 µs is 1973, 1e17 µs is 5138)
//       otherwise            → nanoseconds   (1e17 ns is 1973)
//   A fraction is allowed in every unit and kept down to the nanosecond (digits below a
//   nanosecond are cut off). A number is read through its shortest round-trip decimal text, so
//   1700000000.123 means exactly .123 s, not the nearest double. Signs, exponents ("1e9"), hex,
//   NaN and Infinity are not timestamps.
// - RFC 3164 dates (`Nov 25 16:00:07`, `Nov  5 16:00:07.123`, with the year before or after, as
//   syslog-ng's DATE and BSD syslog write them), in UTC; without a year the current one, or the
//   previous one when that would be more than a day ahead.
// - RFC 3339 and the common ISO 8601 variants: `2026-01-02T03:04:05Z`, `t`/space instead of `T`,
//   optional seconds, a fraction after `.` or `,` (up to 9 digits kept exactly, more are cut off),
//   zone `Z`, `UTC`, `GMT`, `+02:00`, `+0200` or `+02` (optionally after one space), no zone = UTC;
//   and a bare date `2026-01-02` (midnight UTC). Surrounding white space is ignored.
// - The result must lie in 1970-01-01T00:00:00Z < t ≤ 2262-04-11T23:47:16.854775807Z (the Int64
//   nanosecond range that DateTime64(9) stores). Zero is "unset" for most shippers (OTLP says so
//   for timeUnixNano), so 0 and anything at or before the epoch is not a timestamp.
// Anything else (booleans, null, objects, `hello`, `2026-13-45`, "") → null.
import { offsetText, type TimeZone } from './parsers/time-zone.ts';
import { BigNumberText } from '../shared/exact-json.ts';

/** Default timestamp fields, checked after the token's and the settings' fields. */
const DEFAULT_TIMESTAMP_FIELDS: readonly string[] = ['timestamp', '@timestamp', 'time', 'ts', '_time'];

const NS_PER_S = 1_000_000_000n;
/** Largest value DateTime64(9) stores: 2^63 - 1 ns (2262-04-11T23:47:16.854775807Z). */
const MAX_NS = 9_223_372_036_854_775_807n;
/** Seconds part of MAX_NS, for a cheap range check before building bigints. */
const MAX_S = 9_223_372_036;
const MAX_MS = 9_223_372_036_854;
const ZEROS = '000000000';

/** Nanoseconds since the epoch of v, or null if v is not a timestamp (see the file header). */
export function parseTimestampNs(v: unknown): bigint | null {
  switch (typeof v) {
    case 'number':
      return parseNumber(v);
    case 'string':
      return parseText(v);
    case 'bigint':
      return v > 0n ? numericNs(v.toString(), 0, -1, -1) : null;
    case 'object':
      return v instanceof BigNumberText ? parseText(v.text) : null;
    default:
      return null;
  }
}

function parseNumber(v: number): bigint | null {
  if (!(v > 0) || !Number.isFinite(v)) return null;
  if (Number.isSafeInteger(v)) {
    // Fast path: an integer below 2^53 (the usual seconds or milliseconds).
    if (v < 1e11) return v <= MAX_S ? BigInt(v) * NS_PER_S : null;
    if (v < 1e14) return v <= MAX_MS ? BigInt(v) * 1_000_000n : null;
    return v < 1e17 ? BigInt(v) * 1_000n : BigInt(v); // µs below 2^53 stay below 2^63 ns
  }
  // Fractions, and integers beyond 2^53 (already rounded by the double; taken as the double's
  // shortest text). Exponent forms (below 1e-6 or from 1e21) are rejected by parseText.
  return parseText(String(v));
}

function isWs(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

function parseText(s: string): bigint | null {
  let start = 0;
  let end = s.length;
  while (start < end && isWs(s.charCodeAt(start))) start++;
  while (end > start && isWs(s.charCodeAt(end - 1))) end--;
  if (start === end) return null;
  // YYYY- → a date; a letter → an RFC 3164 date (`Nov 25 16:00:07`, syslog-ng's DATE); otherwise
  // it has to be a plain decimal number.
  if (end - start >= 10 && s.charCodeAt(start + 4) === 45 /* - */) return parseIso(s, start, end);
  if (((s.charCodeAt(start) | 32) >= 97 && (s.charCodeAt(start) | 32) <= 122) || (end - start >= 20 && s.charCodeAt(start + 4) === 32)) {
    const bsd = bsdTimestampAt(s, start, end, Date.now());
    return bsd !== null && bsd.end === end ? parseText(bsd.text) : null;
  }
  let dot = -1;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) continue;
    if (c === 46 /* . */ && dot < 0) {
      dot = i;
      continue;
    }
    return null;
  }
  if (dot === start || dot === end - 1) return null; // ".5" and "5." are not numbers we accept
  return numericNs(s, start, end, dot);
}

/**
 * s[start, end) is digits with an optional '.' at dot (-1: none); end -1 means the whole string.
 * Picks the unit from the integer part's digit count and returns ns, or null out of range.
 */
function numericNs(s: string, start: number, end: number, dot: number): bigint | null {
  if (end < 0) end = s.length;
  const intEnd = dot < 0 ? end : dot;
  let i = start;
  while (i < intEnd - 1 && s.charCodeAt(i) === 48) i++; // leading zeros do not count
  const intDigits = intEnd - i;
  // Digits of the fraction to keep for the unit: s → 9, ms → 6, µs → 3, ns → 0.
  const keep = intDigits <= 11 ? 9 : intDigits <= 14 ? 6 : intDigits <= 17 ? 3 : 0;
  if (intDigits > 20) return null; // beyond 2^63 in any unit
  let frac = '';
  if (keep > 0) {
    frac = dot < 0 ? '' : s.slice(dot + 1, Math.min(end, dot + 1 + keep));
    if (frac.length < keep) frac += ZEROS.slice(0, keep - frac.length);
  }
  const text = s.slice(i, intEnd) + frac;
  const ns = text.length <= 15 ? BigInt(Number(text)) : BigInt(text);
  return ns > 0n && ns <= MAX_NS ? ns : null;
}

/** Reads `d` digits at s[i]; -1 if any is not a digit. */
export function digits(s: string, i: number, d: number): number {
  let n = 0;
  for (let k = 0; k < d; k++) {
    const c = s.charCodeAt(i + k) - 48;
    if (!(c >= 0 && c <= 9)) return -1; // NaN (past the end of s) fails too
    n = n * 10 + c;
  }
  return n;
}

/** Two digits, zero-padded. */
export function pad2(n: number): string {
  return n < 10 ? '0' + n : '' + n;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in month m (1-12) of year y. */
export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeap(y) ? 29 : MONTH_DAYS[m - 1];
}

/** Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m 1-12); exact integer math. */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The civil date of a day number since 1970-01-01, as [year, month 1-12, day]. */
export function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** An ISO 8601 / RFC 3339 date or date-time in s[start, end) (already trimmed). */
function parseIso(s: string, start: number, end: number): bigint | null {
  const y = digits(s, start, 4);
  const mo = digits(s, start + 5, 2);
  const d = digits(s, start + 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || s.charCodeAt(start + 7) !== 45) return null;
  if (d > daysInMonth(y, mo)) return null;
  let secs = daysFromCivil(y, mo, d) * 86400;
  let i = start + 10;
  let fracNs = 0;
  if (i < end) {
    const sep = s.charCodeAt(i);
    if (sep !== 84 /* T */ && sep !== 116 /* t */ && sep !== 32) return null;
    const h = digits(s, i + 1, 2);
    const mi = digits(s, i + 4, 2);
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || s.charCodeAt(i + 3) !== 58 /* : */) return null;
    i += 6;
    let sec = 0;
    if (i < end && s.charCodeAt(i) === 58) {
      sec = digits(s, i + 1, 2);
      if (sec < 0 || sec > 60) return null; // 60: a leap second, counted as the next second
      i += 3;
      const fc = s.charCodeAt(i);
      if (i < end && (fc === 46 /* . */ || fc === 44) /* , */) {
        const fStart = ++i;
        while (i < end) {
          const c = s.charCodeAt(i);
          if (c < 48 || c > 57) break;
          if (i - fStart < 9) fracNs = fracNs * 10 + (c - 48);
          i++;
        }
        if (i === fStart) return null;
        for (let k = i - fStart; k < 9; k++) fracNs *= 10;
      }
    }
    secs += h * 3600 + mi * 60 + sec;
    if (i < end) {
      if (s.charCodeAt(i) === 32) i++; // "2026-01-02 03:04:05 +0200"
      const off = zoneOffset(s, i, end);
      if (off === null) return null;
      secs -= off;
    }
  }
  if (secs < 0 || secs > MAX_S) return null;
  const ns = BigInt(secs) * NS_PER_S + BigInt(fracNs);
  return ns > 0n && ns <= MAX_NS ? ns : null;
}

/** Seconds east of UTC of the zone designator s[i, end), or null if it is not one. */
function zoneOffset(s: string, i: number, end: number): number | null {
  const n = end - i;
  const c = s.charCodeAt(i);
  if (n === 1 && (c === 90 /* Z */ || c === 122 /* z */)) return 0;
  if (n === 3) {
    const z = s.slice(i, end);
    if (z === 'UTC' || z === 'GMT') return 0;
  }
  if (c !== 43 /* + */ && c !== 45 /* - */) return null;
  const h = digits(s, i + 1, 2);
  let m = 0;
  if (n === 3) m = 0; // +02
  else if (n === 5) m = digits(s, i + 3, 2); // +0200
  else if (n === 6 && s.charCodeAt(i + 3) === 58) m = digits(s, i + 4, 2); // +02:00
  else return null;
  if (h < 0 || h > 23 || m < 0 || m > 59) return null;
  const off = h * 3600 + m * 60;
  return c === 45 ? -off : off;
}

// ---- RFC 3164 (BSD syslog) dates: the syslog parser's, and field values such as syslog-ng's DATE ----

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_MS = 86_400_000;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Index of the next space (or n) from i. */
function wordEnd(s: string, i: number, n: number): number {
  while (i < n && s.charCodeAt(i) !== 32) i++;
  return i;
}

/** Month index 0-11 of the three letters at s[i], or -1. */
function monthAt(s: string, i: number, n: number): number {
  if (i + 3 > n) return -1;
  const a = s.charCodeAt(i) | 32;
  const b = s.charCodeAt(i + 1) | 32;
  const c = s.charCodeAt(i + 2) | 32;
  for (let m = 0; m < 12; m++) {
    const w = MONTHS[m];
    if (w.charCodeAt(0) === a && w.charCodeAt(1) === b && w.charCodeAt(2) === c) return m;
  }
  return -1;
}

interface Clock {
  h: number;
  mi: number;
  s: number;
  frac: string;
  end: number;
}

/** hh:mm:ss[.fff] at s[i]. */
function clockAt(s: string, i: number, n: number): Clock | null {
  if (i + 8 > n) return null;
  const h = digits(s, i, 2);
  const mi = digits(s, i + 3, 2);
  const sec = digits(s, i + 6, 2);
  if (s.charCodeAt(i + 2) !== 58 || s.charCodeAt(i + 5) !== 58) return null;
  if (h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60) return null;
  let e = i + 8;
  let frac = '';
  if (e < n && s.charCodeAt(e) === 46 && e + 1 < n && isDigit(s.charCodeAt(e + 1))) {
    const fs = e + 1;
    e = fs;
    while (e < n && isDigit(s.charCodeAt(e))) e++;
    frac = s.slice(fs, Math.min(e, fs + 9));
  }
  return { h, mi, s: sec, frac, end: e };
}

/** A 4-digit year at s[i] followed by a space or the end. */
function yearAt(s: string, i: number, n: number): number {
  if (i + 4 > n || (i + 4 < n && s.charCodeAt(i + 4) !== 32)) return -1;
  const y = digits(s, i, 4);
  return y >= 1970 ? y : -1;
}

let yearCacheFrom = 0;
let yearCacheTo = -1;
let yearCache = 0;

function utcYear(ms: number): number {
  if (ms >= yearCacheFrom && ms < yearCacheTo) return yearCache;
  const y = new Date(ms).getUTCFullYear();
  yearCache = y;
  yearCacheFrom = Date.UTC(y, 0, 1);
  yearCacheTo = Date.UTC(y + 1, 0, 1);
  return y;
}

function rfc3339(y: number, mon: number, d: number, c: Clock, zone: TimeZone | null = null): string {
  const wall = `${y}-${pad2(mon + 1)}-${pad2(d)}T${pad2(c.h)}:${pad2(c.mi)}:${pad2(c.s)}${c.frac === '' ? '' : '.' + c.frac}`;
  if (zone === null) return wall + 'Z';
  return wall + offsetText(zone.offsetOfWall(daysFromCivil(y, mon + 1, d) * DAY_MS + (c.h * 3600 + c.mi * 60 + c.s) * 1000));
}

/** An ISO date-time without a zone designator (`2026-01-02T03:04:05`, also with a space). */
const ZONELESS_ISO = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?$/;

interface BsdTime {
  text: string;
  end: number;
}

/**
 * One of the RFC 3164 (BSD syslog) timestamp forms at line[i], or null: `Mmm dd hh:mm:ss` (day
 * space- or zero-padded), `Mmm dd YYYY hh:mm:ss`, `Mmm dd hh:mm:ss YYYY`, `YYYY Mmm dd hh:mm:ss`, or
 * an ISO date-time (date and time may be two words); an optional fraction after the seconds. As
 * RFC 3339 text in UTC; without a year, in the current UTC year, or the previous one if that would
 * be more than a day ahead of `nowMs`. The form ends at a space or at n.
 * With a `zone` (other than UTC), a time without a zone of its own is that zone's wall-clock time:
 * the year is inferred from the zone's date now, and the text carries the zone's offset then.
 */
export function bsdTimestampAt(line: string, i: number, n: number, nowMs: number, zone: TimeZone | null = null): BsdTime | null {
  if (zone !== null && zone.isUtc) zone = null;
  let year = -1;
  let p = i;
  const c0 = line.charCodeAt(p);
  if (isDigit(c0)) {
    if (line.charCodeAt(p + 4) === 45 /* - */) {
      let e = wordEnd(line, p, n);
      // "2026-01-02 03:04:05.123+01:00": a date and a time as two words.
      if (e - p === 10 && e < n && clockAt(line, e + 1, n) !== null) e = wordEnd(line, e + 1, n);
      const text = line.slice(p, e);
      const ns = parseTimestampNs(text);
      if (ns === null) return null;
      if (zone !== null && ZONELESS_ISO.test(text)) {
        // Read as UTC above: those are the wall-clock fields; the zone's offset then goes after.
        return { text: text + offsetText(zone.offsetOfWall(Number(ns / 1_000_000n))), end: e };
      }
      return { text, end: e };
    }
    year = yearAt(line, p, n); // YYYY Mmm dd hh:mm:ss
    if (year < 0 || p + 5 >= n) return null;
    p += 5;
  }
  const mon = monthAt(line, p, n);
  if (mon < 0 || line.charCodeAt(p + 3) !== 32) return null;
  p += 4;
  if (line.charCodeAt(p) === 32) p++; // "Jan  2"
  let day = -1;
  if (isDigit(line.charCodeAt(p))) {
    if (isDigit(line.charCodeAt(p + 1))) {
      day = digits(line, p, 2);
      p += 2;
    } else {
      day = line.charCodeAt(p) - 48;
      p += 1;
    }
  }
  if (day < 1 || line.charCodeAt(p) !== 32) return null;
  p++;
  if (year < 0) {
    year = yearAt(line, p, n); // Mmm dd YYYY hh:mm:ss
    if (year >= 0) p += 5;
  }
  const clock = clockAt(line, p, n);
  if (clock === null) return null;
  p = clock.end;
  if (year < 0 && p < n && line.charCodeAt(p) === 32) {
    const y = yearAt(line, p + 1, n); // Mmm dd hh:mm:ss YYYY
    if (y >= 0) {
      year = y;
      p += 5;
    }
  }
  if (p < n && line.charCodeAt(p) !== 32) return null;
  if (year >= 0) {
    if (day > daysInMonth(year, mon + 1)) return null;
    return { text: rfc3339(year, mon, day, clock, zone), end: p };
  }
  // No year: this year, unless that is more than a day ahead of now (then the previous one), both
  // on the zone's wall clock.
  const wallNow = zone === null ? nowMs : nowMs + zone.offsetAt(nowMs);
  let y = utcYear(wallNow);
  const tod = (clock.h * 3600 + clock.mi * 60 + clock.s) * 1000;
  if (day > daysInMonth(y, mon + 1) || daysFromCivil(y, mon + 1, day) * DAY_MS + tod > wallNow + DAY_MS) y--;
  if (day > daysInMonth(y, mon + 1)) return null;
  return { text: rfc3339(y, mon, day, clock, zone), end: p };
}

export interface ResolvedTimestamp {
  ns: bigint;
  /** The field the timestamp came from, or null for the ingestion time. */
  field: string | null;
}

/**
 * The record's event time by the spec's precedence: the token's timestamp fields (in order), then
 * the settings' fields, then `timestamp`, `@timestamp`, `time`, `ts`, `_time`. The first field that
 * is present and parses wins (a present field that does not parse is passed over); with none, the
 * ingestion time (field null).
 */
export function resolveTimestamp(
  fields: Record<string, unknown>,
  tokenFields: string[],
  settingsFields: string[],
): ResolvedTimestamp {
  for (let k = 0; k < 3; k++) {
    const names = k === 0 ? tokenFields : k === 1 ? settingsFields : DEFAULT_TIMESTAMP_FIELDS;
    for (let j = 0; j < names.length; j++) {
      const name = names[j];
      if (!Object.prototype.hasOwnProperty.call(fields, name)) continue;
      const ns = parseTimestampNs(fields[name]);
      if (ns !== null) return { ns, field: name };
    }
  }
  return { ns: nowNs(), field: null };
}

/** The current time in ns since the epoch (millisecond resolution: the wall clock's). */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

// formatNs is called for every stored record (timestamp and ingest_timestamp); records of one
// batch mostly share their second, so the "YYYY-MM-DD hh:mm:ss." prefix of the last second is kept.
let lastSec = Number.NaN;
let lastPrefix = '';

/** `YYYY-MM-DD hh:mm:ss.nnnnnnnnn` in UTC: the text ClickHouse DateTime64(9) reads in JSONEachRow. */
export function formatNs(ns: bigint): string {
  let sec = ns / NS_PER_S;
  let frac = ns % NS_PER_S;
  if (frac < 0n) {
    frac += NS_PER_S;
    sec -= 1n;
  }
  const secN = Number(sec);
  if (secN !== lastSec) {
    const days = Math.floor(secN / 86400);
    const rem = secN - days * 86400;
    const [y, m, d] = civilFromDays(days);
    const h = Math.floor(rem / 3600);
    const mi = Math.floor((rem % 3600) / 60);
    const ys = y >= 0 && y < 10000 ? String(y).padStart(4, '0') : String(y);
    lastPrefix = `${ys}-${pad2(m)}-${pad2(d)} ${pad2(h)}:${pad2(mi)}:${pad2(rem % 60)}.`;
    lastSec = secN;
  }
  const f = Number(frac).toString();
  return lastPrefix + (f.length < 9 ? ZEROS.slice(f.length) + f : f);
}

// The `syslog` parser: one RFC 5424 or RFC 3164 (BSD) syslog line → fields.
//
// RFC 5424:  <PRI>VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID SP SD [SP MSG]
//   e.g. <165>1 2003-10-11T22:14:15.003Z host evntslog - ID47 [exampleSDID@32473 iut="3"] hello
//   - `-` is the nil value: a nil header field is left out of the result.
//   - Structured data: one or more `[sd-id name="value" ...]`; inside a value \" \\ \] stand for the
//     character, any other backslash stays. Each parameter becomes `sd.<sd-id>.<name>` (last one
//     wins); an element without parameters adds nothing. Malformed structured data is an error.
//   - A UTF-8 BOM at the start of MSG is dropped. Header fields may be separated by more than one
//     space (seen in the wild); the single space before MSG is not part of the message.
//   - A sender that leaves out the SD field entirely: whatever follows MSGID is the message.
// RFC 3164:  [<PRI>]TIMESTAMP SP [HOSTNAME SP] [TAG[\[PID\]]: ]MSG
//   TIMESTAMP is one of
//     Mmm dd hh:mm:ss           (`Jan  2 03:04:05`; the day may be space- or zero-padded)
//     Mmm dd YYYY hh:mm:ss      Mmm dd hh:mm:ss YYYY      YYYY Mmm dd hh:mm:ss
//     an ISO 8601 / RFC 3339 date-time (`2026-01-02T03:04:05.123+01:00`, also `2026-01-02 03:04:05`)
//   optionally with a fraction of a second after hh:mm:ss (`.123`). The ISO form is kept as
//   received; the others become RFC 3339 text in UTC (`2026-01-02T03:04:05Z`), in the given year
//   or else the current UTC year, or the previous year if that would be more than a day ahead.
//   A syslog listener passes its time zone: those forms (and an ISO one without a zone) are then
//   that zone's wall-clock time, the year inferred on its calendar (`2026-01-02T03:04:05+01:00`).
//   HOSTNAME is left out when the first word after the timestamp is already a TAG. TAG is the run of
//   characters up to `:` or `[PID]`, followed by a space or the end; it gives `app_name` and
//   `proc_id`. Without a TAG the whole rest is the message. A line with a PRI but no recognisable
//   timestamp is still accepted (RFC 3164 §4.3.3: all of it is the message, TAG still read).
//
// Output fields (absent ones are omitted): priority, facility, severity, facility_name,
// severity_name (only with a PRI), version (5424), timestamp, hostname, app_name, proc_id, msg_id
// (5424), sd.<id>.<param> (5424), message.
import { ParseError } from './parse-error.ts';
import { bsdTimestampAt } from '../timestamps.ts';
import type { TimeZone } from './time-zone.ts';

export type SyslogFields = Record<string, string | number>;

const NOT_SYSLOG = 'not a syslog line (RFC 5424 or RFC 3164)';

const FACILITY_NAMES: readonly string[] = [
  'kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron', 'authpriv',
  'ftp', 'ntp', 'security', 'console', 'solaris-cron',
  'local0', 'local1', 'local2', 'local3', 'local4', 'local5', 'local6', 'local7',
];

const SEVERITY_NAMES: readonly string[] = [
  'emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug',
];


function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Index of the next space (or n) from i. */
function wordEnd(s: string, i: number, n: number): number {
  while (i < n && s.charCodeAt(i) !== 32) i++;
  return i;
}

function skipSpaces(s: string, i: number, n: number): number {
  while (i < n && s.charCodeAt(i) === 32) i++;
  return i;
}

/** Parses one syslog line (the parser of tokens with parser type `syslog`). */
export function parseSyslog(line: string): SyslogFields {
  return parseSyslogAt(line, Date.now());
}

/**
 * parseSyslog with the clock given: `nowMs` only picks the year of an RFC 3164 timestamp that has
 * none. (A separate function, so that `lines.map(parseSyslog)` cannot pass an index as the clock.)
 * `zone`: the time zone an RFC 3164 timestamp without one is in (a syslog listener's; default UTC).
 */
export function parseSyslogAt(line: string, nowMs: number, zone: TimeZone | null = null): SyslogFields {
  let n = line.length;
  while (n > 0) {
    const c = line.charCodeAt(n - 1);
    if (c !== 10 && c !== 13) break;
    n--;
  }
  let i = 0;
  while (i < n) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 0xfeff) break;
    i++;
  }
  const out: SyslogFields = {};
  let hasPri = false;
  if (i < n && line.charCodeAt(i) === 60 /* < */) {
    let j = i + 1;
    let pri = 0;
    while (j < n && j - i <= 3 && isDigit(line.charCodeAt(j))) pri = pri * 10 + line.charCodeAt(j++) - 48;
    if (j === i + 1 || j >= n || line.charCodeAt(j) !== 62 /* > */ || pri > 191) {
      throw new ParseError(`invalid syslog priority "${line.slice(i, Math.min(n, i + 6))}": expected <0> to <191>`);
    }
    out.priority = pri;
    out.facility = pri >> 3;
    out.severity = pri & 7;
    out.facility_name = FACILITY_NAMES[pri >> 3];
    out.severity_name = SEVERITY_NAMES[pri & 7];
    hasPri = true;
    i = j + 1;
    // VERSION: 1-3 digits and a space (a 3164 timestamp never starts that way).
    let k = i;
    while (k < n && k - i < 4 && isDigit(line.charCodeAt(k))) k++;
    if (k > i && k - i <= 3 && k < n && line.charCodeAt(k) === 32 && line.charCodeAt(i) !== 48) {
      out.version = Number(line.slice(i, k));
      parse5424(line, k + 1, n, out);
      return out;
    }
  }
  parse3164(line, i, n, out, hasPri, nowMs, zone);
  return out;
}

const HEADER_5424 = ['timestamp', 'hostname', 'app_name', 'proc_id', 'msg_id'] as const;
const HEADER_5424_NAMES = ['TIMESTAMP', 'HOSTNAME', 'APP-NAME', 'PROCID', 'MSGID'];

function parse5424(line: string, i: number, n: number, out: SyslogFields): void {
  for (let f = 0; f < 5; f++) {
    i = skipSpaces(line, i, n);
    if (i >= n) throw new ParseError(`RFC 5424 header is incomplete: ${HEADER_5424_NAMES[f]} is missing`);
    const e = wordEnd(line, i, n);
    if (!(e === i + 1 && line.charCodeAt(i) === 45 /* - */)) out[HEADER_5424[f]] = line.slice(i, e);
    i = e;
  }
  i = skipSpaces(line, i, n);
  if (i >= n) return;
  const c = line.charCodeAt(i);
  if (c === 45 && (i + 1 >= n || line.charCodeAt(i + 1) === 32)) {
    i++; // nil structured data
  } else if (c === 91 /* [ */) {
    i = parseStructuredData(line, i, n, out);
  }
  // The single space that separates SD from MSG (when SD was left out, i is already at MSG).
  if (i < n && line.charCodeAt(i) === 32) i++;
  if (i < n && line.charCodeAt(i) === 0xfeff) i++;
  if (i < n) out.message = line.slice(i, n);
}

/** Parses `[id k="v" ...]...` at line[i] (a '['); returns the index after the last ']'. */
function parseStructuredData(line: string, i: number, n: number, out: SyslogFields): number {
  while (i < n && line.charCodeAt(i) === 91) {
    i++;
    const idStart = i;
    while (i < n) {
      const c = line.charCodeAt(i);
      if (c === 32 || c === 93 /* ] */ || c === 61 || c === 34) break;
      i++;
    }
    if (i === idStart) throw new ParseError('malformed structured data: an SD element has no SD-ID');
    const id = line.slice(idStart, i);
    const prefix = 'sd.' + id + '.';
    for (;;) {
      i = skipSpaces(line, i, n);
      if (i >= n) throw new ParseError(`malformed structured data: element [${id}] is not closed with "]"`);
      if (line.charCodeAt(i) === 93) {
        i++;
        break;
      }
      const nameStart = i;
      while (i < n) {
        const c = line.charCodeAt(i);
        if (c === 61 || c === 32 || c === 93 || c === 34) break;
        i++;
      }
      const name = line.slice(nameStart, i);
      if (name === '' || i + 1 >= n || line.charCodeAt(i) !== 61 || line.charCodeAt(i + 1) !== 34) {
        throw new ParseError(
          `malformed structured data: in element [${id}], expected name="value" at "${line.slice(nameStart, Math.min(n, nameStart + 20))}"`,
        );
      }
      i += 2;
      let runStart = i;
      let acc = '';
      let closed = false;
      while (i < n) {
        const c = line.charCodeAt(i);
        if (c === 34) {
          closed = true;
          break;
        }
        if (c === 92 /* \ */ && i + 1 < n) {
          const e = line.charCodeAt(i + 1);
          if (e === 34 || e === 92 || e === 93) {
            acc += line.slice(runStart, i);
            runStart = i + 1; // the escaped character starts the next run
          }
          i += 2;
          continue;
        }
        i++;
      }
      if (!closed) throw new ParseError(`malformed structured data: the value of ${id} ${name} has no closing quote`);
      const key = prefix + name;
      out[key] = acc + line.slice(runStart, i);
      i++;
    }
  }
  return i;
}

// ---- RFC 3164 ----

interface Tag {
  app: string;
  pid: string | null;
  /** Where the message starts. */
  msg: number;
}

/**
 * TAG at line[i]: characters up to ':' or '[PID]' (then optionally ':'), followed by a space or the
 * end. Null when the word there is not shaped like a tag.
 */
function tagAt(line: string, i: number, n: number): Tag | null {
  let j = i;
  while (j < n) {
    const c = line.charCodeAt(j);
    if (c === 32 || c === 58 || c === 91) break;
    j++;
  }
  if (j === i || j >= n) return null;
  const app = line.slice(i, j);
  let pid: string | null = null;
  if (line.charCodeAt(j) === 91) {
    const ps = j + 1;
    let k = ps;
    while (k < n) {
      const c = line.charCodeAt(k);
      if (c === 93 || c === 32) break;
      k++;
    }
    if (k >= n || line.charCodeAt(k) !== 93) return null;
    pid = line.slice(ps, k);
    j = k + 1;
    if (j < n && line.charCodeAt(j) === 58) j++;
  } else if (line.charCodeAt(j) === 58) {
    j++;
  } else {
    return null; // a space: an ordinary word
  }
  if (j < n && line.charCodeAt(j) !== 32) return null; // "fe80::1", "a:b"
  if (j < n) j++;
  return { app, pid, msg: j };
}

function parse3164(line: string, i: number, n: number, out: SyslogFields, hasPri: boolean, nowMs: number, zone: TimeZone | null): void {
  const ts = i < n ? bsdTimestampAt(line, i, n, nowMs, zone) : null;
  if (ts === null) {
    if (!hasPri) throw new ParseError(NOT_SYSLOG);
  } else {
    out.timestamp = ts.text;
    i = skipSpaces(line, ts.end, n);
    if (i < n && tagAt(line, i, n) === null) {
      const e = wordEnd(line, i, n);
      if (!(e === i + 1 && line.charCodeAt(i) === 45)) out.hostname = line.slice(i, e);
      i = skipSpaces(line, e, n);
    }
  }
  const tag = i < n ? tagAt(line, i, n) : null;
  if (tag !== null) {
    out.app_name = tag.app;
    if (tag.pid !== null && tag.pid !== '') out.proc_id = tag.pid;
    i = tag.msg;
  }
  if (i < n) out.message = line.slice(i, n);
}

// Splits a JSON body into its top-level values without parsing them: a JSON array yields its
// elements, anything else the sequence of values separated by whitespace (one object, NDJSON,
// pretty-printed objects one after another, as `evtx_dump -o json` and many exporters write; the
// `Record 12` line evtx_dump puts before each object is a separator, not a record). Each slice is then parsed on its own, so one bad
// record never costs the others, and each record's original text is kept for `raw`. A slice that
// cannot be delimited (unbalanced brackets, unterminated string) is its line, or the whole array:
// the record's parse refuses it.
import type { IncomingRecord } from './types.ts';

export function splitJsonValues(body: string): IncomingRecord[] {
  let i = skipWs(body, 0);
  if (body.charCodeAt(i) === 0x5b /* [ */) {
    const end = valueEnd(body, i);
    if (end > 0 && skipWs(body, end) === body.length) return arrayElements(body, i + 1, end - 1);
  }
  // NDJSON (the common case): the first line is a whole value by itself, so every line is one
  // record and no character scanning is needed; a broken line cannot swallow the next.
  const firstEnd = body.indexOf('\n', i);
  if (firstEnd > 0 && valueEnd(body, i) === trimEnd(body, firstEnd)) return splitLines(body, i);
  const out: IncomingRecord[] = [];
  while (i < body.length) {
    const header = recordHeaderEnd(body, i);
    if (header > 0) {
      i = skipWs(body, header);
      continue;
    }
    const end = valueEnd(body, i);
    if (end < 0) {
      out.push({ text: body.slice(i, lineEnd(body, i)).trim() });
      i = lineEnd(body, i);
    } else {
      out.push({ text: body.slice(i, end) });
      i = end;
    }
    i = skipWs(body, i);
  }
  return out;
}

/** Just past evtx_dump's `Record <n>` line at i, or -1. */
function recordHeaderEnd(s: string, i: number): number {
  if (s.charCodeAt(i) !== 0x52 /* R */ || !s.startsWith('Record ', i)) return -1;
  let j = i + 7;
  const digits = j;
  while (s.charCodeAt(j) >= 0x30 && s.charCodeAt(j) <= 0x39) j++;
  if (j === digits) return -1;
  while (s.charCodeAt(j) === 0x20 || s.charCodeAt(j) === 0x0d) j++;
  return j === s.length || s.charCodeAt(j) === 0x0a ? j : -1;
}

function trimEnd(s: string, end: number): number {
  while (end > 0 && (s.charCodeAt(end - 1) === 0x20 || s.charCodeAt(end - 1) === 0x0d || s.charCodeAt(end - 1) === 0x09)) end--;
  return end;
}

/** The non-blank lines of body from `from` on, each trimmed. */
export function splitLines(body: string, from = 0): IncomingRecord[] {
  const out: IncomingRecord[] = [];
  let i = from;
  while (i < body.length) {
    let n = body.indexOf('\n', i);
    if (n < 0) n = body.length;
    const text = body.slice(i, n).trim();
    if (text) out.push({ text });
    i = n + 1;
  }
  return out;
}

function arrayElements(body: string, from: number, to: number): IncomingRecord[] {
  const out: IncomingRecord[] = [];
  let i = skipWs(body, from);
  while (i < to) {
    const end = valueEnd(body, i);
    if (end < 0 || end > to) return [{ text: body.slice(from - 1, to + 1) }];
    out.push({ text: body.slice(i, end) });
    i = skipWs(body, end);
    if (i < to) {
      if (body.charCodeAt(i) !== 0x2c /* , */) return [{ text: body.slice(from - 1, to + 1) }];
      i = skipWs(body, i + 1);
    }
  }
  return out;
}

/** Index of the first character at or after i that is not JSON white space (or a byte-order mark). */
export function skipWs(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xfeff) i++;
    else return i;
  }
}

function lineEnd(s: string, i: number): number {
  const n = s.indexOf('\n', i);
  return n < 0 ? s.length : n + 1;
}

/** Index just past the JSON value starting at i, or -1. Containers are matched by depth. */
function valueEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22 /* " */) return stringEnd(s, i);
  if (c !== 0x7b && c !== 0x5b) {
    // scalar: runs to the next delimiter
    let j = i;
    while (j < s.length) {
      const d = s.charCodeAt(j);
      if (d === 0x2c || d === 0x5d || d === 0x7d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
      j++;
    }
    return j > i ? j : -1;
  }
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    const d = s.charCodeAt(j);
    if (d === 0x22) {
      j = stringEnd(s, j) - 1;
      if (j < 0) return -1;
    } else if (d === 0x7b || d === 0x5b) depth++;
    else if (d === 0x7d || d === 0x5d) {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

/** Index just past the string whose opening quote is at i, or -1 when it is not closed. */
export function stringEnd(s: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = s.indexOf('"', from);
    if (q < 0) return -1;
    let b = q - 1;
    while (s.charCodeAt(b) === 0x5c /* \ */) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1; // not escaped
    from = q + 1;
  }
}

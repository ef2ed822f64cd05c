// Most records arrive as one flat JSON object per line, and storing one means writing it twice:
// as `raw` (the text) and as `fields` (the parsed, flattened, normalized object serialised again).
// When nothing would change, the record's own text is the `fields` value, and the second
// JSON.stringify per record is skipped. This file decides when that is exactly the same for the
// engine; anything it is not sure about takes the ordinary path.

import { stringEnd } from './json-text.ts';

/**
 * The member count of `text` when it is a "plain" JSON object, else -1. Plain means:
 * - one object whose values are all strings, numbers, true, false or null (nothing to flatten),
 *   with nothing but spaces between tokens (a newline would split the row: spool replay reads rows
 *   line by line; inside a string a raw control character is invalid JSON, refused by the parse);
 * - every number written the way JSON.stringify writes its value back: an integer of at most
 *   15 digits other than -0, or a fraction (no exponent) whose value is not whole — `5.0` would be
 *   stored as a Float64 but its re-serialisation `5` as an Int64; and no run of 16 or more digits,
 *   the only way to exceed 2^53 (shared/exact-json.ts).
 * A plain text parses with JSON.parse exactly (no number loses precision). The scan checks
 * structure, not full validity: the caller still parses the text and refuses it if that fails.
 */
export function plainObjectMembers(s: string): number {
  const n = s.length;
  if (n < 2 || s.charCodeAt(0) !== 0x7b /* { */) return -1;
  let i = 1;
  let members = 0;
  let c = s.charCodeAt(i);
  while (c === 0x20) c = s.charCodeAt(++i);
  if (c === 0x7d /* } */) return i === n - 1 ? 0 : -1;
  for (;;) {
    if (c !== 0x22 /* " */) return -1;
    // A raw control character inside a string (a newline, say) is not looked for: it is invalid
    // JSON, so the caller's parse refuses the record.
    i = stringEnd(s, i);
    if (i < 0) return -1;
    members++;
    c = s.charCodeAt(i);
    while (c === 0x20) c = s.charCodeAt(++i);
    if (c !== 0x3a /* : */) return -1;
    c = s.charCodeAt(++i);
    while (c === 0x20) c = s.charCodeAt(++i);
    if (c === 0x22) i = stringEnd(s, i);
    else if (c === 0x74 /* t */ || c === 0x6e /* n */) i += 4;
    else if (c === 0x66 /* f */) i += 5;
    else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) i = plainNumberEnd(s, i);
    else return -1; // an object or array: flattening changes it
    if (i < 0) return -1;
    c = s.charCodeAt(i);
    while (c === 0x20) c = s.charCodeAt(++i);
    if (c === 0x7d) return i === n - 1 ? members : -1;
    if (c !== 0x2c /* , */) return -1;
    c = s.charCodeAt(++i);
    while (c === 0x20) c = s.charCodeAt(++i);
  }
}

/** Index just past the number at i when it is written as JSON.stringify would write it, else -1. */
function plainNumberEnd(s: string, i: number): number {
  const start = i;
  if (s.charCodeAt(i) === 0x2d) i++;
  const intStart = i;
  while (isDigit(s.charCodeAt(i))) i++;
  const intDigits = i - intStart;
  if (intDigits === 0 || intDigits >= 16 || (intDigits > 1 && s.charCodeAt(intStart) === 0x30)) return -1;
  let c = s.charCodeAt(i);
  if (c === 0x2e /* . */) {
    const fracStart = ++i;
    while (isDigit(s.charCodeAt(i))) i++;
    if (i === fracStart || i - fracStart >= 16) return -1;
    c = s.charCodeAt(i);
    if (c === 0x65 || c === 0x45) return -1;
    return Number.isInteger(Number(s.slice(start, i))) ? -1 : i;
  }
  if (c === 0x65 /* e */ || c === 0x45 /* E */) return -1;
  if (intDigits === 1 && s.charCodeAt(intStart) === 0x30 && intStart > start) return -1; // -0
  return i;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Number of own enumerable keys, without building the key array. */
export function keyCount(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}

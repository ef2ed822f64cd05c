// The `kv` parser: one line of key=value pairs, e.g.  a=1 b="two words" c='x y' d=
//
// Grammar (a single left-to-right scan, no regular expressions, no backtracking):
// - Pairs are separated by white space; a `,` or `;` between pairs (with or without white space
//   after it) is a separator too: `a=1, b=2`, `a=1;b=2`, `a=1,b=2`.
// - A key is a run of characters other than white space and `=` (separators before a key are
//   skipped, so a key does not start with `,` or `;`).
// - A value is either quoted with `"` or `'` — backslash escapes inside: \" \' \\ → the character,
//   \n → newline, \t → tab, any other \x stays as the two characters — or unquoted, running to the
//   next white space. In an unquoted value a `,` or `;` ends the value when white space, the end of
//   the line, or another `key=` follows it (`a=1,b=2`); otherwise it is part of the value
//   (`list=a,b,c` → "a,b,c"). `d=` is the empty string. Text glued after a closing quote starts the
//   next token.
// - A token without `=` (or with an empty key) is ignored; a line with no pair at all is an error.
// - Duplicate keys: the last one wins.
// - An unterminated quote is an error naming the key.
//
// Values stay strings, whatever they look like. The stored record keeps each field's type, and for
// kv that type is text: `status=200` still matches as text equality, numeric comparisons
// (`status>=500`) cast the text, and a value such as `007`, `1e3` or a 20-digit id is never
// silently rewritten. (The json parser is where numbers arrive typed.)
import { setOwn } from '../../shared/exact-json.ts';
import { ParseError } from './parse-error.ts';

function isWs(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

function isSep(c: number): boolean {
  return c === 44 /* , */ || c === 59 /* ; */;
}

/**
 * Whether the `,`/`;` at line[i] separates two pairs: white space or the end follows it, or a
 * `key=` does. The look-ahead stops at the next white space, `=`, `,` or `;`, so each character is
 * looked at a bounded number of times and the whole scan stays linear.
 */
function sepEndsValue(line: string, i: number, n: number): boolean {
  let j = i + 1;
  if (j >= n) return true;
  let c = line.charCodeAt(j);
  if (isWs(c) || isSep(c)) return true;
  const keyStart = j;
  while (j < n) {
    c = line.charCodeAt(j);
    if (c === 61 /* = */) return j > keyStart;
    if (isWs(c) || isSep(c)) return false;
    j++;
  }
  return false;
}

/** Parses one key=value line; throws ParseError when no pair is found or a quote is unterminated. */
export function parseKv(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  const n = line.length;
  let pairs = 0;
  let i = 0;
  while (i < n) {
    // Separators between tokens.
    let c = line.charCodeAt(i);
    if (isWs(c) || isSep(c)) {
      i++;
      continue;
    }
    // Key: up to white space or '='.
    const keyStart = i;
    while (i < n) {
      c = line.charCodeAt(i);
      if (c === 61 || isWs(c)) break;
      i++;
    }
    if (i >= n || c !== 61) continue; // a token without '=': ignored
    const key = line.slice(keyStart, i);
    i++; // '='
    let value: string;
    const q = i < n ? line.charCodeAt(i) : -1;
    if (q === 34 /* " */ || q === 39 /* ' */) {
      // Quoted: copy runs between escapes as slices (never one character at a time).
      i++;
      let runStart = i;
      let acc = '';
      let closed = false;
      while (i < n) {
        c = line.charCodeAt(i);
        if (c === q) {
          closed = true;
          break;
        }
        if (c === 92 /* \ */ && i + 1 < n) {
          const e = line.charCodeAt(i + 1);
          let rep: string | null = null;
          if (e === 34 || e === 39 || e === 92) rep = line[i + 1];
          else if (e === 110 /* n */) rep = '\n';
          else if (e === 116 /* t */) rep = '\t';
          if (rep !== null) {
            acc += line.slice(runStart, i) + rep;
            i += 2;
            runStart = i;
            continue;
          }
          i += 2; // unknown escape: both characters stay, as part of the run
          continue;
        }
        i++;
      }
      if (!closed) {
        const shown = key === '' ? 'a value' : `key "${key}"`;
        throw new ParseError(`unterminated ${q === 34 ? 'double' : 'single'} quote in the value of ${shown}`);
      }
      value = acc + line.slice(runStart, i);
      i++; // closing quote
    } else {
      // Unquoted: up to white space, or a separating ',' / ';'.
      const valStart = i;
      while (i < n) {
        c = line.charCodeAt(i);
        if (isWs(c)) break;
        if (isSep(c) && sepEndsValue(line, i, n)) break;
        i++;
      }
      value = line.slice(valStart, i);
    }
    if (key === '') continue; // "=x": a value without a key is ignored
    setOwn(out, key, value); // `__proto__` too, as an own property
    pairs++;
  }
  if (pairs === 0) throw new ParseError('no key=value pairs found');
  return out;
}

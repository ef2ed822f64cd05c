// Nested objects become dot-joined field names: {"a":{"b":1}} → {"a.b": 1}. Arrays are kept as
// their JSON text (one searchable value; the query language has no array operators).
// Deeper than MAX_DEPTH, the rest of a subtree is kept as its JSON text under the path reached,
// so a hostile 200-level document is stored, not refused; a subtree too deep for even that text
// to be written (thousands of levels, which JSON.parse still reads) refuses its record alone.
// A key named `__proto__` is a field like any other.
import { BigNumberText, setOwn } from '../shared/exact-json.ts';
import { ParseError } from './parsers/parse-error.ts';
import type { FieldValue, Fields } from './types.ts';

const MAX_DEPTH = 64;

/** The flattened fields; an object that is already flat (the common case) is returned as is. */
export function flatten(obj: Record<string, unknown>): Fields {
  for (const key in obj) {
    const v = obj[key];
    if ((v !== null && typeof v === 'object' && !(v instanceof BigNumberText)) || key === '__proto__') {
      const out: Fields = {};
      walk(obj, '', 0, out);
      return out;
    }
  }
  return obj as Fields;
}

function walk(obj: Record<string, unknown>, prefix: string, depth: number, out: Fields): void {
  for (const key in obj) {
    const v = obj[key];
    const name = prefix ? `${prefix}.${key}` : key;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof BigNumberText)) {
      if (depth + 1 >= MAX_DEPTH) setOwn(out, name, subtreeText(v, name));
      else if (isEmpty(v)) setOwn(out, name, '{}');
      else walk(v as Record<string, unknown>, name, depth + 1, out);
    } else if (Array.isArray(v)) {
      setOwn(out, name, subtreeText(v, name));
    } else {
      setOwn(out, name, v as FieldValue);
    }
  }
}

/** A subtree's JSON text; one nested too deeply to write (the stack runs out) refuses the record. */
function subtreeText(v: object, name: string): string {
  try {
    return JSON.stringify(v);
  } catch (err) {
    if (err instanceof RangeError) throw new ParseError(`the value of "${name.slice(0, 200)}" is nested too deeply to store`);
    throw err;
  }
}

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

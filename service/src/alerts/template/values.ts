// How Go sees the JavaScript values a template works on: null is nil, a JS number is an int when
// integral (a GoFloat constant stays a float64), an array a slice, a plain object a
// map[string]interface{} (keys printed sorted), a Date a time.Time, a GoStruct a struct whose
// fields are fixed (an unknown field is an error, not a missing key). `MISSING` is what a missing
// map key gives: printed "<no value>", false in a condition.
import { GoFloat } from './parser.ts';
import { formatFloat } from './floats.ts';
import { goTimeString } from './time.ts';

export { GoFloat };

/** A struct value: fields in declaration order, under Go's type name (for messages and %T). */
export class GoStruct {
  constructor(
    readonly typeName: string,
    readonly fields: Record<string, unknown>,
  ) {}
}

export const MISSING = Symbol('no value');

export type Kind = 'nil' | 'missing' | 'bool' | 'int' | 'float' | 'string' | 'slice' | 'map' | 'struct' | 'time' | 'func';

export function kindOf(v: unknown): Kind {
  if (v === MISSING) return 'missing';
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'bigint') return 'int';
  if (v instanceof GoFloat) return 'float';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'slice';
  if (v instanceof Date) return 'time';
  if (v instanceof GoStruct) return 'struct';
  if (typeof v === 'function') return 'func';
  return 'map';
}

/** Go's type name of a value, for %T and error messages. */
export function typeName(v: unknown): string {
  switch (kindOf(v)) {
    case 'nil':
    case 'missing':
      return '<nil>';
    case 'bool':
      return 'bool';
    case 'int':
      return 'int';
    case 'float':
      return 'float64';
    case 'string':
      return 'string';
    case 'slice':
      return '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
    case 'time':
      return 'time.Time';
    case 'struct':
      return (v as GoStruct).typeName;
    case 'func':
      return 'func';
  }
}

export const num = (v: unknown): number => (v instanceof GoFloat ? v.value : typeof v === 'bigint' ? Number(v) : (v as number));

/** Go's truth (text/template `if`): false, 0, nil, and empty strings, slices and maps are false; structs and times are true. */
export function isTrue(v: unknown): boolean {
  switch (kindOf(v)) {
    case 'nil':
    case 'missing':
      return false;
    case 'bool':
      return v as boolean;
    case 'int':
    case 'float':
      return num(v) !== 0;
    case 'string':
      return (v as string).length > 0;
    case 'slice':
      return (v as unknown[]).length > 0;
    case 'map':
      return Object.keys(v as object).length > 0;
    default:
      return true;
  }
}

/** Keys of a map in Go's order (sorted). */
export const mapKeys = (m: Record<string, unknown>): string[] => Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** The value as fmt.Sprint writes it (%v). */
export function formatValue(v: unknown, plus = false): string {
  switch (kindOf(v)) {
    case 'missing':
      return '<no value>';
    case 'nil':
      return '<nil>';
    case 'bool':
      return v ? 'true' : 'false';
    case 'int':
      return typeof v === 'bigint' ? v.toString() : String(num(v));
    case 'float':
      return formatFloat(num(v), 'g', -1);
    case 'string':
      return v as string;
    case 'slice':
      return `[${(v as unknown[]).map((x) => formatValue(x, plus)).join(' ')}]`;
    case 'map': {
      const m = v as Record<string, unknown>;
      return `map[${mapKeys(m).map((k) => `${k}:${formatValue(m[k], plus)}`).join(' ')}]`;
    }
    case 'time':
      return goTimeString(v as Date);
    case 'struct': {
      const s = v as GoStruct;
      return `{${Object.entries(s.fields).map(([k, x]) => (plus ? `${k}:` : '') + formatValue(x, plus)).join(' ')}}`;
    }
    case 'func':
      return 'func';
  }
}

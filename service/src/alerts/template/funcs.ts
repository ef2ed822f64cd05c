// The functions a template may call: Go text/template's built-ins (and, or, not, len, index,
// slice, print, printf, println, eq, ne, lt, le, gt, ge, html, js, urlquery) and the alert
// payload's own (interface-spec "Webhook custom payloads"): toJSON, field, unixSeconds,
// unixMillis, rfc3339, join, lower, upper, default, whose subject comes last so they pipe.
import { sprint, sprintf, sprintln } from './fmt.ts';
import { GoStruct, isTrue, kindOf, mapKeys, MISSING, num, typeName } from './values.ts';

/** A function's failure; the executor adds where it happened ("error calling index: …"). */
export class FuncError extends Error {}

export interface TemplateFunc {
  /** Fixed argument count, or the minimum when `variadic`. */
  args: number;
  variadic?: boolean;
  fn: (args: unknown[]) => unknown;
}

const fail = (msg: string): never => {
  throw new FuncError(msg);
};

function length(v: unknown): number {
  switch (kindOf(v)) {
    case 'string':
      return Buffer.byteLength(v as string, 'utf8');
    case 'slice':
      return (v as unknown[]).length;
    case 'map':
      return Object.keys(v as object).length;
    default:
      return fail(`len of type ${typeName(v)}`);
  }
}

function toInt(v: unknown): number {
  if (kindOf(v) !== 'int') fail(`cannot index slice/array with type ${typeName(v)}`);
  return num(v);
}

function index(item: unknown, indices: unknown[]): unknown {
  let v = item;
  for (const i of indices) {
    const k = kindOf(v);
    if (k === 'nil' || k === 'missing') fail('index of untyped nil');
    if (k === 'map') {
      if (kindOf(i) !== 'string') fail(`value has type ${typeName(i)}; should be string`);
      const m = v as Record<string, unknown>;
      v = Object.prototype.hasOwnProperty.call(m, i as string) ? m[i as string] : MISSING;
    } else if (k === 'slice' || k === 'string') {
      const n = toInt(i);
      const len = k === 'string' ? Buffer.byteLength(v as string) : (v as unknown[]).length;
      if (n < 0 || n >= len) fail(`index out of range: ${n}`);
      v = k === 'string' ? Buffer.from(v as string)[n] : (v as unknown[])[n];
    } else fail(`can't index item of type ${typeName(v)}`);
  }
  return v;
}

function slice(item: unknown, indices: unknown[]): unknown {
  const k = kindOf(item);
  if (k !== 'string' && k !== 'slice') fail(`can't slice item of type ${typeName(item)}`);
  if (indices.length > 3) fail(`too many slice indexes: ${indices.length}`);
  if (k === 'string' && indices.length === 3) fail('cannot 3-index slice a string');
  const len = k === 'string' ? Buffer.byteLength(item as string) : (item as unknown[]).length;
  const idx = indices.map((i) => toInt(i));
  const lo = idx[0] ?? 0;
  const hi = idx[1] ?? len;
  if (lo < 0 || hi > len || lo > hi) fail(`invalid slice index: ${lo} > ${hi}`);
  if (k === 'string') return Buffer.from(item as string).subarray(lo, hi).toString('utf8');
  return (item as unknown[]).slice(lo, hi);
}

type BasicKind = 'bool' | 'int' | 'float' | 'string' | 'nil';

function basic(v: unknown): BasicKind | null {
  const k = kindOf(v);
  if (k === 'missing') return 'nil';
  return k === 'bool' || k === 'int' || k === 'float' || k === 'string' || k === 'nil' ? k : null;
}

/** Go's eq on two operands: basic kinds only; int and float do not mix; nil equals only nil. */
function equal(a: unknown, b: unknown): boolean {
  const ka = basic(a);
  const kb = basic(b);
  if (ka === null || kb === null) {
    // Non-basic values (slices, maps, structs, times) are not comparable except against nil.
    if (ka === 'nil' || kb === 'nil') return false;
    if (kindOf(a) === 'time' && kindOf(b) === 'time') return (a as Date).getTime() === (b as Date).getTime();
    return fail('non-comparable type');
  }
  if (ka === 'nil' || kb === 'nil') return ka === kb;
  if (ka !== kb) return fail('incompatible types for comparison');
  return ka === 'int' || ka === 'float' ? num(a) === num(b) : a === b;
}

function less(a: unknown, b: unknown): boolean {
  const ka = basic(a);
  const kb = basic(b);
  if (ka === null || kb === null || ka === 'nil' || kb === 'nil' || ka === 'bool' || kb === 'bool') {
    return fail(ka === 'bool' || kb === 'bool' ? 'invalid type for comparison' : 'non-comparable type');
  }
  if (ka !== kb) return fail('incompatible types for comparison');
  return ka === 'string' ? (a as string) < (b as string) : num(a) < num(b);
}

const HTML_ESCAPES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&#34;', '\0': '\uFFFD' };

function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === '<') out += '\\u003C';
    else if (ch === '>') out += '\\u003E';
    else if (ch === '&') out += '\\u0026';
    else if (ch === '=') out += '\\u003D';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20) out += `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

/** net/url.QueryEscape. */
function queryEscape(s: string): string {
  return [...Buffer.from(s, 'utf8')]
    .map((b) => {
      const c = String.fromCharCode(b);
      if (/[A-Za-z0-9\-_.~]/.test(c)) return c;
      if (c === ' ') return '+';
      return `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** The string the escapers and Sprint-based helpers work on (Go: evalArgs then fmt.Sprint). */
const argString = (args: unknown[]) => (args.length === 1 && kindOf(args[0]) === 'string' ? (args[0] as string) : sprint(args));

/** encoding/json.Marshal: map keys sorted, HTML characters escaped, times as RFC 3339. */
export function toJSON(v: unknown): string {
  const k = kindOf(v);
  switch (k) {
    case 'nil':
    case 'missing':
      return 'null';
    case 'bool':
      return v ? 'true' : 'false';
    case 'int':
      return typeof v === 'bigint' ? v.toString() : String(num(v));
    case 'float': {
      const f = num(v);
      if (!Number.isFinite(f)) return fail(`json: unsupported value: ${f}`);
      return JSON.stringify(f);
    }
    case 'string':
      return JSON.stringify(v)
        .replace(/</g, '\\u003c')
        .replace(/>/g, '\\u003e')
        .replace(/&/g, '\\u0026')
        .replace(/\u2028/g, '\\u2028')
        .replace(/\u2029/g, '\\u2029');
    case 'time':
      return JSON.stringify(rfc3339Nano(v as Date));
    case 'slice':
      return `[${(v as unknown[]).map(toJSON).join(',')}]`;
    case 'map': {
      const m = v as Record<string, unknown>;
      return `{${mapKeys(m).map((key) => `${toJSON(key)}:${toJSON(m[key])}`).join(',')}}`;
    }
    case 'struct':
      return `{${Object.entries((v as GoStruct).fields).map(([key, x]) => `${toJSON(key)}:${toJSON(x)}`).join(',')}}`;
    default:
      return fail(`json: unsupported type: ${typeName(v)}`);
  }
}

const rfc3339Nano = (d: Date) => d.toISOString().replace(/\.?0+Z$/, 'Z').replace(/\.Z$/, 'Z');
const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** A time from a time value, RFC 3339 / ISO text (no zone: UTC), or Unix seconds. */
function asTime(v: unknown, fn: string): Date {
  const k = kindOf(v);
  if (k === 'time') return v as Date;
  if (k === 'string') {
    const s = (v as string).trim();
    const iso = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s) ? `${s.replace(' ', 'T')}Z` : s;
    const d = new Date(iso);
    if (!Number.isNaN(d.getTime())) return d;
    return fail(`${fn}: cannot read ${JSON.stringify(s)} as a time`);
  }
  if (k === 'int' || k === 'float') return new Date(num(v) * 1000);
  return fail(`${fn}: want a time, got ${typeName(v)}`);
}

const text = (v: unknown): string => (kindOf(v) === 'string' ? (v as string) : sprint([v]));

export const FUNCS: Record<string, TemplateFunc> = {
  // and / or are evaluated by the executor (they stop at the first deciding operand).
  and: { args: 1, variadic: true, fn: () => undefined },
  or: { args: 1, variadic: true, fn: () => undefined },
  not: { args: 1, fn: ([v]) => !isTrue(v) },
  len: { args: 1, fn: ([v]) => length(v) },
  index: { args: 1, variadic: true, fn: ([item, ...idx]) => index(item, idx) },
  slice: { args: 1, variadic: true, fn: ([item, ...idx]) => slice(item, idx) },
  print: { args: 0, variadic: true, fn: (a) => sprint(a) },
  printf: {
    args: 1,
    variadic: true,
    fn: ([format, ...rest]) => (kindOf(format) === 'string' ? sprintf(format as string, rest) : fail(`wrong type for value; expected string; got ${typeName(format)}`)),
  },
  println: { args: 0, variadic: true, fn: (a) => sprintln(a) },
  eq: {
    args: 1,
    variadic: true,
    fn: ([a, ...rest]) => {
      if (rest.length === 0) return fail('missing argument for comparison');
      return rest.some((b) => equal(a, b));
    },
  },
  ne: { args: 2, fn: ([a, b]) => !equal(a, b) },
  lt: { args: 2, fn: ([a, b]) => less(a, b) },
  le: { args: 2, fn: ([a, b]) => less(a, b) || equal(a, b) },
  gt: { args: 2, fn: ([a, b]) => !less(a, b) && !equal(a, b) },
  ge: { args: 2, fn: ([a, b]) => !less(a, b) },
  html: { args: 0, variadic: true, fn: (a) => argString(a).replace(/[<>&'"\0]/g, (c) => HTML_ESCAPES[c]!) },
  js: { args: 0, variadic: true, fn: (a) => jsEscape(argString(a)) },
  urlquery: { args: 0, variadic: true, fn: (a) => queryEscape(argString(a)) },

  toJSON: { args: 1, fn: ([v]) => toJSON(v) },
  field: {
    args: 2,
    fn: ([record, key]) => {
      if (kindOf(key) !== 'string') return fail(`field: the key must be a string, got ${typeName(key)}`);
      const k = kindOf(record);
      if (k === 'nil' || k === 'missing') return MISSING;
      if (k === 'struct') {
        const s = record as GoStruct;
        return key as string in s.fields ? s.fields[key as string] : MISSING;
      }
      if (k !== 'map') return fail(`field: the record must be a map, got ${typeName(record)}`);
      const m = record as Record<string, unknown>;
      return Object.prototype.hasOwnProperty.call(m, key as string) ? m[key as string] : MISSING;
    },
  },
  unixSeconds: { args: 1, fn: ([t]) => Math.floor(asTime(t, 'unixSeconds').getTime() / 1000) },
  unixMillis: { args: 1, fn: ([t]) => asTime(t, 'unixMillis').getTime() },
  rfc3339: { args: 1, fn: ([t]) => rfc3339(asTime(t, 'rfc3339')) },
  join: {
    args: 2,
    fn: ([sep, list]) => {
      if (kindOf(sep) !== 'string') return fail(`join: the separator must be a string, got ${typeName(sep)}`);
      const k = kindOf(list);
      if (k === 'nil' || k === 'missing') return '';
      if (k === 'string') return list;
      if (k !== 'slice') return fail(`join: want a list, got ${typeName(list)}`);
      return (list as unknown[]).map(text).join(sep as string);
    },
  },
  lower: { args: 1, fn: ([s]) => text(s).toLowerCase() },
  upper: { args: 1, fn: ([s]) => text(s).toUpperCase() },
  default: { args: 2, fn: ([fallback, v]) => (isTrue(v) ? v : fallback) },
};

// Substitution values of binary XML (MS-EVEN6 2.2.19 value types), decoded from the chunk's bytes
// into the values the event tree holds and rendered as evtx_dump renders them (README.md, "Values").
import { civilFromDays, pad2 } from '../../ingest/timestamps.ts';
import { BigNumberText } from '../../shared/exact-json.ts';

export const enum ValueType {
  Null = 0x00,
  String = 0x01,
  AnsiString = 0x02,
  Int8 = 0x03,
  UInt8 = 0x04,
  Int16 = 0x05,
  UInt16 = 0x06,
  Int32 = 0x07,
  UInt32 = 0x08,
  Int64 = 0x09,
  UInt64 = 0x0a,
  Real32 = 0x0b,
  Real64 = 0x0c,
  Bool = 0x0d,
  Binary = 0x0e,
  Guid = 0x0f,
  SizeT = 0x10,
  FileTime = 0x11,
  SystemTime = 0x12,
  Sid = 0x13,
  HexInt32 = 0x14,
  HexInt64 = 0x15,
  EvtHandle = 0x20,
  BinXml = 0x21,
  EvtXml = 0x23,
  Array = 0x80,
}

/** A scalar as the event holds it: text, an integer (exact, BigNumberText past 2^53) or a boolean. */
export type Scalar = string | number | boolean | BigNumberText;

/**
 * An array substitution (value type | 0x80). Where it is an element's content or attribute value,
 * the element is repeated once per item (MS-EVEN6 3.1.4.7.5); elsewhere its items are joined by ','.
 */
export class ArrayValue {
  constructor(readonly items: Scalar[]) {}
  text(): string {
    return this.items.map(scalarText).join(',');
  }
}

/** A decoded value: null is the Null type (an empty substitution). */
export type Value = Scalar | ArrayValue | null;

/** A value that is not binary XML could not be decoded (its size does not fit its type). */
export class ValueError extends Error {}

export function scalarText(v: Scalar): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return v.text;
}

const TWO_32 = 4294967296;

export const u16 = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8);
export const u32 = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
const i32 = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24);
/** An unsigned 64-bit number; exact below 2^53 (record ids, offsets, counters). */
export const u64 = (b: Uint8Array, o: number): number => u32(b, o) + u32(b, o + 4) * TWO_32;

function uint64(b: Uint8Array, o: number): number | BigNumberText {
  const hi = u32(b, o + 4);
  if (hi < 0x200000) return hi * TWO_32 + u32(b, o);
  return new BigNumberText(((BigInt(hi) << 32n) | BigInt(u32(b, o))).toString());
}

function int64(b: Uint8Array, o: number): number | BigNumberText {
  const hi = i32(b, o + 4);
  if (hi >= -0x200000 && hi < 0x200000) return hi * TWO_32 + u32(b, o);
  return new BigNumberText(((BigInt(hi) << 32n) | BigInt(u32(b, o))).toString());
}

function hex64(b: Uint8Array, o: number): string {
  const lo = u32(b, o);
  const hi = u32(b, o + 4);
  return hi === 0 ? `0x${lo.toString(16)}` : `0x${hi.toString(16)}${lo.toString(16).padStart(8, '0')}`;
}

/** UTF-16LE text of `units` code units at `o`, cut at the first NUL (evtx_dump's rule: a sized string ends at its terminator). */
export function utf16(b: Buffer, o: number, units: number): string {
  const s = b.toString('utf16le', o, o + 2 * units);
  const nul = s.indexOf('\0');
  return nul < 0 ? s : s.slice(0, nul);
}

// Windows-1252, the code page evtx_dump reads ANSI strings with: 0x80-0x9F differ from Latin-1
// (the five it leaves undefined keep their Latin-1 control character).
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8d, 0x017d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x9d, 0x017e, 0x0178,
];

/** ANSI text: NUL bytes are dropped (evtx_dump's rule), the rest read as Windows-1252. */
function ansi(b: Uint8Array, o: number, end: number): string {
  let s = '';
  for (let i = o; i < end; i++) {
    const c = b[i]!;
    if (c === 0) continue;
    s += String.fromCharCode(c >= 0x80 && c < 0xa0 ? CP1252_HIGH[c - 0x80]! : c);
  }
  return s;
}

const HEX_UPPER: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));

function guid(b: Uint8Array, o: number): string {
  const h = HEX_UPPER;
  return (
    h[b[o + 3]!]! + h[b[o + 2]!]! + h[b[o + 1]!]! + h[b[o]!]! + '-' + h[b[o + 5]!]! + h[b[o + 4]!]! + '-' +
    h[b[o + 7]!]! + h[b[o + 6]!]! + '-' + h[b[o + 8]!]! + h[b[o + 9]!]! + '-' +
    h[b[o + 10]!]! + h[b[o + 11]!]! + h[b[o + 12]!]! + h[b[o + 13]!]! + h[b[o + 14]!]! + h[b[o + 15]!]!
  );
}

/** A SID in `S-R-A-S1-…` form; returns its text and its size in bytes. */
function sid(b: Uint8Array, o: number, end: number): [string, number] {
  if (end - o < 8) throw new ValueError(`a SID needs at least 8 bytes, ${end - o} remain`);
  const count = b[o + 1]!;
  const size = 8 + 4 * count;
  if (o + size > end) throw new ValueError(`a SID with ${count} sub-authorities needs ${size} bytes, ${end - o} remain`);
  // The 48-bit authority is big-endian.
  const low = ((b[o + 4]! << 24) | (b[o + 5]! << 16) | (b[o + 6]! << 8) | b[o + 7]!) >>> 0;
  const authority = b[o + 2]! * 2 ** 40 + b[o + 3]! * 2 ** 32 + low;
  let s = `S-${b[o]!}-${authority}`;
  for (let i = 0; i < count; i++) s += `-${u32(b, o + 8 + 4 * i)}`;
  return [s, size];
}

/** `YYYY-MM-DD` of days since 1970-01-01. */
function civilDate(unixDays: number): string {
  const [y, m, d] = civilFromDays(unixDays);
  return `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`;
}

// Events of one chunk mostly fall on one day: its date text is kept.
let lastDays = NaN;
let lastDate = '';

/** `YYYY-MM-DDTHH:MM:SS` of days and seconds since 1970-01-01. */
function civil(unixDays: number, secOfDay: number): string {
  if (unixDays !== lastDays) {
    lastDate = civilDate(unixDays);
    lastDays = unixDays;
  }
  const hh = Math.floor(secOfDay / 3600);
  const mm = Math.floor((secOfDay % 3600) / 60);
  return `${lastDate}T${pad2(hh)}:${pad2(mm)}:${pad2(secOfDay % 60)}`;
}

/** Seconds between 1601-01-01 (FILETIME's epoch) and 1970-01-01. */
const EPOCH_DIFF_S = 11644473600;

/**
 * A FILETIME (100 ns ticks since 1601) as ISO 8601 UTC with `digits` fractional digits (the
 * smaller units are cut off, not rounded): 6 for event values (evtx_dump), 7 for record times.
 */
export function fileTimeText(b: Uint8Array, o: number, digits: 6 | 7): string {
  const lo = u32(b, o);
  const hi = u32(b, o + 4);
  // ticks = hi·2^32 + lo = hi·429·10^7 + (hi·4967296 + lo), each part exact in a double.
  const rest = hi * 4967296 + lo;
  let secs: number;
  let frac: number;
  if (rest < Number.MAX_SAFE_INTEGER) {
    secs = hi * 429 + Math.floor(rest / 1e7);
    frac = rest % 1e7;
  } else {
    const ticks = (BigInt(hi) << 32n) | BigInt(lo);
    secs = Number(ticks / 10_000_000n);
    frac = Number(ticks % 10_000_000n);
  }
  const unix = secs - EPOCH_DIFF_S;
  const days = Math.floor(unix / 86400);
  // frac + 10^7 has 8 digits: its last 7 are the fraction with its leading zeros.
  const fraction = String(frac + 1e7).slice(1, digits + 1);
  return `${civil(days, unix - days * 86400)}.${fraction}Z`;
}

/** A SYSTEMTIME (eight 16-bit fields, milliseconds last) in the FILETIME text form; all zero is 1601-01-01. */
function systemTimeText(b: Uint8Array, o: number): string {
  const [y, mo, d, h, mi, s, ms] = [u16(b, o), u16(b, o + 2), u16(b, o + 6), u16(b, o + 8), u16(b, o + 10), u16(b, o + 12), u16(b, o + 14)];
  if (y === 0 && mo === 0 && d === 0 && h === 0 && mi === 0 && s === 0 && ms === 0) return '1601-01-01T00:00:00.000000Z';
  return `${String(y).padStart(4, '0')}-${pad2(mo)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}.${String(ms).padStart(3, '0')}000Z`;
}

/**
 * A float as the Rust zmij crate prints it in evtx_dump: the shortest decimal that reads back as
 * the same float, in plain notation for decimal exponents -5..15 (f64) or -6..12 (f32), with at
 * least one fractional digit ("1.0"), else scientific ("1.5e-7", "3.4e+38").
 */
export function floatText(x: number, single: boolean): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  let sci = x.toExponential(); // shortest round-trip digits for a double
  if (single) {
    for (let p = 0; p < 9; p++) {
      const t = x.toExponential(p);
      if (Math.fround(Number(t)) === x) {
        sci = t;
        break;
      }
    }
  }
  const neg = sci.startsWith('-');
  const e = sci.indexOf('e');
  const digits = sci.slice(neg ? 1 : 0, e).replace('.', '');
  const exp = Number(sci.slice(e + 1));
  const [lowest, highest] = single ? [-6, 12] : [-5, 15];
  let body: string;
  if (exp >= lowest && exp <= highest) {
    if (digits.length - 1 <= exp) body = `${digits}${'0'.repeat(exp - digits.length + 1)}.0`;
    else if (exp >= 0) body = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
    else body = `0.${'0'.repeat(-exp - 1)}${digits}`;
  } else {
    body = `${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
  }
  return neg ? `-${body}` : body;
}

/** Size in bytes of one array item of a fixed-size type, 0 for the variable-size ones. */
function itemSize(type: number, total: number): number {
  // The writer's pointer size is not recorded: size_t items are 8 bytes (64-bit Windows) when the total allows it.
  if (type === ValueType.SizeT) return total % 8 === 0 ? 8 : 4;
  return FIXED_SIZE[type] ?? 0;
}

/** One fixed-size scalar of `type` at `o`, `size` bytes long. */
function scalar(b: Buffer, type: number, o: number, size: number): Scalar {
  switch (type) {
    case ValueType.Int8:
      return (b[o]! << 24) >> 24;
    case ValueType.UInt8:
      return b[o]!;
    case ValueType.Int16:
      return (u16(b, o) << 16) >> 16;
    case ValueType.UInt16:
      return u16(b, o);
    case ValueType.Int32:
      return i32(b, o);
    case ValueType.UInt32:
      return u32(b, o);
    case ValueType.Int64:
      return int64(b, o);
    case ValueType.UInt64:
      return uint64(b, o);
    case ValueType.Real32:
      return floatText(b.readFloatLE(o), true);
    case ValueType.Real64:
      return floatText(b.readDoubleLE(o), false);
    case ValueType.Bool:
      return i32(b, o) !== 0;
    case ValueType.Guid:
      return guid(b, o);
    case ValueType.SizeT:
      return size === 4 ? `0x${u32(b, o).toString(16)}` : hex64(b, o);
    case ValueType.FileTime:
      return fileTimeText(b, o, 6);
    case ValueType.SystemTime:
      return systemTimeText(b, o);
    case ValueType.HexInt32:
      return `0x${u32(b, o).toString(16)}`;
    case ValueType.HexInt64:
      return hex64(b, o);
    default:
      throw new ValueError(`value type 0x${type.toString(16)} is not a fixed-size type`);
  }
}

/** Sizes of the fixed-size value types. */
export const FIXED_SIZE: Record<number, number | undefined> = {
  [ValueType.Int8]: 1, [ValueType.UInt8]: 1, [ValueType.Int16]: 2, [ValueType.UInt16]: 2,
  [ValueType.Int32]: 4, [ValueType.UInt32]: 4, [ValueType.Int64]: 8, [ValueType.UInt64]: 8,
  [ValueType.Real32]: 4, [ValueType.Real64]: 8, [ValueType.Bool]: 4, [ValueType.Guid]: 16,
  [ValueType.FileTime]: 8, [ValueType.SystemTime]: 16, [ValueType.HexInt32]: 4, [ValueType.HexInt64]: 8,
};

/**
 * The value of `type` in b[o, o + size) (a template instance's value, whose size its descriptor
 * gives). Binary XML (0x21) is not handled here: the caller parses it as a nested fragment.
 */
export function decodeValue(b: Buffer, type: number, o: number, size: number): Value {
  const end = o + size;
  if (end > b.length) throw new ValueError(`a value of ${size} bytes at offset ${o} runs past the end of the chunk`);
  switch (type) {
    case ValueType.Null:
      return null;
    case ValueType.String:
      return utf16(b, o, size >> 1);
    case ValueType.AnsiString:
      return ansi(b, o, end);
    case ValueType.Binary:
      return b.toString('hex', o, end).toUpperCase();
    case ValueType.Sid:
      return sid(b, o, end)[0];
    case ValueType.SizeT:
      if (size !== 4 && size !== 8) throw new ValueError(`a size_t value must be 4 or 8 bytes, not ${size}`);
      return scalar(b, type, o, size);
    case ValueType.EvtHandle:
    case ValueType.EvtXml:
      throw new ValueError(`value type 0x${type.toString(16)} cannot appear in a log file`);
  }
  if (type & ValueType.Array) return decodeArray(b, type & 0x7f, o, end);
  const need = FIXED_SIZE[type];
  if (need === undefined) throw new ValueError(`unknown value type 0x${type.toString(16)}`);
  if (size < need) throw new ValueError(`a value of type 0x${type.toString(16)} needs ${need} bytes, its descriptor gives ${size}`);
  return scalar(b, type, o, need);
}

function decodeArray(b: Buffer, type: number, o: number, end: number): Value {
  const items: Scalar[] = [];
  switch (type) {
    case ValueType.String:
      // NUL-terminated strings one after another.
      for (let p = o; p + 1 < end; ) {
        let q = p;
        while (q + 1 < end && (b[q]! | b[q + 1]!) !== 0) q += 2;
        items.push(utf16(b, p, (q - p) >> 1));
        p = q + 2;
      }
      return new ArrayValue(items);
    case ValueType.AnsiString:
      for (let p = o; p < end; ) {
        let q = p;
        while (q < end && b[q] !== 0) q++;
        items.push(ansi(b, p, q));
        p = q + 1;
      }
      return new ArrayValue(items);
    case ValueType.Sid:
      for (let p = o; p < end; ) {
        const [text, size] = sid(b, p, end);
        items.push(text);
        p += size;
      }
      return new ArrayValue(items);
    case ValueType.Binary:
      // Items of a binary array carry no length: the bytes stay one binary value.
      return b.toString('hex', o, end).toUpperCase();
  }
  const size = itemSize(type, end - o);
  if (size === 0) throw new ValueError(`unknown array value type 0x${(type | ValueType.Array).toString(16)}`);
  for (let p = o; p + size <= end; p += size) items.push(scalar(b, type, p, size));
  return new ArrayValue(items);
}

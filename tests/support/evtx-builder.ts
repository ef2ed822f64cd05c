// Writes .evtx files from templates and substitution values given by hand, for the reader's tests
// of what the sample recordings lack: every value type and arrays of each, embedded binary XML,
// optional substitutions, CDATA, entity and character references. The layout is the one Windows
// writes (MS-EVEN6; libyal's format notes): file header, 64 KiB chunks whose records carry a
// template instance with the definition in place at its first use in the chunk and referenced by
// offset afterwards, names written in place, CRC32s over headers and records. python-evtx reads
// these files too, which checks the builder independently of the reader under test.
import { crc32 } from '../../service/src/evidence/evtx/crc32.ts';

export interface TemplateElement {
  name: string;
  attrs: [string, TemplateNode[]][];
  children: TemplateNode[];
}
export type TemplateNode =
  | TemplateElement
  | string
  | { sub: number; type: number; optional: boolean }
  | { cdata: string }
  | { entity: string }
  | { charRef: number };

/** An element: `el('Data', { Name: ['x'] }, sub(0, T.String))`. */
export function el(name: string, attrs: Record<string, TemplateNode | TemplateNode[]> = {}, ...children: TemplateNode[]): TemplateElement {
  return { name, attrs: Object.entries(attrs).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]), children };
}
/** Substitution `index` of value type `type` (optional: disappears when the value is empty). */
export const sub = (index: number, type: number, optional = false): TemplateNode => ({ sub: index, type, optional });
export const cdata = (text: string): TemplateNode => ({ cdata: text });
export const entity = (name: string): TemplateNode => ({ entity: name });
export const charRef = (code: number): TemplateNode => ({ charRef: code });

/** Value types (MS-EVEN6 2.2.19, | 0x80 for arrays). */
export const T = {
  Null: 0x00, String: 0x01, AnsiString: 0x02, Int8: 0x03, UInt8: 0x04, Int16: 0x05, UInt16: 0x06, Int32: 0x07,
  UInt32: 0x08, Int64: 0x09, UInt64: 0x0a, Real32: 0x0b, Real64: 0x0c, Bool: 0x0d, Binary: 0x0e, Guid: 0x0f,
  SizeT: 0x10, FileTime: 0x11, SystemTime: 0x12, Sid: 0x13, HexInt32: 0x14, HexInt64: 0x15, BinXml: 0x21, Array: 0x80,
} as const;

export class Template {
  /** The template's GUID; its first four bytes are the template id. */
  readonly guid: Buffer;
  constructor(readonly root: TemplateElement, guid = 'c0ffee00-1234-5678-9abc-def012345678') {
    this.guid = guidBytes(guid);
  }
}

/** A template instance: the template and its values. */
export interface Instance {
  template: Template;
  values: Value[];
}
/** A substitution value: its type and bytes, or (type 0x21) an embedded template instance. */
export type Value = { type: number; bytes: Buffer } | { type: 0x21; instance: Instance };

/** n as a little-endian integer of `size` bytes (1, 2 or 4). */
const le = (n: number, size: number, isSigned = false) => {
  const b = Buffer.alloc(size);
  if (isSigned) b.writeIntLE(n, 0, size);
  else b.writeUIntLE(n, 0, size);
  return b;
};
const signed = (n: number, size: number) => le(n, size, true);
const q = (n: bigint, isSigned = false) => {
  const b = Buffer.alloc(8);
  if (isSigned) b.writeBigInt64LE(n);
  else b.writeBigUInt64LE(n);
  return b;
};

function guidBytes(text: string): Buffer {
  const h = text.replace(/[{}-]/g, '');
  const b = Buffer.from(h, 'hex');
  // The first three groups are little-endian.
  return Buffer.concat([Buffer.from(b.subarray(0, 4)).reverse(), Buffer.from(b.subarray(4, 6)).reverse(), Buffer.from(b.subarray(6, 8)).reverse(), b.subarray(8)]);
}

/** FILETIME ticks (100 ns since 1601) of an ISO time with up to 7 fractional digits. */
export function fileTimeTicks(iso: string): bigint {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,7}))?Z$/.exec(iso)!;
  const ms = Date.parse(`${m[1]}Z`);
  return (BigInt(ms) / 1000n + 11644473600n) * 10_000_000n + BigInt((m[2] ?? '').padEnd(7, '0'));
}

function sidBytes(text: string): Buffer {
  const [, rev, auth, ...subs] = text.split('-');
  const b = Buffer.alloc(8 + 4 * subs.length);
  b[0] = Number(rev);
  b[1] = subs.length;
  b.writeUIntBE(Number(auth), 2, 6);
  subs.forEach((s, i) => b.writeUInt32LE(Number(s), 8 + 4 * i));
  return b;
}

/** Substitution values of each type. */
export const V = {
  null: (): Value => ({ type: T.Null, bytes: Buffer.alloc(0) }),
  string: (s: string): Value => ({ type: T.String, bytes: Buffer.from(s, 'utf16le') }),
  ansi: (bytes: number[]): Value => ({ type: T.AnsiString, bytes: Buffer.from(bytes) }),
  int8: (n: number): Value => ({ type: T.Int8, bytes: signed(n, 1) }),
  uint8: (n: number): Value => ({ type: T.UInt8, bytes: le(n, 1) }),
  int16: (n: number): Value => ({ type: T.Int16, bytes: signed(n, 2) }),
  uint16: (n: number): Value => ({ type: T.UInt16, bytes: le(n, 2) }),
  int32: (n: number): Value => ({ type: T.Int32, bytes: signed(n, 4) }),
  uint32: (n: number): Value => ({ type: T.UInt32, bytes: le(n, 4) }),
  int64: (n: bigint): Value => ({ type: T.Int64, bytes: q(n, true) }),
  uint64: (n: bigint): Value => ({ type: T.UInt64, bytes: q(n) }),
  real32: (x: number): Value => {
    const b = Buffer.alloc(4);
    b.writeFloatLE(x);
    return { type: T.Real32, bytes: b };
  },
  real64: (x: number): Value => {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(x);
    return { type: T.Real64, bytes: b };
  },
  bool: (raw: number): Value => ({ type: T.Bool, bytes: signed(raw, 4) }),
  binary: (hex: string): Value => ({ type: T.Binary, bytes: Buffer.from(hex, 'hex') }),
  guid: (text: string): Value => ({ type: T.Guid, bytes: guidBytes(text) }),
  sizeT: (n: bigint, width: 4 | 8): Value => ({ type: T.SizeT, bytes: width === 8 ? q(n) : le(Number(n), 4) }),
  fileTime: (iso: string): Value => ({ type: T.FileTime, bytes: q(fileTimeTicks(iso)) }),
  /** year, month, day of week, day, hour, minute, second, milliseconds */
  systemTime: (...f: number[]): Value => ({ type: T.SystemTime, bytes: Buffer.concat(f.map((n) => le(n, 2))) }),
  sid: (text: string): Value => ({ type: T.Sid, bytes: sidBytes(text) }),
  hex32: (n: number): Value => ({ type: T.HexInt32, bytes: le(n, 4) }),
  hex64: (n: bigint): Value => ({ type: T.HexInt64, bytes: q(n) }),
  binxml: (instance: Instance): Value => ({ type: T.BinXml, instance }),
  /** An array of `items` of one type: their bytes one after another (strings each NUL-terminated). */
  array: (items: Value[]): Value => {
    const type = items[0]!.type;
    const parts = items.map((v) => {
      const bytes = (v as { bytes: Buffer }).bytes;
      if (type === T.String) return Buffer.concat([bytes, Buffer.alloc(2)]);
      if (type === T.AnsiString) return Buffer.concat([bytes, Buffer.alloc(1)]);
      return bytes;
    });
    return { type: type | T.Array, bytes: Buffer.concat(parts) };
  },
  /** An empty array of element type `type`. */
  emptyArray: (type: number): Value => ({ type: type | T.Array, bytes: Buffer.alloc(0) }),
};

export interface RecordSpec {
  id: number;
  /** Written time, ISO 8601 with up to 7 fractional digits. */
  time: string;
  instance: Instance;
}

/** One chunk's bytes: its records written from offset 512 on, then its header and checksums. */
class ChunkWriter {
  readonly b = Buffer.alloc(65536);
  p = 512;
  private readonly defs = new Map<Template, number>();
  private first = -1;
  private last = -1;
  private lastOffset = 0;

  private u8(n: number) {
    this.b[this.p++] = n;
  }
  private u16(n: number) {
    this.b.writeUInt16LE(n, this.p);
    this.p += 2;
  }
  private u32(n: number) {
    this.b.writeUInt32LE(n, this.p);
    this.p += 4;
  }
  private bytes(b: Buffer) {
    b.copy(this.b, this.p);
    this.p += b.length;
  }
  private utf16(s: string) {
    this.bytes(Buffer.from(s, 'utf16le'));
  }

  /** A name written in place: its offset field points just past itself. */
  private name(s: string) {
    this.u32(this.p + 4);
    this.u32(0); // next name in the hash bucket
    this.u16(0); // hash (neither reader checks it)
    this.u16(s.length);
    this.utf16(s);
    this.u16(0);
  }

  private node(n: TemplateNode) {
    if (typeof n === 'string') {
      this.u8(0x05);
      this.u8(T.String);
      this.u16(n.length);
      this.utf16(n);
    } else if ('sub' in n) {
      this.u8(n.optional ? 0x0e : 0x0d);
      this.u16(n.sub);
      this.u8(n.type);
    } else if ('cdata' in n) {
      this.u8(0x07);
      this.u16(n.cdata.length);
      this.utf16(n.cdata);
    } else if ('entity' in n) {
      this.u8(0x09);
      this.name(n.entity);
    } else if ('charRef' in n) {
      this.u8(0x08);
      this.u16(n.charRef);
    } else this.element(n);
  }

  private element(e: TemplateElement) {
    this.u8(e.attrs.length ? 0x41 : 0x01);
    this.u16(0xffff); // dependency identifier (template definitions carry one)
    const sizeAt = this.p;
    this.u32(0);
    this.name(e.name);
    let attrListAt = 0;
    if (e.attrs.length) {
      attrListAt = this.p;
      this.u32(0);
    }
    e.attrs.forEach(([name, value], i) => {
      this.u8(i < e.attrs.length - 1 ? 0x46 : 0x06);
      this.name(name);
      for (const n of value) this.node(n);
    });
    if (attrListAt) this.b.writeUInt32LE(this.p - attrListAt - 4, attrListAt);
    if (e.children.length) {
      this.u8(0x02);
      for (const c of e.children) this.node(c);
      this.u8(0x04);
    } else this.u8(0x03);
    this.b.writeUInt32LE(this.p - sizeAt - 4, sizeAt);
  }

  /** Fragment header, template instance (with the definition in place at its first use), values, end of stream. */
  private fragment(inst: Instance) {
    this.bytes(Buffer.from([0x0f, 0x01, 0x01, 0x00]));
    this.u8(0x0c);
    this.u8(0x01);
    this.bytes(inst.template.guid.subarray(0, 4));
    const known = this.defs.get(inst.template);
    if (known !== undefined) this.u32(known);
    else {
      const at = this.p + 4;
      this.defs.set(inst.template, at);
      this.u32(at);
      this.u32(0); // next template in the bucket
      this.bytes(inst.template.guid);
      const sizeAt = this.p;
      this.u32(0);
      this.bytes(Buffer.from([0x0f, 0x01, 0x01, 0x00]));
      this.element(inst.template.root);
      this.u8(0x00);
      this.b.writeUInt32LE(this.p - sizeAt - 4, sizeAt);
    }
    this.u32(inst.values.length);
    const descriptors = this.p;
    this.p += 4 * inst.values.length;
    inst.values.forEach((v, i) => {
      const start = this.p;
      if ('instance' in v) this.fragment(v.instance);
      else this.bytes(v.bytes);
      this.b.writeUInt16LE(this.p - start, descriptors + 4 * i);
      this.b[descriptors + 4 * i + 2] = v.type;
    });
    this.u8(0x00);
  }

  record(r: RecordSpec) {
    const start = this.p;
    this.u32(0x00002a2a);
    this.u32(0); // size, below
    this.b.writeBigUInt64LE(BigInt(r.id), this.p);
    this.b.writeBigUInt64LE(fileTimeTicks(r.time), this.p + 8);
    this.p += 16;
    this.fragment(r.instance);
    this.p = (this.p + 4 + 7) & ~7; // records are 8-byte aligned
    const size = this.p - start;
    this.b.writeUInt32LE(size, start + 4);
    this.b.writeUInt32LE(size, this.p - 4);
    if (this.p > this.b.length) throw new Error('the records do not fit in one chunk');
    if (this.first < 0) this.first = r.id;
    this.last = r.id;
    this.lastOffset = start;
  }

  finish(firstNumber: number): Buffer {
    const b = this.b;
    b.write('ElfChnk\0', 0, 'latin1');
    const count = this.last - this.first + 1;
    b.writeBigUInt64LE(BigInt(firstNumber), 8);
    b.writeBigUInt64LE(BigInt(firstNumber + count - 1), 16);
    b.writeBigUInt64LE(BigInt(this.first), 24);
    b.writeBigUInt64LE(BigInt(this.last), 32);
    b.writeUInt32LE(128, 40);
    b.writeUInt32LE(this.lastOffset, 44);
    b.writeUInt32LE(this.p, 48);
    b.writeUInt32LE(crc32(b.subarray(512, this.p)), 52);
    b.writeUInt32LE(crc32(b.subarray(128, 512), crc32(b.subarray(0, 120))), 124);
    return b;
  }
}

/** An .evtx file of one chunk per entry of `chunks`, each holding those records. */
export function buildEvtx(chunks: RecordSpec[][]): Buffer {
  const header = Buffer.alloc(4096);
  header.write('ElfFile\0', 0, 'latin1');
  const all = chunks.flat();
  header.writeBigUInt64LE(0n, 8);
  header.writeBigUInt64LE(BigInt(chunks.length - 1), 16);
  header.writeBigUInt64LE(BigInt((all[all.length - 1]?.id ?? 0) + 1), 24);
  header.writeUInt32LE(128, 32);
  header.writeUInt16LE(1, 36);
  header.writeUInt16LE(3, 38);
  header.writeUInt16LE(4096, 40);
  header.writeUInt16LE(chunks.length, 42);
  header.writeUInt32LE(crc32(header.subarray(0, 120)), 124);
  let number = 1;
  const out: Buffer[] = [header];
  for (const records of chunks) {
    const w = new ChunkWriter();
    for (const r of records) w.record(r);
    out.push(w.finish(number));
    number += records.length;
  }
  return Buffer.concat(out);
}

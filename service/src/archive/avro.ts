// A small Avro writer for the archive's Iceberg manifests and manifest lists (Avro object container
// files, spec 1.11): binary encoding driven by the schema, one block, no codec. Only the types those
// fixed schemas use: null, boolean, int, long, string, bytes, records, arrays, maps and unions.
import { randomBytes } from 'node:crypto';

export type AvroSchema =
  | 'null'
  | 'boolean'
  | 'int'
  | 'long'
  | 'string'
  | 'bytes'
  | AvroSchema[]
  | { type: 'record'; name: string; fields: Array<{ name: string; type: AvroSchema; [k: string]: unknown }>; [k: string]: unknown }
  | { type: 'array'; items: AvroSchema; [k: string]: unknown }
  | { type: 'map'; values: AvroSchema; [k: string]: unknown }
  | { type: 'int' | 'long' | 'string' | 'bytes'; logicalType?: string; [k: string]: unknown };

class ByteSink {
  private parts: Buffer[] = [];
  length = 0;
  push(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }
  long(n: number | bigint): void {
    // Zig-zag, then base-128 little-endian groups.
    let z = BigInt.asUintN(64, (BigInt(n) << 1n) ^ (BigInt(n) >> 63n));
    const out: number[] = [];
    do {
      let byte = Number(z & 0x7fn);
      z >>= 7n;
      if (z) byte |= 0x80;
      out.push(byte);
    } while (z);
    this.push(Buffer.from(out));
  }
  bytes(b: Buffer): void {
    this.long(b.length);
    this.push(b);
  }
  done(): Buffer {
    return Buffer.concat(this.parts, this.length);
  }
}

function encode(sink: ByteSink, schema: AvroSchema, value: unknown, where: string): void {
  if (Array.isArray(schema)) {
    // Unions here are [null, X]: index 0 for null, 1 for a value.
    const i = value === null || value === undefined ? schema.indexOf('null') : schema.findIndex((s) => s !== 'null');
    if (i < 0) throw new Error(`avro: no branch of the union at ${where} takes ${String(value)}`);
    sink.long(i);
    encode(sink, schema[i]!, value, where);
    return;
  }
  const type = typeof schema === 'string' ? schema : schema.type;
  switch (type) {
    case 'null':
      return;
    case 'boolean':
      sink.push(Buffer.from([value ? 1 : 0]));
      return;
    case 'int':
    case 'long':
      if (typeof value !== 'number' && typeof value !== 'bigint') throw new Error(`avro: ${where} needs a number`);
      sink.long(value);
      return;
    case 'string':
      sink.bytes(Buffer.from(String(value), 'utf8'));
      return;
    case 'bytes':
      sink.bytes(value as Buffer);
      return;
    case 'record': {
      const rec = schema as Extract<AvroSchema, { type: 'record' }>;
      const obj = value as Record<string, unknown>;
      for (const f of rec.fields) encode(sink, f.type, obj[f.name], `${where}.${f.name}`);
      return;
    }
    case 'array': {
      const items = value as unknown[];
      if (items.length) {
        sink.long(items.length);
        for (const [i, item] of items.entries()) encode(sink, (schema as { items: AvroSchema }).items, item, `${where}[${i}]`);
      }
      sink.long(0);
      return;
    }
    case 'map': {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length) {
        sink.long(entries.length);
        for (const [k, v] of entries) {
          sink.bytes(Buffer.from(k, 'utf8'));
          encode(sink, (schema as { values: AvroSchema }).values, v, `${where}.${k}`);
        }
      }
      sink.long(0);
      return;
    }
    default:
      throw new Error(`avro: type ${String(type)} is not supported`);
  }
}

/** One Avro object container file holding `records`, with `meta` in its header (beside the schema). */
export function avroContainer(schema: AvroSchema, records: unknown[], meta: Record<string, string>): Buffer {
  const sync = randomBytes(16);
  const head = new ByteSink();
  head.push(Buffer.from('Obj\x01', 'latin1'));
  const fileMeta: Record<string, Buffer> = { 'avro.schema': Buffer.from(JSON.stringify(schema)), 'avro.codec': Buffer.from('null') };
  for (const [k, v] of Object.entries(meta)) fileMeta[k] = Buffer.from(v, 'utf8');
  encode(head, { type: 'map', values: 'bytes' }, fileMeta, 'header');
  head.push(sync);
  const body = new ByteSink();
  for (const [i, r] of records.entries()) encode(body, schema, r, `record ${i}`);
  if (records.length) {
    head.long(records.length);
    head.bytes(body.done());
    head.push(sync);
  }
  return head.done();
}

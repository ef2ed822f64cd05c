// CRC-32 (IEEE 802.3, the zlib one) of the file header, chunk headers and event records.
// Node's zlib.crc32 (Node 20.15+, native) when present, else a table-driven version.
import zlib from 'node:zlib';

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

let table: Uint32Array | undefined;

function tableCrc32(data: Uint8Array, value = 0): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = (value ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The CRC-32 of `data` as an unsigned 32-bit number; `value` continues an earlier CRC. */
export const crc32: (data: Uint8Array, value?: number) => number = native ? (data, value = 0) => native(data, value) >>> 0 : tableCrc32;

/** The table-driven version, exported so a test can check it against the native one. */
export const crc32ByTable = tableCrc32;

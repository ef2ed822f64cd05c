// The file header and the chunks of an .evtx file (MS-EVEN6 2.2, libyal's "Windows XML Event Log
// format"): a 4 KiB file header, then chunks of 64 KiB, each a 512-byte header (with the string
// and template tables) and its event records. Both headers carry a CRC32, and a chunk a second
// one over its records. A damaged part is named in a warning and skipped, the rest is read.
import { BinXmlError, ChunkBinXml } from './binxml.ts';
import { crc32 } from './crc32.ts';
import { eventJson } from './event-json.ts';
import type { EvtxFileHeader, EvtxRecord, EvtxStats, EvtxWarning } from './types.ts';
import { fileTimeText, u16, u32, u64 } from './values.ts';

export const FILE_HEADER_SIZE = 4096;
export const CHUNK_SIZE = 65536;
/** Chunk header (128 bytes), string offset table (64 × 4), template offset table (32 × 4). */
const CHUNK_HEADER_SIZE = 512;
const RECORD_HEADER_SIZE = 24;
const RECORD_SIGNATURE = 0x00002a2a; // "**\0\0"
/** Chunk flag: no checksums were written (MS-EVEN6: ELF_LOGFILE… "no CRC32"). */
const CHUNK_NO_CRC32 = 0x4;
/** Past this many undecodable records in one chunk, the rest are counted in one warning. */
const RECORD_WARNINGS_PER_CHUNK = 3;

export interface ChunkReport {
  warn(w: EvtxWarning): void;
  readonly stats: EvtxStats;
}

const hex32 = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;

export const hasSignature = (b: Uint8Array, signature: string): boolean => {
  for (let i = 0; i < signature.length; i++) if (b[i] !== signature.charCodeAt(i)) return false;
  return true;
};

function allZero(b: Uint8Array): boolean {
  // Word-wise where the buffer's alignment allows it.
  if (b.byteOffset % 4 === 0 && b.length % 4 === 0) {
    const w = new Uint32Array(b.buffer, b.byteOffset, b.length / 4);
    for (let i = 0; i < w.length; i++) if (w[i] !== 0) return false;
    return true;
  }
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
}

/** The file header's fields; warns about a bad signature, checksum, version or block size. */
export function readFileHeader(b: Buffer, report: ChunkReport): EvtxFileHeader {
  const stored = u32(b, 124);
  const computed = crc32(b.subarray(0, 120));
  const header: EvtxFileHeader = {
    firstChunk: u64(b, 8),
    lastChunk: u64(b, 16),
    nextRecordId: u64(b, 24),
    minorVersion: u16(b, 36),
    majorVersion: u16(b, 38),
    chunkCount: u16(b, 42),
    dirty: (u32(b, 120) & 1) !== 0,
    full: (u32(b, 120) & 2) !== 0,
    checksumOk: stored === computed,
  };
  const warn = (message: string) => report.warn({ offset: 0, message });
  if (!hasSignature(b, 'ElfFile\0')) {
    warn(`file header: the signature is not "ElfFile" (found ${JSON.stringify(b.toString('latin1', 0, 8))}); its fields are not trusted and the chunks are read anyway`);
  } else {
    if (!header.checksumOk) warn(`file header: checksum mismatch (stored ${hex32(stored)}, computed ${hex32(computed)}); its fields are not trusted and the chunks are read anyway`);
    if (header.majorVersion !== 3 || (header.minorVersion !== 1 && header.minorVersion !== 2)) {
      warn(`file header: format version ${header.majorVersion}.${header.minorVersion} is not 3.1 or 3.2; the chunks are read as 3.x`);
    }
    const blockSize = u16(b, 40);
    if (blockSize !== FILE_HEADER_SIZE) warn(`file header: header block size ${blockSize} is not 4096; chunks are read from offset 4096 anyway`);
  }
  return header;
}

/**
 * The records of chunk `index` (b: its bytes, 64 KiB unless the file ends inside it; fileOffset:
 * where it starts in the file). Every record is decoded on its own: a bad one is skipped with a
 * warning and the walk goes on with the next record it can find.
 */
export function readChunk(b: Buffer, index: number, fileOffset: number, report: ChunkReport): EvtxRecord[] {
  const records: EvtxRecord[] = [];
  const { stats } = report;
  if (allZero(b)) {
    stats.emptyChunks++;
    return records;
  }
  const where = `chunk ${index} (file offset ${fileOffset})`;
  const warn = (message: string, at = fileOffset, recordId?: number) =>
    report.warn(recordId === undefined ? { offset: at, chunk: index, message } : { offset: at, chunk: index, recordId, message });
  stats.chunks++;
  if (b.length < CHUNK_HEADER_SIZE) {
    warn(`${where}: the file ends ${b.length} bytes into this chunk, inside its header; nothing in it can be read`);
    return records;
  }
  const signatureOk = hasSignature(b, 'ElfChnk\0');
  if (!signatureOk) warn(`${where}: the signature is not "ElfChnk"; its records are read where they can be found`);
  const noCrc = (u32(b, 120) & CHUNK_NO_CRC32) !== 0;
  const storedHeaderCrc = u32(b, 124);
  const headerCrc = crc32(b.subarray(128, CHUNK_HEADER_SIZE), crc32(b.subarray(0, 120)));
  if (signatureOk && !noCrc && headerCrc !== storedHeaderCrc) {
    warn(`${where}: header checksum mismatch (stored ${hex32(storedHeaderCrc)}, computed ${hex32(headerCrc)}); its records are read anyway`);
  }
  // Records end at the free space offset. Without the signature it is only a hint: records are
  // read up to it, or up to the first that is not valid when it is out of range.
  const freeSpace = u32(b, 48);
  let limit = freeSpace;
  const trustedEnd = signatureOk;
  if (freeSpace < CHUNK_HEADER_SIZE || freeSpace > CHUNK_SIZE) {
    if (signatureOk) warn(`${where}: its free space offset ${freeSpace} is impossible; records are read until one is not valid`);
    limit = b.length;
  } else if (!signatureOk) {
    limit = Math.min(freeSpace, b.length);
  } else if (freeSpace > b.length) {
    warn(`${where}: the file ends ${b.length} bytes into this chunk, before its last record (which ends at byte ${freeSpace}); the records before the cut are read, the rest are lost`);
    limit = b.length;
  } else if (!noCrc) {
    const stored = u32(b, 52);
    const computed = crc32(b.subarray(CHUNK_HEADER_SIZE, freeSpace));
    if (stored !== computed) {
      warn(`${where}: event records checksum mismatch (stored ${hex32(stored)}, computed ${hex32(computed)}); each record is checked on its own and the damaged ones are skipped`);
    }
  }

  const xml = new ChunkBinXml(b);
  let undecodable = 0;
  let p = CHUNK_HEADER_SIZE;
  while (p + RECORD_HEADER_SIZE <= limit) {
    const problem = recordProblem(b, p, limit);
    if (problem) {
      // The chunk's slack after its last record is zeros: the end of an untrusted chunk.
      if (!trustedEnd && u32(b, p) === 0 && u32(b, p + 4) === 0) break;
      const next = findRecord(b, p + 8, limit);
      stats.skippedRecords++;
      const skipped = (next < 0 ? limit : next) - p;
      warn(
        `${where}: ${skipped} bytes at file offset ${fileOffset + p} hold no valid record (${problem}); ` +
          (next < 0 ? 'no record follows them in this chunk' : `reading resumes at file offset ${fileOffset + next}`),
        fileOffset + p,
      );
      if (next < 0) break;
      p = next;
      continue;
    }
    const size = u32(b, p + 4);
    const recordId = u64(b, p + 8);
    try {
      const root = xml.record(p + RECORD_HEADER_SIZE, p + size - 4);
      records.push({ recordId, timestamp: fileTimeText(b, p + 16, 7), event: eventJson(root), chunk: index, offset: fileOffset + p });
      stats.records++;
    } catch (e) {
      // Crafted input can also exhaust the stack (a RangeError): any failure costs this record only.
      stats.skippedRecords++;
      if (++undecodable <= RECORD_WARNINGS_PER_CHUNK) {
        const why = e instanceof BinXmlError ? `${e.message} at chunk offset ${e.offset}` : (e as Error).message;
        warn(`${where}: record ${recordId} at file offset ${fileOffset + p} cannot be decoded (${why}); it is skipped`, fileOffset + p, recordId);
      }
    }
    p += size;
  }
  if (undecodable > RECORD_WARNINGS_PER_CHUNK) {
    warn(`${where}: ${undecodable - RECORD_WARNINGS_PER_CHUNK} more records cannot be decoded; they are skipped`);
  }
  if (p < limit && p + RECORD_HEADER_SIZE > limit && trustedEnd) {
    warn(`${where}: ${limit - p} bytes at file offset ${fileOffset + p} are too short for a record; they are skipped`, fileOffset + p);
  }
  return records;
}

/** Why the record at p is not one (bad signature, impossible size, size copies disagree), or '' when it is. */
function recordProblem(b: Buffer, p: number, limit: number): string {
  const signature = u32(b, p);
  if (signature !== RECORD_SIGNATURE) return `record signature ${hex32(signature)} instead of 0x00002a2a`;
  const size = u32(b, p + 4);
  if (size < RECORD_HEADER_SIZE + 4 || size % 8 !== 0) return `record size ${size} is impossible`;
  if (p + size > limit) {
    return limit === b.length && b.length < CHUNK_SIZE
      ? `the record of ${size} bytes is cut off by the end of the file`
      : `the record of ${size} bytes runs past the end of the chunk's records`;
  }
  const copy = u32(b, p + size - 4);
  if (copy !== size) return `the record's size ${size} disagrees with its copy ${copy} at its end`;
  return '';
}

/** The offset of the next valid record at or after `from` (records are 8-byte aligned), or -1. */
function findRecord(b: Buffer, from: number, limit: number): number {
  for (let q = (from + 7) & ~7; q + RECORD_HEADER_SIZE <= limit; q += 8) {
    if (u32(b, q) === RECORD_SIGNATURE && !recordProblem(b, q, limit)) return q;
  }
  return -1;
}

// Streaming: bytes go in as they come (a file, a stream, buffers of any size), records come out
// one chunk at a time. At most one 64 KiB chunk is held besides the caller's buffer, so a 2 GB
// log is read in constant memory.
import { createReadStream } from 'node:fs';
import { CHUNK_SIZE, FILE_HEADER_SIZE, hasSignature, readChunk, readFileHeader, type ChunkReport } from './chunk.ts';
import type { EvtxFileHeader, EvtxRecord, EvtxStats, EvtxWarning } from './types.ts';

/** The bytes are not a Windows event log at all (neither file nor chunk signature). */
export class EvtxFormatError extends Error {}

/** Warnings kept in `warnings` (every one still goes to `onWarning`). */
const MAX_KEPT_WARNINGS = 10_000;

export interface EvtxReadOptions {
  /** Called with each warning as it happens. */
  onWarning?: (w: EvtxWarning) => void;
}

/**
 * Push-style decoder: feed it the file's bytes in order with push(), then call end(). Each call
 * returns the records of the chunks it completed. Throws EvtxFormatError when the bytes are not
 * an event log.
 */
export class EvtxDecoder implements ChunkReport {
  readonly warnings: EvtxWarning[] = [];
  /** Warnings beyond MAX_KEPT_WARNINGS, counted but not kept. */
  warningsDropped = 0;
  readonly stats: EvtxStats = { bytesRead: 0, chunks: 0, emptyChunks: 0, records: 0, skippedRecords: 0 };
  header: EvtxFileHeader | undefined;
  private headerSignature = false;
  /** Where a block that straddles pushed buffers is assembled (made when first needed). */
  private blockBuffer: Buffer | undefined;
  private blockLength = 0;
  private chunkIndex = 0;
  private ended = false;

  constructor(private readonly options: EvtxReadOptions = {}) {}

  warn(w: EvtxWarning): void {
    if (this.warnings.length < MAX_KEPT_WARNINGS) this.warnings.push(w);
    else this.warningsDropped++;
    this.options.onWarning?.(w);
  }

  private get block(): Buffer {
    return (this.blockBuffer ??= Buffer.allocUnsafe(CHUNK_SIZE));
  }

  /** Size of the block being assembled: the file header, then one chunk after another. */
  private get blockSize(): number {
    return this.header ? CHUNK_SIZE : FILE_HEADER_SIZE;
  }

  push(data: Uint8Array): EvtxRecord[] {
    if (this.ended) throw new Error('push() after end()');
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    this.stats.bytesRead += bytes.length;
    const out: EvtxRecord[] = [];
    let pos = 0;
    while (pos < bytes.length) {
      const size = this.blockSize;
      if (this.blockLength === 0 && bytes.length - pos >= size) {
        // A whole block inside the caller's buffer: read it where it is.
        this.consume(bytes.subarray(pos, pos + size), out);
        pos += size;
        continue;
      }
      const n = Math.min(size - this.blockLength, bytes.length - pos);
      bytes.copy(this.block, this.blockLength, pos, pos + n);
      this.blockLength += n;
      pos += n;
      if (this.blockLength === size) {
        this.blockLength = 0;
        this.consume(this.block.subarray(0, size), out);
      }
    }
    return out;
  }

  /** Reads what is left (a chunk cut by the end of the file) and checks the file was not cut short. */
  end(): EvtxRecord[] {
    if (this.ended) return [];
    this.ended = true;
    const out: EvtxRecord[] = [];
    if (!this.header) {
      const head = this.block.subarray(0, this.blockLength);
      if (!hasSignature(head, 'ElfFile\0'.slice(0, Math.min(8, head.length))) || head.length === 0) {
        throw new EvtxFormatError(`not a Windows event log (.evtx): ${head.length} bytes, without the "ElfFile" signature`);
      }
      this.warn({ offset: 0, message: `the file ends after ${head.length} bytes, inside its 4096-byte header; it holds no records` });
      return out;
    }
    if (this.chunkIndex === 0) this.checkFormat(this.block.subarray(0, this.blockLength));
    if (this.blockLength > 0) {
      const offset = FILE_HEADER_SIZE + this.chunkIndex * CHUNK_SIZE;
      out.push(...readChunk(this.block.subarray(0, this.blockLength), this.chunkIndex, offset, this));
      this.chunkIndex++;
      this.blockLength = 0;
    }
    if (this.headerSignature && this.header.checksumOk && this.chunkIndex < this.header.chunkCount) {
      this.warn({
        offset: this.stats.bytesRead,
        message: `the file header counts ${this.header.chunkCount} chunks but the file ends after ${this.chunkIndex}; the file is truncated and the missing chunks are lost`,
      });
    }
    return out;
  }

  /** Without the file signature, the first chunk's signature must be there: else this is no event log. */
  private checkFormat(firstChunk: Buffer): void {
    if (this.headerSignature || (firstChunk.length >= 8 && hasSignature(firstChunk, 'ElfChnk\0'))) return;
    throw new EvtxFormatError('not a Windows event log (.evtx): neither the "ElfFile" signature at its start nor an "ElfChnk" signature at offset 4096');
  }

  private consume(block: Buffer, out: EvtxRecord[]): void {
    if (!this.header) {
      this.headerSignature = hasSignature(block, 'ElfFile\0');
      this.header = readFileHeader(block, this);
      return;
    }
    if (this.chunkIndex === 0) this.checkFormat(block);
    const offset = FILE_HEADER_SIZE + this.chunkIndex * CHUNK_SIZE;
    for (const r of readChunk(block, this.chunkIndex, offset, this)) out.push(r);
    this.chunkIndex++;
  }
}

/** A file path, the file's bytes, or a stream of its bytes (a Node Readable, any (async) iterable of buffers). */
export type EvtxSource = string | Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** An ongoing read: iterate it for the records; warnings, header and stats fill in as it goes. */
export interface EvtxReading extends AsyncIterable<EvtxRecord> {
  readonly warnings: readonly EvtxWarning[];
  readonly header: EvtxFileHeader | undefined;
  readonly stats: Readonly<EvtxStats>;
}

/**
 * Reads the records of an .evtx file as they are decoded:
 *
 *     const reading = readEvtx('Security.evtx');
 *     for await (const r of reading) console.log(r.recordId, r.event.Event);
 *     console.log(reading.warnings);
 */
export function readEvtx(source: EvtxSource, options: EvtxReadOptions = {}): EvtxReading {
  const decoder = new EvtxDecoder(options);
  return {
    get warnings() {
      return decoder.warnings;
    },
    get header() {
      return decoder.header;
    },
    get stats() {
      return decoder.stats;
    },
    async *[Symbol.asyncIterator]() {
      for await (const data of bytesOf(source)) yield* decoder.push(data);
      yield* decoder.end();
    },
  };
}

function bytesOf(source: EvtxSource): AsyncIterable<Uint8Array> | Iterable<Uint8Array> {
  if (typeof source === 'string') return createReadStream(source, { highWaterMark: 16 * CHUNK_SIZE });
  if (source instanceof Uint8Array) return [source];
  return source;
}

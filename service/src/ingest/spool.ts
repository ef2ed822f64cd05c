// The on-disk spool that makes an accepted record survive kill -9 and power loss.
//
// Accepted batches are appended to segment files (spool/segment-<n>.spl) and fsync'd before the
// HTTP answer; appends that arrive while a sync runs share the next one (group commit). The write
// and the fsync run on libuv's threads, not the event loop, which parses the next requests
// meanwhile (measured: they took 7% of its time during bench:ingest). When ClickHouse confirms a
// batch, a small confirmation entry is appended (not waited for). A segment is deleted once it is
// sealed (a newer one exists), all its batches are confirmed and every older segment is gone: its
// confirmations may be the only record that an older segment's batches were stored. At start,
// every batch without a confirmation is replayed into the queue.
//
// Entry framing: u32 payload length, u32 CRC-32 of the payload, payload. A torn tail (crash in
// the middle of a write) fails its length or CRC check and is ignored: it was never answered 200.
// Payload: "B" + batch header JSON + "\n" + rows, or "C" + confirmed batch id. The header names the
// table the rows are for (`table`); a header without one (older spools) means `logs`.
import { closeSync, existsSync, fsync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, write, writev } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { IngestTable } from '../logs/log-store.ts';

export interface SpooledBatch {
  id: string;
  fractalId: string;
  count: number;
  /** The table the NDJSON rows are written for (see LogStore.insert). */
  table: IngestTable;
  /** The month of every row, when the pipeline cut the batch to one (QueuedBatch.month). */
  month?: string;
  rows: Buffer;
  segment: number;
}

const SEGMENT_BYTES = 64 * 1024 * 1024;

/**
 * A second reader of the spool (the archive, service/src/archive/): it reads the segment files
 * itself, behind the durable end, and holds segments from `firstNeededSegment()` on, so none is
 * deleted before it has read it, whatever the hot store has confirmed.
 */
export interface SpoolReader {
  /** Number.MAX_SAFE_INTEGER while it holds nothing. */
  firstNeededSegment(): number;
}

/** Where the fsync'd part of the spool ends: segments before `segment` are whole. */
export interface SpoolPosition {
  segment: number;
  offset: number;
}

interface Pending {
  /** One framed entry in pieces (frame header, then the payload's parts), written with writev. */
  bufs: Buffer[];
  bytes: number;
  /** The batch it holds (none for a confirmation): counted in the segment it is written to. */
  batchId?: string;
  resolve: () => void;
  reject: (e: Error) => void;
}

export class Spool {
  private fd = -1;
  private segment = 0;
  private segmentBytes = 0;
  /** Unconfirmed batch count per segment. */
  private open = new Map<number, number>();
  private batchSegment = new Map<string, number>();
  private pending: Pending[] = [];
  private syncing = false;
  private closed = false;
  private totalBytes = 0;
  private durableOffset = 0;
  private reader: SpoolReader | null = null;
  /** The segment files present, oldest first (known from recover() on). */
  private live: number[] = [];

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** Adds the second reader (before recover(), so what it holds survives the recovery). */
  attachReader(reader: SpoolReader | null): void {
    this.reader = reader;
    if (!reader) this.deleteFinished();
  }

  /** The end of what is on disk for sure: a reader never reads past it. */
  durableEnd(): SpoolPosition {
    return { segment: this.segment, offset: this.durableOffset };
  }

  /** The reader moved on: delete the segments it no longer holds whose batches are all stored. */
  release(): void {
    this.deleteFinished();
  }

  /** The file of segment `n` (readers read it with readSpoolEntries). */
  segmentFile(n: number): string {
    return this.file(n);
  }

  /** The segment files present, oldest first. */
  segments(): number[] {
    return this.segmentNumbers();
  }

  /** Reads every segment, returns the batches never confirmed, and opens a fresh segment. */
  recover(opts: { nextSegmentAtLeast?: number } = {}): SpooledBatch[] {
    const segments = this.segmentNumbers();
    const batches = new Map<string, SpooledBatch>();
    for (const n of segments) {
      this.totalBytes += statSync(this.file(n)).size;
      for (const payload of readEntries(readFileSync(this.file(n)))) {
        const batch = spooledBatch(payload, n);
        if (batch) {
          batches.set(batch.id, batch);
        } else if (payload[0] === 0x43 /* C */) {
          batches.delete(payload.subarray(1).toString('utf8'));
        }
      }
    }
    for (const b of batches.values()) {
      this.open.set(b.segment, (this.open.get(b.segment) ?? 0) + 1);
      this.batchSegment.set(b.id, b.segment);
    }
    // Past the reader's position even when every segment was deleted at the last stop.
    const held = this.reader?.firstNeededSegment() ?? Number.MAX_SAFE_INTEGER;
    const floor = opts.nextSegmentAtLeast ?? (held < Number.MAX_SAFE_INTEGER ? held + 1 : 0);
    this.segment = Math.max((segments.at(-1) ?? 0) + 1, floor);
    this.live = segments;
    this.openSegment();
    this.deleteFinished();
    return [...batches.values()];
  }

  /** Resolves once the batch is on disk (fsync'd). */
  append(b: Omit<SpooledBatch, 'segment'>): Promise<void> {
    if (this.closed) return Promise.reject(new Error('spool is closed'));
    const head = Buffer.from('B' + JSON.stringify({ id: b.id, fractalId: b.fractalId, count: b.count, table: b.table, month: b.month }) + '\n');
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ ...frame([head, b.rows]), batchId: b.id, resolve, reject });
      this.flushSoon();
    });
  }

  /** ClickHouse has the batch: record that (without waiting) and drop finished segments. */
  confirm(id: string): void {
    const seg = this.batchSegment.get(id);
    if (seg === undefined) return;
    this.batchSegment.delete(id);
    this.open.set(seg, (this.open.get(seg) ?? 1) - 1);
    if (!this.closed) {
      this.pending.push({ ...frame([Buffer.from('C' + id)]), resolve: () => {}, reject: () => {} });
      this.flushSoon();
    }
    this.deleteFinished();
  }

  get bytes(): number {
    return this.totalBytes;
  }
  get unconfirmed(): number {
    return this.batchSegment.size;
  }

  /** Writes what is pending, then closes; segments with unconfirmed batches stay for replay. */
  async close(): Promise<void> {
    while (this.syncing || this.pending.length) await new Promise((r) => setTimeout(r, 5));
    this.closed = true;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    // Every batch confirmed: nothing to replay, leave an empty spool (but what the reader holds).
    if (this.batchSegment.size === 0) for (const n of [...this.live]) if (!this.held(n)) this.unlink(n);
  }

  private flushSoon(): void {
    if (this.syncing) return;
    this.syncing = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    // A batch belongs to the segment it is written to: the one open now (rotation waits for this
    // flush to end, so nothing written here lands in another).
    for (const p of batch) {
      if (p.batchId === undefined) continue;
      this.open.set(this.segment, (this.open.get(this.segment) ?? 0) + 1);
      this.batchSegment.set(p.batchId, this.segment);
    }
    const fd = this.fd;
    writeAll(fd, batch.flatMap((p) => p.bufs))
      .then(() => {
        for (const p of batch) {
          this.segmentBytes += p.bytes;
          this.totalBytes += p.bytes;
        }
        return new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
      })
      .then(
        () => {
          this.durableOffset = this.segmentBytes;
          for (const p of batch) p.resolve();
        },
        (err: Error) => {
          for (const p of batch) p.reject(err);
        },
      )
      .finally(() => {
        if (this.segmentBytes >= SEGMENT_BYTES) this.rotate();
        this.syncing = false;
        if (this.pending.length) this.flushSoon();
      });
  }

  private rotate(): void {
    closeSync(this.fd);
    this.segment++;
    this.openSegment();
    this.deleteFinished();
  }

  private openSegment(): void {
    this.fd = openSync(this.file(this.segment), 'a');
    if (this.live.at(-1) !== this.segment) this.live.push(this.segment);
    this.segmentBytes = 0;
    this.durableOffset = 0;
    // Make the new file's directory entry durable too.
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }

  /** Deletes finished segments from the oldest on, up to the first one that is not finished. */
  private deleteFinished(): void {
    while (this.live.length > 0) {
      const seg = this.live[0]!;
      if (seg === this.segment && !this.closed) return; // still being written
      if ((this.open.get(seg) ?? 0) > 0) return;
      if (this.held(seg)) return;
      this.open.delete(seg);
      this.unlink(seg);
    }
  }

  private held(seg: number): boolean {
    return this.reader !== null && seg >= this.reader.firstNeededSegment();
  }

  private unlink(seg: number): void {
    this.live = this.live.filter((n) => n !== seg);
    const f = this.file(seg);
    if (!existsSync(f)) return;
    this.totalBytes = Math.max(0, this.totalBytes - statSync(f).size);
    unlinkSync(f);
  }

  private segmentNumbers(): number[] {
    return readdirSync(this.dir)
      .map((f) => /^segment-(\d+)\.spl$/.exec(f)?.[1])
      .filter((x): x is string => x !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  private file(n: number): string {
    return path.join(this.dir, `segment-${String(n).padStart(10, '0')}.spl`);
  }
}

/** Frames a payload given in parts without joining them (the CRC runs over the parts in turn). */
function frame(parts: Buffer[]): { bufs: Buffer[]; bytes: number } {
  let len = 0;
  let crc = 0;
  for (const p of parts) {
    len += p.length;
    crc = crc32(p, crc);
  }
  const h = Buffer.allocUnsafe(8);
  h.writeUInt32LE(len, 0);
  h.writeUInt32LE(crc >>> 0, 4);
  return { bufs: [h, ...parts], bytes: 8 + len };
}

/** The batch an entry holds, or null for a confirmation. */
export function spooledBatch(payload: Buffer, segment: number): SpooledBatch | null {
  if (payload[0] !== 0x42 /* B */) return null;
  const nl = payload.indexOf(0x0a);
  const head = JSON.parse(payload.subarray(1, nl).toString('utf8')) as { id: string; fractalId: string; count: number; table?: IngestTable; month?: string };
  return { ...head, table: head.table ?? 'logs', rows: payload.subarray(nl + 1), segment };
}

/**
 * The whole entries of a segment's bytes from `from` on, each with the offset where it ends; a
 * torn or corrupt tail ends the walk (`end` says where it stopped).
 */
export function* readSpoolEntries(buf: Buffer, from = 0): Generator<{ payload: Buffer; end: number }> {
  let i = from;
  for (const payload of readEntries(buf.subarray(from))) {
    i += 8 + payload.length;
    yield { payload, end: i };
  }
}

function* readEntries(buf: Buffer): Generator<Buffer> {
  let i = 0;
  while (i + 8 <= buf.length) {
    const len = buf.readUInt32LE(i);
    const crc = buf.readUInt32LE(i + 4);
    if (i + 8 + len > buf.length) return; // torn tail
    const payload = buf.subarray(i + 8, i + 8 + len);
    if ((crc32(payload) >>> 0) !== crc) return;
    yield payload;
    i += 8 + len;
  }
}

/** Writes the buffers in order, as few system calls as the kernel allows (writev, IOV_MAX each). */
async function writeAll(fd: number, bufs: Buffer[]): Promise<void> {
  let i = 0;
  while (i < bufs.length) {
    const group = bufs.slice(i, i + 1024);
    let n = await new Promise<number>((resolve, reject) => writev(fd, group, (err, written) => (err ? reject(err) : resolve(written))));
    // A short write: finish the group buffer by buffer from where it stopped.
    for (const b of group) {
      if (n >= b.length) {
        n -= b.length;
        continue;
      }
      let off = n;
      while (off < b.length) off += await new Promise<number>((resolve, reject) => write(fd, b, off, b.length - off, null, (err, written) => (err ? reject(err) : resolve(written))));
      n = 0;
    }
    i += group.length;
  }
}

// The bounded ingest queue, drained by SVC_INGEST_WORKERS workers.
//
// Admission counts logs and bytes, not requests: the queue holds up to SVC_INGEST_QUEUE_SIZE slots
// of 5,000 logs (500,000 logs by default) and SVC_INGEST_QUEUE_BYTES of rows, whichever comes
// first. A batch is what one request (or one syslog listener flush) adds, at most 5,000 logs; small
// batches from many connections share slots, so a relay sending one log per request is nowhere near
// "full". Logs and bytes are held from admission until ClickHouse has them, so the bounds cover
// in-flight work too, and the byte bound keeps the process's memory bounded whatever the logs look
// like. Workers coalesce waiting batches into one insert (fewer, larger parts are much cheaper for
// ClickHouse than many small ones): while fewer than MIN_ROWS_PER_INSERT rows wait, a worker lets
// the oldest batch wait up to LINGER_MS for more. A failed insert is retried with exponential
// backoff; batches are never dropped.
import type { IngestTable } from '../logs/log-store.ts';
import { refusedForData, refusedForMemory } from '../storage/engine-errors.ts';

export interface QueuedBatch {
  id: string;
  fractalId: string;
  count: number;
  /** The table the rows are written for; only batches for the same table share an insert. */
  table: IngestTable;
  /**
   * The month ('2020-10', UTC) every row's timestamp falls in, when the pipeline cut the batch to
   * one; absent for batches recovered from an older spool. See `take`.
   */
  month?: string;
  rows: Buffer;
}

export interface QueueOptions {
  /** Slots of SLOT_LOGS logs each. */
  slots: number;
  /** Bytes of queued rows (plus BATCH_OVERHEAD_BYTES a batch). */
  maxBytes: number;
  workers: number;
  insert: (table: IngestTable, chunks: Buffer[]) => Promise<void>;
  onInserted: (batches: QueuedBatch[], ms: number) => void;
  onInsertError: (err: Error, attempt: number, delayMs: number) => void;
  onRecovered: () => void;
  /**
   * A row of a batch that the engine refuses for its data, alone, on every try: the row to store
   * in its place (the record's text kept, the engine's reason a field), or null when there is none.
   */
  quarantine: (table: IngestTable, row: string, reason: string) => string | null;
  /** After `rows` rows of a batch were stored in their quarantine form. */
  onQuarantined: (rows: number, reason: string) => void;
  /**
   * Resolves when the next insert may start: while searches run, the engine's CPU is theirs, and
   * ingest waits (its queue fills and pushes back) rather than the analyst.
   */
  yieldToSearches?: () => Promise<void>;
}

/** Logs one slot holds (the interface spec's batch size). */
export const SLOT_LOGS = 5_000;
/** What a queued batch costs beyond its rows (objects, spool and settle bookkeeping). */
export const BATCH_OVERHEAD_BYTES = 512;

/**
 * Coalescing bounds for one insert. Measured with the ingest benchmark (1M logs, 2 cores): inserts
 * of 25,000–50,000 rows cost the engine about as little CPU per log as 100,000–200,000-row ones;
 * fewer rows cost noticeably more (more parts, more merges). The engine's memory, though, grows
 * with an insert's bytes and its number of distinct field paths (issue 18: a 50,000-row insert of
 * mixed logs, ~50 MB of rows, took ~550 MB of native memory; 25,000 rows ~230 MB), so an insert is
 * also capped in bytes, and so are the bytes of all inserts in flight (whatever SVC_INGEST_WORKERS).
 */
const MIN_ROWS_PER_INSERT = 25_000;
const LINGER_MS = 250;
const MAX_ROWS_PER_INSERT = 50_000;
const MAX_BYTES_PER_INSERT = 16 * 1024 * 1024;
const MAX_BYTES_IN_FLIGHT = 2 * MAX_BYTES_PER_INSERT;
const MAX_BACKOFF_MS = 30_000;
/** How long to wait before try `attempt + 1` of an insert: 100 ms, doubling, at most MAX_BACKOFF_MS. */
const backoffMs = (attempt: number) => Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(attempt - 1, 10));
/** The bytes a batch counts against the byte bound. */
export const batchBytes = (rows: Buffer) => rows.length + BATCH_OVERHEAD_BYTES;

export class IngestQueue {
  private waiting: QueuedBatch[] = [];
  /** When each waiting batch was pushed (performance.now()), in the same order. */
  private waitingSince: number[] = [];
  private rowsWaiting = 0;
  private bytesWaiting = 0;
  /** Bytes of the inserts running now (bounded by MAX_BYTES_IN_FLIGHT). */
  private bytesInFlight = 0;
  /** Logs and bytes admitted and not yet inserted (waiting or being inserted). */
  private logs = 0;
  private bytes = 0;
  private wake: Array<() => void> = [];
  private roomWaiters: Array<() => void> = [];
  private running = true;
  private workers: Promise<void>[] = [];

  constructor(private readonly o: QueueOptions) {
    for (let i = 0; i < o.workers; i++) this.workers.push(this.work());
  }

  /**
   * Claims room for `logs` logs taking `bytes` bytes (batchBytes of each batch); false when that
   * would pass either bound. An empty queue takes anything, so a single request larger than the
   * bounds is not refused for ever.
   */
  reserve(logs: number, bytes: number): boolean {
    if (this.logs > 0 && (this.logs + logs > this.logCapacity || this.bytes + bytes > this.o.maxBytes)) return false;
    this.logs += logs;
    this.bytes += bytes;
    return true;
  }
  release(logs: number, bytes: number): void {
    this.logs = Math.max(0, this.logs - logs);
    this.bytes = Math.max(0, this.bytes - bytes);
    for (const w of this.roomWaiters.splice(0)) w();
  }

  /** False when not even one more log would be admitted (what a request is refused on before its body is read). */
  get hasRoom(): boolean {
    return this.logs === 0 || (this.logs < this.logCapacity && this.bytes < this.o.maxBytes);
  }

  /** False when rows of `bytes` bytes would pass the byte bound (an empty queue takes anything). */
  hasRoomFor(bytes: number): boolean {
    return this.logs === 0 || this.bytes + bytes <= this.o.maxBytes;
  }

  /** Resolves the next time room is released (or at once when the queue is stopping). */
  whenRoom(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((r) => this.roomWaiters.push(r));
  }

  /** A batch whose room was reserved (and which is on the spool). */
  push(b: QueuedBatch): void {
    this.waiting.push(b);
    this.waitingSince.push(performance.now());
    this.rowsWaiting += b.count;
    this.bytesWaiting += b.rows.length;
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const w of this.wake.splice(0)) w();
  }

  /** Batches recovered from the spool at start; they are taken beyond the bounds if need be. */
  pushRecovered(b: QueuedBatch): void {
    this.logs += b.count;
    this.bytes += batchBytes(b.rows);
    this.push(b);
  }

  /** Slots in use: the queued logs in slots of SLOT_LOGS. */
  get depth(): number {
    return Math.ceil(this.logs / SLOT_LOGS);
  }
  get capacity(): number {
    return this.o.slots;
  }
  get logCapacity(): number {
    return this.o.slots * SLOT_LOGS;
  }
  get byteCapacity(): number {
    return this.o.maxBytes;
  }
  get queuedLogs(): number {
    return this.logs;
  }
  get queuedBytes(): number {
    return this.bytes;
  }
  get waitingRows(): number {
    return this.rowsWaiting;
  }
  /** True when more than one insert's worth is admitted and not yet stored: storage is behind. */
  get backlogged(): boolean {
    return this.logs >= MIN_ROWS_PER_INSERT || this.bytes >= MAX_BYTES_PER_INSERT;
  }

  /**
   * Why `logs` more logs of `bytes` bytes are not admitted, in words, for the pressure report:
   * which bound they would pass and what the queue holds.
   */
  describeFull(logs: number, bytes: number): string {
    const n = (x: number) => x.toLocaleString('en-US');
    const mb = (x: number) => `${(x / 1024 / 1024).toFixed(1)} MB`;
    const holds = `the queue holds ${n(this.logs)} of ${n(this.logCapacity)} logs (${this.o.slots} slots of ${n(SLOT_LOGS)}) and ${mb(this.bytes)} of ${mb(this.o.maxBytes)}`;
    const overLogs = logs > 0 ? this.logs + logs > this.logCapacity : this.logs >= this.logCapacity;
    const bound = overLogs ? 'SVC_INGEST_QUEUE_SIZE' : 'SVC_INGEST_QUEUE_BYTES';
    const what =
      logs > 0
        ? `${n(logs)} more logs (${mb(bytes)}) would pass ${bound}`
        : bytes > 0
          ? `a request of about ${mb(bytes)} of rows (from its Content-Length) would pass SVC_INGEST_QUEUE_BYTES, refused before its body was read`
          : `full (${bound})`;
    return `${what}: ${holds}, waiting for storage to take them`;
  }

  /** Resolves true when every batch is inserted, false if the time-out came first. */
  async drain(timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (this.logs > 0) {
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wakeAll();
    for (const w of this.roomWaiters.splice(0)) w();
    await Promise.all(this.workers);
  }

  /**
   * The batches of the next insert: the oldest waiting batch, and after it those of the same table
   * and month, up to the insert's bounds (the others keep their place). The logs table is
   * partitioned by month, and the engine writes one part per month an insert touches, each costing
   * it about as much as thousands of rows (the `JSON` column's paths): an import of evidence
   * spanning three years, cut into inserts that each held every month, wrote twice the parts and
   * cost the engine ~60% more CPU per event. Live logs all fall in one month, so for them this is
   * the plain oldest-first run of batches it always was.
   */
  private take(): QueuedBatch[] {
    const first = this.waiting[0];
    if (!first) return [];
    const out: QueuedBatch[] = [];
    const keep: QueuedBatch[] = [];
    const keepSince: number[] = [];
    let rows = 0;
    let bytes = 0;
    let i = 0;
    for (; i < this.waiting.length; i++) {
      const b = this.waiting[i]!;
      if (b.table !== first.table || b.month !== first.month) {
        keep.push(b);
        keepSince.push(this.waitingSince[i]!);
        continue;
      }
      if (out.length && (rows + b.count > MAX_ROWS_PER_INSERT || bytes + b.rows.length > MAX_BYTES_PER_INSERT)) break;
      out.push(b);
      this.rowsWaiting -= b.count;
      this.bytesWaiting -= b.rows.length;
      rows += b.count;
      bytes += b.rows.length;
    }
    this.waiting = keep.concat(this.waiting.slice(i));
    this.waitingSince = keepSince.concat(this.waitingSince.slice(i));
    return out;
  }

  private async work(): Promise<void> {
    while (this.running || this.waiting.length) {
      if (!this.waiting.length) {
        if (!this.running) return;
        await new Promise<void>((r) => this.wake.push(r));
        continue;
      }
      const lingered = performance.now() - this.waitingSince[0]!;
      if (this.running && this.rowsWaiting < MIN_ROWS_PER_INSERT && this.bytesWaiting < MAX_BYTES_PER_INSERT && lingered < LINGER_MS) {
        // Woken by the next push (to count again) or when the oldest batch has waited enough.
        await new Promise<void>((r) => {
          const timer = setTimeout(r, LINGER_MS - lingered);
          this.wake.push(() => {
            clearTimeout(timer);
            r();
          });
        });
        continue;
      }
      if (this.o.yieldToSearches) await this.o.yieldToSearches();
      if (this.bytesInFlight > 0 && this.bytesInFlight + Math.min(this.bytesWaiting, MAX_BYTES_PER_INSERT) > MAX_BYTES_IN_FLIGHT) {
        // Enough is being inserted: woken when an insert ends (or a batch arrives, to look again).
        await new Promise<void>((r) => this.wake.push(r));
        continue;
      }
      const batches = this.take();
      if (!batches.length) continue; // another worker took them while this one waited
      const inFlight = batches.reduce((n, b) => n + b.rows.length, 0);
      this.bytesInFlight += inFlight;
      let stored: boolean;
      try {
        stored = await this.insertWithRetry(batches);
      } finally {
        this.bytesInFlight -= inFlight;
        this.wakeAll();
      }
      // Shutting down with storage failing: the spool keeps these for the next start.
      if (!stored) return;
      this.release(
        batches.reduce((n, b) => n + b.count, 0),
        batches.reduce((n, b) => n + batchBytes(b.rows), 0),
      );
    }
  }

  /**
   * Inserts `batches` (retried with backoff until it succeeds or the queue stops). An insert the
   * engine refuses for its memory limit is split: the second half goes back to the head of the
   * queue and the first is tried again at once, down to one batch (which then waits its turn).
   * `batches` keeps the ones inserted. False when the queue stopped with storage failing.
   */
  private async insertWithRetry(batches: QueuedBatch[]): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const t0 = performance.now();
      try {
        await this.o.insert(batches[0]!.table, batches.map((b) => b.rows));
        if (attempt > 1) this.o.onRecovered();
        this.o.onInserted(batches, performance.now() - t0);
        return true;
      } catch (err) {
        if (batches.length === 1 && refusedForData(err)) {
          // One batch the engine refuses for its data: its rows are stored apart, the ones at fault
          // in their quarantine form, so one bad row neither blocks ingest nor is lost.
          const stored = await this.storeApart(batches[0]!);
          if (stored) {
            this.o.onInserted(batches, performance.now() - t0);
            return true;
          }
          if (!this.running) return false;
        }
        if (batches.length > 1 && (refusedForMemory(err) || refusedForData(err))) {
          const back = batches.splice(Math.ceil(batches.length / 2));
          this.waiting.unshift(...back);
          this.waitingSince.unshift(...back.map(() => performance.now()));
          for (const b of back) {
            this.rowsWaiting += b.count;
            this.bytesWaiting += b.rows.length;
          }
          continue;
        }
        if (!(await this.waitToRetry(err as Error, attempt))) return false;
      }
    }
  }

  /**
   * After failed try `attempt` of an insert: reports it and waits its backoff. False, at once, when
   * the queue is stopping and it has been tried three times (the spool keeps the rows).
   */
  private async waitToRetry(err: Error, attempt: number): Promise<boolean> {
    const delay = backoffMs(attempt);
    this.o.onInsertError(err, attempt, delay);
    if (!this.running && attempt >= 3) return false;
    await new Promise((r) => setTimeout(r, delay));
    return true;
  }

  /**
   * Stores a batch the engine refused for its data in halves, down to single rows; a row refused
   * alone is stored in its quarantine form. Other failures are retried with backoff in place. True
   * when every row is stored. Otherwise (a row with no quarantine form or refused in it too, or the
   * queue stopping) the batch keeps only the rows not stored, to be retried, spooled as before (a
   * replay skips rows already stored, by log_id): nothing is lost and nothing stored twice.
   */
  private async storeApart(b: QueuedBatch): Promise<boolean> {
    const rows = b.rows.toString('utf8').split('\n').filter(Boolean);
    const stored = new Uint8Array(rows.length);
    let quarantined = 0;
    let reason = '';
    /** Null once stored, else the engine's refusal of this data. */
    const tryInsert = async (part: string[]): Promise<Error | null> => {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.o.insert(b.table, [Buffer.from(part.join('\n') + '\n')]);
          return null;
        } catch (err) {
          if (refusedForData(err)) return err as Error;
          if (!(await this.waitToRetry(err as Error, attempt))) throw err;
        }
      }
    };
    /** Stores rows [lo, hi); false when one of them cannot be stored in any form. */
    const put = async (lo: number, hi: number): Promise<boolean> => {
      const refused = await tryInsert(rows.slice(lo, hi));
      if (!refused) {
        stored.fill(1, lo, hi);
        return true;
      }
      if (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        const first = await put(lo, mid);
        return (await put(mid, hi)) && first;
      }
      reason = refused.message.split('\n')[0]!.replace(/: while executing .*$/, '').slice(0, 500);
      const stand = this.o.quarantine(b.table, rows[lo]!, reason);
      if (stand === null || (await tryInsert([stand])) !== null) return false;
      stored[lo] = 1;
      quarantined++;
      return true;
    };
    let all = false;
    try {
      all = await put(0, rows.length);
    } catch {
      all = false;
    }
    if (quarantined) this.o.onQuarantined(quarantined, reason);
    if (all) return true;
    const left = rows.filter((_, i) => !stored[i]);
    if (left.length < rows.length) {
      const before = batchBytes(b.rows);
      b.rows = Buffer.from(left.join('\n') + '\n');
      this.release(rows.length - left.length, before - batchBytes(b.rows));
      b.count = left.length;
    }
    return false;
  }
}

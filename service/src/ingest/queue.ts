// The bounded ingest queue: SVC_INGEST_QUEUE_SIZE slots, one per batch of at most 5,000 logs,
// drained by SVC_INGEST_WORKERS workers. A slot is held from admission until ClickHouse has the
// batch, so the bound covers in-flight work too. Workers coalesce waiting batches into one insert
// (fewer, larger parts are much cheaper for ClickHouse than many small ones): while fewer than
// MIN_ROWS_PER_INSERT rows wait, a worker lets the oldest batch wait up to LINGER_MS for more.
// A failed insert is retried with exponential backoff; batches are never dropped.
import type { IngestTable } from '../logs/log-store.ts';

export interface QueuedBatch {
  id: string;
  fractalId: string;
  count: number;
  /** The table the rows are written for; only batches for the same table share an insert. */
  table: IngestTable;
  rows: Buffer;
}

export interface QueueOptions {
  slots: number;
  workers: number;
  insert: (table: IngestTable, chunks: Buffer[]) => Promise<void>;
  onInserted: (batches: QueuedBatch[], ms: number) => void;
  onInsertError: (err: Error, attempt: number, delayMs: number) => void;
  onRecovered: () => void;
}

/**
 * Coalescing bounds for one insert. Measured with the ingest benchmark (1M logs, 2 cores): inserts
 * of up to 50,000 rows / 32 MB cost the engine about as little CPU per log as 100,000–200,000-row
 * ones, while four such inserts in flight (SVC_INGEST_WORKERS) keep the process well below the
 * memory those take; 25,000-row inserts cost noticeably more (more parts, more merges).
 */
const MIN_ROWS_PER_INSERT = 25_000;
const LINGER_MS = 250;
const MAX_ROWS_PER_INSERT = 50_000;
const MAX_BYTES_PER_INSERT = 32 * 1024 * 1024;
const MAX_BACKOFF_MS = 30_000;

export class IngestQueue {
  private waiting: QueuedBatch[] = [];
  /** When each waiting batch was pushed (performance.now()), in the same order. */
  private waitingSince: number[] = [];
  private rowsWaiting = 0;
  private reserved = 0;
  private wake: Array<() => void> = [];
  private running = true;
  private workers: Promise<void>[] = [];

  constructor(private readonly o: QueueOptions) {
    for (let i = 0; i < o.workers; i++) this.workers.push(this.work());
  }

  /** Claims slots for n batches; false when the queue is full. */
  reserve(n: number): boolean {
    if (this.reserved + n > this.o.slots) return false;
    this.reserved += n;
    return true;
  }
  release(n: number): void {
    this.reserved = Math.max(0, this.reserved - n);
  }

  /** A batch whose slot was reserved (and which is on the spool). */
  push(b: QueuedBatch): void {
    this.waiting.push(b);
    this.waitingSince.push(performance.now());
    this.rowsWaiting += b.count;
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const w of this.wake.splice(0)) w();
  }

  /** Batches recovered from the spool at start; they take slots beyond the bound if need be. */
  pushRecovered(b: QueuedBatch): void {
    this.reserved++;
    this.push(b);
  }

  get depth(): number {
    return this.reserved;
  }
  get capacity(): number {
    return this.o.slots;
  }
  get waitingRows(): number {
    return this.rowsWaiting;
  }

  /** Resolves true when every batch is inserted, false if the time-out came first. */
  async drain(timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (this.reserved > 0) {
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wakeAll();
    await Promise.all(this.workers);
  }

  private take(): QueuedBatch[] {
    const out: QueuedBatch[] = [];
    let rows = 0;
    let bytes = 0;
    while (this.waiting.length) {
      const b = this.waiting[0]!;
      if (out.length && (b.table !== out[0]!.table || rows + b.count > MAX_ROWS_PER_INSERT || bytes + b.rows.length > MAX_BYTES_PER_INSERT)) break;
      out.push(this.waiting.shift()!);
      this.waitingSince.shift();
      this.rowsWaiting -= b.count;
      rows += b.count;
      bytes += b.rows.length;
    }
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
      if (this.running && this.rowsWaiting < MIN_ROWS_PER_INSERT && lingered < LINGER_MS) {
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
      const batches = this.take();
      for (let attempt = 1; ; attempt++) {
        const t0 = performance.now();
        try {
          await this.o.insert(batches[0]!.table, batches.map((b) => b.rows));
          if (attempt > 1) this.o.onRecovered();
          this.o.onInserted(batches, performance.now() - t0);
          break;
        } catch (err) {
          const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(attempt - 1, 10));
          this.o.onInsertError(err as Error, attempt, delay);
          if (!this.running && attempt >= 3) {
            // Shutting down with storage failing: the spool keeps these for the next start.
            return;
          }
          await new Promise((r) => setTimeout(r, delay));
        }
      }
      this.release(batches.length);
    }
  }
}

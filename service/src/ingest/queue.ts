// The bounded ingest queue: SVC_INGEST_QUEUE_SIZE slots, one per batch of at most 5,000 logs,
// drained by SVC_INGEST_WORKERS workers. A slot is held from admission until ClickHouse has the
// batch, so the bound covers in-flight work too. Workers coalesce whatever is waiting into one
// insert (fewer, larger parts are much cheaper for ClickHouse than many small ones). A failed
// insert is retried with exponential backoff; batches are never dropped.
export interface QueuedBatch {
  id: string;
  fractalId: string;
  count: number;
  rows: Buffer;
}

export interface QueueOptions {
  slots: number;
  workers: number;
  insert: (chunks: Buffer[], rows: number) => Promise<void>;
  onInserted: (batches: QueuedBatch[], ms: number) => void;
  onInsertError: (err: Error, attempt: number, delayMs: number) => void;
  onRecovered: () => void;
}

/** Coalescing bounds for one insert. */
const MAX_ROWS_PER_INSERT = 200_000;
const MAX_BYTES_PER_INSERT = 96 * 1024 * 1024;
const MAX_BACKOFF_MS = 30_000;

export class IngestQueue {
  private waiting: QueuedBatch[] = [];
  private reserved = 0;
  private wake: Array<() => void> = [];
  private running = true;
  private active = 0;
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
    this.wake.shift()?.();
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
    return this.waiting.reduce((n, b) => n + b.count, 0);
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
    for (const w of this.wake.splice(0)) w();
    await Promise.all(this.workers);
  }

  private take(): QueuedBatch[] {
    const out: QueuedBatch[] = [];
    let rows = 0;
    let bytes = 0;
    while (this.waiting.length) {
      const b = this.waiting[0]!;
      if (out.length && (rows + b.count > MAX_ROWS_PER_INSERT || bytes + b.rows.length > MAX_BYTES_PER_INSERT)) break;
      out.push(this.waiting.shift()!);
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
      const batches = this.take();
      this.active++;
      const rows = batches.reduce((n, b) => n + b.count, 0);
      for (let attempt = 1; ; attempt++) {
        const t0 = performance.now();
        try {
          await this.o.insert(batches.map((b) => b.rows), rows);
          if (attempt > 1) this.o.onRecovered();
          this.o.onInserted(batches, performance.now() - t0);
          break;
        } catch (err) {
          const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(attempt - 1, 10));
          this.o.onInsertError(err as Error, attempt, delay);
          if (!this.running && attempt >= 3) {
            // Shutting down with storage failing: the spool keeps these for the next start.
            this.active--;
            return;
          }
          await new Promise((r) => setTimeout(r, delay));
        }
      }
      this.release(batches.length);
      this.active--;
    }
  }
}

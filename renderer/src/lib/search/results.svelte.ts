// One result set of the search workspace and the run that fills it: rows stream in from /query/stream
// (appended at most once per animation frame), the histogram may come before or after the rows, a run can
// be cancelled (the fetch is aborted; the service stops the query), and live tail adds newer events on top.
// Timing marks for the UI benchmark are kept in `window.__searchPerf`.
import {
  QueryError,
  runQuery,
  streamQuery,
  type DoneFrame,
  type HistogramFrame,
  type QueryBody,
  type QueryMeta,
} from './query-client.ts';
import type { ResultRow } from './export.ts';
import { parseEventTime } from './time.ts';
import { addToHistogram } from './histogram.ts';

export type RunStatus = 'idle' | 'running' | 'done' | 'error' | 'cancelled';

export interface PerfMarks {
  runId: number;
  pressedAt: number;
  responseAt: number | null;
  /** The first bytes of row data arrived. */
  rowBytesAt: number | null;
  /** The first rows frame was complete and parsed. */
  firstRowsAt: number | null;
  firstPaintAt: number | null;
  doneAt: number | null;
  rows: number;
  /** The service's own execution time (the `done` frame). */
  executionMs: number | null;
}

declare global {
  interface Window {
    __searchPerf?: PerfMarks;
  }
}

const LIVE_MAX_ROWS = 10_000;
const TAIL_LOOKBACK_MS = 120_000;

export class SearchResults {
  status = $state<RunStatus>('idle');
  meta = $state.raw<QueryMeta | null>(null);
  rows = $state.raw<ResultRow[]>([]);
  histogram = $state.raw<HistogramFrame | null>(null);
  done = $state.raw<DoneFrame | null>(null);
  error = $state.raw<QueryError | null>(null);
  /** The request that produced these results (live tail and "load more" repeat it). */
  request = $state.raw<QueryBody | null>(null);
  elapsedMs = $state(0);
  /** Rows of the current run so far (the previous result stays on screen until the first ones arrive). */
  received = $state(0);
  /** Bumped when live tail puts rows on top: the table keeps what the user was looking at in place. */
  prepended = $state.raw<{ n: number; seq: number }>({ n: 0, seq: 0 });
  liveError = $state<string | null>(null);
  liveAdded = $state(0);

  private controller: AbortController | null = null;
  private pending: ResultRow[] = [];
  private frame = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private runSeq = 0;
  private startedAt = 0;
  /** Rows of the new run replace the old ones only when they arrive: no blank flash, no layout jump. */
  private fresh = false;
  private nextMeta: QueryMeta | null = null;
  private perf: PerfMarks | null = null;

  get running(): boolean {
    return this.status === 'running';
  }

  /** Starts a query, cancelling any running one. `append` continues the current rows (next page). */
  async run(body: QueryBody, opts: { append?: boolean; pressedAt?: number } = {}): Promise<void> {
    this.cancel(true);
    const my = ++this.runSeq;
    const controller = new AbortController();
    this.controller = controller;
    this.status = 'running';
    this.error = null;
    this.liveError = null;
    this.startedAt = opts.pressedAt ?? performance.now();
    this.elapsedMs = 0;
    this.received = opts.append ? this.rows.length : 0;
    this.fresh = !opts.append;
    this.nextMeta = null;
    if (!opts.append) {
      this.request = body;
      this.liveAdded = 0;
    }
    let doneFrame: DoneFrame | null = null;
    let gotHistogram = false;
    const perf: PerfMarks = {
      runId: my,
      pressedAt: this.startedAt,
      responseAt: null,
      rowBytesAt: null,
      firstRowsAt: null,
      firstPaintAt: null,
      doneAt: null,
      rows: 0,
      executionMs: null,
    };
    if (typeof window !== 'undefined') window.__searchPerf = perf;
    this.perf = perf;
    this.timer = setInterval(() => {
      if (my === this.runSeq) this.elapsedMs = performance.now() - this.startedAt;
    }, 100);
    const live = () => my === this.runSeq;
    try {
      await streamQuery(
        body,
        {
          response: () => {
            perf.responseAt = performance.now();
          },
          rowBytes: () => {
            perf.rowBytesAt = performance.now();
          },
          meta: (m) => {
            if (live() && !opts.append) this.nextMeta = m;
          },
          rows: (rows) => {
            if (!live()) return;
            if (perf.firstRowsAt === null) perf.firstRowsAt = performance.now();
            for (const r of rows) this.pending.push(r);
            perf.rows += rows.length;
            // The first rows go out at once; later ones are batched per animation frame.
            if (this.fresh) this.flush();
            else this.schedule();
          },
          histogram: (h) => {
            if (!live() || opts.append) return;
            gotHistogram = true;
            this.histogram = h;
          },
          done: (d) => {
            if (!live()) return;
            doneFrame = d;
            perf.executionMs = d.execution_ms;
          },
        },
        controller.signal,
      );
      if (!live()) return;
      this.flush();
      if (this.fresh) this.swapIn([]); // no rows at all: now the previous result goes
      if (!opts.append && !gotHistogram) this.histogram = null;
      const d = doneFrame as DoneFrame | null;
      this.done = d ? { ...d, count: this.rows.length } : { count: this.rows.length, has_more: false, next_cursor: '', execution_ms: 0, limit_hit: '' };
      this.status = 'done';
      perf.doneAt = performance.now();
    } catch (err) {
      if (!live()) return;
      this.flush();
      if (controller.signal.aborted) {
        if (this.fresh) this.swapIn([]);
        this.status = 'cancelled';
      } else {
        if (!opts.append) {
          this.swapIn([]);
          this.meta = null;
          this.histogram = null;
        }
        this.status = 'error';
        this.error = err instanceof QueryError ? err : new QueryError(err instanceof Error ? err.message : String(err), 0);
      }
    } finally {
      if (my === this.runSeq) {
        this.elapsedMs = performance.now() - this.startedAt;
        if (this.timer) clearInterval(this.timer);
        this.timer = null;
        this.controller = null;
      }
    }
  }

  /** Stops the running query: the fetch is aborted and the service cancels it. Rows so far stay. */
  cancel(superseded = false): void {
    if (!this.controller) return;
    this.controller.abort();
    this.controller = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.elapsedMs = performance.now() - this.startedAt;
    if (superseded) {
      this.runSeq++;
      this.pending = [];
      return;
    }
    this.runSeq++;
    this.flush();
    if (this.fresh) this.swapIn([]);
    this.status = 'cancelled';
  }

  /** Forgets the result (another scope). */
  clear(): void {
    this.cancel(true);
    this.status = 'idle';
    this.meta = null;
    this.rows = [];
    this.histogram = null;
    this.done = null;
    this.error = null;
    this.request = null;
  }

  /** Marks the moment the first rows of the current run were painted (called by the table). */
  markPainted(): void {
    const p = this.perf;
    if (p && p.firstRowsAt !== null && p.firstPaintAt === null) p.firstPaintAt = performance.now();
  }

  private swapIn(rows: ResultRow[]): void {
    this.fresh = false;
    if (this.nextMeta) this.meta = this.nextMeta;
    this.nextMeta = null;
    this.done = null;
    this.rows = rows;
  }

  private schedule(): void {
    if (this.frame || typeof requestAnimationFrame === 'undefined') return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.flush();
    });
  }

  private flush(): void {
    if (this.frame && typeof cancelAnimationFrame !== 'undefined') cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    if (this.fresh) this.swapIn(batch);
    else this.rows = this.rows.concat(batch);
    this.received = this.rows.length;
  }

  /** Fetches the next page (a search paged because the row cap is off). */
  loadMore(): Promise<void> {
    if (!this.request || !this.done?.has_more || !this.done.next_cursor) return Promise.resolve();
    return this.run({ ...this.request, cursor: this.done.next_cursor }, { append: true });
  }

  /**
   * Live tail, one step: events newer than the newest shown (same query, from that time to now) go on
   * top; the ones already shown at that exact time are skipped by id. An aggregation is re-run whole.
   */
  async tailOnce(now: Date): Promise<void> {
    const req = this.request;
    if (!req || this.running) return;
    const aggregated = this.meta?.is_aggregated ?? false;
    const newest = aggregated ? null : this.newestTime();
    // Look back a little: an event stamped just before the last poll may have been stored just after it.
    // Those already shown are recognised by id.
    const from = newest ?? (req.end ? new Date(req.end) : now);
    const start = new Date(Math.min(from.getTime(), now.getTime()) - TAIL_LOOKBACK_MS);
    const body: QueryBody = { ...req, start: start.toISOString(), end: now.toISOString() };
    delete body.cursor;
    let res: Record<string, any>;
    try {
      res = await runQuery(body);
    } catch (err) {
      this.liveError = err instanceof Error ? err.message : String(err);
      return;
    }
    if (this.request !== req || this.running) return; // a new query started meanwhile
    this.liveError = null;
    this.request = { ...req, end: now.toISOString() };
    const results = (res.results ?? []) as ResultRow[];
    if (aggregated) {
      this.rows = results;
      this.done = { ...(this.done ?? ({} as DoneFrame)), count: results.length, execution_ms: res.execution_ms ?? 0, limit_hit: res.limit_hit ?? '' };
      return;
    }
    const seen = new Set<string>();
    const edge = start.getTime();
    for (const r of this.rows) {
      const t = parseEventTime(r.timestamp)?.getTime();
      if (t !== undefined && t < edge) break; // newest first: past the window no id can repeat
      seen.add(String(r.log_id));
    }
    const added = results.filter((r) => !seen.has(String(r.log_id)));
    if (added.length === 0) return;
    this.rows = added.concat(this.rows).slice(0, LIVE_MAX_ROWS);
    this.liveAdded += added.length;
    this.prepended = { n: added.length, seq: this.prepended.seq + 1 };
    if (this.done) this.done = { ...this.done, count: this.rows.length };
    this.histogram = addToHistogram(this.histogram, added);
  }

  private newestTime(): Date | null {
    for (const r of this.rows.slice(0, 1)) {
      const t = parseEventTime(r.timestamp);
      if (t) return t;
    }
    return null;
  }
}

// Runs a compiled query on the engine: checks its regexes, streams its rows with a server-side
// time-out, shapes them into the response's row objects and computes the histogram.
import { BigNumberText, parseJson, setOwn } from '../shared/exact-json.ts';
import type { Analytics } from '../storage/clickhouse.ts';
import type { CompiledQuery } from './compile.ts';
import { encodeCursor } from './compile.ts';
import { QueryCompileError } from './plan/errors.ts';
import { conjunction, FROM_ARCHIVE, type OutputColumn } from './plan/pipeline.ts';
import { engineErrorCode } from '../storage/engine-errors.ts';

/** Non-enumerable property of a paged event row holding the cursor that resumes after it. */
export const CURSOR = Symbol('cursor');

export class QueryTimeoutError extends Error {
  constructor() {
    super('Query timeout: Consider adding more specific filters or reducing time range for raw log searches');
  }
}

export class QueryExecutionError extends Error {
  constructor(readonly detail: string) {
    super('Query execution failed. Try again; if it keeps failing, simplify the query and report it to an administrator.');
  }
}

/** The engine stopped a query at one of the per-query limits (queryLimits): answered 4xx with this sentence. */
export class QueryLimitError extends Error {}

/**
 * The limits every statement a user's query becomes runs under (executableSql), besides the
 * time-out: the engine's memory for one query (`max_memory_usage`; GROUP BY and ORDER BY spill to
 * disk from half of it instead of failing) and the bytes of its result (`max_result_bytes`), and
 * the service's own budget for the rows it holds or sends (`resultBudgetBytes`, ResultBudget).
 * Set once at start from the configuration (appliance.ts).
 */
export const queryLimits = {
  maxMemoryBytes: 1024 * 1024 * 1024,
  resultBudgetBytes: 64 * 1024 * 1024,
};

const MEMORY_LIMIT_CODES = new Set([241, 173]); // MEMORY_LIMIT_EXCEEDED, CANNOT_ALLOCATE_MEMORY
const RESULT_LIMIT_CODE = 396; // TOO_MANY_ROWS_OR_BYTES

/** The limit sentence for an engine error, or undefined when it is no limit. */
function limitSentence(err: unknown): string | undefined {
  const code = engineErrorCode(err) ?? -1;
  const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;
  if (MEMORY_LIMIT_CODES.has(code)) {
    return `Query limit: the query needs more than the ${mb(queryLimits.maxMemoryBytes)} of memory one query may use. Narrow the time range, filter before aggregating or sorting, or compute less per row.`;
  }
  if (code === RESULT_LIMIT_CODE) {
    return `Query limit: the result is larger than ${mb(2 * queryLimits.resultBudgetBytes)}. Return fewer or narrower rows, e.g. with table() or head().`;
  }
  return undefined;
}

/**
 * The service's side of the result limit: the rows of one query it holds in memory or sends, by
 * their approximate JSON size. A query that passes it stops in the engine and reports its rows
 * as truncated.
 */
export class ResultBudget {
  bytes = 0;
  exceeded = false;
  constructor(readonly maxBytes = queryLimits.resultBudgetBytes) {}

  /** How many of the rows fit: all, or up to the one that passes the budget (then `exceeded`). */
  fit(rows: Row[]): number {
    for (let i = 0; i < rows.length; i++) {
      this.bytes += approximateJsonBytes(rows[i]!);
      if (this.bytes > this.maxBytes) {
        this.exceeded = true;
        return i + 1;
      }
    }
    return rows.length;
  }
}

/** About the length of the row's JSON: names, values and punctuation, without serialising it. */
export function approximateJsonBytes(row: Row): number {
  let n = 2;
  for (const k in row) {
    const v = row[k];
    n += k.length + 4;
    if (typeof v === 'string') n += v.length + 2;
    else if (v === null || typeof v === 'number' || typeof v === 'boolean') n += 8;
    else n += JSON.stringify(v)?.length ?? 4;
  }
  return n;
}

export type Row = Record<string, unknown>;

const TIMEOUT_CODES = new Set([159, 394]);

/** TIMEOUT_EXCEEDED (159) / QUERY_WAS_CANCELLED (394): the engine stopped the statement at its time-out. */
export const isEngineTimeout = (err: unknown): boolean => TIMEOUT_CODES.has(engineErrorCode(err) ?? -1);

/** Compiles the patterns in the engine (RE2), all in one statement; throws what the engine says. */
async function compileInEngine(ch: Analytics, patterns: string[]): Promise<void> {
  const select = patterns.map((_, i) => `match('', {p${i}:String})`).join(', ');
  const rs = await ch.client.query({ query: `SELECT ${select}`, query_params: Object.fromEntries(patterns.map((p, i) => [`p${i}`, p])), format: 'JSONEachRow' });
  await rs.json();
}

/**
 * A regex the engine (RE2) refuses becomes a 400 naming it, instead of a failed execution. One
 * statement checks them all; only when it fails are they checked one by one, to name the culprit.
 */
export async function checkRegexes(ch: Analytics, patterns: string[]): Promise<void> {
  const unique = [...new Set(patterns)];
  if (unique.length === 0) return;
  if (unique.length > 1 && (await compileInEngine(ch, unique).then(() => true, () => false))) return;
  for (const pattern of unique) {
    try {
      await compileInEngine(ch, [pattern]);
    } catch (err) {
      const msg = String((err as Error).message ?? err);
      const reason = /(?:Cannot compile re2|OptimizedRegularExpression)[^:]*:\s*([^,(]*)/.exec(msg)?.[1]?.trim();
      throw new QueryCompileError(`invalid regular expression "${pattern}"${reason ? `: ${reason}` : ''}`);
    }
  }
}

const REGEX_CHUNK = 400;

/**
 * The patterns the engine refuses, each with its reason, for many queries at once (a feed sync
 * checks thousands): chunks in one statement each, a failing chunk halved until the culprits show.
 */
export async function refusedRegexes(ch: Analytics, patterns: string[]): Promise<Map<string, string>> {
  const refused = new Map<string, string>();
  const check = async (list: string[]): Promise<void> => {
    if (list.length === 0) return;
    try {
      await compileInEngine(ch, list);
    } catch (err) {
      if (list.length === 1) {
        const msg = String((err as Error).message ?? err);
        // Only the engine's refusal of the pattern itself counts; an engine that fails otherwise fails the whole check.
        if (!/re2|regular expression|OptimizedRegularExpression/i.test(msg)) throw err;
        const reason = /(?:Cannot compile re2|OptimizedRegularExpression)[^:]*:\s*([^,(]*)/.exec(msg)?.[1]?.trim();
        refused.set(list[0]!, `invalid regular expression "${list[0]}"${reason ? `: ${reason}` : ''}`);
        return;
      }
      const half = Math.ceil(list.length / 2);
      await check(list.slice(0, half));
      await check(list.slice(half));
    }
  };
  const unique = [...new Set(patterns)];
  for (let i = 0; i < unique.length; i += REGEX_CHUNK) await check(unique.slice(i, i + REGEX_CHUNK));
  return refused;
}

export interface RunOptions {
  timeoutS: number;
  signal?: AbortSignal;
  /**
   * The rows' budget (ResultBudget): the stream ends, its query stopped in the engine, once the
   * rows yielded pass it, and `exceeded` tells the caller so. A fresh default budget when absent.
   */
  budget?: ResultBudget;
  /** No analyst waits on it (Analytics StreamOptions): ingest does not give way to it. */
  background?: boolean;
  /** Its engine threads run at a lower OS priority (Analytics StreamOptions): the service's requests go first. */
  lowPriority?: boolean;
}

/**
 * The statement as sent, with the per-query limits the engine itself enforces: the time-out (not
 * only the HTTP wait), memory (heavy GROUP BY and ORDER BY spill to disk first) and result bytes.
 */
export function executableSql(sql: string, timeoutS: number): string {
  const memory = Math.floor(queryLimits.maxMemoryBytes);
  return (
    `${sql} SETTINGS max_execution_time = ${Math.max(1, Math.floor(timeoutS))}, timeout_overflow_mode = 'throw', ` +
    `max_memory_usage = ${memory}, max_bytes_before_external_group_by = ${Math.floor(memory / 2)}, max_bytes_before_external_sort = ${Math.floor(memory / 2)}, ` +
    `max_result_bytes = ${Math.floor(2 * queryLimits.resultBudgetBytes)}, result_overflow_mode = 'throw'`
  );
}

/** An engine error as the query's caller sees it: time-out, limit, or an execution failure. */
export function engineFailure(err: unknown): Error {
  if (isEngineTimeout(err)) return new QueryTimeoutError();
  const limit = limitSentence(err);
  if (limit) return new QueryLimitError(limit);
  return new QueryExecutionError(String((err as Error).message ?? err));
}

/** Streams shaped rows in chunks until they pass the budget. Throws QueryTimeoutError / QueryLimitError / QueryExecutionError. */
export async function* streamQueryRows(ch: Analytics, q: CompiledQuery, opts: RunOptions): AsyncGenerator<Row[]> {
  const shape = rowShaper(q);
  const budget = opts.budget ?? new ResultBudget();
  // Over budget, the engine's query is stopped like a client that went away.
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  // Row hooks (chain's _chain_events) may look up more, each statement under the same limits.
  const fetchRows = async (sql: string, params: Record<string, unknown>): Promise<unknown[][]> => {
    const out: unknown[][] = [];
    for await (const chunk of ch.streamRows(executableSql(sql, opts.timeoutS), params, { signal, background: opts.background, lowPriority: opts.lowPriority })) out.push(...chunk);
    return out;
  };
  try {
    for await (const chunk of ch.streamRows(executableSql(q.sql, opts.timeoutS), q.params, { signal, background: opts.background, lowPriority: opts.lowPriority })) {
      const rows = chunk.map(shape);
      for (const hook of q.pipeline.rowHooks) await hook(rows, fetchRows);
      const fit = budget.fit(rows);
      yield fit === rows.length ? rows : rows.slice(0, fit);
      if (budget.exceeded) {
        stop.abort();
        return;
      }
    }
  } catch (err) {
    if (signal.aborted) return;
    throw engineFailure(err);
  }
}

export async function runQueryRows(ch: Analytics, q: CompiledQuery, opts: RunOptions): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const chunk of streamQueryRows(ch, q, opts)) for (const r of chunk) rows.push(r);
  return rows;
}

/** Turns engine rows (arrays in column order) into the response's row objects. */
export function rowShaper(q: CompiledQuery): (raw: unknown[]) => Row {
  // Worked out once per query, not per row.
  const cols = q.columns;
  const at = (name: string) => cols.findIndex((c) => c.name === name);
  const projection = q.eventRows ? q.pipeline.current.projection : undefined;
  const normAt = at('norm_log');
  const timeAt = at('timestamp');
  const idAt = at('log_id');
  // Search in place: a row read from the archive says so (`from_archive: true`); hot rows are unchanged.
  const archiveAt = cols.findIndex((c) => c.name === FROM_ARCHIVE && c.hidden);
  // Event rows under table(): the listed columns plus the event's time, id and fractal, not norm_log.
  const shown = cols
    .map((c, i) => ({ c, i }))
    .filter(({ c }) => !(c.name === FROM_ARCHIVE && c.hidden))
    .filter(({ c }) => !projection || (c.name !== 'norm_log' && (projection.includes(c.name) || ['timestamp', 'fractal_id', 'log_id'].includes(c.name))));
  return (raw) => {
    const row: Row = {};
    if (q.eventRows) {
      // Event rows carry their fields (flattened, as text) under their own names; reserved and
      // computed columns win over a field of the same name.
      const fields = unpackFields(raw[normAt] as string);
      if (projection) {
        for (const n of projection) if (Object.hasOwn(fields, n)) setOwn(row, n, fields[n]);
      } else if (Object.hasOwn(fields, '__proto__')) {
        for (const k of Object.keys(fields)) setOwn(row, k, fields[k]); // a field named __proto__ stays a field
      } else Object.assign(row, fields);
    }
    if (q.paged) {
      // Not serialised: the route reads it to build next_cursor from the last row of a page.
      Object.defineProperty(row, CURSOR, { value: encodeCursor({ t: String(raw[timeAt]), id: String(raw[idAt]) }), enumerable: false });
    }
    for (const { c, i } of shown) row[c.name] = cellValue(c, raw[i]);
    if (archiveAt >= 0 && Number(raw[archiveAt]) === 1) row[FROM_ARCHIVE] = true;
    return row;
  };
}

function cellValue(c: OutputColumn, v: unknown): unknown {
  if (v === null || v === undefined) return c.type === 'number' ? null : '';
  switch (c.type) {
    case 'number': {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isFinite(n) ? n : null;
    }
    case 'time':
      return String(v).slice(0, 23);
    case 'list':
      return v;
    default:
      return typeof v === 'string' ? v : String(v);
  }
}

/** The event's fields text (JSON, possibly nested by dotted names) flattened to dotted text values. */
export function unpackFields(json: string): Record<string, string> {
  const out: Record<string, string> = {};
  let obj: unknown;
  try {
    obj = parseJson(json);
  } catch {
    return out;
  }
  const walk = (o: Record<string, unknown>, prefix: string) => {
    for (const k of Object.keys(o)) {
      const v = o[k];
      const name = prefix ? `${prefix}.${k}` : k;
      // A null is no value: the `fields` JSON the conditions read does not store it either.
      if (v === null) continue;
      if (v instanceof BigNumberText) setOwn(out, name, String(v));
      else if (typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, name);
      else setOwn(out, name, typeof v === 'string' ? v : JSON.stringify(v));
    }
  };
  if (obj && typeof obj === 'object') walk(obj as Record<string, unknown>, '');
  return out;
}

// ---- histogram (query-language.md §5) -----------------------------------------------------------

function histogramBucketSeconds(start: Date, end: Date): number {
  const range = (end.getTime() - start.getTime()) / 1000;
  let b = range <= 3600 ? 30 : range <= 86400 ? 900 : range <= 7 * 86400 ? 3600 : range <= 30 * 86400 ? 10800 : range <= 365 * 86400 ? 86400 : 604800;
  while (range / b > 5000) b *= 2;
  return b;
}

export interface Histogram {
  buckets: Array<{ time: string; count: number }>;
  time_start: string;
  time_end: string;
  bucket_seconds: number;
}

/**
 * How many events the query's event conditions keep per time bucket: bucket start (Unix seconds)
 * → count, empty buckets absent. Streamed like the rows, so a client that leaves or a time-out
 * stops it inside the engine too.
 */
export async function countPerBucket(ch: Analytics, q: CompiledQuery, bucketSeconds: number, opts: RunOptions): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  const sql = executableSql(q.pipeline.eventCountSql(bucketSeconds), opts.timeoutS);
  try {
    for await (const chunk of ch.streamRows(sql, q.pipeline.params.values, { signal: opts.signal, background: opts.background })) {
      for (const [b, n] of chunk) counts.set(Number(b), Number(n));
    }
  } catch (err) {
    throw engineFailure(err);
  }
  return counts;
}

export async function runHistogram(ch: Analytics, q: CompiledQuery, start: Date, end: Date, opts: RunOptions): Promise<Histogram> {
  const bucket = histogramBucketSeconds(start, end);
  return histogramOf(start, end, bucket, await countPerBucket(ch, q, bucket, opts));
}

/** The events in the query's fractals and time range, without its filters: what the histogram's own scan reads through. */
async function eventsInRange(ch: Analytics, q: CompiledQuery, opts: RunOptions): Promise<number> {
  const p = q.pipeline;
  const sql = executableSql(`SELECT count() FROM ${p.options.table} WHERE ${conjunction(p.rangeWhere())}`, opts.timeoutS);
  let n = 0;
  for await (const chunk of ch.streamRows(sql, p.params.values, { signal: opts.signal, background: opts.background })) for (const [c] of chunk) n = Number(c);
  return n;
}

/** Fewer events than this are always waited for: their scans are too short to time a rate (the statement's own overhead dominates). */
const FEW_EVENTS = 100_000;
/** Weight of the newest scan in the learned rate. */
const RATE_WEIGHT = 0.3;

/**
 * The histogram's own scan (a second pass over the range after the rows, when they cannot stand
 * in for it), and whether POST /query waits for it. §5 lets /query omit a histogram not ready
 * shortly after the rows; waiting the whole grace for a scan that cannot finish within it (a big
 * range) only delayed every capped search by the grace. So /query waits only when the scan is
 * expected to finish within the grace: the events in range (a count without the filters, a few
 * ms) ÷ the rate earlier scans of this process read events at. With no rate yet, or few events,
 * it waits, so a first query on small data gets its histogram. One instance per service.
 */
export class HistogramScans {
  /** Events per ms: a moving average of finished scans, lowered to what a stopped one showed. */
  private eventsPerMs?: number;

  constructor(readonly graceMs: number) {}

  /** The scan for the stream (which sends it whenever ready), timed to learn the rate. */
  async run(ch: Analytics, q: CompiledQuery, start: Date, end: Date, opts: RunOptions): Promise<Histogram> {
    const events = eventsInRange(ch, q, opts).catch(() => 0);
    const started = performance.now();
    const h = await runHistogram(ch, q, start, end, opts);
    this.finished(await events, performance.now() - started);
    return h;
  }

  /** For /query: the histogram if its scan is expected to finish within the grace and does; else undefined, the scan stopped or never started. */
  async withinGrace(ch: Analytics, q: CompiledQuery, start: Date, end: Date, opts: RunOptions): Promise<Histogram | undefined> {
    const events = await eventsInRange(ch, q, opts).catch(() => undefined);
    if (events === undefined || !this.expectedWithinGrace(events)) return undefined;
    const late = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, late.signal]) : late.signal;
    const started = performance.now();
    const scan = runHistogram(ch, q, start, end, { ...opts, signal });
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'late'>((r) => (timer = setTimeout(r, this.graceMs, 'late')));
    const h = await Promise.race([scan.catch(() => undefined), grace]);
    clearTimeout(timer);
    const ms = performance.now() - started;
    if (h === 'late') {
      late.abort();
      // It read its events slower than `events` per `ms`: the rate is at most that.
      if (events >= FEW_EVENTS) this.eventsPerMs = Math.min(this.eventsPerMs ?? Infinity, events / Math.max(ms, this.graceMs));
      return undefined;
    }
    if (h) this.finished(events, ms);
    return h;
  }

  private expectedWithinGrace(events: number): boolean {
    return events < FEW_EVENTS || this.eventsPerMs === undefined || events / this.eventsPerMs < this.graceMs;
  }

  private finished(events: number, ms: number): void {
    if (events < FEW_EVENTS) return;
    const rate = events / Math.max(ms, 1);
    this.eventsPerMs = this.eventsPerMs === undefined ? rate : (1 - RATE_WEIGHT) * this.eventsPerMs + RATE_WEIGHT * rate;
  }
}

/**
 * Counts event rows per histogram bucket as they stream, so the rows can stand in for the
 * histogram's own scan (a second pass over the range) when they turn out to be every event the
 * filters keep: a filter-only query (Pipeline.rowsAreFilteredEvents) that returned all its rows.
 */
export class RowHistogram {
  private readonly bucket: number;
  private readonly counts = new Map<number, number>();
  private readonly usable: boolean;

  constructor(q: CompiledQuery, private readonly start: Date, private readonly end: Date) {
    this.bucket = histogramBucketSeconds(start, end);
    this.usable = q.eventRows && q.pipeline.rowsAreFilteredEvents();
  }

  add(rows: Row[]): void {
    if (!this.usable) return;
    for (const r of rows) {
      // `YYYY-MM-DD hh:mm:ss.mmm`, UTC; the engine's buckets are whole multiples of `bucket` seconds since the epoch.
      const b = Math.floor(Date.parse(`${String(r.timestamp).replace(' ', 'T')}Z`) / 1000 / this.bucket) * this.bucket;
      this.counts.set(b, (this.counts.get(b) ?? 0) + 1);
    }
  }

  /** The histogram, when the rows added are all there are (`complete`: fewer than the cap, or a first page that is the last). */
  result(complete: boolean): Histogram | undefined {
    return complete && this.usable ? histogramOf(this.start, this.end, this.bucket, this.counts) : undefined;
  }
}

function histogramOf(start: Date, end: Date, bucket: number, counts: Map<number, number>): Histogram {
  const from = Math.floor(start.getTime() / 1000 / bucket) * bucket;
  const to = Math.ceil(end.getTime() / 1000 / bucket) * bucket;
  const buckets: Histogram['buckets'] = [];
  for (let t = from; t < to; t += bucket) buckets.push({ time: new Date(t * 1000).toISOString(), count: counts.get(t) ?? 0 });
  return {
    buckets,
    time_start: new Date(from * 1000).toISOString(),
    time_end: new Date(to * 1000).toISOString(),
    bucket_seconds: bucket,
  };
}

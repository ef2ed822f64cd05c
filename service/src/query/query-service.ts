// The query domain's logic between the routes and the engine: time range, scope, @variables,
// compilation and the regex check; the errors a caller made, as query-language.md §5 reports them.
// Other domains reach the engine only through here: a request's query (prepareQuery / runQuery,
// with the caller's principal: a notebook's query section) or a scope's query without one
// (prepareScopeQuery / runScopeQuery: the alert engine's windows of ingest time, dashboard widgets).
import type { Principal, ScopeType } from '../auth/principal.ts';
import type { Context } from '../context.ts';
import { compileQuery, PAGE_SIZE, type CompiledQuery } from './compile.ts';
import { QueryCompileError } from './plan/errors.ts';
import { resolveReadScope, type ReadScope } from '../auth/read-scope.ts';
import { checkRegexes, QueryExecutionError, refusedRegexes, ResultBudget, runQueryRows, type Row } from './run.ts';
import { BATCH_MAX_QUERIES, combinable, runBatch } from './batch.ts';
import { Params } from './plan/params.ts';
import { QueryParseError, type Span } from './syntax/ast.ts';
import { checkQuerySize, substituteVariables } from './syntax/variables.ts';
import { parseQuery } from './syntax/parser.ts';
import { necessaryTexts } from './plan/necessary-text.ts';
import type { ArchiveScan } from '../archive/archive-search.ts';

export interface QueryRequest {
  query: string;
  fractal_id?: string;
  prism_id?: string;
  start?: string;
  end?: string;
  variables?: Array<{ name: string; value: string }>;
  cursor?: string;
  /** Read the archived partitions of the range too (search in place, docs/archive.md). */
  include_archive?: boolean;
}

/** A query the caller got wrong: answered 400 with the spec's error fields. */
export class QueryInputError extends Error {
  constructor(
    message: string,
    readonly errorType: 'parse' | 'translate' | 'request',
    readonly errorPos?: Span,
  ) {
    super(message);
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})$/;
/** The times the engine's DateTime64(9) holds; a range reaching past them is cut to them. */
const EARLIEST_MS = Date.UTC(1900, 0, 1);
const LATEST_MS = Date.UTC(2262, 3, 11);
const representable = (d: Date): Date => new Date(Math.min(LATEST_MS, Math.max(EARLIEST_MS, d.getTime())));

export function timeRange(req: { start?: string; end?: string }, now = new Date()): { start: Date; end: Date } {
  const parse = (s: string | undefined): Date | undefined | null => {
    if (s === undefined || s === '') return undefined;
    if (!RFC3339.test(s)) return null;
    const d = new Date(s);
    return Number.isNaN(d.getTime()) ? null : d;
  };
  const start = parse(req.start);
  const end = parse(req.end);
  if (start === null || end === null) throw new QueryInputError('Invalid time range. Use RFC3339 format.', 'request');
  const e = end ?? now;
  const s = start ?? new Date(e.getTime() - 24 * 3600 * 1000);
  if (s.getTime() > e.getTime()) throw new QueryInputError('Invalid time range. Use RFC3339 format.', 'request');
  return { start: representable(s), end: representable(e) };
}

export interface PreparedQuery {
  text: string;
  start: Date;
  end: Date;
  compiled: CompiledQuery;
  /** Search in place: what the query reads of the archive; absent when it reads the hot store only. */
  archive?: ArchiveScan;
  /** Sentences for the answer's `warnings` (an archived file left out, an archive it cannot read). */
  warnings: string[];
  /** The compiled SQL as an answer may show it: the archive backend's credentials hidden. */
  shownSql: string;
}

/** Substitutes variables and compiles, turning syntax and compile errors into QueryInputError. */
function compileText(
  ctx: Context,
  req: QueryRequest,
  scope: Pick<ReadScope, 'type' | 'id' | 'fractalIds'>,
  range: { start: Date; end: Date; timeColumn?: 'timestamp' | 'ingest_timestamp' },
  maxRows = ctx.settings.get().max_query_rows,
  params?: Params,
  source?: { table: string; archiveRows: boolean },
): { text: string; compiled: CompiledQuery } {
  const text = queryText(req);
  try {
    const compiled = compileQuery(text, {
      table: source?.table ?? ctx.ch.table('logs'),
      archiveRows: source?.archiveRows,
      fractalIds: scope.fractalIds,
      start: range.start,
      end: range.end,
      timeColumn: range.timeColumn,
      maxRows,
      params,
      cursor: req.cursor || undefined,
      commentedLogIds: (fractalIds, filter) => ctx.comments.commentedLogIds(fractalIds, filter),
      dictionary: (name) => {
        const d = ctx.dictionaries.resolve(scope, name);
        return d && { name: d.name, columns: d.columns, keyColumns: d.key_columns, sql: (bind, key, include) => ctx.dictionaries.lookupSql(bind, d, key, include) };
      },
    });
    return { text, compiled };
  } catch (err) {
    throw asInputError(err);
  }
}

/** The request's query with its variables substituted, within the size limit (§5). */
function queryText(req: Pick<QueryRequest, 'query' | 'variables'>): string {
  const original = req.query ?? '';
  const text = substituteVariables(original, req.variables ?? []);
  const sizeError = checkQuerySize(original, text);
  if (sizeError) throw new QueryInputError(sizeError, 'request');
  return text;
}

export function asInputError(err: unknown): unknown {
  if (err instanceof QueryParseError) {
    // Errors inside case/chain/join blocks are reported as translate errors (§6).
    return err.errorType === 'translate'
      ? new QueryInputError(`Query error: ${err.message}`, 'translate', err.span)
      : new QueryInputError(`Parse error: ${err.message}`, 'parse', err.span);
  }
  if (err instanceof QueryCompileError) return new QueryInputError(`Query error: ${err.message}`, 'translate', err.span);
  return err;
}

export async function prepareQuery(
  ctx: Context,
  principal: Principal | null,
  req: QueryRequest,
  /** `readArchive: false`: compile over the hot store only (/query/validate checks the text, it reads nothing). */
  opts: { readArchive?: boolean } = {},
): Promise<PreparedQuery> {
  const scope = resolveReadScope(ctx, principal, req);
  const range = timeRange(req);
  if (req.include_archive !== undefined && typeof req.include_archive !== 'boolean') {
    throw new QueryInputError('include_archive must be true or false.', 'request');
  }
  // Search in place: the archive is a second source beside the hot store, read by the same
  // compiled pipeline (archive/archive-search.ts decides which archived rows the range needs).
  const archive =
    opts.readArchive === false
      ? { source: null, scanned: { files: 0, bytes: 0, rows: 0 }, warnings: [], refusal: undefined, redact: (sql: string) => sql }
      : await ctx.archive.search.plan({
          fractalIds: scope.fractalIds,
          ...range,
          explicit: req.include_archive === true,
          texts: () => leadingTexts(queryText(req)),
        });
  if (archive.refusal) throw new QueryInputError(archive.refusal, 'request');
  const source = archive.source ? { table: archive.source, archiveRows: true } : undefined;
  const { text, compiled } = compileText(ctx, req, scope, range, undefined, undefined, source);
  try {
    await checkRegexes(ctx.ch, compiled.regexes);
  } catch (err) {
    throw asInputError(err);
  }
  return {
    text,
    ...range,
    compiled,
    archive: archive.source ? archive.scanned : undefined,
    warnings: archive.warnings,
    shownSql: archive.redact(compiled.sql),
  };
}

/** Runs of one query at most, each leaving out the archived file the one before failed on. */
export const ARCHIVE_FILE_ATTEMPTS = 3;

/**
 * Prepares the caller's query and runs it with `run`; a run that fails on an archived file (now
 * left out, see leftOutFailedArchiveFile) is prepared and run again, ARCHIVE_FILE_ATTEMPTS in all.
 */
export async function prepareAndRun<T>(ctx: Context, principal: Principal | null, req: QueryRequest, run: (p: PreparedQuery) => Promise<T>): Promise<{ prepared: PreparedQuery; result: T }> {
  for (let attempt = 1; ; attempt++) {
    const prepared = await prepareQuery(ctx, principal, req);
    try {
      return { prepared, result: await run(prepared) };
    } catch (err) {
      if (attempt < ARCHIVE_FILE_ATTEMPTS && leftOutFailedArchiveFile(ctx, prepared, err)) continue;
      throw err;
    }
  }
}

/**
 * Whether `p`, which read the archive, failed on an archived file that is now left out (archive-
 * search.ts leaveOutFailedFile): the caller runs it again, and prepareQuery names the file in the
 * new answer's warnings, so the rest is answered instead of a 500.
 */
export function leftOutFailedArchiveFile(ctx: Context, p: PreparedQuery, err: unknown): boolean {
  return p.archive !== undefined && err instanceof QueryExecutionError && ctx.archive.search.leaveOutFailedFile(err.detail);
}

/** Texts the query's events must contain (necessary-text.ts); none when it does not parse (compiling reports that). */
function leadingTexts(text: string) {
  try {
    return necessaryTexts(parseQuery(text));
  } catch {
    return [];
  }
}

export interface QueryRun {
  prepared: PreparedQuery;
  rows: Row[];
  /** The rows stopped at the row cap: more matched. */
  limitHit: boolean;
  /** The rows stopped at the result budget (run.ts ResultBudget): more matched, and they were big. */
  truncated: boolean;
  executionMs: number;
}

/**
 * A caller's query run to its rows, with every check of POST /api/v1/query (scope, role, the API
 * key's `query` permission, variables, regexes): QueryInputError, QueryTimeoutError or
 * QueryExecutionError otherwise.
 */
export async function runQuery(ctx: Context, principal: Principal | null, req: QueryRequest, opts: { signal?: AbortSignal } = {}): Promise<QueryRun> {
  const started = performance.now();
  const { prepared, result } = await prepareAndRun(ctx, principal, req, async (p) => {
    const budget = new ResultBudget();
    return { budget, rows: await runQueryRows(ctx.ch, p.compiled, { timeoutS: ctx.settings.get().query_timeout_s, signal: opts.signal, budget }) };
  });
  const { budget } = result;
  let { rows } = result;
  const { compiled } = prepared;
  let limitHit = compiled.rowCap !== undefined && rows.length >= compiled.rowCap;
  // With the row cap off an event search reads one page (and one row more to know of the next).
  if (compiled.paged && rows.length > PAGE_SIZE) [rows, limitHit] = [rows.slice(0, PAGE_SIZE), true];
  return { prepared, rows, limitHit, truncated: budget.exceeded, executionMs: Math.round(performance.now() - started) };
}

/** Rows a scope query returns at most when `max_query_rows` is 0 (no cap): it has no pages to turn. */
export const SCOPE_QUERY_MAX_ROWS = 10_000;

/**
 * A query over one fractal's or prism's logs with no caller: the alert engine's evaluation of a
 * window of ingest time, `[start, end)` of `ingest_timestamp` (consecutive windows share no log), or
 * a dashboard's widget over the event time (its results are shared by every reader, public links too).
 * Whoever calls it has checked access already (the alert's scope was authorised when it was saved).
 */
export interface ScopeQueryRequest {
  query: string;
  scope: { type: ScopeType; id: string };
  start: Date;
  end: Date;
  /** `ingest_timestamp` (default: windows of arrival) or `timestamp` (the event's own time). */
  timeColumn?: 'timestamp' | 'ingest_timestamp';
  /** @variables substituted before compiling (a dashboard's). */
  variables?: QueryRequest['variables'];
  /** Check the regexes in the engine first (a bad one is a QueryInputError): the text changed since it was saved. */
  checkRegexes?: boolean;
  /** The statement's time-out; the `query_timeout_s` setting when absent. */
  timeoutS?: number;
  signal?: AbortSignal;
  /** No analyst waits on it (the alert engine, dashboard widgets): ingest does not give way to it. */
  background?: boolean;
  /** Not even a page waits on it (a shared link's refresh): the engine's threads for it run at a lower OS priority than the service's requests. */
  lowPriority?: boolean;
}

export interface ScopeQueryResult {
  rows: Row[];
  compiled: CompiledQuery;
  /** The rows stopped at the row cap: more matched. */
  limitHit: boolean;
  /** The rows stopped at the result budget (run.ts ResultBudget). */
  truncated: boolean;
}

/** The fractals a scope reads; a scope that no longer exists (or a prism with no member) is a QueryInputError. */
function scopeFractals(ctx: Context, scope: { type: ScopeType; id: string }): string[] {
  const name = ctx.roles.scopeName(scope.type, scope.id);
  if (name === undefined) throw new QueryInputError(`The ${scope.type} ${scope.id} no longer exists.`, 'request');
  const ids = scope.type === 'fractal' ? [scope.id] : ctx.prisms.memberIds(scope.id);
  if (ids.length === 0) throw new QueryInputError(`The prism "${name}" has no member fractals.`, 'request');
  return ids;
}

function compileScopeQuery(ctx: Context, req: ScopeQueryRequest, params?: Params): PreparedQuery {
  const fractalIds = scopeFractals(ctx, req.scope);
  const range = { start: req.start, end: req.end, timeColumn: req.timeColumn ?? 'ingest_timestamp' } as const;
  const maxRows = ctx.settings.get().max_query_rows || SCOPE_QUERY_MAX_ROWS;
  const { text, compiled } = compileText(ctx, { query: req.query, variables: req.variables }, { ...req.scope, fractalIds }, range, maxRows, params);
  return { text, start: req.start, end: req.end, compiled, warnings: [], shownSql: compiled.sql };
}

/** Compiles a scope query and checks its regexes in the engine: what saving an alert validates. */
export async function prepareScopeQuery(ctx: Context, req: ScopeQueryRequest): Promise<PreparedQuery> {
  const prepared = compileScopeQuery(ctx, req);
  try {
    await checkRegexes(ctx.ch, prepared.compiled.regexes);
  } catch (err) {
    throw asInputError(err);
  }
  return prepared;
}

/**
 * prepareScopeQuery for many queries of one scope at once (a feed sync saves thousands of alerts):
 * each compiles on its own, and their regexes are checked in the engine together. Each result is
 * the prepared query or the QueryInputError it would have thrown.
 */
export async function prepareScopeQueries(ctx: Context, reqs: ScopeQueryRequest[]): Promise<Array<PreparedQuery | QueryInputError>> {
  const out: Array<PreparedQuery | QueryInputError> = reqs.map((req) => {
    try {
      return compileScopeQuery(ctx, req);
    } catch (err) {
      const e = asInputError(err);
      if (e instanceof QueryInputError) return e;
      throw e;
    }
  });
  const refused = await refusedRegexes(ctx.ch, out.flatMap((p) => (p instanceof QueryInputError ? [] : p.compiled.regexes)));
  return out.map((p) => {
    if (p instanceof QueryInputError) return p;
    const bad = p.compiled.regexes.find((r) => refused.has(r));
    return bad === undefined ? p : (asInputError(new QueryCompileError(refused.get(bad)!)) as QueryInputError);
  });
}

/**
 * Runs a scope query to its rows (QueryTimeoutError / QueryExecutionError from the engine). The
 * regexes are not checked first unless asked: a query that was prepared when saved fails here only
 * if the engine refuses it, and then as an execution error.
 */
export async function runScopeQuery(ctx: Context, req: ScopeQueryRequest): Promise<ScopeQueryResult> {
  const { compiled } = req.checkRegexes ? await prepareScopeQuery(ctx, req) : compileScopeQuery(ctx, req);
  const budget = new ResultBudget();
  const rows = await runQueryRows(ctx.ch, compiled, { timeoutS: req.timeoutS ?? ctx.settings.get().query_timeout_s, signal: req.signal, budget, background: req.background, lowPriority: req.lowPriority });
  return { rows, compiled, limitHit: compiled.rowCap !== undefined && rows.length >= compiled.rowCap, truncated: budget.exceeded };
}

/**
 * Several queries over the same scope and window (an alert engine tick), each answered as
 * runScopeQuery would: the filter-only event queries in one scan of the window (batch.ts), the
 * others one by one. A query's failure is its own: the batch falls back to single runs when its
 * scan fails, so one slow or broken query cannot fail the rest.
 */
export async function runScopeQueries(
  ctx: Context,
  req: Omit<ScopeQueryRequest, 'query'> & { queries: string[] },
): Promise<Array<{ ok: true; result: ScopeQueryResult } | { ok: false; error: unknown }>> {
  const out: Array<{ ok: true; result: ScopeQueryResult } | { ok: false; error: unknown }> = new Array(req.queries.length);
  const params = new Params();
  const batch: Array<{ i: number; compiled: CompiledQuery }> = [];
  const single: number[] = [];
  for (const [i, query] of req.queries.entries()) {
    // Thousands of alerts (a synced Sigma feed) compile here: let requests in between.
    if (i % 25 === 24) await new Promise((r) => setImmediate(r));
    try {
      const { compiled } = compileScopeQuery(ctx, { ...req, query }, params);
      if (combinable(compiled)) batch.push({ i, compiled });
      else single.push(i);
    } catch (error) {
      out[i] = { ok: false, error };
    }
  }
  const timeoutS = req.timeoutS ?? ctx.settings.get().query_timeout_s;
  // A batch whose rows pass BATCH_ROW_LIMIT, or whose scan fails, is split in halves until the parts
  // fit (a lone query runs as runScopeQuery would).
  const runPart = async (part: typeof batch): Promise<void> => {
    if (part.length === 1) {
      single.push(part[0]!.i);
      return;
    }
    let results: Awaited<ReturnType<typeof runBatch>> = null;
    try {
      results = await runBatch(ctx.ch, part.map((b) => b.compiled), { timeoutS, signal: req.signal, background: req.background });
    } catch (err) {
      if (req.signal?.aborted) throw err;
    }
    if (results) {
      part.forEach((b, k) => (out[b.i] = { ok: true, result: { rows: results![k]!.rows, compiled: b.compiled, limitHit: results![k]!.limitHit, truncated: false } }));
      return;
    }
    const half = Math.ceil(part.length / 2);
    await runPart(part.slice(0, half));
    await runPart(part.slice(half));
  };
  for (let k = 0; k < batch.length; k += BATCH_MAX_QUERIES) await runPart(batch.slice(k, k + BATCH_MAX_QUERIES));
  for (const i of single.sort((a, b) => a - b)) {
    try {
      out[i] = { ok: true, result: await runScopeQuery(ctx, { ...req, query: req.queries[i]! }) };
    } catch (error) {
      out[i] = { ok: false, error };
    }
  }
  return out;
}

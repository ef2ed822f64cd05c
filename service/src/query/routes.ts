// POST /api/v1/query, /query/stream (server-sent events), /query/validate and
// GET /api/v1/query/reference. The query endpoints answer the flat shape of query-language.md §5,
// not the usual envelope.
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { openEventStream } from '../http/sse.ts';
import { fieldCatalog, fieldStats } from './field-stats.ts';
import { commandReference } from './reference.ts';
import { ARCHIVE_FILE_ATTEMPTS, asInputError, leftOutFailedArchiveFile, prepareAndRun, prepareQuery, QueryInputError, timeRange, type PreparedQuery, type QueryRequest } from './query-service.ts';
import { resolveReadScope } from '../auth/read-scope.ts';
import { PAGE_SIZE } from './compile.ts';
import {
  CURSOR,
  HistogramScans,
  QueryExecutionError,
  QueryLimitError,
  QueryTimeoutError,
  ResultBudget,
  RowHistogram,
  streamQueryRows,
  type Histogram,
  type Row,
} from './run.ts';

const QueryBody = Type.Object({
  query: Type.String({ maxLength: 1_000_000 }),
  fractal_id: Type.Optional(Type.String()),
  prism_id: Type.Optional(Type.String()),
  start: Type.Optional(Type.String()),
  end: Type.Optional(Type.String()),
  variables: Type.Optional(Type.Array(Type.Object({ name: Type.String(), value: Type.String() }), { maxItems: 200 })),
  cursor: Type.Optional(Type.String()),
  include_archive: Type.Optional(Type.Boolean()),
});

const TRUNCATE_BYTES = 52_428_800;
const STREAM_FRAME_ROWS = 500;
const HISTOGRAM_GRACE_MS = 100;
const TRUNCATE_ROWS = 1000;
/** §5's warning; fewer than 1,000 rows when the result budget (run.ts ResultBudget) stopped them first. */
const truncatedWarning = (rows: number) =>
  `Warning: Result set was very large and has been truncated to ${rows} rows. Consider adding more specific filters or using head() to limit results.`;

/** The error fields of a query the caller got wrong (§5 Errors): of a failure, and of /query/validate. */
function inputErrorFields(e: QueryInputError): Record<string, unknown> {
  const fields: Record<string, unknown> = { error: e.message };
  if (e.errorType !== 'request') fields.error_type = e.errorType;
  if (e.errorPos) fields.error_pos = e.errorPos;
  return fields;
}

/** The error fields of a failed query, and its status (§5 Errors). */
function failure(err: unknown, ctx: Context, endpoint: string): { status: number; body: Record<string, unknown> } {
  const e = asInputError(err);
  if (e instanceof QueryInputError) {
    ctx.metrics.queries.inc({ endpoint, outcome: e.errorType === 'request' ? 'request' : e.errorType });
    return { status: 400, body: { success: false, ...inputErrorFields(e) } };
  }
  if (e instanceof QueryTimeoutError) {
    ctx.metrics.queries.inc({ endpoint, outcome: 'timeout' });
    return { status: 408, body: { success: false, error: e.message, error_type: 'timeout' } };
  }
  if (e instanceof QueryLimitError) {
    ctx.metrics.queries.inc({ endpoint, outcome: 'limit' });
    return { status: 400, body: { success: false, error: e.message, error_type: 'limit' } };
  }
  if (e instanceof QueryExecutionError) {
    ctx.metrics.queries.inc({ endpoint, outcome: 'execution' });
    ctx.log.error({ detail: ctx.archive.redact(e.detail) }, 'query execution failed');
    // An archived file damaged after it was checked fails the statement: check the files again next time.
    ctx.archive.search.forgetChecks();
    return { status: 500, body: { success: false, error: e.message, error_type: 'execution' } };
  }
  throw err;
}

/**
 * Search in place (docs/archive.md): `archive` — the archived files, bytes and rows the query read
 * — when it read any; `warnings` when there are (a damaged archived file left out).
 */
function archiveFields(p: PreparedQuery): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (p.archive) out.archive = { files_scanned: p.archive.files, bytes_scanned: p.archive.bytes, rows_scanned: p.archive.rows };
  if (p.warnings.length) out.warnings = p.warnings;
  return out;
}

/** A page of a paged event search: PAGE_SIZE rows, and where the next one starts. */
function pageOf(p: PreparedQuery, rows: Row[]): { rows: Row[]; hasMore: boolean; nextCursor: string } {
  if (!p.compiled.paged || rows.length <= PAGE_SIZE) return { rows, hasMore: false, nextCursor: '' };
  const kept = rows.slice(0, PAGE_SIZE);
  return { rows: kept, hasMore: true, nextCursor: String((kept[kept.length - 1] as Record<symbol, unknown>)[CURSOR]) };
}

/** §5: an event search that is not a chart and not a later page comes with a histogram. */
const wantsHistogram = (p: PreparedQuery, req: QueryRequest): boolean => p.compiled.eventRows && p.compiled.chartType === '' && !req.cursor;

const histogramFields = (h: Histogram) => ({ histogram: h.buckets, time_start: h.time_start, time_end: h.time_end, bucket_seconds: h.bucket_seconds });

/** How long the stream waits for a histogram that is not ready yet before `done`. */
const histogramGrace = () => new Promise<undefined>((r) => setTimeout(r, HISTOGRAM_GRACE_MS));

/** The query returned every row it has: fewer than its cap, or one page with no next. */
const complete = (p: PreparedQuery, count: number, hasMore: boolean): boolean =>
  p.compiled.paged ? !hasMore : p.compiled.rowCap !== undefined && count < p.compiled.rowCap;

function recordSuccess(ctx: Context, endpoint: 'query' | 'stream', started: number, rows: number): void {
  ctx.metrics.queries.inc({ endpoint, outcome: 'ok' });
  ctx.metrics.queryDuration.observe({ endpoint }, (performance.now() - started) / 1000);
  ctx.metrics.queryRows.inc({ endpoint }, rows);
}

/** The summary fields shared by /query and the stream's frames. */
function limitHit(p: PreparedQuery, count: number): string {
  const cap = p.compiled.rowCap;
  if (cap === undefined || count < cap) return '';
  return p.compiled.regexes.length && p.compiled.pipeline.events.edge === undefined && /raw_log/.test(p.text) ? 'bloom' : 'search';
}

export async function queryRoutes(app: App, ctx: Context) {
  const timeoutS = () => ctx.settings.get().query_timeout_s;
  const histogramScans = new HistogramScans(HISTOGRAM_GRACE_MS);

  /**
   * The rows of /query, streamed in and stopped (in the engine too) as soon as the response is
   * known to be truncated (§5: more than 1,000 rows whose estimate, the mean of the first 10 rows ×
   * the count, passes 50 MiB) or the rows pass the result budget (run.ts ResultBudget, which the
   * estimate of a few small first rows cannot fool): they are never all held first.
   */
  const collectRows = async (p: PreparedQuery, opts: { timeoutS: number; signal: AbortSignal }): Promise<{ rows: Row[]; truncated: boolean }> => {
    const budget = new ResultBudget();
    const rows: Row[] = [];
    let mean: number | undefined;
    for await (const chunk of streamQueryRows(ctx.ch, p.compiled, { ...opts, budget })) {
      for (const r of chunk) rows.push(r);
      if (rows.length <= TRUNCATE_ROWS) continue;
      mean ??= rows.slice(0, 10).reduce((n, r) => n + JSON.stringify(r).length, 0) / 10;
      if (mean * rows.length > TRUNCATE_BYTES) return { rows, truncated: true };
    }
    return { rows, truncated: budget.exceeded };
  };

  app.post('/api/v1/query', { config: { access: { authenticated: true } }, schema: { body: QueryBody } }, async (req, reply) => {
    const started = performance.now();
    const controller = new AbortController();
    // The response closing before it was written means the client went away: stop the query.
    reply.raw.on('close', () => {
      if (!reply.raw.writableEnded) controller.abort();
    });
    try {
      const { prepared: p, result } = await prepareAndRun(ctx, req.principal, req.body as QueryRequest, (q) =>
        collectRows(q, { timeoutS: timeoutS(), signal: controller.signal }),
      );
      const { rows, truncated } = result;
      const page = pageOf(p, rows);
      const body: Record<string, unknown> = {
        success: true,
        results: page.rows,
        count: page.rows.length,
        query: req.body.query,
        sql: p.shownSql,
        execution_ms: 0,
        field_order: p.compiled.fieldOrder,
        is_aggregated: p.compiled.isAggregated,
        chart_type: p.compiled.chartType,
        chart_config: p.compiled.chartConfig,
      };
      if (p.compiled.paged) Object.assign(body, { has_more: page.hasMore, next_cursor: page.nextCursor });
      Object.assign(body, archiveFields(p));
      const hit = limitHit(p, rows.length);
      if (hit) body.limit_hit = hit;
      if (truncated) {
        body.results = rows.slice(0, TRUNCATE_ROWS);
        body.count = (body.results as Row[]).length;
        body.limit_hit = 'truncated';
        body.error = truncatedWarning((body.results as Row[]).length);
        delete body.chart_type;
        delete body.chart_config;
      }
      if (wantsHistogram(p, req.body)) {
        // The histogram comes after the rows, never sharing the CPU with them. Rows that are all
        // the events make it without a scan; otherwise its scan gets a grace when expected to
        // finish within it (HistogramScans), else §5 lets it be omitted. The stream, which the UI
        // uses, sends it when ready.
        const fromRows = new RowHistogram(p.compiled, p.start, p.end);
        fromRows.add(rows);
        const h =
          fromRows.result(!truncated && complete(p, rows.length, page.hasMore)) ??
          (await histogramScans.withinGrace(ctx.ch, p.compiled, p.start, p.end, { timeoutS: timeoutS(), signal: controller.signal }));
        if (h) Object.assign(body, histogramFields(h));
      }
      body.execution_ms = Math.round(performance.now() - started);
      recordSuccess(ctx, 'query', started, Number(body.count));
      return body;
    } catch (err) {
      controller.abort();
      const f = failure(err, ctx, 'query');
      return reply.code(f.status).send(f.body);
    }
  });

  app.post('/api/v1/query/stream', { config: { access: { authenticated: true } }, schema: { body: QueryBody } }, async (req, reply) => {
    const started = performance.now();
    let p: PreparedQuery;
    try {
      p = await prepareQuery(ctx, req.principal, req.body as QueryRequest);
    } catch (err) {
      const f = failure(err, ctx, 'stream');
      return reply.code(f.status).send(f.body);
    }
    const controller = new AbortController();
    const res = openEventStream(reply);
    // The client went away: stop the engine's query, not only our writes.
    res.on('close', () => controller.abort());
    const send = (event: string, data: unknown): boolean =>
      !res.writableEnded && !res.destroyed && res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    // A slow reader holds the rows in the engine, not in this process: wait for the socket to drain.
    const drained = () => new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
    let budget = new ResultBudget();
    let c = p.compiled;
    send('meta', { field_order: c.fieldOrder, is_aggregated: c.isAggregated, chart_type: c.chartType, chart_config: c.chartConfig, ...archiveFields(p) });
    let fromRows = new RowHistogram(c, p.start, p.end);
    let count = 0;
    let hasMore = false;
    let nextCursor = '';
    let last: Row | undefined;
    /** The rows, run again (with a new `meta`, before any row went out) when an archived file failed inside. */
    async function* rowChunks(): AsyncGenerator<Row[]> {
      for (let attempt = 1; ; attempt++) {
        try {
          yield* streamQueryRows(ctx.ch, c, { timeoutS: timeoutS(), signal: controller.signal, budget });
          return;
        } catch (err) {
          if (count > 0 || attempt >= ARCHIVE_FILE_ATTEMPTS || !leftOutFailedArchiveFile(ctx, p, err)) throw err;
          p = await prepareQuery(ctx, req.principal, req.body as QueryRequest);
          c = p.compiled;
          budget = new ResultBudget();
          fromRows = new RowHistogram(c, p.start, p.end);
          send('meta', { field_order: c.fieldOrder, is_aggregated: c.isAggregated, chart_type: c.chartType, chart_config: c.chartConfig, ...archiveFields(p) });
        }
      }
    }
    try {
      for await (const chunk of rowChunks()) {
        if (controller.signal.aborted) break;
        let rows = chunk;
        if (c.paged && count + rows.length > PAGE_SIZE) {
          rows = rows.slice(0, PAGE_SIZE - count);
          hasMore = true;
        }
        count += rows.length;
        fromRows.add(rows);
        if (rows.length) {
          last = rows[rows.length - 1];
          // Frames of at most 500 rows: the browser parses and paints the first ones sooner.
          for (let i = 0; i < rows.length; i += STREAM_FRAME_ROWS) {
            if (!send('rows', { rows: rows.slice(i, i + STREAM_FRAME_ROWS) }) && !res.destroyed) await drained();
          }
        }
        if (hasMore) break;
      }
      if (hasMore && last) nextCursor = String((last as Record<symbol, unknown>)[CURSOR]);
      if (controller.signal.aborted) {
        ctx.metrics.queries.inc({ endpoint: 'stream', outcome: 'cancelled' });
        return;
      }
      // The histogram after the rows (see /query): from the rows when they are all the events,
      // else from its own scan, given a moment before `done` says whether it is still coming.
      let histogramPending = false;
      let histogram: Promise<void> = Promise.resolve();
      if (wantsHistogram(p, req.body)) {
        const h = fromRows.result(!budget.exceeded && complete(p, count, hasMore));
        if (h) send('histogram', histogramFields(h));
        else {
          histogramPending = true;
          histogram = histogramScans.run(ctx.ch, c, p.start, p.end, { timeoutS: timeoutS(), signal: controller.signal }).then(
            (scanned) => {
              histogramPending = false;
              send('histogram', histogramFields(scanned));
            },
            () => {
              histogramPending = false;
            },
          );
          await Promise.race([histogram, histogramGrace()]);
        }
      }
      const hit = budget.exceeded ? 'truncated' : limitHit(p, count);
      send('done', {
        count,
        has_more: hasMore,
        next_cursor: nextCursor,
        execution_ms: Math.round(performance.now() - started),
        limit_hit: hit,
        histogram_pending: histogramPending,
      });
      recordSuccess(ctx, 'stream', started, count);
      if (histogramPending) await histogram;
    } catch (err) {
      const f = failure(err, ctx, 'stream');
      send('error', f.body);
    } finally {
      res.end();
    }
  });

  app.post('/api/v1/query/validate', { config: { access: { authenticated: true } }, schema: { body: QueryBody } }, async (req) => {
    const body = req.body as QueryRequest;
    try {
      // An empty query is valid once its scope is.
      if ((body.query ?? '').trim() === '') resolveReadScope(ctx, req.principal, body);
      else await prepareQuery(ctx, req.principal, body, { readArchive: false });
      return { success: true, valid: true };
    } catch (err) {
      const e = asInputError(err);
      if (e instanceof QueryInputError) return { success: true, valid: false, ...inputErrorFields(e) };
      throw e;
    }
  });

  app.post(
    '/api/v1/query/fieldstats',
    {
      config: { access: { authenticated: true } },
      schema: { body: Type.Intersect([QueryBody, Type.Object({ field: Type.String({ minLength: 1, maxLength: 500 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) })]) },
    },
    async (req, reply) => {
      try {
        const body = req.body as QueryRequest & { field: string; limit?: number };
        const p = await prepareQuery(ctx, req.principal, body);
        const stats = await fieldStats(ctx.ch, p.compiled, body.field, body.limit ?? 10, timeoutS());
        return { success: true, data: stats };
      } catch (err) {
        const f = failure(err, ctx, 'fieldstats');
        return reply.code(f.status).send(f.body);
      }
    },
  );

  app.get(
    '/api/v1/query/fields',
    {
      config: { access: { authenticated: true } },
      schema: {
        querystring: Type.Object({
          fractal_id: Type.Optional(Type.String()),
          prism_id: Type.Optional(Type.String()),
          start: Type.Optional(Type.String()),
          end: Type.Optional(Type.String()),
        }),
      },
    },
    async (req, reply) => {
      try {
        const q = req.query as { fractal_id?: string; prism_id?: string; start?: string; end?: string };
        const scope = resolveReadScope(ctx, req.principal, q);
        const range = timeRange(q);
        const catalog = await fieldCatalog(ctx.ch, scope.fractalIds, range.start, range.end, timeoutS());
        return { success: true, data: { ...catalog, reserved: ['timestamp', 'log_id', 'fractal_id', 'norm_log', 'normalizer'] } };
      } catch (err) {
        const f = failure(err, ctx, 'fields');
        return reply.code(f.status).send(f.body);
      }
    },
  );

  app.get('/api/v1/query/reference', { config: { access: { authenticated: true } } }, async () => ({
    success: true,
    data: commandReference(),
  }));
}

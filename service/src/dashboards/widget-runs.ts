// Running widgets: each widget's query through query-service (a scope query over the event time:
// the dashboard's fractal or prism, its @variables, the widget's range or the dashboard's), a few
// at a time for the whole appliance, and its last run kept on the widget so that readers, live
// viewers and public links share it.
//
// - Bounded: at most `concurrency` widget queries run at once, whoever asked (execute all, execute
//   one, auto-refreshing pages, public links); the rest wait their turn. A widget that fails
//   reports its error in its own result; the others still run.
// - Shared: a widget run with the stored settings is one promise per widget and settings (its
//   results key), so callers asking at the same moment wait for the same run; and a caller may
//   accept stored results up to `maxAgeS` old (the page's auto-refresh and public links do), so
//   however many ask, a widget costs one query per interval.
// - Stored: a run with the stored settings (not one with another range or other variables, which
//   is only answered) replaces the widget's results, failures included, and is told to live readers.
import type { Context } from '../context.ts';
import { asInputError, QueryInputError, runScopeQuery } from '../query/query-service.ts';
import { QueryExecutionError, QueryLimitError, QueryTimeoutError, type Row } from '../query/run.ts';
import type { Span } from '../query/syntax/ast.ts';
import { scopeOf, type Variable } from '../shared/documents.ts';
import { publish, resultsKey, effectiveRange, widgetWindow } from './dashboards-logic.ts';
import type { Dashboard, Widget } from './dashboards-store.ts';
import { displayChart } from './display.ts';

/** Rows a widget's result keeps at most. */
export const MAX_RESULT_ROWS = 10_000;
/** A stored result bigger than this is announced in its live event, not carried (readers reload it). */
const MAX_EVENT_RESULT = 1024 * 1024;

/** One run of a widget's query, as stored with the widget (JSON) and answered. */
export interface WidgetRun {
  success: boolean;
  results: Row[];
  count: number;
  field_order: string[];
  is_aggregated: boolean;
  /** What the query itself asks to draw (§4); the widget's chart_type may say otherwise. */
  query_chart_type: string;
  query_chart_config: Record<string, unknown>;
  /** `search` when the rows stopped at the row cap, else empty. */
  limit_hit: string;
  /** The range it ran over. */
  start: string;
  end: string;
  executed_at: string;
  execution_ms: number;
  error?: string;
  error_type?: string;
  error_pos?: Span;
}

export interface RunOptions {
  /** Another range for every widget: answered only, not stored. */
  start?: string;
  end?: string;
  /** Other variable values: answered only (unless they are the stored ones). */
  variables?: Variable[];
  /** Stored results with the same settings up to this old are answered instead of running (0: always run). */
  maxAgeS?: number;
  /** Stops a run that is only answered (not a shared one) when the caller goes away. */
  signal?: AbortSignal;
  /** The tab that asked (X-Live-Client), echoed in the live event of stored results. */
  origin?: string;
  /** Nobody waits on these runs (a shared link's refresh): the engine runs them below the service's requests. */
  lowPriority?: boolean;
}

export interface WidgetOutcome {
  widget: Widget;
  run: WidgetRun;
  /** Answered from the stored results, not run now. */
  cached: boolean;
  /** Stored with the widget (a run with its own settings). */
  stored: boolean;
}

/** A shared link's answer as built (shared-links.ts), kept while its dashboard's revision holds. */
export interface PublicView {
  revision: number;
  /** When its oldest widget result was made. */
  oldest: number;
  /** The answer's JSON, encoded once: every reader is sent these bytes. */
  body: Buffer;
  /** Its entity tag (a hash of the bytes): a reader holding it is answered 304 without them. */
  etag: string;
  /** How long building it took: the next build starts about that much before the answer is too old. */
  buildMs: number;
}

/** The appliance's one runner of widget queries (context.ts `dashboardRuns`), and the public answers built from them. */
export class DashboardRuns {
  /** Built public answers by dashboard, and the builds under way (a burst of readers waits for one). */
  readonly publicViews = { built: new Map<string, PublicView>(), building: new Map<string, Promise<PublicView>>() };
  private active = 0;
  private readonly queue: Array<() => void> = [];
  private readonly shared = new Map<string, Promise<WidgetRun>>();
  /** Widget queries sent to the engine since start (tests count them; so does the benchmark). */
  queriesRun = 0;
  /** The most widget queries that ran at once. */
  peakActive = 0;

  constructor(readonly concurrency = 4) {}

  /** Runs `fn` once a slot is free. */
  async slot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.active++;
    this.peakActive = Math.max(this.peakActive, this.active);
    try {
      return await fn();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }

  /** One promise per key while it runs: callers asking at the same moment share the run. */
  once(key: string, fn: () => Promise<WidgetRun>): Promise<WidgetRun> {
    let p = this.shared.get(key);
    if (!p) {
      p = fn().finally(() => this.shared.delete(key));
      this.shared.set(key, p);
    }
    return p;
  }
}

/** Runs one widget's query now (waiting for a slot); a query that fails is a result with its error. */
async function runWidget(
  ctx: Context,
  d: Dashboard,
  w: Widget,
  window: { start: string; end: string },
  variables: Variable[],
  opts: { signal?: AbortSignal; lowPriority?: boolean } = {},
): Promise<WidgetRun> {
  const { signal, lowPriority } = opts;
  return ctx.dashboardRuns.slot(async () => {
    const started = performance.now();
    const base = { start: window.start, end: window.end, executed_at: new Date().toISOString() };
    const failed = (error: string, error_type: string, error_pos?: Span): WidgetRun => ({
      success: false,
      results: [],
      count: 0,
      field_order: [],
      is_aggregated: false,
      query_chart_type: '',
      query_chart_config: {},
      limit_hit: '',
      ...base,
      execution_ms: Math.round(performance.now() - started),
      error,
      error_type,
      ...(error_pos ? { error_pos } : {}),
    });
    ctx.dashboardRuns.queriesRun++;
    try {
      const r = await runScopeQuery(ctx, {
        query: w.query_content,
        scope: scopeOf(d),
        start: new Date(window.start),
        end: new Date(window.end),
        timeColumn: 'timestamp',
        variables,
        checkRegexes: true,
        signal,
        background: true,
        lowPriority,
      });
      const c = r.compiled;
      ctx.metrics.queries.inc({ endpoint: 'dashboard', outcome: 'ok' });
      ctx.metrics.queryRows.inc({ endpoint: 'dashboard' }, r.rows.length);
      return {
        success: true,
        results: r.rows.slice(0, MAX_RESULT_ROWS),
        count: Math.min(r.rows.length, MAX_RESULT_ROWS),
        field_order: c.fieldOrder,
        is_aggregated: c.isAggregated,
        query_chart_type: c.chartType,
        query_chart_config: c.chartConfig,
        limit_hit: r.limitHit || r.rows.length > MAX_RESULT_ROWS ? 'search' : '',
        ...base,
        execution_ms: Math.round(performance.now() - started),
      };
    } catch (err) {
      if (signal?.aborted) throw err;
      const e = asInputError(err);
      if (e instanceof QueryInputError) {
        ctx.metrics.queries.inc({ endpoint: 'dashboard', outcome: e.errorType });
        return failed(e.message, e.errorType, e.errorPos);
      }
      if (e instanceof QueryTimeoutError) {
        ctx.metrics.queries.inc({ endpoint: 'dashboard', outcome: 'timeout' });
        return failed(e.message, 'timeout');
      }
      if (e instanceof QueryExecutionError) {
        ctx.metrics.queries.inc({ endpoint: 'dashboard', outcome: 'execution' });
        ctx.log.error({ detail: e.detail, dashboard: d.id, widget: w.id }, 'dashboard widget query failed');
        return failed(e.message, 'execution');
      }
      // A per-query limit (memory, result size) is this widget's failure, not the dashboard's.
      if (e instanceof QueryLimitError) {
        ctx.metrics.queries.inc({ endpoint: 'dashboard', outcome: 'limit' });
        return failed(e.message, 'limit');
      }
      throw err;
    } finally {
      ctx.metrics.queryDuration.observe({ endpoint: 'dashboard' }, (performance.now() - started) / 1000);
    }
  });
}

const sameVariables = (a: readonly Variable[], b: readonly Variable[]) =>
  a.length === b.length && a.every((v) => b.some((x) => x.name === v.name && x.value === v.value));

/**
 * Runs (or answers from their stored results) the given widgets of `d` with bounded concurrency.
 * `widgets` should be read with their results (`withResults`) for `maxAgeS` to find them.
 */
export async function runWidgets(ctx: Context, d: Dashboard, widgets: Widget[], opts: RunOptions = {}): Promise<WidgetOutcome[]> {
  const variables = opts.variables ?? d.variables;
  const answerOnly = opts.start !== undefined || opts.end !== undefined || !sameVariables(variables, d.variables);
  const now = Date.now();
  return Promise.all(
    widgets.map(async (w): Promise<WidgetOutcome> => {
      const window = widgetWindow(d, w, { start: opts.start, end: opts.end }, new Date(now));
      if (answerOnly) return { widget: w, run: await runWidget(ctx, d, w, window, variables, { signal: opts.signal }), cached: false, stored: false };
      const key = resultsKey(w.query_content, effectiveRange(d, w), d.variables);
      const maxAgeMs = (opts.maxAgeS ?? 0) * 1000;
      if (maxAgeMs > 0 && w.results && w.results_key === key && w.executed_at && now - Date.parse(w.executed_at) < maxAgeMs) {
        return { widget: w, run: JSON.parse(w.results) as WidgetRun, cached: true, stored: true };
      }
      const run = await ctx.dashboardRuns.once(`${w.id}:${key}`, async () => {
        const r = await runWidget(ctx, d, w, window, d.variables, { lowPriority: opts.lowPriority });
        storeRun(ctx, d, w, r, key, opts.origin);
        return r;
      });
      return { widget: w, run, cached: false, stored: true };
    }),
  );
}

/** Keeps a run as the widget's results and tells the live readers (the widget may be gone by now). */
function storeRun(ctx: Context, d: Dashboard, w: Widget, run: WidgetRun, key: string, origin?: string): void {
  const text = JSON.stringify(run);
  if (!ctx.dashboards.storeResults(w.id, text, key, run.executed_at)) return;
  const current = ctx.dashboards.widget(w.id) ?? w;
  const dNow = ctx.dashboards.get(d.id) ?? d;
  const result = resultView(current, run, { cached: false, stale: resultsKey(current.query_content, effectiveRange(dNow, current), dNow.variables) !== key });
  publish(ctx, origin, d.id, 'widget_results', {
    widget_id: w.id,
    ...(text.length <= MAX_EVENT_RESULT ? { result } : { results_omitted: true, executed_at: run.executed_at }),
  });
}

/** A run as answered for a widget: with what to draw, and whether it is stored (`cached`) or of other settings (`stale`). */
export function resultView(w: Widget, run: WidgetRun, meta: { cached: boolean; stale: boolean }) {
  return { widget_id: w.id, ...run, ...displayChart(w, run), cached: meta.cached, stale: meta.stale };
}

/** The widget's stored results as the dashboard's readers see them (null: never run). */
export function storedResult(d: Dashboard, w: Widget) {
  if (!w.results) return null;
  return resultView(w, JSON.parse(w.results) as WidgetRun, { cached: true, stale: w.results_key !== resultsKey(w.query_content, effectiveRange(d, w), d.variables) });
}

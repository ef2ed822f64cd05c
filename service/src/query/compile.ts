// Query text → one ClickHouse statement plus everything the response reports about it
// (field_order, is_aggregated, chart_type …). Parse errors and compile errors are thrown as
// QueryParseError / QueryCompileError; nothing here touches the engine.
import { COMMANDS, findCommand } from './commands/registry.ts';
import { assignmentColumn } from './plan/expressions.ts';
import { QueryCompileError } from './plan/errors.ts';
import { Params } from './plan/params.ts';
import { Pipeline, type CommentedLogIds, type OutputColumn, type PipelineOptions } from './plan/pipeline.ts';
import type { Condition, Query, Stage as AstStage } from './syntax/ast.ts';
import { parseQuery } from './syntax/parser.ts';
import { chTime } from '../storage/clickhouse.ts';

export interface CompileOptions {
  table: string;
  fractalIds: string[];
  start: Date;
  end: Date;
  /** What start and end bound (see PipelineOptions.timeColumn); the event's `timestamp` when absent. */
  timeColumn?: PipelineOptions['timeColumn'];
  /** `max_query_rows`: 0 means no cap (aggregations then stop at 10,000, event searches page). */
  maxRows: number;
  /** Opaque cursor of the previous page (event searches when the row cap is off). */
  cursor?: string;
  /** Comment look-up for `comment()` (see PipelineOptions). */
  commentedLogIds?: CommentedLogIds;
  /** Dictionary look-up for `match()` (see PipelineOptions). */
  dictionary?: PipelineOptions['dictionary'];
  /** Bound values shared with other queries compiled into one statement (batch.ts); a fresh set when absent. */
  params?: Params;
  /** `table` also holds archived rows (see PipelineOptions.archiveRows). */
  archiveRows?: boolean;
}

/** Event searches page by this many rows when `max_query_rows` is 0 (§5 Row cap). */
export const PAGE_SIZE = 200;

export interface PageCursor {
  /** Full-precision event time and id of the last row of the previous page. */
  t: string;
  id: string;
}

export function encodeCursor(c: PageCursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(text: string): PageCursor {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as PageCursor;
    if (typeof c.t === 'string' && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(c.t) && typeof c.id === 'string' && /^[0-9a-f-]{36}$/i.test(c.id)) return c;
  } catch {
    /* fall through */
  }
  throw new QueryCompileError('cursor is not valid; send back next_cursor exactly as a previous response gave it');
}

export interface CompiledQuery {
  ast: Query;
  sql: string;
  params: Record<string, unknown>;
  columns: OutputColumn[];
  fieldOrder: string[];
  isAggregated: boolean;
  chartType: string;
  chartConfig: Record<string, unknown>;
  /** Final rows are events (their fields are unpacked from norm_log). */
  eventRows: boolean;
  /** The cap appended by the service (a limit the query wrote is clamped to it); `limit_hit: "search"` when reached. */
  rowCap?: number;
  /** Pages of PAGE_SIZE rows (the query fetched one more to know whether more exist). */
  paged: boolean;
  regexes: string[];
  pipeline: Pipeline;
}

const AGGREGATED_CAP = 10_000;

export function compileQuery(text: string, options: CompileOptions): CompiledQuery {
  const ast = parseQuery(text);
  const params = options.params ?? new Params();
  const p = new Pipeline({
    params,
    table: options.table,
    fractalIds: options.fractalIds,
    start: chTime(options.start),
    end: chTime(options.end),
    timeColumn: options.timeColumn,
    commentedLogIds: options.commentedLogIds,
    dictionary: options.dictionary,
    archiveRows: options.archiveRows,
    callCondition: (pipe, cond, resolve) => {
      const def = findCommand(cond.call.name);
      if (!def?.condition) {
        throw new QueryCompileError(`${cond.call.name.toLowerCase()}() cannot be used as a condition`, cond.call.nameSpan);
      }
      return def.condition(cond.call, pipe, resolve);
    },
  });
  for (const stage of ast.stages) planStage(stage, p);

  const final = p.current;
  const isAggregated = p.aggregated && !(final.projection && !final.agg && !final.isEvents);
  const eventRows = final.isEvents && !final.agg;
  let rowCap: number | undefined;
  let paged = false;
  if (p.hasOwnLimit && !p.ownCap) {
    // A limit written in the query (limit, head, tail, table(limit=), groupBy(limit=)) is kept
    // when it is smaller; it never lifts the row cap (with the cap off: the aggregated cap).
    rowCap = options.maxRows > 0 ? options.maxRows : AGGREGATED_CAP;
  } else if (!p.ownCap) {
    if (options.maxRows > 0) rowCap = options.maxRows;
    else if (!eventRows) rowCap = AGGREGATED_CAP;
    else if (final.sort.length === 0 && !final.dedup) {
      // Newest-first event search with the cap off: pages of 200, one extra row tells has_more.
      paged = true;
      rowCap = PAGE_SIZE + 1;
      if (options.cursor) {
        const c = decodeCursor(options.cursor);
        final.where.push(
          `(timestamp, log_id) < (${params.bind(c.t, "DateTime64(9, 'UTC')")}, toUUID(${params.text(c.id)}))`,
        );
      }
    } else rowCap = AGGREGATED_CAP;
  }
  const sql = p.toSql(rowCap);
  const columns = p.finalColumns();
  return {
    ast,
    sql,
    params: params.values,
    columns,
    fieldOrder: fieldOrder(p, columns),
    isAggregated,
    chartType: p.chartType,
    chartConfig: p.chartConfig,
    eventRows,
    rowCap: paged ? undefined : rowCap,
    paged,
    regexes: p.regexes,
    pipeline: p,
  };
}

/** Plans one stage into `p`; also used by `join()` for its subquery's own pipeline. */
export function planStage(stage: AstStage, p: Pipeline): void {
  switch (stage.kind) {
    case 'filter':
      p.addFilter(stage.condition);
      return;
    case 'assignment': {
      const target = p.rowStage();
      const col = assignmentColumn(stage.expr, stage.target, (n) => p.resolveIn(target, n), p.params);
      p.addComputed(stage.target, col.sql, col.type, { arithmetic: col.arithmetic, stage: target });
      return;
    }
    case 'command': {
      const def = findCommand(stage.call.name);
      if (!def) throw new QueryCompileError(unsupportedCommand(stage.call.name));
      if (def.condition && !def.apply) {
        p.addFilter({ kind: 'call', call: stage.call, span: stage.span } satisfies Condition);
        return;
      }
      if (!def.apply) throw new QueryCompileError(`unsupported command: ${stage.call.name.toLowerCase()}`);
      def.apply(stage.call, p);
      return;
    }
  }
}

/** §5's message, plus the closest known command when one is near enough to be a typo. */
function unsupportedCommand(name: string): string {
  const lower = name.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const c of COMMANDS) {
    for (const n of [c.name, ...(c.aliases ?? [])]) {
      const d = editDistance(lower, n.toLowerCase());
      if (!best || d < best.d) best = { name: n, d };
    }
  }
  const near = best && best.d <= Math.max(1, Math.floor(lower.length / 3));
  return `unsupported command: ${lower}${near ? ` — did you mean ${best!.name}?` : ''}`;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** Display order (query-language.md §5 `field_order`), given the final stage's columns. */
function fieldOrder(p: Pipeline, columns: OutputColumn[]): string[] {
  const final = p.current;
  const visible = columns.filter((c) => !c.hidden);
  if (final.isEvents && !final.agg) {
    if (final.projection) {
      const listed = final.projection.filter((n) => n !== 'norm_log' && n !== 'log_id');
      const order = [...listed];
      if (!order.includes('timestamp')) order.push('timestamp');
      if (!order.includes('fractal_id')) order.push('fractal_id');
      return order;
    }
    // join() outputs come after all the outer columns (§5 `join`: outer columns + `_join_*`).
    const last = final.computedOrder.filter((c) => p.listedLast.includes(c.name)).map((c) => c.name);
    const own = final.computedOrder.filter((c) => !last.includes(c.name));
    const computed = own.filter((c) => !c.arithmetic).map((c) => c.name);
    const arithmetic = own.filter((c) => c.arithmetic).map((c) => c.name);
    if (computed.length === 0 && arithmetic.length === 0) return ['timestamp', 'norm_log', 'log_id', 'fractal_id', ...last];
    const fixed = ['timestamp', 'log_id', 'fractal_id', 'norm_log'].filter((n) => !computed.includes(n) && !arithmetic.includes(n));
    return [...computed, ...fixed, ...arithmetic, ...last];
  }
  if (final.projection) return final.projection.filter((n) => visible.some((c) => c.name === n));
  return visible.map((c) => c.name);
}

// What the visualisation commands share (query-language.md §3.10, §4): they set `chart_type` and
// `chart_config` (the last one written wins) and mostly leave the rows alone.
import { QueryCompileError } from '../plan/errors.ts';
import type { Pipeline, Stage } from '../plan/pipeline.ts';
import type { Call } from '../syntax/ast.ts';
import { Args } from './args.ts';

/**
 * A chart's `limit=` (or its first positional argument when `positional` is given): a positive
 * integer, at most `max`; absent, zero or not an integer means `fallback`.
 */
export function chartLimit(args: Args, fallback: number, max: number, positional?: number): number {
  const n = args.int(['limit'], positional, fallback);
  return n <= 0 ? fallback : Math.min(n, max);
}

/** The last stage that aggregated, if any: the rows a chart after it reads come from there. */
export function lastAggregation(p: Pipeline): Stage | undefined {
  return [...p.stages].reverse().find((s) => s.agg);
}

/** Sets what the response reports for the chart (§4). */
export function setChart(p: Pipeline, chartType: string, config: Record<string, unknown>): void {
  p.chartType = chartType;
  p.chartConfig = config;
}

/**
 * piechart() and barchart(): grouped rows, drawn as they are; `limit=` (or the first argument,
 * default 10) is how many largest slices or bars the chart keeps.
 */
export function applyGroupChart(call: Call, p: Pipeline, chartType: 'piechart' | 'barchart', chart: string): void {
  if (lastAggregation(p)?.agg?.kind !== 'group') {
    throw new QueryCompileError(`${chartType}() requires groupby() - cannot create ${chart} without grouped data`, call.span);
  }
  setChart(p, chartType, { limit: chartLimit(new Args(call), 10, Number.MAX_SAFE_INTEGER, 0) });
}

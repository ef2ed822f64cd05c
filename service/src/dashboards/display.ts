// What a widget draws from one run of its query: its own chart type, or (`auto`) what the query
// asked for. The service answers results with it (widget-runs.ts) and the page recomputes it when
// someone switches a widget's chart without running it again: the renderer imports this very file
// (renderer/src/lib/dashboards/display.ts). Pure.

export interface ChartChoice {
  /** `auto`, `table`, or a chart type of query-language.md §4. */
  chart_type: string;
  chart_config: Record<string, unknown>;
}

export interface QueryChart {
  query_chart_type: string;
  query_chart_config: Record<string, unknown>;
}

/**
 * `table`: the rows (chart_type ""); `auto`: the query's chart with the widget's config on top; a
 * chart type: that chart, with the query's config when the query asks for the same chart (it names
 * the columns), and the widget's on top.
 */
export function displayChart(w: ChartChoice, run: QueryChart): { chart_type: string; chart_config: Record<string, unknown> } {
  const q = run.query_chart_type ?? '';
  if (w.chart_type === 'table') return { chart_type: '', chart_config: {} };
  if (w.chart_type === 'auto') return { chart_type: q, chart_config: { ...run.query_chart_config, ...w.chart_config } };
  return { chart_type: w.chart_type, chart_config: { ...(q === w.chart_type ? run.query_chart_config : {}), ...w.chart_config } };
}

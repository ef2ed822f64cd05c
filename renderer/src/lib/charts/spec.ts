// Which rows and columns each `chart_type` reads (query-language.md §4), from the response's
// `field_order` and `chart_config`. Everything the chart components draw starts from a ChartSpec.
// Pure: tests/ui/charts.test.ts.
import { columnsOf, HIDDEN_COLUMNS, toNumber, type Row } from './values.ts';

export type ChartSpec =
  | {
      kind: 'category';
      chart: 'piechart' | 'barchart' | 'mitre';
      /** The label column, also the field a click filters on. */
      labelField: string;
      valueField: string;
      /** How many slices/bars the renderer shows (§4: the renderer applies limit). */
      limit: number;
    }
  | {
      kind: 'time';
      timeField: string;
      valueFields: string[];
      /** Series keys: every other column (one series per distinct combination). */
      keyFields: string[];
      unit: 'percent' | null;
      yLabel: string;
      spanSeconds: number | null;
      /** Counts and sums: a bucket with no row is 0; averages, extremes and percents are gaps. */
      additive: boolean;
    }
  | { kind: 'single'; field: string | null; label: string }
  | { kind: 'histogram'; field: string | null; buckets: number | null }
  | {
      kind: 'heatmap';
      xCol: string;
      yCol: string;
      valueCol: string;
      /** Event fields the axes stand for (what a click filters on). */
      xField: string;
      yField: string;
      limit: number;
      valueLabel: string;
    }
  | {
      kind: 'graph';
      variant: 'graph' | 'mesh' | 'pgraph';
      /** Edge from srcCol to dstCol (graph: parent → child). */
      srcCol: string;
      dstCol: string;
      weightCol: string | null;
      sizeCol: string | null;
      colorCol: string | null;
      /** Columns describing a node (shown with it): from the row where the node is the destination. */
      labelCols: string[];
      /** pgraph: the description of the source node on the same row. */
      srcLabelCol: string | null;
      typeCol: string | null;
      scoreCol: string | null;
      directed: boolean;
      limit: number;
      focus: string | null;
    }
  | { kind: 'map'; latField: string; lonField: string; labelField: string | null; countField: string | null; limit: number }
  | { kind: 'unsupported'; reason: string };

export const CHART_NAMES: Record<string, string> = {
  timechart: 'Time chart',
  barchart: 'Bar chart',
  piechart: 'Pie chart',
  histogram: 'Histogram',
  heatmap: 'Heatmap',
  singleval: 'Single value',
  graph: 'Graph',
  mesh: 'Mesh',
  pgraph: 'Process graph',
  worldmap: 'World map',
  mitre: 'ATT&CK',
};

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function limitOf(config: Record<string, unknown>, fallback: number, max = Infinity): number {
  const n = toNumber(config.limit);
  if (n === null || n < 1) return fallback;
  return Math.min(Math.floor(n), max);
}

function stringList(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && x !== '');
  if (typeof v === 'string' && v !== '') return v.split(',').map((s) => s.trim()).filter(Boolean);
  return [];
}

/** `1m`, `5m`, `1h`, `1d`, `1w` as seconds (§3.5); null when the span cannot be read. */
export function parseSpanSeconds(span: unknown): number | null {
  const m = /^\s*(\d+)\s*([smhdw])\s*$/.exec(typeof span === 'string' ? span : '');
  if (!m) return null;
  const n = Number(m[1]);
  if (!(n > 0)) return null;
  return n * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
}

/** Pie and bar: label = first column; value = `_count`, else the first column whose name contains `count`, else the second. */
export function categoryColumns(columns: readonly string[]): { labelField: string; valueField: string } | null {
  if (columns.length === 0) return null;
  const labelField = columns[0]!;
  const valueField = columns.includes('_count') ? '_count' : (columns.find((c) => c.includes('count')) ?? columns[1]);
  if (!valueField) return null;
  return { labelField, valueField };
}

const SINGLE_EXACT = ['_count', '_sum', '_avg', '_min', '_max'];
const SINGLE_PREFIX = ['sum_', 'avg_', 'min_', 'max_', 'stddev_'];

/** Singleval: first of `_count`, `_sum`, `_avg`, `_min`, `_max`, `sum_*`, `avg_*`, `min_*`, `max_*`, `stddev_*`, else the first column. */
export function singleValueColumn(columns: readonly string[]): string | null {
  for (const c of SINGLE_EXACT) if (columns.includes(c)) return c;
  for (const p of SINGLE_PREFIX) {
    const c = columns.find((x) => x.startsWith(p));
    if (c) return c;
  }
  return columns[0] ?? null;
}

const TIME_VALUES = ['_count', '_sum', '_avg', '_max', '_min'];

/** Timechart: `time_bucket` + value column(s) (`valueFields` of percent()); every other column is a series key. */
export function timeColumns(
  columns: readonly string[],
  config: Record<string, unknown>,
): { valueFields: string[]; keyFields: string[] } {
  let valueFields = stringList(config.valueFields).filter((f) => columns.includes(f));
  if (valueFields.length === 0) valueFields = TIME_VALUES.filter((f) => columns.includes(f));
  if (valueFields.length === 0) {
    const rest = columns.filter((c) => c !== 'time_bucket' && !HIDDEN_COLUMNS.has(c));
    if (rest.length > 0) valueFields = [rest[rest.length - 1]!];
  }
  const keyFields = columns.filter((c) => c !== 'time_bucket' && !valueFields.includes(c) && !HIDDEN_COLUMNS.has(c));
  return { valueFields, keyFields };
}

/** The spec of a result: which columns the chart reads. `unsupported` says in words why nothing can be drawn. */
export function chartSpec(
  chartType: string,
  fieldOrder: readonly string[],
  config: Record<string, unknown>,
  rows: readonly Row[] = [],
): ChartSpec {
  const columns = columnsOf(rows, fieldOrder);
  const has = (c: string) => columns.includes(c);
  const missing = (...cols: string[]) => {
    const gone = cols.filter((c) => !has(c));
    return gone.length ? { kind: 'unsupported' as const, reason: `This result has no ${gone.map((c) => `“${c}”`).join(' or ')} column to chart.` } : null;
  };
  switch (chartType) {
    case 'piechart':
    case 'barchart': {
      const cols = categoryColumns(columns.filter((c) => !HIDDEN_COLUMNS.has(c)));
      if (!cols) return { kind: 'unsupported', reason: 'A pie or bar chart needs a label column and a value column (groupBy(…) gives both).' };
      return { kind: 'category', chart: chartType, ...cols, limit: limitOf(config, 10) };
    }
    case 'mitre': {
      const by = str(config.byField);
      if (by && has(by)) {
        return { kind: 'heatmap', xCol: 'attack_tag', yCol: by, valueCol: '_count', xField: 'attack_tag', yField: by, limit: 50, valueLabel: 'events' };
      }
      return missing('attack_tag', '_count') ?? { kind: 'category', chart: 'mitre', labelField: 'attack_tag', valueField: '_count', limit: 25 };
    }
    case 'timechart': {
      const gone = missing('time_bucket');
      if (gone) return gone;
      const { valueFields, keyFields } = timeColumns(columns, config);
      if (valueFields.length === 0) return { kind: 'unsupported', reason: 'This time chart has no value column.' };
      const percent = config.unit === 'percent';
      return {
        kind: 'time',
        timeField: 'time_bucket',
        valueFields,
        keyFields,
        unit: percent ? 'percent' : null,
        yLabel: str(config.yLabel) ?? (percent ? 'Percent' : valueFields.length === 1 ? valueFields[0]! : 'Value'),
        spanSeconds: parseSpanSeconds(config.span),
        additive: !percent && valueFields.every((f) => f === '_count' || f === '_sum'),
      };
    }
    case 'singleval': {
      const field = singleValueColumn(columns.filter((c) => !HIDDEN_COLUMNS.has(c)));
      return { kind: 'single', field, label: str(config.label) ?? field ?? '' };
    }
    case 'histogram':
      return (
        missing('_bin_lower', '_bin_upper', '_bin_count') ?? {
          kind: 'histogram',
          field: str(config.field),
          buckets: toNumber(config.buckets),
        }
      );
    case 'heatmap': {
      const xField = str(config.xField) ?? 'x';
      const yField = str(config.yField) ?? 'y';
      const limit = limitOf(config, 50, 200);
      if (has('_heatmap_x') && has('_heatmap_y')) {
        return { kind: 'heatmap', xCol: '_heatmap_x', yCol: '_heatmap_y', valueCol: has('_heatmap_value') ? '_heatmap_value' : '_count', xField, yField, limit, valueLabel: 'value' };
      }
      return missing(xField, yField, '_count') ?? { kind: 'heatmap', xCol: xField, yCol: yField, valueCol: '_count', xField, yField, limit, valueLabel: 'count' };
    }
    case 'graph': {
      const child = str(config.childField);
      const parent = str(config.parentField);
      if (!child || !parent) return { kind: 'unsupported', reason: 'This graph names no child and parent fields.' };
      const labels = stringList(config.labels);
      return (
        missing(child, parent) ?? {
          kind: 'graph',
          variant: 'graph',
          srcCol: parent,
          dstCol: child,
          weightCol: null,
          sizeCol: null,
          colorCol: null,
          labelCols: (labels.length ? labels : columns.filter((c) => c !== child && c !== parent && !HIDDEN_COLUMNS.has(c))).filter(has),
          srcLabelCol: null,
          typeCol: null,
          scoreCol: null,
          directed: true,
          limit: limitOf(config, 100),
          focus: null,
        }
      );
    }
    case 'mesh': {
      const src = str(config.srcField);
      const dst = str(config.dstField);
      if (!src || !dst) return { kind: 'unsupported', reason: 'This mesh names no src and dst fields.' };
      const weight = str(config.weightField) ?? '_count';
      const size = str(config.sizeField) ?? '_count';
      const color = str(config.color);
      const directed = config.directed === true || (typeof config.directed === 'string' && /^(true|1|yes)$/i.test(config.directed));
      return (
        missing(src, dst) ?? {
          kind: 'graph',
          variant: 'mesh',
          srcCol: src,
          dstCol: dst,
          weightCol: has(weight) ? weight : null,
          sizeCol: has(size) ? size : null,
          colorCol: color && color !== 'auto' && has(color) ? color : null,
          labelCols: stringList(config.labels).filter(has),
          srcLabelCol: null,
          typeCol: null,
          scoreCol: null,
          directed,
          limit: limitOf(config, 100),
          focus: null,
        }
      );
    }
    case 'pgraph':
      return (
        missing('parent', 'child') ?? {
          kind: 'graph',
          variant: 'pgraph',
          srcCol: 'parent',
          dstCol: 'child',
          weightCol: null,
          sizeCol: null,
          colorCol: null,
          labelCols: has('label') ? ['label'] : [],
          srcLabelCol: has('parent_label') ? 'parent_label' : null,
          typeCol: has('event_type') ? 'event_type' : null,
          scoreCol: has('anomaly_score') ? 'anomaly_score' : null,
          directed: true,
          limit: limitOf(config, 3000),
          focus: str(config.focus),
        }
      );
    case 'worldmap':
    case 'graphWorld':
    case 'graphworld': {
      const latField = str(config.latField) ?? 'latitude';
      const lonField = str(config.lonField) ?? 'longitude';
      const labelField = str(config.labelField);
      return (
        missing(latField, lonField) ?? {
          kind: 'map',
          latField,
          lonField,
          labelField: labelField && has(labelField) ? labelField : null,
          countField: has('_count') ? '_count' : null,
          limit: limitOf(config, 5000),
        }
      );
    }
    case '':
      return { kind: 'unsupported', reason: 'This query draws no chart.' };
    default:
      return { kind: 'unsupported', reason: `There is no drawing for the chart type “${chartType}” yet.` };
  }
}

/** The columns a spec reads, for a caption and for tests. */
export function specColumns(spec: ChartSpec): string[] {
  switch (spec.kind) {
    case 'category':
      return [spec.labelField, spec.valueField];
    case 'time':
      return [spec.timeField, ...spec.keyFields, ...spec.valueFields];
    case 'single':
      return spec.field ? [spec.field] : [];
    case 'histogram':
      return ['_bin_lower', '_bin_upper', '_bin_count'];
    case 'heatmap':
      return [spec.xCol, spec.yCol, spec.valueCol];
    case 'graph':
      return [spec.srcCol, spec.dstCol, spec.weightCol, spec.sizeCol, spec.colorCol, spec.typeCol, spec.scoreCol, spec.srcLabelCol, ...spec.labelCols].filter(
        (c): c is string => !!c,
      );
    case 'map':
      return [spec.latField, spec.lonField, spec.labelField, spec.countField].filter((c): c is string => !!c);
    case 'unsupported':
      return [];
  }
}

/** A one-line caption of what a chart shows: "_count by host", "count per 1 min by status". */
export function specCaption(spec: ChartSpec): string {
  const label = (f: string) => (/^_[a-z]+$/.test(f) ? f.slice(1) : f);
  switch (spec.kind) {
    case 'category':
      return `${label(spec.valueField)} by ${spec.labelField}`;
    case 'time': {
      const per = spec.spanSeconds ? ` per ${spanWords(spec.spanSeconds)}` : '';
      const what = spec.unit === 'percent' ? `% ${spec.valueFields.join(', ')}` : spec.valueFields.map(label).join(', ');
      return `${what}${per}${spec.keyFields.length ? ` by ${spec.keyFields.join(', ')}` : ''}`;
    }
    case 'single':
      return spec.field ?? '';
    case 'histogram':
      return `${spec.field ?? 'value'} distribution${spec.buckets ? ` · ${spec.buckets} bins` : ''}`;
    case 'heatmap':
      return `${spec.valueLabel} by ${spec.xField} × ${spec.yField}`;
    case 'graph':
      return `${spec.srcCol} ${spec.directed ? '→' : '—'} ${spec.dstCol}`;
    case 'map':
      return `${spec.latField}, ${spec.lonField}${spec.labelField ? ` · ${spec.labelField}` : ''}`;
    case 'unsupported':
      return '';
  }
}

function spanWords(s: number): string {
  if (s % 604800 === 0) return s === 604800 ? 'week' : `${s / 604800} weeks`;
  if (s % 86400 === 0) return s === 86400 ? 'day' : `${s / 86400} days`;
  if (s % 3600 === 0) return s === 3600 ? 'hour' : `${s / 3600} hours`;
  if (s % 60 === 0) return s === 60 ? 'minute' : `${s / 60} minutes`;
  return `${s} s`;
}

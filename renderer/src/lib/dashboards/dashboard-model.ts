// A dashboard as the page holds it, how each live event changes it, and the arithmetic of the
// grid on screen (pointer and keys to cells, the row height that fits a wall screen). Where widgets
// go when one moves is grid.ts's rule, the service's own. Pure: tests/ui/dashboards.test.ts.
import { CHART_NAMES } from '../charts/spec.ts';
import { applyDocumentEvent, type RangeFields, type Variable } from '../documents.ts';
import type { Applied as LiveApplied } from '../live/follow.ts';
import { appendFilter, filterClause } from '../search/query-text.ts';
import { isPreset } from '../search/time.ts';
import type { SearchView } from '../search/view-state.ts';
import { displayChart } from './display.ts';
import { clampCells, GRID_COLUMNS, MAX_HEIGHT, type Box, type Cells } from './grid.ts';

/** One run of a widget's query (service/src/dashboards/widget-runs.ts), with what to draw. */
export interface WidgetResult {
  widget_id?: string;
  success: boolean;
  results: Array<Record<string, unknown>>;
  count: number;
  field_order: string[];
  is_aggregated: boolean;
  query_chart_type?: string;
  query_chart_config?: Record<string, unknown>;
  limit_hit: string;
  start: string;
  end: string;
  executed_at: string;
  execution_ms?: number;
  error?: string;
  error_type?: string;
  error_pos?: { start: number; end: number };
  /** What to draw: "" for the table. */
  chart_type: string;
  chart_config: Record<string, unknown>;
  /** Answered from stored results. */
  cached?: boolean;
  /** Run with other settings than the widget's current ones. */
  stale?: boolean;
}

export interface Widget extends Box {
  dashboard_id: string;
  title: string;
  query_content: string;
  chart_type: string;
  chart_config: Record<string, unknown>;
  /** null: the dashboard's range. */
  time_range: string | null;
  start: string | null;
  end: string | null;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
  result: WidgetResult | null;
}

export interface DashboardFields extends RangeFields {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  variables: Variable[];
  refresh_interval_s: number;
  shared_hide_queries: boolean;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
}

export interface DashboardListItem extends DashboardFields {
  widget_count: number;
}

export interface DashboardDoc extends DashboardFields {
  scope: { type: 'fractal' | 'prism'; id: string; name: string };
  can_edit: boolean;
  live_event_id: string;
  widgets: Widget[];
}

export interface SharedLink {
  id: string;
  label: string;
  token_prefix: string;
  expires_at: string | null;
  expired: boolean;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  /** Only in the answer that made it. */
  token?: string;
  url?: string;
}

/** The public answer of a shared link (service/src/dashboards/shared-links.ts). */
export interface PublicDashboard extends RangeFields {
  name: string;
  description: string;
  refresh_interval_s: number;
  max_age_s: number;
  hide_queries: boolean;
  widgets: Array<Box & { title: string; chart_type: string; chart_config: Record<string, unknown>; query_content?: string; result: WidgetResult }>;
}

/** What the widget editor's chart picker offers: every chart type of §4, the table, and "as the query says". */
export const CHART_CHOICES: Array<{ id: string; label: string }> = [
  { id: 'auto', label: 'As the query says' },
  { id: 'table', label: 'Table' },
  ...['timechart', 'barchart', 'piechart', 'singleval', 'histogram', 'heatmap', 'graph', 'mesh', 'pgraph', 'worldmap', 'mitre'].map((id) => ({ id, label: CHART_NAMES[id] ?? id })),
];

/** The refresh picker's choices, in seconds (0: off; the service takes 0 or 5 and up). */
export const REFRESH_CHOICES = [0, 5, 10, 30, 60, 300, 900, 3600];

export function refreshLabel(s: number): string {
  if (s === 0) return 'Off';
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${s / 60} min`;
  return `${s / 3600} h`;
}

/** A result as the widget now draws it: its chart recomputed from the widget's current choice. */
export function drawn(w: Pick<Widget, 'chart_type' | 'chart_config'>, r: WidgetResult): WidgetResult {
  if (r.query_chart_type === undefined) return r;
  return { ...r, ...displayChart(w, { query_chart_type: r.query_chart_type, query_chart_config: r.query_chart_config ?? {} }) };
}

// ---- live events ---------------------------------------------------------------------------------

export type Applied = LiveApplied<DashboardDoc>;

const byCells = (a: Box, b: Box) => a.pos_y - b.pos_y || a.pos_x - b.pos_x || (a.id < b.id ? -1 : 1);

/** The widgets with these boxes' cells (a layout answer or event); order top to bottom. */
export function withCells(widgets: Widget[], boxes: Box[]): Widget[] {
  const cells = new Map(boxes.map((b) => [b.id, b]));
  return widgets
    .map((w) => {
      const c = cells.get(w.id);
      return c ? { ...w, pos_x: c.pos_x, pos_y: c.pos_y, width: c.width, height: c.height } : w;
    })
    .sort(byCells);
}

/** The dashboard after one live event (or a request to read it again). */
export function applyEvent(doc: DashboardDoc, type: string, data: any): Applied {
  switch (type) {
    case 'widget_added': {
      const w = data.widget as Widget;
      const widgets = doc.widgets.some((x) => x.id === w.id) ? doc.widgets : [...doc.widgets, { ...w, result: null }];
      return { doc: { ...doc, version: Math.max(doc.version, data.version ?? 0), widgets: withCells(widgets, data.moved ?? []) } };
    }
    case 'widget_updated': {
      const w = data.widget as Widget;
      const cur = doc.widgets.find((x) => x.id === w.id);
      if (!cur) return { reload: true };
      if (w.version <= cur.version) return { doc };
      const stale = w.query_content !== cur.query_content || w.time_range !== cur.time_range || w.start !== cur.start || w.end !== cur.end;
      const result = cur.result && stale ? { ...cur.result, stale: true } : cur.result;
      return { doc: { ...doc, widgets: doc.widgets.map((x) => (x.id === w.id ? { ...w, pos_x: x.pos_x, pos_y: x.pos_y, width: x.width, height: x.height, result } : x)) } };
    }
    case 'widget_deleted':
      return { doc: { ...doc, version: Math.max(doc.version, data.version ?? 0), widgets: doc.widgets.filter((x) => x.id !== data.id) } };
    case 'layout_changed':
      if ((data.moved as Box[]).some((b) => !doc.widgets.some((w) => w.id === b.id))) return { reload: true };
      return { doc: { ...doc, widgets: withCells(doc.widgets, data.moved) } };
    case 'widget_results': {
      const cur = doc.widgets.find((x) => x.id === data.widget_id);
      if (!cur) return { doc };
      if (data.results_omitted) return { reload: true };
      const r = data.result as WidgetResult;
      if (cur.result && !cur.result.stale && cur.result.executed_at > r.executed_at) return { doc };
      return { doc: { ...doc, widgets: doc.widgets.map((x) => (x.id === cur.id ? { ...x, result: r } : x)) } };
    }
    case 'refresh_interval_updated':
      if (data.version <= doc.version) return { doc };
      return { doc: { ...doc, refresh_interval_s: data.refresh_interval_s, version: data.version } };
    default:
      return applyDocumentEvent('dashboard', doc, type, data) ?? { doc };
  }
}

/** The widgets whose results are missing, stale, or older than `maxAgeS` (what opening the page runs). */
export function dueWidgets(doc: Pick<DashboardDoc, 'widgets'>, maxAgeS: number, now = Date.now()): string[] {
  return doc.widgets.filter((w) => !w.result || w.result.stale || now - Date.parse(w.result.executed_at) >= maxAgeS * 1000).map((w) => w.id);
}

// ---- the grid on screen --------------------------------------------------------------------------

/** Pixels between cells. */
export const GAP = 8;
/** Height of a row in the normal view (1280×720 shows about eight rows). */
export const ROW_HEIGHT = 64;

/** The cells a pointer drag asks for: a move shifts the box, a resize (from the corner) sizes it; always on the grid. */
export function dragCells(start: Cells, dx: number, dy: number, colPx: number, rowPx: number, mode: 'move' | 'resize'): Cells {
  const cols = dx / colPx;
  const rows = dy / rowPx;
  return mode === 'move'
    ? clampCells({ ...start, pos_x: start.pos_x + cols, pos_y: start.pos_y + rows })
    : clampCells({ ...start, width: Math.min(GRID_COLUMNS - start.pos_x, start.width + cols), height: start.height + rows });
}

/** Arrow keys on a widget's handle: move one cell, or with Shift resize (width/height) by one. */
export function keyCells(c: Cells, key: string, resize: boolean): Cells | null {
  const d = ({ ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] } as Record<string, [number, number]>)[key];
  if (!d) return null;
  const next = resize
    ? clampCells({ ...c, width: Math.min(GRID_COLUMNS - c.pos_x, c.width + d[0]), height: Math.min(MAX_HEIGHT, c.height + d[1]) })
    : clampCells({ ...c, pos_x: c.pos_x + d[0], pos_y: c.pos_y + d[1] });
  return next.pos_x === c.pos_x && next.pos_y === c.pos_y && next.width === c.width && next.height === c.height ? null : next;
}

/** Kiosk: the row height that fits every row of the layout in `heightPx` (never below `min`). */
export function fitRowHeight(rows: number, heightPx: number, min = 32): number {
  if (rows <= 0) return ROW_HEIGHT;
  return Math.max(min, Math.floor((heightPx - GAP * (rows - 1)) / rows));
}

/** The cells of a widget in its dashboard's words, for screen readers and tooltips. */
export const cellsLabel = (c: Cells) => `column ${c.pos_x + 1}, row ${c.pos_y + 1}, ${c.width} wide, ${c.height} high`;

/**
 * The search a click on a widget's value opens: the widget's query narrowed to that value (a stage of
 * its own, which narrows any query, §1.3), over the widget's range, with the dashboard's variables.
 * Null when the field cannot be named in the language.
 */
export function drillDown(doc: Pick<DashboardDoc, 'scope' | 'variables' | 'time_range' | 'start' | 'end'>, w: Pick<Widget, 'query_content' | 'time_range' | 'start' | 'end'>, field: string, value: string, negate: boolean): SearchView | null {
  const clause = filterClause(field, value, negate);
  if (!clause) return null;
  const r = w.time_range === null ? doc : w;
  const range: SearchView['range'] =
    r.time_range === 'custom' && r.start && r.end
      ? { kind: 'absolute', start: new Date(r.start), end: new Date(r.end) }
      : r.time_range === 'all'
        ? { kind: 'all' }
        : { kind: 'relative', preset: isPreset(r.time_range ?? '') ? (r.time_range as never) : '24h' };
  return { q: appendFilter(w.query_content, clause), range, scope: { type: doc.scope.type, id: doc.scope.id }, vars: Object.fromEntries(doc.variables.map((v) => [v.name, v.value])) };
}

// The dashboards domain's rules between the routes and the store: who may read and change a
// dashboard, what a dashboard and a widget may hold, where a widget goes on the grid (grid.ts, the
// same rule the page applies), the version checks that turn a stale write into a 409, and the live
// event each stored change sends (live/hub.ts, kind "dashboard").
//
// Access (conventions.md): a dashboard belongs to one fractal or one prism. Reading (and running)
// it needs a role there (viewer and up), changing it the analyst role; an API key needs the
// `dashboard` permission (and `query` as well to run widgets). One it may not read is "not found".
//
// Versions: a widget's `version` counts edits of what it shows and an update may carry the version
// it started from; where it sits on the grid is not an edit of it (two people may drag at once:
// the last move wins, and everyone sees it). The dashboard's `version` counts its own fields,
// variables and the set of widgets; those writes may carry it.
import { createHash } from 'node:crypto';
import { Type, type Static } from 'typebox';
import type { Principal } from '../auth/principal.ts';
import type { Context } from '../context.ts';
import { badRequest, conflict, HttpError, notFound } from '../http/errors.ts';
import { Description } from '../http/schemas.ts';
import { prepareScopeQuery, QueryInputError } from '../query/query-service.ts';
import {
  actorName,
  documentAccess,
  normalizeName,
  normalizeTimeRange,
  normalizeVariables,
  rangeOf,
  requestedScope,
  scopeOf,
  type Actor,
  type Scope,
  type StoredRange,
  type Variable,
} from '../shared/documents.ts';
import type { Dashboard, DashboardFields, NewWidget, Widget, WidgetContent } from './dashboards-store.ts';
import { cellsProblem, freeCells, movedBoxes, placeBox, type Box, type Cells } from './grid.ts';

export const LIVE_KIND = 'dashboard';
export const MAX_WIDGETS = 100;
export const MAX_TITLE = 200;
/** The shortest refresh interval; 0 switches refreshing off. */
export const MIN_REFRESH_S = 5;
export const MAX_REFRESH_S = 86_400;
const MAX_CHART_CONFIG_BYTES = 8_192;
/** A widget added without cells is this big. */
export const DEFAULT_CELLS = { width: 6, height: 4 };

/**
 * What a widget draws: `auto` what its query asks for (its chart command, else a table), `table`
 * the rows, or one chart type of query-language.md §4 drawn from the rows (its chart_config, or
 * the query's when the query asks for the same chart, says which columns).
 */
export const CHART_TYPES = ['auto', 'table', 'timechart', 'barchart', 'piechart', 'singleval', 'histogram', 'heatmap', 'graph', 'mesh', 'pgraph', 'worldmap', 'mitre'] as const;

// ---- request shapes (the routes' schemas; an import's YAML is checked against the same) ------------

const TimeFields = {
  time_range: Type.Optional(Type.Union([Type.String({ maxLength: 20 }), Type.Null()])),
  start: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
  end: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
};
export const VariablesField = Type.Array(Type.Object({ name: Type.Unknown(), value: Type.Unknown() }), { maxItems: 1000 });

export const WidgetBody = Type.Object({
  title: Type.Optional(Type.String({ maxLength: 10_000 })),
  query_content: Type.Optional(Type.String({ maxLength: 100_000 })),
  chart_type: Type.Optional(Type.String({ maxLength: 100 })),
  chart_config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  ...TimeFields,
  pos_x: Type.Optional(Type.Unknown()),
  pos_y: Type.Optional(Type.Unknown()),
  width: Type.Optional(Type.Unknown()),
  height: Type.Optional(Type.Unknown()),
  version: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type WidgetInput = Static<typeof WidgetBody>;

export const DashboardBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 10_000 })),
  description: Type.Optional(Description),
  variables: Type.Optional(VariablesField),
  refresh_interval_s: Type.Optional(Type.Integer()),
  shared_hide_queries: Type.Optional(Type.Boolean()),
  ...TimeFields,
  version: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type DashboardInput = Static<typeof DashboardBody>;

// ---- access -------------------------------------------------------------------------------------

const rule = (write: boolean) => ({ keyPermission: 'dashboard' as const, write });

export interface DashboardAccess {
  d: Dashboard;
  /** The caller may change it. */
  canEdit: boolean;
  scopeName: string;
}

/** The dashboard `id` if the caller may read it (with `write`: change it); 404 or 403 otherwise. */
export function dashboardFor(ctx: Context, p: Principal, id: string, write = false): DashboardAccess {
  const d = ctx.dashboards.get(id.toLowerCase());
  const wording = { notFound: `Dashboard ${id} not found.`, needs: 'Changing a dashboard needs' };
  if (!d) throw notFound(wording.notFound);
  return { d, ...documentAccess(ctx, p, scopeOf(d), rule(write), wording) };
}

/** The fractal or prism a list, a create or an import acts on (the one named, else the selection). */
export function dashboardScope(ctx: Context, p: Principal, requested: { fractal_id?: string; prism_id?: string }, write: boolean): Scope & { name: string } {
  return requestedScope(ctx, p, requested, { ...rule(write), needs: 'Writing dashboards needs' });
}

/** Running widgets reads logs: an API key needs `query` besides `dashboard`. */
export function mayRun(p: Principal): void {
  if (p.kind === 'api_key' && !p.permissions.query) throw new HttpError(403, 'This API key lacks the "query" permission, which running widgets needs.');
}

/** The widget `wid` of dashboard `d`: 404 when there is none, 400 when it belongs to another dashboard. */
export function widgetOf(ctx: Context, d: Dashboard, wid: string, withResults = false): Widget {
  const w = ctx.dashboards.widget(wid.toLowerCase(), withResults);
  if (!w) throw notFound(`Widget ${wid} not found in dashboard "${d.name}".`);
  if (w.dashboard_id !== d.id) throw badRequest(`Widget ${wid} belongs to another dashboard, not to "${d.name}".`);
  return w;
}

// ---- what a dashboard and a widget may hold --------------------------------------------------------

/** `at` prefixes field names in sentences ("widgets[2]."), for imports. */
export function refreshInterval(v: unknown, at = ''): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || (v !== 0 && (v < MIN_REFRESH_S || v > MAX_REFRESH_S))) {
    throw badRequest(
      `The field "${at}refresh_interval_s" must be 0 (no automatic refresh) or a whole number of seconds from ${MIN_REFRESH_S} to ${MAX_REFRESH_S}; it is ${JSON.stringify(v)}.`,
    );
  }
  return v;
}

function checkTitle(raw: string, at: string): string {
  const t = raw.trim();
  if (t.length > MAX_TITLE) throw badRequest(`The field "${at}title" must be at most ${MAX_TITLE} characters long.`);
  return t;
}

function checkChartType(raw: string, at: string): string {
  if (!(CHART_TYPES as readonly string[]).includes(raw)) {
    throw badRequest(`The field "${at}chart_type" has the unknown chart type ${JSON.stringify(raw)} (allowed: ${CHART_TYPES.join(', ')}).`);
  }
  return raw;
}

function checkChartConfig(raw: Record<string, unknown>, at: string): Record<string, unknown> {
  if (JSON.stringify(raw).length > MAX_CHART_CONFIG_BYTES) throw badRequest(`The field "${at}chart_config" must be at most ${MAX_CHART_CONFIG_BYTES} bytes as JSON.`);
  return raw;
}

function checkQueryText(raw: string, at: string): string {
  if (raw.trim() === '') throw badRequest(`The field "${at}query_content" must hold a query; a widget draws what its query returns.`);
  return raw;
}

/** A widget's own range, or null for the dashboard's (time_range null or absent). */
function widgetRange(input: WidgetInput, current: StoredRange | null, at: string): Pick<WidgetContent, 'time_range' | 'time_start' | 'time_end'> {
  if (input.time_range === null || (input.time_range === undefined && current === null && input.start == null && input.end == null)) {
    return { time_range: null, time_start: null, time_end: null };
  }
  return normalizeTimeRange({ time_range: input.time_range ?? undefined, start: input.start, end: input.end }, current ?? undefined, `${at}time_range`);
}

/** What a new widget shows, checked (its query compiles later, against its dashboard). */
export function newContent(input: WidgetInput, at = ''): WidgetContent {
  if (input.query_content === undefined) throw badRequest(`The field "${at}query_content" is required.`);
  return {
    title: checkTitle(input.title ?? '', at),
    query_content: checkQueryText(input.query_content, at),
    chart_type: checkChartType(input.chart_type ?? 'auto', at),
    chart_config: checkChartConfig(input.chart_config ?? {}, at),
    ...widgetRange(input, null, at),
  };
}

/** The cells a request asks for: all four, none (null: place it where there is room), or a 400. */
export function requestedCells(input: Partial<Record<keyof Cells, unknown>>, at = ''): Cells | null {
  const given = (['pos_x', 'pos_y', 'width', 'height'] as const).filter((k) => input[k] !== undefined);
  if (given.length === 0) return null;
  const cells = { ...DEFAULT_CELLS, pos_x: 0, pos_y: 0, ...input } as Cells;
  if (input.pos_x === undefined || input.pos_y === undefined) {
    throw badRequest(`A widget's place needs both "${at}pos_x" and "${at}pos_y" (and optionally "${at}width" and "${at}height").`);
  }
  const problem = cellsProblem(cells, at);
  if (problem) throw badRequest(problem);
  return { pos_x: cells.pos_x, pos_y: cells.pos_y, width: cells.width, height: cells.height };
}

export interface DashboardFieldsInput extends DashboardInput {
  name: string;
}

export function newFields(input: DashboardFieldsInput, at = ''): DashboardFields {
  return {
    name: normalizeName(input.name, `${at}name`),
    description: input.description?.trim() ?? '',
    variables: normalizeVariables(input.variables ?? [], `${at}variables`),
    ...normalizeTimeRange({ time_range: input.time_range ?? undefined, start: input.start, end: input.end }, undefined, `${at}time_range`),
    refresh_interval_s: input.refresh_interval_s === undefined ? 0 : refreshInterval(input.refresh_interval_s, at),
    shared_hide_queries: input.shared_hide_queries ?? true,
  };
}

/**
 * Compiles a widget's query against its dashboard (scope, variables, range) without running it:
 * a query that does not compile is a 400 with the spec's `error_type` and `error_pos`.
 */
export async function checkWidgetQuery(ctx: Context, d: Pick<Dashboard, 'fractal_id' | 'prism_id' | 'variables'>, query: string, where = ''): Promise<void> {
  const now = new Date();
  try {
    await prepareScopeQuery(ctx, { query, scope: scopeOf(d), start: new Date(now.getTime() - 3_600_000), end: now, timeColumn: 'timestamp', variables: d.variables });
  } catch (err) {
    if (!(err instanceof QueryInputError)) throw err;
    throw new HttpError(400, `${where}${err.message.replace(/\.?$/, '.')}`, {}, { error_type: err.errorType, ...(err.errorPos ? { error_pos: err.errorPos } : {}) });
  }
}

// ---- what runs: the key of a widget's results ---------------------------------------------------

/** The range spec a widget runs over: its own, else its dashboard's. */
export const effectiveRange = (d: Dashboard, w: Pick<WidgetContent, 'time_range' | 'time_start' | 'time_end'>): StoredRange =>
  w.time_range === null ? d : { time_range: w.time_range, time_start: w.time_start, time_end: w.time_end };

/** What a widget's stored results were run with: its query, range spec and the variables. Another key: stale. */
export function resultsKey(query: string, range: StoredRange, variables: readonly Variable[]): string {
  const vars = [...variables].sort((a, b) => (a.name < b.name ? -1 : 1)).map((v) => [v.name, v.value]);
  return createHash('sha256')
    .update(JSON.stringify([query, range.time_range, range.time_start, range.time_end, vars]))
    .digest('hex')
    .slice(0, 32);
}

export const widgetKey = (d: Dashboard, w: Widget) => resultsKey(w.query_content, effectiveRange(d, w), d.variables);

/** The absolute range a widget runs over now (or the one a request names for all widgets). */
export const widgetWindow = (d: Dashboard, w: Widget, override: { start?: string; end?: string } = {}, now = new Date()) =>
  rangeOf(effectiveRange(d, w), override, now);

// ---- views --------------------------------------------------------------------------------------

export function dashboardView(d: Dashboard) {
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    fractal_id: d.fractal_id,
    prism_id: d.prism_id,
    variables: d.variables,
    time_range: d.time_range,
    start: d.time_start,
    end: d.time_end,
    refresh_interval_s: d.refresh_interval_s,
    shared_hide_queries: d.shared_hide_queries,
    version: d.version,
    created_by: d.created_by,
    updated_by: d.updated_by,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}

export const boxOf = (w: Box): Box => ({ id: w.id, pos_x: w.pos_x, pos_y: w.pos_y, width: w.width, height: w.height });

/** A widget as the API shows it, without its results (widgets-results.ts adds them). */
export function widgetFields(w: Widget) {
  return {
    id: w.id,
    dashboard_id: w.dashboard_id,
    title: w.title,
    query_content: w.query_content,
    chart_type: w.chart_type,
    chart_config: w.chart_config,
    time_range: w.time_range,
    start: w.time_start,
    end: w.time_end,
    pos_x: w.pos_x,
    pos_y: w.pos_y,
    width: w.width,
    height: w.height,
    version: w.version,
    created_by: w.created_by,
    updated_by: w.updated_by,
    created_at: w.created_at,
    updated_at: w.updated_at,
  };
}

// ---- changes ------------------------------------------------------------------------------------

/** Tells the dashboard's live readers of a stored change; `origin` is the writer's tab (X-Live-Client). */
export const publish = (ctx: Context, origin: string | undefined, id: string, type: string, data: unknown) => ctx.live.publish(LIVE_KIND, id, type, data, origin);

function checkVersion(d: Dashboard, version: number | undefined): void {
  if (version !== undefined && version !== d.version) {
    throw conflict(`Dashboard "${d.name}" was changed by ${d.updated_by} meanwhile (it is at version ${d.version}, not ${version}); reload it and try again.`);
  }
}

function refuseTakenName(ctx: Context, scope: Scope, name: string, except?: string): void {
  const other = ctx.dashboards.findByName(scope, name);
  if (other && other.id !== except) throw conflict(`A dashboard named "${other.name}" already exists here.`);
}

export function createDashboard(ctx: Context, a: Actor, scope: Scope, fields: DashboardFields, widgets: NewWidget[] = []): Dashboard {
  if (widgets.length > MAX_WIDGETS) throw badRequest(`A dashboard holds at most ${MAX_WIDGETS} widgets.`);
  refuseTakenName(ctx, scope, fields.name);
  return ctx.dashboards.create(scope, fields, widgets, actorName(a.p));
}

export function updateDashboard(ctx: Context, a: Actor, d: Dashboard, input: DashboardInput): Dashboard {
  checkVersion(d, input.version);
  const patch: Partial<DashboardFields> = {};
  if (input.name !== undefined) {
    patch.name = normalizeName(input.name);
    refuseTakenName(ctx, scopeOf(d), patch.name, d.id);
  }
  if (input.description !== undefined) patch.description = input.description.trim();
  if (input.variables !== undefined) patch.variables = normalizeVariables(input.variables);
  if (input.refresh_interval_s !== undefined) patch.refresh_interval_s = refreshInterval(input.refresh_interval_s);
  if (input.shared_hide_queries !== undefined) patch.shared_hide_queries = input.shared_hide_queries;
  if (input.time_range !== undefined || input.start !== undefined || input.end !== undefined) {
    if (input.time_range === null) throw badRequest('The field "time_range" of a dashboard cannot be null; name a range (24h, 7d, all, custom…).');
    Object.assign(patch, normalizeTimeRange({ time_range: input.time_range, start: input.start, end: input.end }, d));
  }
  const updated = ctx.dashboards.update(d.id, patch, actorName(a.p));
  // Public readers get the built answer while a new one is made (shared-links.ts); not when it shows or hides the queries otherwise.
  if (patch.shared_hide_queries !== undefined && patch.shared_hide_queries !== d.shared_hide_queries) ctx.dashboardRuns.publicViews.built.delete(d.id);
  publish(ctx, a.origin, d.id, 'dashboard_updated', dashboardView(updated));
  return updated;
}

export function deleteDashboard(ctx: Context, a: Actor, d: Dashboard): void {
  ctx.dashboards.delete(d.id);
  ctx.dashboardRuns.publicViews.built.delete(d.id);
  ctx.live.end(LIVE_KIND, d.id, 'dashboard_deleted', { id: d.id, by: actorName(a.p) }, a.origin);
}

const layoutOf = (ctx: Context, dashboardId: string): Box[] => ctx.dashboards.widgets(dashboardId).map(boxOf);

/** Adds a widget where it asks (the others make room) or at the first free cells; its query must compile. */
export async function addWidget(ctx: Context, a: Actor, d: Dashboard, input: WidgetInput): Promise<{ widget: Widget; moved: Box[] }> {
  const content = newContent(input);
  const asked = requestedCells(input);
  await checkWidgetQuery(ctx, d, content.query_content);
  // Read (and counted) after the await: another request may have added a widget meanwhile.
  if (ctx.dashboards.countWidgets(d.id) >= MAX_WIDGETS) throw badRequest(`Dashboard "${d.name}" already holds ${MAX_WIDGETS} widgets, the most a dashboard may hold.`);
  const before = layoutOf(ctx, d.id);
  const cells = asked ?? freeCells(before, DEFAULT_CELLS.width, DEFAULT_CELLS.height);
  const after = placeBox(before, { id: '', ...cells });
  const widget = ctx.dashboards.addWidget(d.id, { ...content, ...cells }, after.filter((b) => b.id !== ''), actorName(a.p));
  const moved = movedBoxes(before, after.filter((b) => b.id !== ''));
  publish(ctx, a.origin, d.id, 'widget_added', { widget: widgetFields(widget), moved, version: ctx.dashboards.get(d.id)!.version });
  return { widget, moved };
}

/** Changes what a widget shows (its query must compile); `version`, when sent, must be current. */
export async function updateWidget(ctx: Context, a: Actor, d: Dashboard, wid: string, input: WidgetInput): Promise<Widget> {
  const w = widgetOf(ctx, d, wid);
  const patch: Partial<WidgetContent> = {};
  if (input.title !== undefined) patch.title = checkTitle(input.title, '');
  if (input.query_content !== undefined) patch.query_content = checkQueryText(input.query_content, '');
  if (input.chart_type !== undefined) patch.chart_type = checkChartType(input.chart_type, '');
  if (input.chart_config !== undefined) patch.chart_config = checkChartConfig(input.chart_config, '');
  if (input.time_range !== undefined || input.start !== undefined || input.end !== undefined) {
    Object.assign(patch, widgetRange(input, w.time_range === null ? null : (w as StoredRange), ''));
  }
  if (patch.query_content !== undefined) await checkWidgetQuery(ctx, d, patch.query_content);
  // The version is checked after the await, against the widget as it is now.
  const current = widgetOf(ctx, d, wid);
  if (input.version !== undefined && input.version !== current.version) {
    throw conflict(`Widget "${current.title || current.id}" was changed by ${current.updated_by} meanwhile (it is at version ${current.version}, not ${input.version}); reload it and apply your edit again.`);
  }
  const updated = ctx.dashboards.updateWidget(w.id, patch, actorName(a.p));
  publish(ctx, a.origin, d.id, 'widget_updated', { widget: widgetFields(updated) });
  return updated;
}

/** Puts a widget on the cells asked for; the widgets in the way move down (grid.ts). */
export function moveWidget(ctx: Context, a: Actor, d: Dashboard, wid: string, input: Partial<Record<keyof Cells, unknown>>): { widget: Widget; moved: Box[] } {
  const w = widgetOf(ctx, d, wid);
  for (const k of ['pos_x', 'pos_y', 'width', 'height'] as const) if (input[k] === undefined) throw badRequest(`The field "${k}" is required.`);
  const cells = requestedCells(input)!;
  const before = layoutOf(ctx, d.id);
  const after = placeBox(before, { id: w.id, ...cells });
  const moved = movedBoxes(before, after);
  if (moved.length > 0) {
    ctx.dashboards.setLayout(d.id, moved, actorName(a.p));
    publish(ctx, a.origin, d.id, 'layout_changed', { moved, by: actorName(a.p) });
  }
  return { widget: widgetOf(ctx, d, wid), moved };
}

export function deleteWidget(ctx: Context, a: Actor, d: Dashboard, wid: string): void {
  const w = widgetOf(ctx, d, wid);
  ctx.dashboards.deleteWidget(w.id, actorName(a.p));
  publish(ctx, a.origin, d.id, 'widget_deleted', { id: w.id, version: ctx.dashboards.get(d.id)!.version });
}

export function setVariables(ctx: Context, a: Actor, d: Dashboard, variables: Array<{ name: unknown; value: unknown }>, version?: number): Dashboard {
  checkVersion(d, version);
  const updated = ctx.dashboards.update(d.id, { variables: normalizeVariables(variables) }, actorName(a.p));
  publish(ctx, a.origin, d.id, 'variables_updated', { variables: updated.variables, version: updated.version });
  return updated;
}

export function setRefreshInterval(ctx: Context, a: Actor, d: Dashboard, seconds: unknown, version?: number): Dashboard {
  checkVersion(d, version);
  const updated = ctx.dashboards.update(d.id, { refresh_interval_s: refreshInterval(seconds) }, actorName(a.p));
  publish(ctx, a.origin, d.id, 'refresh_interval_updated', { refresh_interval_s: updated.refresh_interval_s, version: updated.version });
  return updated;
}

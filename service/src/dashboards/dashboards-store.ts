// Dashboards in SQLite (`dashboards`, `dashboard_widgets`, `dashboard_shared_links`; migration 7).
// The store keeps rows and counts versions; who may do what, what a field may hold and where a
// widget goes on the grid is decided by dashboards-logic.ts (and grid.ts) before it calls here
// (better-sqlite3 is synchronous, so a check and the write after it are never interleaved).
import { randomUUID } from 'node:crypto';
import type { Scope, StoredRange, Variable } from '../shared/documents.ts';
import type { Db } from '../storage/sqlite.ts';
import { insertStoredRow, type StoredRow } from '../storage/stored-rows.ts';
import type { Box, Cells } from './grid.ts';

export interface Dashboard extends StoredRange {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  variables: Variable[];
  /** 0: off; else at least 5. */
  refresh_interval_s: number;
  /** The public page of a shared link shows no query text. */
  shared_hide_queries: boolean;
  /** Counts its own fields, variables and the set of its widgets. */
  version: number;
  /** Counts every change, layout and stored results included. */
  revision: number;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
}

export interface DashboardListed extends Dashboard {
  widget_count: number;
}

export type DashboardFields = Pick<
  Dashboard,
  'name' | 'description' | 'variables' | 'time_range' | 'time_start' | 'time_end' | 'refresh_interval_s' | 'shared_hide_queries'
>;

/** What a widget shows: its own range, or (time_range null) the dashboard's. */
export interface WidgetContent {
  title: string;
  query_content: string;
  chart_type: string;
  chart_config: Record<string, unknown>;
  time_range: string | null;
  time_start: string | null;
  time_end: string | null;
}

export interface Widget extends WidgetContent, Box {
  dashboard_id: string;
  /** Counts edits of what it shows. */
  version: number;
  /** The last run with the stored settings (JSON text); absent when not read, null when none. */
  results?: string | null;
  results_key: string | null;
  executed_at: string | null;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
}

export type NewWidget = WidgetContent & Cells & { results?: string | null; results_key?: string | null; executed_at?: string | null };

export interface SharedLink {
  id: string;
  dashboard_id: string;
  label: string;
  token_prefix: string;
  expires_at: string | null;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
}

/** A link found by its token, with what a public read needs of its dashboard. */
export interface LinkTarget extends SharedLink {
  revision: number;
  refresh_interval_s: number;
}

interface DashboardRow extends Omit<Dashboard, 'variables' | 'shared_hide_queries'> {
  variables: string;
  shared_hide_queries: number;
}

interface WidgetRow extends Omit<Widget, 'chart_config'> {
  chart_config: string;
}

const D_COLUMNS = `id, name, description, fractal_id, prism_id, variables, time_range, time_start, time_end, refresh_interval_s,
  shared_hide_queries, version, revision, created_by, updated_by, created_at, updated_at`;
const W_COLUMNS = `id, dashboard_id, title, query_content, chart_type, chart_config, time_range, time_start, time_end,
  pos_x, pos_y, width, height, version, results_key, executed_at, created_by, updated_by, created_at, updated_at`;
const L_COLUMNS = 'id, dashboard_id, label, token_prefix, expires_at, created_by, created_at, last_used_at';

const toDashboard = (r: DashboardRow): Dashboard => ({ ...r, variables: JSON.parse(r.variables), shared_hide_queries: r.shared_hide_queries === 1 });
const toWidget = (r: WidgetRow): Widget => ({ ...r, chart_config: JSON.parse(r.chart_config) });
const now = () => new Date().toISOString();
const scopeColumn = (s: Scope) => (s.type === 'fractal' ? 'fractal_id' : 'prism_id');

export class DashboardsStore {
  constructor(private readonly db: Db) {}

  /** A dashboard with its widgets, all or nothing. */
  create(scope: Scope, fields: DashboardFields, widgets: NewWidget[], by: string): Dashboard {
    const id = randomUUID();
    const t = now();
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO dashboards (id, name, description, fractal_id, prism_id, variables, time_range, time_start, time_end,
             refresh_interval_s, shared_hide_queries, created_by, updated_by, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          fields.name,
          fields.description,
          scope.type === 'fractal' ? scope.id : null,
          scope.type === 'prism' ? scope.id : null,
          JSON.stringify(fields.variables),
          fields.time_range,
          fields.time_start,
          fields.time_end,
          fields.refresh_interval_s,
          fields.shared_hide_queries ? 1 : 0,
          by,
          by,
          t,
          t,
        );
      for (const w of widgets) this.insertWidget(id, w, by, t);
    })();
    return this.get(id)!;
  }

  get(id: string): Dashboard | undefined {
    const r = this.db.prepare(`SELECT ${D_COLUMNS} FROM dashboards WHERE id = ?`).get(id) as DashboardRow | undefined;
    return r && toDashboard(r);
  }

  findByName(scope: Scope, name: string): Dashboard | undefined {
    const r = this.db.prepare(`SELECT ${D_COLUMNS} FROM dashboards WHERE ${scopeColumn(scope)} = ? AND name = ? COLLATE NOCASE`).get(scope.id, name) as
      | DashboardRow
      | undefined;
    return r && toDashboard(r);
  }

  /** Names of the scope's dashboards that start with `prefix` (case-insensitive), for picking a free one. */
  namesLike(scope: Scope, prefix: string): string[] {
    const rows = this.db.prepare(`SELECT name FROM dashboards WHERE ${scopeColumn(scope)} = ?`).all(scope.id) as Array<{ name: string }>;
    const p = prefix.toLowerCase();
    return rows.map((r) => r.name).filter((n) => n.toLowerCase().startsWith(p));
  }

  /** The scope's dashboards by name, with the total before paging. */
  list(scope: Scope, text: string | undefined, page: { limit: number; offset: number }): { rows: DashboardListed[]; total: number } {
    const where = [`d.${scopeColumn(scope)} = ?`];
    const params: unknown[] = [scope.id];
    if (text) {
      // instr on lower(): a literal, no LIKE wildcards.
      where.push('(instr(lower(d.name), ?) > 0 OR instr(lower(d.description), ?) > 0)');
      params.push(text.toLowerCase(), text.toLowerCase());
    }
    const w = where.join(' AND ');
    const total = (this.db.prepare(`SELECT count(*) AS n FROM dashboards d WHERE ${w}`).get(...params) as { n: number }).n;
    const rows = this.db
      .prepare(
        `SELECT ${D_COLUMNS.replace(/(\w+)/g, 'd.$1')},
           (SELECT count(*) FROM dashboard_widgets x WHERE x.dashboard_id = d.id) AS widget_count
         FROM dashboards d WHERE ${w} ORDER BY d.name COLLATE NOCASE, d.id LIMIT ? OFFSET ?`,
      )
      .all(...params, page.limit, page.offset) as Array<DashboardRow & { widget_count: number }>;
    return { rows: rows.map((r) => ({ ...toDashboard(r), widget_count: r.widget_count })), total };
  }

  /** Changes the dashboard's own fields and counts a version. */
  update(id: string, patch: Partial<DashboardFields>, by: string): Dashboard {
    const next = { ...this.get(id)!, ...patch };
    this.db
      .prepare(
        `UPDATE dashboards SET name = ?, description = ?, variables = ?, time_range = ?, time_start = ?, time_end = ?,
           refresh_interval_s = ?, shared_hide_queries = ?, version = version + 1, revision = revision + 1, updated_by = ?, updated_at = ?
         WHERE id = ?`,
      )
      .run(
        next.name,
        next.description,
        JSON.stringify(next.variables),
        next.time_range,
        next.time_start,
        next.time_end,
        next.refresh_interval_s,
        next.shared_hide_queries ? 1 : 0,
        by,
        now(),
        id,
      );
    return this.get(id)!;
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM dashboards WHERE id = ?').run(id).changes > 0;
  }

  // ---- widgets ----------------------------------------------------------------------------------

  /** The dashboard's widgets, top to bottom, left to right; `withResults` also reads their last results. */
  widgets(dashboardId: string, withResults = false): Widget[] {
    const cols = withResults ? `${W_COLUMNS}, results` : W_COLUMNS;
    const rows = this.db.prepare(`SELECT ${cols} FROM dashboard_widgets WHERE dashboard_id = ? ORDER BY pos_y, pos_x, id`).all(dashboardId) as WidgetRow[];
    return rows.map(toWidget);
  }

  widget(id: string, withResults = false): Widget | undefined {
    const cols = withResults ? `${W_COLUMNS}, results` : W_COLUMNS;
    const r = this.db.prepare(`SELECT ${cols} FROM dashboard_widgets WHERE id = ?`).get(id) as WidgetRow | undefined;
    return r && toWidget(r);
  }

  countWidgets(dashboardId: string): number {
    return (this.db.prepare('SELECT count(*) AS n FROM dashboard_widgets WHERE dashboard_id = ?').get(dashboardId) as { n: number }).n;
  }

  /** Adds a widget and moves the others to `layout` (the cells grid.ts gave them), as one change. */
  addWidget(dashboardId: string, w: NewWidget, layout: readonly Box[], by: string): Widget {
    let id = '';
    this.db.transaction(() => {
      const t = now();
      id = this.insertWidget(dashboardId, w, by, t);
      this.moveWidgets(dashboardId, layout, t);
      this.bump(dashboardId, by, true);
    })();
    return this.widget(id, true)!;
  }

  /** Changes what a widget shows and counts its version. */
  updateWidget(id: string, patch: Partial<WidgetContent>, by: string): Widget {
    const cur = this.widget(id)!;
    const next = { ...cur, ...patch };
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE dashboard_widgets SET title = ?, query_content = ?, chart_type = ?, chart_config = ?, time_range = ?, time_start = ?, time_end = ?,
             version = version + 1, updated_by = ?, updated_at = ? WHERE id = ?`,
        )
        .run(next.title, next.query_content, next.chart_type, JSON.stringify(next.chart_config), next.time_range, next.time_start, next.time_end, by, now(), id);
      this.bump(cur.dashboard_id, by, false);
    })();
    return this.widget(id, true)!;
  }

  /** Puts widgets on the cells given (grid.ts settled them); the dashboard's revision counts it. */
  setLayout(dashboardId: string, layout: readonly Box[], by: string): void {
    this.db.transaction(() => {
      this.moveWidgets(dashboardId, layout, now());
      this.bump(dashboardId, by, false);
    })();
  }

  deleteWidget(id: string, by: string): void {
    const cur = this.widget(id);
    if (!cur) return;
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM dashboard_widgets WHERE id = ?').run(id);
      this.bump(cur.dashboard_id, by, true);
    })();
  }

  /** Stores a widget's last results (JSON text) and what they were run with; the dashboard's revision counts it. */
  storeResults(id: string, results: string, key: string, executedAt: string): boolean {
    const cur = this.widget(id);
    if (!cur) return false;
    this.db.transaction(() => {
      this.db.prepare('UPDATE dashboard_widgets SET results = ?, results_key = ?, executed_at = ? WHERE id = ?').run(results, key, executedAt, id);
      this.db.prepare('UPDATE dashboards SET revision = revision + 1 WHERE id = ?').run(cur.dashboard_id);
    })();
    return true;
  }

  // ---- shared links -------------------------------------------------------------------------------

  links(dashboardId: string): SharedLink[] {
    return this.db.prepare(`SELECT ${L_COLUMNS} FROM dashboard_shared_links WHERE dashboard_id = ? ORDER BY created_at, id`).all(dashboardId) as SharedLink[];
  }

  link(id: string): SharedLink | undefined {
    return this.db.prepare(`SELECT ${L_COLUMNS} FROM dashboard_shared_links WHERE id = ?`).get(id) as SharedLink | undefined;
  }

  addLink(dashboardId: string, l: { label: string; tokenHash: string; tokenPrefix: string; expiresAt: string | null }, by: string): SharedLink {
    const id = randomUUID();
    this.db
      .prepare(
        `INSERT INTO dashboard_shared_links (id, dashboard_id, label, token_hash, token_prefix, expires_at, created_by, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, dashboardId, l.label, l.tokenHash, l.tokenPrefix, l.expiresAt, by, now());
    return this.link(id)!;
  }

  deleteLink(id: string): boolean {
    return this.db.prepare('DELETE FROM dashboard_shared_links WHERE id = ?').run(id).changes > 0;
  }

  /** The link a token's hash names, with its dashboard's revision and refresh interval (one indexed read per public hit). */
  /** Every public read looks its token up: one prepared statement on the unique index of token_hash. */
  private byTokenHash?: ReturnType<Db['prepare']>;
  linkByTokenHash(hash: string): LinkTarget | undefined {
    this.byTokenHash ??= this.db.prepare(
      `SELECT ${L_COLUMNS.replace(/(\w+)/g, 'l.$1')}, d.revision, d.refresh_interval_s
       FROM dashboard_shared_links l JOIN dashboards d ON d.id = l.dashboard_id WHERE l.token_hash = ?`,
    );
    return this.byTokenHash.get(hash) as LinkTarget | undefined;
  }

  touchLink(id: string, at: string): void {
    this.db.prepare('UPDATE dashboard_shared_links SET last_used_at = ? WHERE id = ?').run(at, id);
  }

  // ---- case archives (cases/) ------------------------------------------------------------------

  /** The ids of a fractal's dashboards, oldest first: a case export reads them one at a time. */
  caseIds(fractalId: string): string[] {
    return (this.db.prepare('SELECT id FROM dashboards WHERE fractal_id = ? ORDER BY created_at, id').all(fractalId) as Array<{ id: string }>).map((r) => r.id);
  }

  /** A dashboard and its widgets (with their last results) exactly as stored; shared links stay behind (their tokens are this appliance's). */
  caseRecord(id: string): { dashboard: StoredRow; widgets: StoredRow[] } | undefined {
    const dashboard = this.db.prepare('SELECT * FROM dashboards WHERE id = ?').get(id) as StoredRow | undefined;
    if (!dashboard) return undefined;
    const widgets = this.db.prepare('SELECT * FROM dashboard_widgets WHERE dashboard_id = ? ORDER BY pos_y, pos_x, id').all(id) as StoredRow[];
    return { dashboard, widgets };
  }

  /** Recreates an exported dashboard in `fractalId`, new ids for it and its widgets. Inside the import's transaction. */
  restoreCaseRecord(fractalId: string, record: { dashboard: StoredRow; widgets: StoredRow[] }): string {
    const id = randomUUID();
    insertStoredRow(this.db, 'dashboards', { ...record.dashboard, id, fractal_id: fractalId, prism_id: null });
    for (const w of record.widgets) {
      const widgetId = randomUUID();
      // Stored results name the widget they belong to.
      let results = w.results;
      if (typeof results === 'string') {
        const parsed = JSON.parse(results) as { widget_id?: unknown };
        if (parsed?.widget_id === w.id) results = JSON.stringify({ ...parsed, widget_id: widgetId });
      }
      insertStoredRow(this.db, 'dashboard_widgets', { ...w, id: widgetId, dashboard_id: id, results });
    }
    return id;
  }

  // ---- inside -------------------------------------------------------------------------------------

  private insertWidget(dashboardId: string, w: NewWidget, by: string, t: string): string {
    const id = randomUUID();
    this.db
      .prepare(
        `INSERT INTO dashboard_widgets (id, dashboard_id, title, query_content, chart_type, chart_config, time_range, time_start, time_end,
           pos_x, pos_y, width, height, results, results_key, executed_at, created_by, updated_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        dashboardId,
        w.title,
        w.query_content,
        w.chart_type,
        JSON.stringify(w.chart_config),
        w.time_range,
        w.time_start,
        w.time_end,
        w.pos_x,
        w.pos_y,
        w.width,
        w.height,
        w.results ?? null,
        w.results_key ?? null,
        w.executed_at ?? null,
        by,
        by,
        t,
        t,
      );
    return id;
  }

  private moveWidgets(dashboardId: string, layout: readonly Box[], t: string): void {
    const set = this.db.prepare(
      `UPDATE dashboard_widgets SET pos_x = ?, pos_y = ?, width = ?, height = ?, updated_at = ?
       WHERE id = ? AND dashboard_id = ? AND (pos_x <> ? OR pos_y <> ? OR width <> ? OR height <> ?)`,
    );
    for (const b of layout) set.run(b.pos_x, b.pos_y, b.width, b.height, t, b.id, dashboardId, b.pos_x, b.pos_y, b.width, b.height);
  }

  /** A change of the dashboard: `structural` ones (its fields, the set of widgets) count its version too. */
  private bump(dashboardId: string, by: string, structural: boolean): void {
    this.db
      .prepare(`UPDATE dashboards SET ${structural ? 'version = version + 1, ' : ''}revision = revision + 1, updated_by = ?, updated_at = ? WHERE id = ?`)
      .run(by, now(), dashboardId);
  }
}

// Alerts in SQLite (migration 4): definitions, the actions attached to each (one link table per
// action kind), the engine's state per alert (cursor, last run, failures), and the feed columns
// the feeds domain fills through alerts-logic.ts.
import { randomUUID } from 'node:crypto';
import type { ScopeType } from '../auth/principal.ts';
import type { Db } from '../storage/sqlite.ts';
import { insertStoredRow, type StoredRow } from '../storage/stored-rows.ts';

import { ACTION_KINDS, type ActionKind, type Severity } from './alert-terms.ts';

export { ACTION_KINDS, SEVERITIES, type ActionKind, type Severity } from './alert-terms.ts';
export type ActionIds = Record<ActionKind, string[]>;

export type AlertType = 'event' | 'compound';

/** What an alert is defined by (create and update take it whole). */
export interface AlertDefinition {
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  query_string: string;
  alert_type: AlertType;
  severity: Severity;
  labels: string[];
  references: string[];
  enabled: boolean;
  throttle_time_seconds: number;
  throttle_field: string;
  actions: ActionIds;
  feed_id?: string | null;
  source_path?: string | null;
  source_rule_id?: string | null;
}

export interface Alert extends Required<AlertDefinition> {
  id: string;
  /** Ingest time up to which the engine has evaluated the alert (ISO), null before its first window. */
  cursor: string | null;
  last_evaluated_at: string | null;
  last_execution_ms: number | null;
  last_triggered: string | null;
  last_match_count: number | null;
  failure_count: number;
  last_error: string;
  disabled_reason: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

interface AlertRecord extends Omit<Alert, 'labels' | 'references' | 'enabled' | 'actions'> {
  labels: string;
  reference_links: string;
  enabled: number;
}

const LINK_TABLE: Record<ActionKind, string> = {
  webhook: 'alert_webhook_actions',
  email: 'alert_email_actions',
  fractal: 'alert_fractal_actions',
  dictionary: 'alert_dictionary_actions',
};

export const noActions = (): ActionIds => ({ webhook: [], email: [], fractal: [], dictionary: [] });

const now = () => new Date().toISOString();

export class AlertsStore {
  constructor(private readonly db: Db) {}

  private fromRecords(rows: AlertRecord[]): Alert[] {
    if (rows.length === 0) return [];
    const byId = new Map<string, ActionIds>(rows.map((r) => [r.id, noActions()]));
    // One query per kind for the whole list, not per alert.
    for (const kind of ACTION_KINDS) {
      const links = this.db
        .prepare(`SELECT alert_id, action_id FROM ${LINK_TABLE[kind]} WHERE alert_id IN (SELECT value FROM json_each(?)) ORDER BY rowid`)
        .all(JSON.stringify(rows.map((r) => r.id))) as Array<{ alert_id: string; action_id: string }>;
      for (const l of links) byId.get(l.alert_id)![kind].push(l.action_id);
    }
    return rows.map(({ labels, reference_links, enabled, ...r }) => ({
      ...r,
      labels: JSON.parse(labels) as string[],
      references: JSON.parse(reference_links) as string[],
      enabled: enabled === 1,
      actions: byId.get(r.id)!,
      feed_id: r.feed_id ?? null,
      source_path: r.source_path ?? null,
      source_rule_id: r.source_rule_id ?? null,
    }));
  }

  private select(where: string, ...params: unknown[]): Alert[] {
    return this.fromRecords(this.db.prepare(`SELECT * FROM alerts WHERE ${where} ORDER BY name COLLATE NOCASE, id`).all(...params) as AlertRecord[]);
  }

  get(id: string): Alert | undefined {
    return this.select('id = ?', id)[0];
  }

  getMany(ids: string[]): Alert[] {
    return this.select('id IN (SELECT value FROM json_each(?))', JSON.stringify(ids));
  }

  /** The alerts of one fractal or prism. */
  inScope(scope: { type: ScopeType; id: string }): Alert[] {
    return this.select(`${scope.type === 'fractal' ? 'fractal_id' : 'prism_id'} = ?`, scope.id);
  }

  /** Every alert a feed brought in. */
  ofFeed(feedId: string): Alert[] {
    return this.select('feed_id = ?', feedId);
  }

  /** What the engine evaluates each tick. */
  enabled(): Alert[] {
    return this.select('enabled = 1');
  }

  // ---- case archives (cases/) ------------------------------------------------------------------

  /** A fractal's alerts exactly as stored (their action links stay behind: actions and their secrets are this appliance's). */
  caseRecords(fractalId: string): StoredRow[] {
    return this.db.prepare('SELECT * FROM alerts WHERE fractal_id = ? ORDER BY created_at, id').all(fractalId) as StoredRow[];
  }

  /**
   * Recreates an exported alert in `fractalId` under a new id, cursor and history as they were, so
   * it does not evaluate the imported logs again; without actions, and no longer tied to a feed of
   * the other appliance. Inside the import's transaction.
   */
  restoreCaseRecord(fractalId: string, row: StoredRow): string {
    const id = randomUUID();
    insertStoredRow(this.db, 'alerts', { ...row, id, fractal_id: fractalId, prism_id: null, feed_id: null });
    return id;
  }

  private writeLinks(id: string, actions: ActionIds): void {
    for (const kind of ACTION_KINDS) {
      this.db.prepare(`DELETE FROM ${LINK_TABLE[kind]} WHERE alert_id = ?`).run(id);
      const add = this.db.prepare(`INSERT OR IGNORE INTO ${LINK_TABLE[kind]} (alert_id, action_id) VALUES (?, ?)`);
      for (const a of actions[kind]) add.run(id, a);
    }
  }

  /** Inserts an alert; `cursor` is where its first window starts. Call inside a transaction for several. */
  insert(d: AlertDefinition, createdBy: string, cursor: string | null): string {
    const id = randomUUID();
    const t = now();
    this.db
      .prepare(
        `INSERT INTO alerts (id, name, description, fractal_id, prism_id, query_string, alert_type, severity, labels, reference_links,
           enabled, throttle_time_seconds, throttle_field, feed_id, source_path, source_rule_id, cursor, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id, d.name, d.description, d.fractal_id, d.prism_id, d.query_string, d.alert_type, d.severity, JSON.stringify(d.labels),
        JSON.stringify(d.references), d.enabled ? 1 : 0, d.throttle_time_seconds, d.throttle_field, d.feed_id ?? null,
        d.source_path ?? null, d.source_rule_id ?? null, cursor, createdBy, t, t,
      );
    this.writeLinks(id, d.actions);
    return id;
  }

  create(d: AlertDefinition, createdBy: string, cursor: string | null): Alert {
    const id = this.db.transaction(() => this.insert(d, createdBy, cursor))();
    return this.get(id)!;
  }

  /**
   * Replaces an alert's definition (its scope and feed columns stay). Switching it on sets the
   * cursor to `enableCursor` and clears why it was off; its evaluation state is otherwise kept.
   */
  replace(id: string, d: Omit<AlertDefinition, 'fractal_id' | 'prism_id'>, enableCursor: string): void {
    const cur = this.db.prepare('SELECT enabled FROM alerts WHERE id = ?').get(id) as { enabled: number } | undefined;
    if (!cur) return;
    const switchingOn = d.enabled && cur.enabled === 0;
    this.db
      .prepare(
        `UPDATE alerts SET name = ?, description = ?, query_string = ?, alert_type = ?, severity = ?, labels = ?, reference_links = ?,
           enabled = ?, throttle_time_seconds = ?, throttle_field = ?, source_path = coalesce(?, source_path), source_rule_id = coalesce(?, source_rule_id),
           ${switchingOn ? "cursor = ?, disabled_reason = '', failure_count = 0, last_error = ''," : ''} updated_at = ? WHERE id = ?`,
      )
      .run(
        d.name, d.description, d.query_string, d.alert_type, d.severity, JSON.stringify(d.labels), JSON.stringify(d.references),
        d.enabled ? 1 : 0, d.throttle_time_seconds, d.throttle_field, d.source_path ?? null, d.source_rule_id ?? null,
        ...(switchingOn ? [enableCursor] : []), now(), id,
      );
    this.writeLinks(id, d.actions);
  }

  update(id: string, d: Omit<AlertDefinition, 'fractal_id' | 'prism_id'>, enableCursor: string): Alert {
    this.db.transaction(() => this.replace(id, d, enableCursor))();
    return this.get(id)!;
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM alerts WHERE id = ?').run(id).changes > 0;
  }

  /**
   * Switches alerts on or off. Switching on starts from `enableCursor` (a few minutes ago, not
   * where it stopped) and clears why it was off. Returns how many changed.
   */
  setEnabled(ids: string[], enabled: boolean, enableCursor: string): number {
    const list = JSON.stringify(ids);
    const t = now();
    return this.db.transaction(() =>
      enabled
        ? this.db
            .prepare(
              `UPDATE alerts SET enabled = 1, cursor = ?, disabled_reason = '', failure_count = 0, last_error = '', updated_at = ?
               WHERE enabled = 0 AND id IN (SELECT value FROM json_each(?))`,
            )
            .run(enableCursor, t, list).changes
        : this.db.prepare('UPDATE alerts SET enabled = 0, updated_at = ? WHERE enabled = 1 AND id IN (SELECT value FROM json_each(?))').run(t, list).changes,
    )();
  }

  /** Runs `fn` in one SQLite transaction (a feed sync's creates, updates and deletes together). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  // ---- the engine's state ---------------------------------------------------------------------------

  /** A window evaluated without firing: the cursor moves on. */
  advance(id: string, cursor: string, ms: number): void {
    this.db
      .prepare(`UPDATE alerts SET cursor = ?, last_evaluated_at = ?, last_execution_ms = ?, failure_count = 0, last_error = '' WHERE id = ?`)
      .run(cursor, now(), ms, id);
  }

  /** A window that fired: the cursor moves on and the firing is noted (inside the engine's transaction). */
  fired(id: string, cursor: string, ms: number, matchCount: number, at: string): void {
    this.db
      .prepare(
        `UPDATE alerts SET cursor = ?, last_evaluated_at = ?, last_execution_ms = ?, failure_count = 0, last_error = '',
           last_triggered = ?, last_match_count = ? WHERE id = ?`,
      )
      .run(cursor, now(), ms, at, matchCount, id);
  }

  /** A failed evaluation (the cursor stays); with `disable`, the alert is switched off with that reason. */
  failed(id: string, error: string, disable: string | null): void {
    this.db
      .prepare(
        `UPDATE alerts SET failure_count = failure_count + 1, last_error = ?, last_evaluated_at = ?
           ${disable === null ? '' : ', enabled = 0, disabled_reason = ?'} WHERE id = ?`,
      )
      .run(error, now(), ...(disable === null ? [] : [disable]), id);
  }
}

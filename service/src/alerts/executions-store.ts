// Firings and their deliveries in SQLite (migration 4): `alert_executions` (one per window that
// matched, with the firing's payload every delivery renders from), `alert_deliveries` (the durable
// outbox, one row per action of a firing) and `alert_throttles` (when each throttle key may fire
// again). The engine writes a firing, its deliveries, its throttle keys and the alert's cursor in
// one transaction, so after a crash either all of them happened or none did.
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';
import { insertStoredRow, type StoredRow } from '../storage/stored-rows.ts';
import type { ActionKind } from './alerts-store.ts';

/** What a firing hands its actions: enough to render any of them later, after a restart too. */
export interface FiringPayload {
  alert_id: string;
  alert_name: string;
  /** The name as written, when it held `{{field}}` templates. */
  original_name?: string;
  description: string;
  severity: string;
  labels: string[];
  query_string: string;
  fractal_id: string | null;
  prism_id: string | null;
  triggered_at: string;
  match_count: number;
  /** Column order of the results (the query's field_order). */
  field_order: string[];
  results: Array<Record<string, unknown>>;
  /** Earliest and latest event time among the results (for the link that opens them). */
  events_start: string | null;
  events_end: string | null;
}

export interface DeliveryRow {
  id: string;
  execution_id: string;
  action_kind: ActionKind;
  action_id: string;
  action_name: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  status_code: number | null;
  error: string;
  detail: string;
  duration_ms: number | null;
  created_at: string;
  finished_at: string | null;
}

export interface ExecutionRow {
  id: string;
  alert_id: string;
  triggered_at: string;
  window_start: string;
  window_end: string;
  match_count: number;
  throttled: number;
  limit_hit: number;
  duration_ms: number;
}

/** This appliance's own executions older than this are removed (those from a case archive stay). */
const KEEP_DAYS = 30;

export class ExecutionsStore {
  constructor(private readonly db: Db) {}

  // ---- written by the engine (inside its transaction) ------------------------------------------------

  /**
   * The alerts whose firings since `since` hold results with `field` = `value` (an import's
   * events, by `import_id`): per alert, its firings and the matching results they hold.
   */
  firingsHolding(field: string, value: string, since: string): Array<{ alert_id: string; name: string; severity: string; firings: number; matches: number }> {
    return this.db
      .prepare(
        `SELECT e.alert_id, a.name, a.severity, count(*) AS firings, sum(m.n) AS matches
         FROM alert_executions e
         JOIN alerts a ON a.id = e.alert_id
         JOIN (SELECT e2.id, (SELECT count(*) FROM json_each(e2.payload, '$.results') r WHERE json_extract(r.value, '$.' || json_quote(?)) = ?) AS n
               FROM alert_executions e2 WHERE e2.triggered_at >= ? AND e2.payload IS NOT NULL) m ON m.id = e.id
         WHERE m.n > 0
         GROUP BY e.alert_id, a.name, a.severity ORDER BY a.name`,
      )
      .all(field, value, since) as Array<{ alert_id: string; name: string; severity: string; firings: number; matches: number }>;
  }

  /** A window that matched: the execution, and (unless throttled) one pending delivery per action. */
  recordExecution(e: Omit<ExecutionRow, 'id' | 'throttled' | 'limit_hit'> & { throttled: boolean; limit_hit: boolean; payload: FiringPayload | null }, actions: Array<{ kind: ActionKind; id: string; name: string }>): string {
    const id = randomUUID();
    this.db
      .prepare(
        `INSERT INTO alert_executions (id, alert_id, triggered_at, window_start, window_end, match_count, throttled, limit_hit, duration_ms, payload)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, e.alert_id, e.triggered_at, e.window_start, e.window_end, e.match_count, e.throttled ? 1 : 0, e.limit_hit ? 1 : 0, e.duration_ms, e.payload ? JSON.stringify(e.payload) : null);
    const add = this.db.prepare(
      `INSERT INTO alert_deliveries (id, execution_id, action_kind, action_id, action_name, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const a of actions) add.run(randomUUID(), id, a.kind, a.id, a.name, e.triggered_at, e.triggered_at);
    return id;
  }

  /** Of `keys`, those still inside their throttle window at `now`. */
  throttled(alertId: string, keys: string[], now: string): Set<string> {
    if (keys.length === 0) return new Set();
    const rows = this.db
      .prepare(`SELECT throttle_key FROM alert_throttles WHERE alert_id = ? AND until > ? AND throttle_key IN (SELECT value FROM json_each(?))`)
      .all(alertId, now, JSON.stringify(keys)) as Array<{ throttle_key: string }>;
    return new Set(rows.map((r) => r.throttle_key));
  }

  throttle(alertId: string, keys: string[], until: string): void {
    const put = this.db.prepare(
      `INSERT INTO alert_throttles (alert_id, throttle_key, until) VALUES (?, ?, ?) ON CONFLICT(alert_id, throttle_key) DO UPDATE SET until = excluded.until`,
    );
    for (const k of keys) put.run(alertId, k, until);
  }

  // ---- case archives (cases/) ------------------------------------------------------------------

  /** An alert's firings with their deliveries, exactly as stored, oldest first. */
  caseRecords(alertId: string): Array<{ execution: StoredRow; deliveries: StoredRow[] }> {
    const executions = this.db.prepare('SELECT * FROM alert_executions WHERE alert_id = ? ORDER BY triggered_at, id').all(alertId) as StoredRow[];
    const deliveries = this.db.prepare('SELECT * FROM alert_deliveries WHERE execution_id = ? ORDER BY created_at, id');
    return executions.map((execution) => ({ execution, deliveries: deliveries.all(execution.id) as StoredRow[] }));
  }

  /**
   * Recreates an exported firing for the imported alert `alertId` of `fractalId`: new ids, the
   * payload's alert and fractal pointed at the new ones, deliveries as they ended. A delivery
   * still pending when the case left is recorded as failed here: this appliance has none of the
   * other's actions, and its outbox must not send it. Inside the import's transaction.
   */
  restoreCaseRecord(alertId: string, fractalId: string, record: { execution: StoredRow; deliveries: StoredRow[] }): void {
    const id = randomUUID();
    let payload = record.execution.payload;
    if (typeof payload === 'string') payload = JSON.stringify({ ...(JSON.parse(payload) as FiringPayload), alert_id: alertId, fractal_id: fractalId, prism_id: null });
    insertStoredRow(this.db, 'alert_executions', { ...record.execution, id, alert_id: alertId, payload, from_case: 1 });
    for (const d of record.deliveries) {
      const open: StoredRow = d.status === 'pending' ? { status: 'failed', error: 'Not delivered before the case was exported from the other appliance.', finished_at: new Date().toISOString() } : {};
      insertStoredRow(this.db, 'alert_deliveries', { ...d, ...open, id: randomUUID(), execution_id: id });
    }
  }

  // ---- the outbox ---------------------------------------------------------------------------------

  /** Pending deliveries due at `now`, oldest first, leaving out those in `busy`. */
  due(now: string, limit: number, busy: Set<string>): DeliveryRow[] {
    return this.db
      .prepare(
        `SELECT * FROM alert_deliveries WHERE status = 'pending' AND next_attempt_at <= ? AND id NOT IN (SELECT value FROM json_each(?))
         ORDER BY next_attempt_at, created_at LIMIT ?`,
      )
      .all(now, JSON.stringify([...busy]), limit) as DeliveryRow[];
  }

  /** When the next pending delivery falls due (null: none pending). */
  nextDue(busy: Set<string>): string | null {
    const r = this.db
      .prepare(`SELECT min(next_attempt_at) AS t FROM alert_deliveries WHERE status = 'pending' AND id NOT IN (SELECT value FROM json_each(?))`)
      .get(JSON.stringify([...busy])) as { t: string | null };
    return r.t;
  }

  pendingCount(): number {
    return (this.db.prepare(`SELECT count(*) AS n FROM alert_deliveries WHERE status = 'pending'`).get() as { n: number }).n;
  }

  payload(executionId: string): FiringPayload | null {
    const r = this.db.prepare('SELECT payload FROM alert_executions WHERE id = ?').get(executionId) as { payload: string | null } | undefined;
    return r?.payload ? (JSON.parse(r.payload) as FiringPayload) : null;
  }

  /** An attempt's outcome: delivered or failed for good, or pending again at `retryAt`. */
  settle(id: string, o: { status: 'delivered' | 'failed' | 'pending'; attempts: number; status_code: number | null; error: string; detail: string; duration_ms: number; retryAt?: string }): void {
    const t = new Date().toISOString();
    this.db
      .prepare(
        `UPDATE alert_deliveries SET status = ?, attempts = ?, status_code = ?, error = ?, detail = ?, duration_ms = ?,
           next_attempt_at = coalesce(?, next_attempt_at), finished_at = ? WHERE id = ?`,
      )
      .run(o.status, o.attempts, o.status_code, o.error, o.detail, o.duration_ms, o.retryAt ?? null, o.status === 'pending' ? null : t, id);
  }

  // ---- reads --------------------------------------------------------------------------------------

  list(alertId: string, page: { limit: number; offset: number }): { total: number; executions: Array<ExecutionRow & { deliveries: DeliveryRow[]; events_start: string | null; events_end: string | null }> } {
    const total = (this.db.prepare('SELECT count(*) AS n FROM alert_executions WHERE alert_id = ?').get(alertId) as { n: number }).n;
    const rows = this.db
      .prepare(
        `SELECT id, alert_id, triggered_at, window_start, window_end, match_count, throttled, limit_hit, duration_ms,
           json_extract(payload, '$.events_start') AS events_start, json_extract(payload, '$.events_end') AS events_end
         FROM alert_executions WHERE alert_id = ? ORDER BY triggered_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      )
      .all(alertId, page.limit, page.offset) as Array<ExecutionRow & { events_start: string | null; events_end: string | null }>;
    const deliveries = this.db
      .prepare(`SELECT * FROM alert_deliveries WHERE execution_id IN (SELECT value FROM json_each(?)) ORDER BY action_kind, action_name`)
      .all(JSON.stringify(rows.map((r) => r.id))) as DeliveryRow[];
    return { total, executions: rows.map((r) => ({ ...r, deliveries: deliveries.filter((d) => d.execution_id === r.id) })) };
  }

  /** The newest execution of an alert that kept its payload (a preview renders against it). */
  lastPayload(alertId: string): FiringPayload | null {
    const r = this.db
      .prepare(`SELECT payload FROM alert_executions WHERE alert_id = ? AND payload IS NOT NULL ORDER BY triggered_at DESC, rowid DESC LIMIT 1`)
      .get(alertId) as { payload: string } | undefined;
    return r ? (JSON.parse(r.payload) as FiringPayload) : null;
  }

  /** Firings (not throttled) of these alerts since `since`, newest first. */
  recent(alertIds: string[], since: string, limit: number): Array<ExecutionRow & { events_start: string | null; events_end: string | null }> {
    return this.db
      .prepare(
        `SELECT id, alert_id, triggered_at, window_start, window_end, match_count, throttled, limit_hit, duration_ms,
           json_extract(payload, '$.events_start') AS events_start, json_extract(payload, '$.events_end') AS events_end
         FROM alert_executions WHERE alert_id IN (SELECT value FROM json_each(?)) AND triggered_at >= ? AND throttled = 0
         ORDER BY triggered_at DESC LIMIT ?`,
      )
      .all(JSON.stringify(alertIds), since, limit) as Array<ExecutionRow & { events_start: string | null; events_end: string | null }>;
  }

  /** Matches per hour for each alert over the `hours` before `end` (oldest first), for the list's sparklines. */
  hourly(alertIds: string[], end: Date, hours: number): Map<string, number[]> {
    const start = new Date(end.getTime() - hours * 3_600_000);
    const rows = this.db
      .prepare(
        `SELECT alert_id, triggered_at, match_count FROM alert_executions
         WHERE alert_id IN (SELECT value FROM json_each(?)) AND triggered_at > ? AND triggered_at <= ?`,
      )
      .all(JSON.stringify(alertIds), start.toISOString(), end.toISOString()) as Array<{ alert_id: string; triggered_at: string; match_count: number }>;
    const out = new Map(alertIds.map((id) => [id, new Array<number>(hours).fill(0)]));
    for (const r of rows) {
      const i = Math.min(hours - 1, Math.floor((Date.parse(r.triggered_at) - start.getTime()) / 3_600_000));
      out.get(r.alert_id)![i]! += r.match_count;
    }
    return out;
  }

  /**
   * Housekeeping: executions older than KEEP_DAYS go, with their deliveries; a payload is dropped
   * once its deliveries are done, except each alert's newest (previews render against it). Firings
   * restored from a case archive are left whole: they are that case's evidence.
   */
  prune(now = new Date()): void {
    const cutoff = new Date(now.getTime() - KEEP_DAYS * 86_400_000).toISOString();
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM alert_executions WHERE triggered_at < ? AND from_case = 0').run(cutoff);
      this.db
        .prepare(
          `UPDATE alert_executions SET payload = NULL WHERE payload IS NOT NULL AND from_case = 0
             AND NOT EXISTS (SELECT 1 FROM alert_deliveries d WHERE d.execution_id = alert_executions.id AND d.status = 'pending')
             AND id NOT IN (SELECT (SELECT e2.id FROM alert_executions e2 WHERE e2.alert_id = a.alert_id AND e2.payload IS NOT NULL
                                    ORDER BY e2.triggered_at DESC LIMIT 1) FROM (SELECT DISTINCT alert_id FROM alert_executions) a)`,
        )
        .run();
      this.db.prepare('DELETE FROM alert_throttles WHERE until < ?').run(now.toISOString());
    })();
  }
}

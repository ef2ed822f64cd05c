// The alert engine. node-schedule fires a tick every `alert_interval_s` (SVC_ALERT_INTERVAL_S, changed
// by the setting without a restart). Each tick evaluates every enabled alert, a few at a time, each
// with its own time-out, over its own window of arrival: from its cursor to the moment before which
// every accepted log is in storage (Ingest.settledBefore), so a log that arrives late, or while the
// service was down, falls in exactly one window. A window that matched becomes, in one SQLite
// transaction, a firing, one outbox row per action, its throttle keys and the advanced cursor; the
// outbox delivers apart from the tick. A window that failed leaves the cursor where it was; after
// MAX_FAILURES failures in a row the alert is switched off with the reason.
import schedule from 'node-schedule';
import type { Context } from '../../context.ts';
import type { Ingest } from '../../ingest/pipeline.ts';
import { QueryInputError, runScopeQueries, type ScopeQueryResult } from '../../query/query-service.ts';
import { QueryExecutionError, QueryTimeoutError } from '../../query/run.ts';
import { buildPayload } from '../actions/payload.ts';
import { ENABLE_LOOKBACK_MS, scopeOf } from '../alerts-logic.ts';
import { ACTION_KINDS, type ActionKind, type Alert } from '../alerts-store.ts';
import { Outbox } from './outbox.ts';

/** Failed evaluations in a row after which an alert is switched off. */
export const MAX_FAILURES = 3;
/** The longest window one query reads; a cursor further behind catches up window by window. */
const MAX_WINDOW_MS = 15 * 60_000;
/** Windows one alert may take in one tick while catching up. */
const MAX_WINDOWS_PER_TICK = 8;
const PRUNE_EVERY_MS = 3_600_000;

export interface EngineOptions {
  /** Alerts evaluated at once. */
  concurrency: number;
  /** Deliveries in flight at once. */
  deliverySlots: number;
  /** The first retry gap of a failed delivery. */
  retryBackoffMs: number;
  /** One alert query's time-out; default: the query time-out setting, at most 30 s. */
  alertTimeoutS?: number;
}

export interface TickReport {
  started_at: string;
  duration_ms: number;
  alerts: number;
  windows: number;
  fired: number;
  failed: number;
  /** The tick took longer than the interval. */
  overran: boolean;
}

export class AlertEngine {
  readonly outbox: Outbox;
  private job: schedule.Job | null = null;
  /** The next tick when it is due at once (node-schedule takes no date in the past). */
  private soon: NodeJS.Timeout | null = null;
  private ticking: Promise<TickReport> | null = null;
  private stopped = true;
  private lastPrune = 0;
  /** The most recent ticks, newest last (the benchmark reads them). */
  readonly ticks: TickReport[] = [];
  /** Ticks skipped because the previous one was still running. */
  skipped = 0;

  constructor(
    private readonly ctx: Context,
    private readonly ingest: Ingest,
    private readonly o: EngineOptions,
  ) {
    this.outbox = new Outbox(ctx, ingest, { slots: o.deliverySlots, backoffMs: o.retryBackoffMs });
  }

  start(): void {
    this.stopped = false;
    this.outbox.start();
    this.ctx.settings.onChange(() => this.scheduleFrom(Date.now()));
    this.scheduleFrom(Date.now());
  }

  private get intervalMs(): number {
    return this.ctx.settings.get().alert_interval_s * 1000;
  }

  /** The next tick one interval after `from` (a tick that overran: right away). */
  private scheduleFrom(from: number): void {
    this.job?.cancel();
    this.job = null;
    if (this.soon) clearTimeout(this.soon);
    this.soon = null;
    if (this.stopped) return;
    const run = () => {
      const began = Date.now();
      void this.tick().finally(() => this.scheduleFrom(began));
    };
    // node-schedule drops a date that is already past when it looks (scheduleJob returns null), as
    // the next tick after one that overran, or nearly did, may be: the engine would stop for good.
    const at = from + this.intervalMs;
    this.job = at > Date.now() ? schedule.scheduleJob(new Date(at), run) : null;
    if (!this.job) this.soon = setTimeout(run, 0);
  }

  /** Runs one tick now (the scheduler's, or a test's); a tick already running is not doubled. */
  tick(): Promise<TickReport> {
    if (this.ticking) {
      this.skipped++;
      return this.ticking;
    }
    this.ticking = this.runTick().finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async runTick(): Promise<TickReport> {
    const t0 = performance.now();
    const started = new Date();
    const settled = this.ingest.settledBefore();
    const alerts = this.ctx.alerts.enabled();
    const report: TickReport = { started_at: started.toISOString(), duration_ms: 0, alerts: alerts.length, windows: 0, fired: 0, failed: 0, overran: false };
    // Each round takes every alert whose window is not yet up to `settled`; alerts of the same scope
    // whose windows start at the same instant (after a tick, nearly all) share one scan of it.
    let pending = alerts.map((a) => ({ a, start: a.cursor ? new Date(a.cursor) : new Date(started.getTime() - ENABLE_LOOKBACK_MS) }));
    for (let round = 0; round < MAX_WINDOWS_PER_TICK && !this.stopped; round++) {
      pending = pending.filter((x) => x.start < settled);
      if (pending.length === 0) break;
      const groups = new Map<string, typeof pending>();
      for (const x of pending) {
        const s = scopeOf(x.a);
        const key = `${s.type}:${s.id}:${x.start.toISOString()}`;
        groups.set(key, [...(groups.get(key) ?? []), x]);
      }
      const list = [...groups.values()];
      const advanced: typeof pending = [];
      let next = 0;
      const worker = async () => {
        while (next < list.length && !this.stopped) {
          const group = list[next++]!;
          advanced.push(...(await this.evaluate(group, settled, report)));
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, this.o.concurrency) }, worker));
      pending = advanced;
    }
    if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = Date.now();
      this.ctx.alertExecutions.prune();
    }
    report.duration_ms = Math.round(performance.now() - t0);
    report.overran = report.duration_ms > this.intervalMs;
    this.ticks.push(report);
    if (this.ticks.length > 1000) this.ticks.shift();
    if (report.alerts > 0) {
      const line = report.overran ? 'alert tick took longer than the interval' : 'alert tick';
      this.ctx.log[report.overran ? 'warn' : 'info']({ ...report, pending_deliveries: this.ctx.alertExecutions.pendingCount() }, line);
    }
    return report;
  }

  private timeoutS(): number {
    return this.o.alertTimeoutS ?? Math.min(30, this.ctx.settings.get().query_timeout_s);
  }

  /**
   * One window for a group of alerts of one scope that start at the same instant: one call of
   * runScopeQueries, then each alert's outcome committed on its own. Returns the alerts that moved
   * on, with the start of their next window.
   */
  private async evaluate(group: Array<{ a: Alert; start: Date }>, settled: Date, report: TickReport): Promise<Array<{ a: Alert; start: Date }>> {
    const start = group[0]!.start;
    const end = new Date(Math.min(settled.getTime(), start.getTime() + MAX_WINDOW_MS));
    const t0 = performance.now();
    let outcomes: Awaited<ReturnType<typeof runScopeQueries>>;
    try {
      outcomes = await runScopeQueries(this.ctx, { queries: group.map((x) => x.a.query_string), scope: scopeOf(group[0]!.a), start, end, timeoutS: this.timeoutS(), background: true });
    } catch (err) {
      outcomes = group.map(() => ({ ok: false as const, error: err }));
    }
    const ms = Math.round(performance.now() - t0);
    const moved: Array<{ a: Alert; start: Date }> = [];
    group.forEach((x, i) => {
      const o = outcomes[i]!;
      if (!o.ok) {
        report.failed++;
        this.failed(x.a, o.error);
        return;
      }
      report.windows++;
      if (this.commit(x.a, start, end, o.result, ms)) report.fired++;
      moved.push({ a: x.a, start: end });
    });
    return moved;
  }

  private failed(a: Alert, err: unknown): void {
    const why =
      err instanceof QueryTimeoutError
        ? `the query took longer than ${this.timeoutS()} s`
        : err instanceof QueryExecutionError
          ? `the query failed: ${err.detail.split('\n')[0]!.slice(0, 500)}`
          : err instanceof QueryInputError
            ? err.message
            : `evaluation failed: ${(err as Error).message}`;
    const failures = a.failure_count + 1;
    const disable = failures >= MAX_FAILURES ? `Switched off after ${failures} failed evaluations in a row: ${why}` : null;
    this.ctx.alerts.failed(a.id, why, disable);
    this.ctx.log.warn({ alert: a.id, name: a.name, failures, err: why }, disable ? 'alert switched off after repeated failures' : 'alert evaluation failed');
  }

  /**
   * One evaluated window, in one transaction: nothing matched (the cursor moves), everything was
   * throttled (noted, the cursor moves), or a firing with its deliveries. True when it fired.
   */
  private commit(a: Alert, start: Date, end: Date, r: ScopeQueryResult, ms: number): boolean {
    const { alerts, alertExecutions: executions, alertActions } = this.ctx;
    const cursor = end.toISOString();
    if (r.rows.length === 0) {
      alerts.advance(a.id, cursor, ms);
      return false;
    }
    const now = new Date();
    const at = now.toISOString();
    const throttle = a.throttle_time_seconds > 0;
    const keyOf = (row: Record<string, unknown>) => (a.throttle_field ? `v:${String(row[a.throttle_field] ?? '')}` : '*');
    let fired = false;
    alerts.transaction(() => {
      let kept = r.rows;
      if (throttle) {
        const blocked = executions.throttled(a.id, [...new Set(r.rows.map(keyOf))], at);
        kept = r.rows.filter((row) => !blocked.has(keyOf(row)));
      }
      const window = { alert_id: a.id, triggered_at: at, window_start: start.toISOString(), window_end: cursor, duration_ms: ms, limit_hit: r.limitHit };
      if (kept.length === 0) {
        executions.recordExecution({ ...window, match_count: r.rows.length, throttled: true, payload: null }, []);
        alerts.advance(a.id, cursor, ms);
        return;
      }
      const actions: Array<{ kind: ActionKind; id: string; name: string }> = [];
      for (const kind of ACTION_KINDS) {
        for (const id of a.actions[kind]) {
          const x = alertActions.get(kind, id);
          if (x?.enabled) actions.push({ kind, id, name: x.name });
        }
      }
      const payload = buildPayload(a, kept, r.compiled.fieldOrder, now);
      executions.recordExecution({ ...window, match_count: kept.length, throttled: false, payload }, actions);
      if (throttle) executions.throttle(a.id, [...new Set(kept.map(keyOf))], new Date(now.getTime() + a.throttle_time_seconds * 1000).toISOString());
      alerts.fired(a.id, cursor, ms, kept.length, at);
      fired = true;
    });
    if (fired) this.outbox.kick();
    return fired;
  }

  /** Stops ticking, lets a running tick finish (up to `timeoutMs`), then stops the outbox. */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.stopped = true;
    this.job?.cancel();
    this.job = null;
    if (this.soon) clearTimeout(this.soon);
    this.soon = null;
    if (this.ticking) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([this.ticking.catch(() => undefined), new Promise((r) => (t = setTimeout(r, timeoutMs)))]);
      clearTimeout(t);
    }
    await this.outbox.stop();
  }
}

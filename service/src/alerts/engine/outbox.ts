// The durable delivery outbox: every action of a firing is a row of `alert_deliveries`, written in
// the engine's transaction. Deliveries run in a fixed number of slots, apart from the tick, so a
// slow or dead destination holds one slot and never the evaluation. A failed attempt is retried
// with growing gaps (1 s, 2 s, 4 s …) up to the action's limit; a template that fails to render is
// not retried. Deliveries pending at a stop or crash are picked up at the next start (a delivery
// cut off mid-request is sent again: receivers can tell by the X-Alert-Delivery-Id header).
import type { Context } from '../../context.ts';
import type { Ingest } from '../../ingest/pipeline.ts';
import { upsertDictionary } from '../actions/dictionary.ts';
import { sendEmail } from '../actions/email.ts';
import { writeToFractal } from '../actions/fractal.ts';
import { sendOnce } from '../actions/webhook.ts';
import type { DeliveryRow, FiringPayload } from '../executions-store.ts';

export interface OutboxOptions {
  /** Deliveries in flight at once. */
  slots: number;
  /** The first retry's gap; each next one doubles, up to MAX_BACKOFF_MS. */
  backoffMs: number;
}

const MAX_BACKOFF_MS = 5 * 60_000;
/** Attempts of the kinds without their own retry_count. */
const ATTEMPTS = { email: 3, fractal: 5, dictionary: 5 } as const;
/** What the history keeps of a receiver's answer. */
const DETAIL_KEEP = 2000;

interface Attempt {
  ok: boolean;
  retryable: boolean;
  status_code: number | null;
  error: string;
  detail: string;
}

export class Outbox {
  private readonly busy = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  /** Parsed payloads of recent firings (a firing's actions share one). */
  private readonly payloads = new Map<string, FiringPayload | null>();

  constructor(
    private readonly ctx: Context,
    private readonly ingest: Ingest,
    private readonly o: OutboxOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.kick();
  }

  /** Deliveries in flight now. */
  get inFlight(): number {
    return this.busy.size;
  }

  /** Starts due deliveries in the free slots, and sets a timer for the next one due. */
  kick(): void {
    if (this.stopped) return;
    const free = this.o.slots - this.busy.size;
    if (free > 0) {
      for (const d of this.ctx.alertExecutions.due(new Date().toISOString(), free, this.busy)) {
        this.busy.add(d.id);
        const run: Promise<void> = this.deliver(d)
          .catch((err) => this.ctx.log.error({ err: (err as Error).message, delivery: d.id }, 'alert delivery crashed'))
          .finally(() => {
            this.busy.delete(d.id);
            this.running.delete(run);
            this.kick();
          });
        this.running.add(run);
      }
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.stopped) return;
    const next = this.ctx.alertExecutions.nextDue(this.busy);
    if (!next) return;
    const wait = Math.min(60_000, Math.max(0, Date.parse(next) - Date.now()));
    this.timer = setTimeout(() => this.kick(), wait);
    this.timer.unref();
  }

  private payloadOf(executionId: string): FiringPayload | null {
    if (!this.payloads.has(executionId)) {
      if (this.payloads.size >= 16) this.payloads.delete(this.payloads.keys().next().value!);
      this.payloads.set(executionId, this.ctx.alertExecutions.payload(executionId));
    }
    return this.payloads.get(executionId)!;
  }

  private async attempt(d: DeliveryRow, p: FiringPayload): Promise<Attempt & { maxAttempts: number }> {
    const { ctx } = this;
    const baseUrl = ctx.config.baseUrl;
    const gone = (what: string): Attempt & { maxAttempts: number } => ({ ok: false, retryable: false, status_code: null, error: what, detail: '', maxAttempts: 1 });
    switch (d.action_kind) {
      case 'webhook': {
        const w = ctx.alertActions.get('webhook', d.action_id);
        if (!w) return gone('the webhook was deleted');
        if (!w.enabled) return gone('the webhook is switched off');
        const headers = { 'x-alert-delivery-id': d.id, 'x-alert-delivery-attempt': String(d.attempts + 1) };
        const r = await sendOnce(w, p, baseUrl, headers);
        return { ok: r.ok, retryable: r.retryable, status_code: r.status_code, error: r.error, detail: r.response_body, maxAttempts: 1 + w.retry_count };
      }
      case 'email': {
        const e = ctx.alertActions.get('email', d.action_id);
        if (!e) return gone('the e-mail action was deleted');
        if (!e.enabled) return gone('the e-mail action is switched off');
        const r = await sendEmail(ctx.alertActions.smtp(), e, p, baseUrl);
        return { ok: r.ok, retryable: r.retryable, status_code: null, error: r.error, detail: r.detail, maxAttempts: ATTEMPTS.email };
      }
      case 'fractal': {
        const f = ctx.alertActions.get('fractal', d.action_id);
        if (!f) return gone('the fractal action was deleted');
        if (!f.enabled) return gone('the fractal action is switched off');
        return { ...(await writeToFractal(ctx, this.ingest, f, p, d.id)), status_code: null, maxAttempts: ATTEMPTS.fractal };
      }
      case 'dictionary': {
        const x = ctx.alertActions.get('dictionary', d.action_id);
        if (!x) return gone('the dictionary action was deleted');
        if (!x.enabled) return gone('the dictionary action is switched off');
        return { ...(await upsertDictionary(ctx, x, p)), status_code: null, maxAttempts: ATTEMPTS.dictionary };
      }
    }
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    const t0 = performance.now();
    const p = this.payloadOf(d.execution_id);
    const r = p ? await this.attempt(d, p) : { ok: false, retryable: false, status_code: null, error: 'the firing was removed before delivery', detail: '', maxAttempts: 1 };
    const attempts = d.attempts + 1;
    const base = { attempts, status_code: r.status_code, error: r.error, detail: r.detail.slice(0, DETAIL_KEEP), duration_ms: Math.round(performance.now() - t0) };
    if (r.ok) this.ctx.alertExecutions.settle(d.id, { ...base, status: 'delivered' });
    else if (r.retryable && attempts < r.maxAttempts) {
      const gap = Math.min(MAX_BACKOFF_MS, this.o.backoffMs * 2 ** (attempts - 1));
      this.ctx.alertExecutions.settle(d.id, { ...base, status: 'pending', retryAt: new Date(Date.now() + gap).toISOString() });
    } else {
      this.ctx.alertExecutions.settle(d.id, { ...base, status: 'failed' });
      this.ctx.log.warn({ delivery: d.id, action: d.action_name, kind: d.action_kind, attempts, error: r.error }, 'alert delivery failed');
    }
  }

  /** Stops starting deliveries and waits (up to `timeoutMs`) for those in flight; the rest stay pending. */
  async stop(timeoutMs = 5_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => (timeout = setTimeout(r, timeoutMs)))]);
    clearTimeout(timeout);
  }
}

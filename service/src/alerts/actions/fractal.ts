// The fractal action: a firing's results written as new logs into the target fractal through the
// ingest pipeline (spooled and queued like any ingest), with their original time or now, and the
// alert's context when asked. Each written log's id is derived from the delivery, so an attempt
// repeated after a crash leaves out the logs the first one stored.
import { createHash } from 'node:crypto';
import type { Context } from '../../context.ts';
import type { Ingest } from '../../ingest/pipeline.ts';
import type { FiringPayload } from '../executions-store.ts';
import type { Action } from './actions-store.ts';

export interface WriteOutcome {
  ok: boolean;
  retryable: boolean;
  error: string;
  detail: string;
}

/** A UUID (v4 layout) that is the same for the same delivery and row. */
function derivedId(deliveryId: string, i: number): string {
  const h = createHash('sha256').update(`${deliveryId}:${i}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const FORWARDED_AT = 'alert_forwarded_at';

export async function writeToFractal(ctx: Context, ingest: Ingest, a: Action<'fractal'>, p: FiringPayload, deliveryId: string): Promise<WriteOutcome> {
  const target = ctx.fractals.get(a.target_fractal_id);
  if (!target) return { ok: false, retryable: false, error: `the target fractal ${a.target_fractal_id} no longer exists`, detail: '' };
  const source = p.fractal_id ? ctx.fractals.get(p.fractal_id)?.name : ctx.prisms.get(p.prism_id!)?.name;
  const now = new Date().toISOString();
  const rows = p.results.slice(0, a.max_logs_per_trigger);
  const ids = rows.map((_, i) => derivedId(deliveryId, i));
  const stored = await ctx.logs.existingLogIds(a.target_fractal_id, ids);
  const records: Array<{ text: string }> = [];
  const logIds: string[] = [];
  rows.forEach((row, i) => {
    if (stored.has(ids[i]!)) return;
    const { norm_log: _n, log_id, fractal_id, ...fields } = row as Record<string, unknown>;
    const out: Record<string, unknown> = { ...fields };
    if (log_id !== undefined) out.source_log_id = log_id;
    if (fractal_id !== undefined) out.source_fractal_id = fractal_id;
    if (a.add_alert_context) {
      out.alert_name = p.alert_name;
      if (p.original_name !== undefined) out.alert_template_name = p.original_name;
      out.alert_id = p.alert_id;
      out.alert_severity = p.severity;
      out.alert_labels = p.labels;
      out.alert_triggered_at = p.triggered_at;
      if (source) out.source_fractal = source;
      out.fractal_action_id = a.id;
      out.alert_forwarded = true;
    }
    out[FORWARDED_AT] = now;
    records.push({ text: JSON.stringify(out) });
    logIds.push(ids[i]!);
  });
  if (records.length === 0) return { ok: true, retryable: false, error: '', detail: `${rows.length} logs already written` };
  try {
    // The original event time when it is kept, else the moment of forwarding.
    const r = await ingest.write(a.target_fractal_id, records, { timestampFields: a.preserve_timestamp ? ['timestamp'] : [FORWARDED_AT], logIds });
    const capped = p.results.length > rows.length ? ` (max_logs_per_trigger ${a.max_logs_per_trigger} of ${p.results.length})` : '';
    return { ok: r.rejected === 0, retryable: false, error: r.rejected ? `${r.rejected} logs refused: ${r.errors.join('; ')}` : '', detail: `${r.accepted} logs written to ${target.name}${capped}` };
  } catch (err) {
    // 429 (queue full, quota) or 503 (spool): worth another attempt later.
    return { ok: false, retryable: true, error: `writing into ${target.name} failed: ${(err as Error).message}`, detail: '' };
  }
}

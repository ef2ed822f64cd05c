// Alerts and their actions: the calls of /api/v1/alerts, /webhooks, /email-actions, /fractal-actions,
// /dictionary-actions and /smtp-settings behind the Alerts pages, and the pure helpers they share
// (unit-tested in tests/ui/alerts-lib.test.ts). Every call throws ApiError with the service's sentence.
import { del, enc, get, post, put, send, type Selection } from './api.ts';
import { viewHash } from './search/view-state.ts';

import type { ActionKind, Severity } from '../../../service/src/alerts/alert-terms.ts';

export { ACTION_KINDS, SEVERITIES, type ActionKind, type Severity } from '../../../service/src/alerts/alert-terms.ts';
export const KIND_LABEL: Record<ActionKind, string> = { webhook: 'Webhooks', email: 'E-mail', fractal: 'Fractal', dictionary: 'Dictionary' };
const PATH: Record<ActionKind, string> = { webhook: 'webhooks', email: 'email-actions', fractal: 'fractal-actions', dictionary: 'dictionary-actions' };

export interface Alert {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  query_string: string;
  alert_type: 'event' | 'compound';
  severity: Severity;
  labels: string[];
  references: string[];
  enabled: boolean;
  throttle_time_seconds: number;
  throttle_field: string;
  webhook_action_ids: string[];
  email_action_ids: string[];
  fractal_action_ids: string[];
  dictionary_action_ids: string[];
  feed_id: string | null;
  disabled_reason: string;
  last_error: string;
  failure_count: number;
  last_triggered: string | null;
  last_match_count: number | null;
  last_evaluated_at: string | null;
  created_by: string;
  updated_at: string;
  /** Matches per hour over the last 24 h, oldest first (list only). */
  sparkline?: number[];
}

export type AlertInput = Partial<Omit<Alert, 'id' | 'feed_id' | 'disabled_reason' | 'last_error' | 'failure_count' | 'last_triggered' | 'last_match_count' | 'last_evaluated_at' | 'created_by' | 'updated_at' | 'sparkline'>>;

export interface Delivery {
  kind: ActionKind;
  action_id: string;
  name: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  status_code: number | null;
  error: string;
  detail: string;
  duration_ms: number | null;
  finished_at: string | null;
}

export interface Execution {
  id: string;
  triggered_at: string;
  window_start: string;
  window_end: string;
  match_count: number;
  throttled: boolean;
  limit_hit: boolean;
  duration_ms: number;
  events_start: string | null;
  events_end: string | null;
  scope: { type: 'fractal' | 'prism'; id: string };
  actions: Delivery[];
}

export interface Preview {
  match_count: number;
  limit_hit: boolean;
  is_aggregated: boolean;
  field_order: string[];
  hourly: Array<{ start: string; count: number }>;
  results: Array<Record<string, unknown>>;
}

export interface Firing {
  execution_id: string;
  alert_id: string;
  alert_name: string;
  severity: Severity;
  query_string: string;
  fractal_id: string | null;
  prism_id: string | null;
  triggered_at: string;
  match_count: number;
  events_start: string | null;
  events_end: string | null;
}

export interface ActionView {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  fractal_id: string | null;
  prism_id: string | null;
  is_global: boolean;
  used_by?: number;
  [field: string]: unknown;
}

export interface WebhookRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendTest {
  delivered: boolean;
  status_code: number | null;
  error: string;
  response_body: string;
  duration_ms: number;
  sent: WebhookRequest | null;
}

export interface Smtp {
  configured: boolean;
  host: string;
  port: number;
  username: string;
  password_set: boolean;
  from_address: string;
  tls_mode: 'none' | 'starttls' | 'tls';
}

type ScopeParams = { fractal_id: string } | { prism_id: string };
export const scopeOf = (s: Pick<Selection, 'type' | 'id'>): ScopeParams => (s.type === 'fractal' ? { fractal_id: String(s.id) } : { prism_id: String(s.id) });
const qs = (s: ScopeParams) => `?${new URLSearchParams(s as Record<string, string>).toString()}`;

export const alerts = {
  list: (s: ScopeParams) => get<Alert[]>(`/alerts${qs(s)}`),
  get: (id: string) => get<Alert>(`/alerts/${enc(id)}`),
  create: (body: AlertInput) => post<Alert>('/alerts', body),
  update: (id: string, body: AlertInput) => put<Alert>(`/alerts/${enc(id)}`, body),
  remove: (id: string) => del<unknown>(`/alerts/${enc(id)}`),
  duplicate: (id: string) => post<Alert>(`/alerts/${enc(id)}/duplicate`),
  toggle: (ids: string[], enabled: boolean) => post<{ changed: number }>('/alerts/batch-toggle', { alert_ids: ids, enabled }),
  importYaml: (s: ScopeParams, yaml: string) => post<Alert[]>(`/alerts/import${qs(s)}`, { yaml }),
  preview: (body: { query_string: string } & ScopeParams, signal?: AbortSignal) => post<Preview>('/alerts/preview', body, { signal }),
  async executions(id: string, limit = 50): Promise<{ items: Execution[]; total: number }> {
    const res = await send('GET', `/alerts/${enc(id)}/executions?limit=${limit}`);
    const body = (await res.json()) as { success: boolean; data?: Execution[]; error?: string };
    if (!res.ok || !body.success) throw new Error(body.error ?? `The service failed to answer (HTTP ${res.status}).`);
    return { items: body.data ?? [], total: Number(res.headers.get('x-total-count') ?? body.data?.length ?? 0) };
  },
  firing: (s: ScopeParams, hours = 24) => get<Firing[]>(`/alerts/firing${qs(s)}&hours=${hours}`),
};

export const actions = {
  list: (kind: ActionKind, s: ScopeParams) => get<ActionView[]>(`/${PATH[kind]}${qs(s)}`),
  create: (kind: ActionKind, body: Record<string, unknown>) => post<ActionView>(`/${PATH[kind]}`, body),
  update: (kind: ActionKind, id: string, body: Record<string, unknown>) => put<ActionView>(`/${PATH[kind]}/${enc(id)}`, body),
  remove: (kind: ActionKind, id: string) => del<unknown>(`/${PATH[kind]}/${enc(id)}`),
  previewWebhook: (id: string | null, body: Record<string, unknown>) => post<WebhookRequest & { bytes: number; sample: boolean }>(id ? `/webhooks/${enc(id)}/preview` : '/webhooks/preview', body),
  testWebhook: (id: string | null, body: Record<string, unknown>) => post<SendTest>(id ? `/webhooks/${enc(id)}/test` : '/webhooks/test', body),
  testEmail: (id: string | null, body: Record<string, unknown>) =>
    post<{ delivered: boolean; error: string; response: string; subject: string; body: string; recipients: string[] }>(id ? `/email-actions/${enc(id)}/test` : '/email-actions/test', body),
  smtp: () => get<Smtp>('/smtp-settings'),
  saveSmtp: (body: Record<string, unknown>) => post<Smtp>('/smtp-settings', body),
};

/** The ids an alert attaches of one kind. */
export const attached = (a: Pick<Alert, 'webhook_action_ids' | 'email_action_ids' | 'fractal_action_ids' | 'dictionary_action_ids'>, kind: ActionKind): string[] =>
  a[`${kind}_action_ids`];

/** The state an alert is in, for the list: off (with why), failing, firing recently, or quiet. */
export function alertState(a: Alert, now = Date.now()): { label: string; tone: 'off' | 'error' | 'firing' | 'ok'; title: string } {
  if (!a.enabled) return { label: a.disabled_reason ? 'disabled' : 'off', tone: 'off', title: a.disabled_reason || 'Switched off.' };
  if (a.failure_count > 0) return { label: 'failing', tone: 'error', title: a.last_error };
  if (a.last_triggered && now - Date.parse(a.last_triggered) < 3_600_000) return { label: 'firing', tone: 'firing', title: `Fired ${a.last_match_count ?? 0} match(es) in the last hour.` };
  return { label: 'ok', tone: 'ok', title: a.last_evaluated_at ? `Last evaluated ${a.last_evaluated_at}` : 'Waiting for its first tick.' };
}

/** The search view that opens a firing's matching logs: the alert's query over the results' event times. */
export function firingHash(f: Pick<Firing, 'query_string' | 'fractal_id' | 'prism_id' | 'events_start' | 'events_end' | 'triggered_at'>): string {
  const t = Date.parse(f.triggered_at);
  const start = f.events_start ? new Date(Date.parse(f.events_start) - 60_000) : new Date(t - 3_600_000);
  const end = f.events_end ? new Date(Date.parse(f.events_end) + 60_000) : new Date(t + 60_000);
  return viewHash({
    q: f.query_string,
    range: { kind: 'absolute', start, end },
    scope: f.fractal_id ? { type: 'fractal', id: f.fractal_id } : { type: 'prism', id: f.prism_id! },
    vars: {},
  });
}

/** Seconds as the editor shows a throttle ("15 min", "2 h", "off"). */
export function throttleLabel(s: number): string {
  if (!s) return 'off';
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

/** Comma- or newline-separated text as a list (labels, references, recipients). */
export function listOf(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A small SVG path for a sparkline of `values` in a `w`×`h` box. */
export function sparkPath(values: number[], w: number, h: number): string {
  if (values.length === 0) return '';
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? w / (values.length - 1) : 0;
  return values.map((v, i) => `${i ? 'L' : 'M'}${(i * step).toFixed(1)},${(h - 1 - (v / max) * (h - 2)).toFixed(1)}`).join(' ');
}

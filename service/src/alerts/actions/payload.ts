// What a firing hands its actions, in the spec's shapes: the envelope of "Alert webhook payload"
// and the template data of "Webhook custom payloads" (.AlertName … .Results, .TriggeredAt a time).
// Also the alert name's `{{field}}` templates and the link that opens the matching logs.
import type { Alert } from '../alerts-store.ts';
import type { FiringPayload } from '../executions-store.ts';
import { GoStruct } from '../template/index.ts';

const NAME_TEMPLATE = /\{\{\s*([\p{L}\p{N}_@][\p{L}\p{N}_.@-]*)\s*\}\}/gu;

/** The alert name with `{{field}}` filled from the first result (a field it lacks stays as written). */
export function resolveName(name: string, first: Record<string, unknown> | undefined): string {
  if (!first || !name.includes('{{')) return name;
  return name.replace(NAME_TEMPLATE, (whole, f: string) => (first[f] === undefined || first[f] === null ? whole : typeof first[f] === 'string' ? (first[f] as string) : JSON.stringify(first[f])));
}

/** Event times as rows show them ("2026-03-01 12:34:56.123", UTC) to ISO. */
const rowTime = (v: unknown): number => (typeof v === 'string' ? Date.parse(`${v.replace(' ', 'T')}${/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? '' : 'Z'}`) : NaN);

export function buildPayload(a: Alert, rows: Array<Record<string, unknown>>, fieldOrder: string[], triggeredAt: Date): FiringPayload {
  const resolved = resolveName(a.name, rows[0]);
  const times = rows.map((r) => rowTime(r.timestamp)).filter(Number.isFinite);
  return {
    alert_id: a.id,
    alert_name: resolved,
    ...(/\{\{\s*[^{}]+\}\}/.test(a.name) ? { original_name: a.name } : {}),
    description: a.description,
    severity: a.severity,
    labels: a.labels,
    query_string: a.query_string,
    fractal_id: a.fractal_id,
    prism_id: a.prism_id,
    triggered_at: triggeredAt.toISOString(),
    match_count: rows.length,
    field_order: fieldOrder,
    results: rows,
    events_start: times.length ? new Date(Math.min(...times)).toISOString() : null,
    events_end: times.length ? new Date(Math.max(...times)).toISOString() : null,
  };
}

/**
 * The UI address that opens the matching logs: the alert's query in its scope over the results'
 * event times (a minute either side; an hour either side of the firing when rows carry no time).
 * Null without SVC_BASE_URL.
 */
export function alertLink(baseUrl: string | null, p: FiringPayload): string | null {
  if (!baseUrl) return null;
  const t = Date.parse(p.triggered_at);
  const from = p.events_start ? Date.parse(p.events_start) - 60_000 : t - 3_600_000;
  const to = p.events_end ? Date.parse(p.events_end) + 60_000 : t + 3_600_000;
  const q = new URLSearchParams({ q: p.query_string, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  q.set('scope', p.fractal_id ? `fractal:${p.fractal_id}` : `prism:${p.prism_id}`);
  return `${baseUrl.replace(/\/+$/, '')}/#/search?${q.toString().replace(/\+/g, '%20')}`;
}

/** The envelope body (interface-spec "Alert webhook payload"), fields in the spec's order. */
export function envelope(p: FiringPayload, link: string | null): Record<string, unknown> {
  return {
    alert_name: p.alert_name,
    ...(p.original_name !== undefined ? { original_name: p.original_name } : {}),
    alert_id: p.alert_id,
    description: p.description,
    severity: p.severity,
    labels: p.labels,
    triggered_at: p.triggered_at,
    query_string: p.query_string,
    match_count: p.match_count,
    ...(link ? { alert_link: link } : {}),
    results: p.results,
  };
}

/** The data a body, subject or e-mail template renders against. */
export function templateData(p: FiringPayload, link: string | null): GoStruct {
  return new GoStruct('alerts.TemplateData', {
    AlertName: p.alert_name,
    OriginalName: p.original_name ?? '',
    AlertID: p.alert_id,
    Description: p.description,
    Severity: p.severity,
    Labels: p.labels,
    QueryString: p.query_string,
    MatchCount: p.match_count,
    AlertLink: link ?? '',
    TriggeredAt: new Date(p.triggered_at),
    Results: p.results,
  });
}

/** A firing made up for previews and tests of an action when no alert has fired yet. */
export function samplePayload(now = new Date()): FiringPayload {
  const t = (s: number) => new Date(now.getTime() - s * 1000).toISOString().replace('T', ' ').slice(0, 23);
  const results = [
    { timestamp: t(42), log_id: '00000000-0000-4000-8000-000000000001', user: 'alice', src_ip: '10.0.0.5', action: 'login', status: '500', message: 'login failed: "bad password"' },
    { timestamp: t(17), log_id: '00000000-0000-4000-8000-000000000002', user: 'bob', src_ip: '192.168.1.7', action: 'login', status: '500', message: 'login failed' },
  ];
  return {
    alert_id: '00000000-0000-4000-8000-00000000a1e7',
    alert_name: 'Failed logins for alice',
    original_name: 'Failed logins for {{user}}',
    description: 'Sample data: this is what a firing looks like.',
    severity: 'high',
    labels: ['sample', 'authentication'],
    query_string: 'action=login status=500',
    fractal_id: null,
    prism_id: null,
    triggered_at: now.toISOString(),
    match_count: results.length,
    field_order: ['timestamp', 'user', 'src_ip', 'action', 'status', 'message'],
    results,
    events_start: new Date(now.getTime() - 42_000).toISOString(),
    events_end: new Date(now.getTime() - 17_000).toISOString(),
  };
}

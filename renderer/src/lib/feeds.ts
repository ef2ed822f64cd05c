// Feeds and ATT&CK coverage: the calls of /api/v1/feeds, /alerts/feed and /attack/coverage behind the
// Alerts section's Feeds and Coverage pages, and their pure helpers (unit-tested in tests/ui/feeds.test.ts).
// Every call throws ApiError with the service's own sentence.
import { del, enc, get, post, put, type Selection } from './api.ts';
import type { Alert, Severity } from './alerts.ts';

import type { Schedule, Status } from '../../../service/src/feeds/feed-terms.ts';

export { SCHEDULES, STATUSES, type Schedule, type Status } from '../../../service/src/feeds/feed-terms.ts';

export interface Feed {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  repo_url: string;
  branch: string;
  path: string;
  has_auth_token: boolean;
  normalizer_id: string | null;
  sync_schedule: Schedule;
  min_severity: Severity;
  min_status: Status;
  enabled: boolean;
  last_sync_at: string | null;
  last_sync_status: 'ok' | 'failed' | null;
  last_sync_error: string | null;
  last_sync_commit: string | null;
  last_sync_ms: number | null;
  imported_count: number;
  skipped_count: number;
  next_sync_at: string | null;
  syncing: boolean;
}

export interface FeedInput {
  name: string;
  description?: string;
  repo_url: string;
  branch?: string;
  path?: string;
  /** undefined: keep; "": remove. */
  auth_token?: string;
  normalizer_id?: string | null;
  sync_schedule?: Schedule;
  min_severity?: Severity;
  min_status?: Status;
  enabled?: boolean;
}

export interface SkippedRule {
  source_path: string;
  kind: 'sigma' | 'alert' | 'unknown';
  rule_id: string | null;
  title: string;
  level: string | null;
  status: string | null;
  tags: string[];
  reason_code: string;
  reason: string;
  reason_label: string;
}

export interface SyncResult {
  status: 'ok' | 'failed';
  imported: number;
  skipped: number;
  created: number;
  updated: number;
  deleted: number;
  ms: number;
  feed: Feed;
}

export interface CoverageCell {
  id: string;
  name: string;
  enabled: number;
  alerts: Array<{ id: string; name: string; enabled: boolean; severity: string; via: string }>;
  skipped: Array<{ feed_id: string; feed_name: string; source_path: string; title: string; reason_code: string | null; reason: string | null; via: string }>;
  subtechniques: Array<{ id: string; name: string; enabled: number }>;
}

export interface Coverage {
  version: string;
  tactics: Array<{ id: string; short: string; name: string; covered: number; techniques: CoverageCell[] }>;
  unmapped_alerts: number;
  unknown_ids: Record<string, number>;
}

const scopeQuery = (s: Selection) => `?${s.type}_id=${enc(s.id)}`;

export const feeds = {
  list: (s: Selection) => get<Feed[]>(`/feeds${scopeQuery(s)}`),
  get: (id: string) => get<Feed>(`/feeds/${enc(id)}`),
  create: (s: Selection, body: FeedInput) => post<Feed>('/feeds', { ...body, [`${s.type}_id`]: String(s.id) }),
  update: (id: string, body: Partial<FeedInput>) => put<Feed>(`/feeds/${enc(id)}`, body),
  remove: (id: string) => del<{ deleted: boolean; alerts_deleted: number }>(`/feeds/${enc(id)}`),
  sync: (id: string) => post<SyncResult>(`/feeds/${enc(id)}/sync`),
  skipped: (id: string, filter: { reason?: string; q?: string } = {}) => {
    const p = new URLSearchParams();
    if (filter.reason) p.set('reason', filter.reason);
    if (filter.q?.trim()) p.set('q', filter.q.trim());
    const qs = p.toString();
    return get<SkippedRule[]>(`/feeds/${enc(id)}/skipped${qs ? `?${qs}` : ''}`);
  },
  reasons: () => get<Array<{ code: string; label: string }>>('/feeds/skip-reasons'),
  alerts: (id: string) => get<Alert[]>(`/feeds/${enc(id)}/alerts`),
  setAll: (id: string, enabled: boolean) => post<{ changed: number }>(`/feeds/${enc(id)}/alerts/${enabled ? 'enable-all' : 'disable-all'}`),
  coverage: (s: Selection) => get<Coverage>(`/attack/coverage${scopeQuery(s)}`),
};

/** "rules/windows on main of https://…" as one line; a folder has no branch. */
export function describeSource(f: Pick<Feed, 'repo_url' | 'branch' | 'path'>): string {
  const where = f.path ? `${f.path} in ` : '';
  const isFolder = f.repo_url.startsWith('/') && !f.repo_url.startsWith('//');
  return `${where}${f.repo_url}${isFolder ? '' : ` (${f.branch})`}`;
}

/** The last sync as a person reads it: "ok · 3,136 imported, 5 skipped", "failed: …", "never". */
export function describeSync(f: Pick<Feed, 'last_sync_status' | 'last_sync_error' | 'imported_count' | 'skipped_count' | 'syncing'>): string {
  if (f.syncing) return 'syncing…';
  if (!f.last_sync_status) return 'never synced';
  if (f.last_sync_status === 'failed') return `failed: ${f.last_sync_error ?? ''}`;
  return `${f.imported_count.toLocaleString('en-US')} imported, ${f.skipped_count.toLocaleString('en-US')} skipped`;
}

/** The heat of a coverage cell: 0 (none) to 4, by how many enabled alerts cover it. */
export function heat(enabled: number): 0 | 1 | 2 | 3 | 4 {
  if (enabled <= 0) return 0;
  if (enabled === 1) return 1;
  if (enabled <= 3) return 2;
  if (enabled <= 9) return 3;
  return 4;
}

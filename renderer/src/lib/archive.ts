// The archive tier's calls (service/src/archive/, docs/archive.md): the settings (global admins), the
// archive's state beside the ingest layers, a fractal's archive status and its restore jobs; and the
// pure pieces of its pages (the restore window typed in UTC, what a setting change sends). Shapes are
// the service's own, imported as types.
import type { publicSettings, ArchiveService } from '../../../service/src/archive/archive-logic.ts';
import type { publicJob } from '../../../service/src/archive/restore.ts';
import { del, enc, get, post, put, type Id } from './api.ts';
import { parseTimestamp } from './format.ts';
import type { Parsed } from './forms.ts';

export type ArchiveSettings = ReturnType<typeof publicSettings>;
export type ArchiveStatus = ReturnType<ArchiveService['status']>;
export type ArchiveState = ReturnType<ArchiveService['pressure']>;
export type RestoreJob = ReturnType<typeof publicJob>;

/** What PUT /archive takes: the secret only when it is replaced (absent keeps the stored one). */
export type ArchiveSettingsInput = Partial<Omit<ArchiveSettings, 's3_secret_key_set'>> & { s3_secret_key?: string | null };

export const archive = {
  settings: () => get<ArchiveSettings>('/archive'),
  save: (body: ArchiveSettingsInput) => put<ArchiveSettings>('/archive', body),
  /** The archive's part of system/pressure: lag, last commit, and the fault with what to do. */
  state: async () => (await get<{ archive: ArchiveState }>('/system/pressure')).archive,
  status: (fractalId: Id) => get<ArchiveStatus>(`/fractals/${enc(fractalId)}/archive`),
  jobs: (fractalId: Id) => get<RestoreJob[]>(`/fractals/${enc(fractalId)}/archive/jobs`),
  restore: (fractalId: Id, window: { start: string; end: string }) => post<RestoreJob>(`/fractals/${enc(fractalId)}/archive/restore`, window),
  reconcile: (fractalId: Id) => post<RestoreJob>(`/fractals/${enc(fractalId)}/archive/reconcile`),
  job: (id: Id) => get<RestoreJob>(`/archive/jobs/${enc(id)}`),
  cancel: (id: Id) => del<RestoreJob>(`/archive/jobs/${enc(id)}`),
};

/** A time as the restore form shows it: "2024-03-01 10:00" in UTC (the UI speaks UTC). */
export function windowText(iso: string | null): string {
  const d = parseTimestamp(iso);
  return d ? d.toISOString().slice(0, 16).replace('T', ' ') : '';
}

/** The restore window as typed (UTC unless a zone is given) into the times the API takes. */
export function parseWindow(start: string, end: string): Parsed<{ start: string; end: string }> {
  const s = parseTimestamp(start.trim());
  if (!s) return { ok: false, error: `"${start.trim() || '(empty)'}" is not a time: write it as 2024-03-01 10:00 (UTC).` };
  const e = parseTimestamp(end.trim());
  if (!e) return { ok: false, error: `"${end.trim() || '(empty)'}" is not a time: write it as 2024-03-01 18:00 (UTC).` };
  if (e <= s) return { ok: false, error: 'The end must be after the start.' };
  return { ok: true, value: { start: s.toISOString(), end: e.toISOString() } };
}

/**
 * The archive's newest time widened to the next minute: the form shows minutes, and a window ending
 * at the newest log's own minute would leave that log out ([start, end) of event time).
 */
export function windowEndText(newest: string | null): string {
  const d = parseTimestamp(newest);
  if (!d) return '';
  return windowText(new Date(Math.floor(d.getTime() / 60_000) * 60_000 + 60_000).toISOString());
}

/**
 * What a save sends: the fields the form changed against what the service holds; the secret only
 * when a new one was typed (empty keeps the stored one).
 */
export function settingsPatch(saved: ArchiveSettings, form: Omit<ArchiveSettings, 's3_secret_key_set'>, newSecret: string): ArchiveSettingsInput {
  const out: ArchiveSettingsInput = {};
  for (const k of Object.keys(form) as Array<keyof typeof form>) {
    const v = typeof form[k] === 'string' ? (form[k] as string).trim() : form[k];
    const norm = v === '' && k !== 's3_prefix' ? null : v;
    if (norm !== saved[k]) (out as Record<string, unknown>)[k] = norm;
  }
  if (newSecret) out.s3_secret_key = newSecret;
  return out;
}

/** A job's one-line account: what was restored and skipped, of how many files. */
export function jobSummary(j: RestoreJob): string {
  const files = `${j.files_done} of ${j.files_total} ${j.files_total === 1 ? 'file' : 'files'}`;
  const counts = `${j.restored.toLocaleString('en-US')} restored, ${j.skipped.toLocaleString('en-US')} already there`;
  return j.files_total === 0 && j.status !== 'running' ? `${counts} · no archived file in this window` : `${counts} · ${files}`;
}

// What the log detail shows about one log: its fields (sorted, searchable), which "same …" fields the
// surrounding view may match on, and a one-line summary of a log for the surrounding list.
// Pure: tests/ui/detail.test.ts. A value reads as in the results table (search/export.ts cellText).
import { cellText } from '../search/export.ts';

/** POST /api/v1/logs/by-timestamp → data. */
export interface FullLog {
  log_id: string;
  fractal_id: string;
  /** RFC 3339, UTC. */
  timestamp: string;
  ingest_timestamp: string;
  raw: string;
  fields: Record<string, string>;
}

export type Row = Record<string, unknown>;

export interface FieldEntry {
  name: string;
  value: string;
  /** A column every log has (time, ids), listed first. */
  reserved: boolean;
  /** Filter-for/against makes sense (not for times). */
  filterable: boolean;
  /** Present on the result row only: computed by the query, not stored with the log. */
  fromQuery: boolean;
}

/** Columns of every event, in the order shown. norm_log is the fields serialised: never listed. */
export const RESERVED = ['timestamp', 'ingest_timestamp', 'log_id', 'fractal_id'] as const;
/** Never listed: the event's serialised fields (as long as the event); a row's mark of coming from the archive. */
export const HIDDEN = new Set(['norm_log', 'raw_log', 'from_archive']);
const UNFILTERABLE = new Set(['timestamp', 'ingest_timestamp']);

/** Field names in reading order: case-insensitive, digits by value (item2 before item10). */
export function compareNames(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' }) || (a < b ? -1 : a > b ? 1 : 0);
}

/** "2026-01-02T03:04:05.678Z" or "2026-01-02 03:04:05.678…" → "2026-01-02 03:04:05.678" (UTC, as rows show it). */
export function rowTimeText(v: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d{1,3})?/.exec(v);
  if (!m) return v;
  return `${m[1]} ${m[2]}${(m[3] ?? '.').padEnd(4, '0')}`;
}

/**
 * Every field of the log: the reserved columns first, then the stored fields sorted by name. Before the
 * full log arrives (or when it could not be read) the result row stands in. Values the query computed
 * (on the row, not stored) follow, marked.
 */
export function detailEntries(row: Row, log: FullLog | null): FieldEntry[] {
  const reserved: FieldEntry[] = [];
  const reservedValue = (name: (typeof RESERVED)[number]): string => {
    if (log) {
      if (name === 'timestamp') return rowTimeText(log.timestamp);
      if (name === 'ingest_timestamp') return rowTimeText(log.ingest_timestamp);
      return log[name];
    }
    return cellText(row[name]);
  };
  for (const name of RESERVED) {
    const value = reservedValue(name);
    if (value === '' && !log) continue;
    reserved.push({ name, value, reserved: true, filterable: !UNFILTERABLE.has(name), fromQuery: false });
  }
  const isReserved = (k: string) => (RESERVED as readonly string[]).includes(k) || HIDDEN.has(k);
  const stored: Record<string, string> = log ? log.fields : {};
  const names = log ? Object.keys(stored) : Object.keys(row).filter((k) => !isReserved(k));
  const fields: FieldEntry[] = names
    .filter((k) => !isReserved(k))
    .sort(compareNames)
    .map((name) => ({ name, value: log ? stored[name]! : cellText(row[name]), reserved: false, filterable: true, fromQuery: false }));
  const computed: FieldEntry[] = log
    ? Object.keys(row)
        .filter((k) => !isReserved(k) && !(k in stored))
        .sort(compareNames)
        .map((name) => ({ name, value: cellText(row[name]), reserved: false, filterable: false, fromQuery: true }))
    : [];
  return [...reserved, ...fields, ...computed];
}

/** Entries whose name or value holds the text (case-insensitive); all when it is blank. */
export function searchEntries(entries: readonly FieldEntry[], text: string): FieldEntry[] {
  const q = text.trim().toLowerCase();
  if (!q) return [...entries];
  return entries.filter((e) => e.name.toLowerCase().includes(q) || e.value.toLowerCase().includes(q));
}

/** Fields that name where a log came from, most telling first: the "same …" choices of the surrounding view. */
export const SAME_FIELDS = [
  'host',
  'hostname',
  'host.name',
  'host.hostname',
  'source',
  'sourcetype',
  'source_type',
  'service',
  'service.name',
  'program',
  'app',
  'appname',
  'application',
  'container.name',
  'device',
  'computer',
  'Computer',
] as const;

/** The "same …" fields this log has (non-empty), at most `max`, in SAME_FIELDS order. */
export function sameFieldChoices(fields: Record<string, unknown>, max = 4): Array<{ field: string; value: string }> {
  const out: Array<{ field: string; value: string }> = [];
  for (const f of SAME_FIELDS) {
    const v = cellText(fields[f]);
    if (v !== '' && !out.some((o) => o.field === f)) out.push({ field: f, value: v });
    if (out.length >= max) break;
  }
  return out;
}

const MESSAGE_FIELDS = ['message', 'msg', 'log', 'event.original', 'body', 'Message', 'text', 'description', 'event'];

/** One line about a log for a list: its message when it has one, else its fields as name=value. */
export function summaryOf(row: Row, omit: readonly string[] = [], max = 240): string {
  for (const f of MESSAGE_FIELDS) {
    const v = cellText(row[f]);
    if (v !== '') return clip(v.replace(/\s+/g, ' '), max);
  }
  const skip = new Set<string>([...RESERVED, ...HIDDEN, ...omit]);
  const parts = Object.keys(row)
    .filter((k) => !skip.has(k))
    .sort(compareNames)
    .map((k) => `${k}=${cellText(row[k])}`);
  return clip(parts.join(' '), max);
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** What the detail needs to find a log again: its row's time, id and fractal; null for aggregated rows. */
export function logRef(row: Row, fractalId: string): { timestamp: string; log_id: string; fractal_id: string } | null {
  const timestamp = cellText(row.timestamp);
  const logId = cellText(row.log_id);
  const fid = cellText(row.fractal_id) || fractalId;
  if (!timestamp || !/^[0-9a-f-]{36}$/i.test(logId) || !fid) return null;
  return { timestamp, log_id: logId, fractal_id: fid };
}

// Time ranges of the search workspace: relative presets, "all data" (the scope's own span), absolute
// ranges typed in UTC or local time, and how event times are shown. Pure: tests/ui/search-lib.test.ts.

export type Zone = 'utc' | 'local';

export const PRESETS = [
  { id: '15m', label: 'Last 15 minutes', short: '15 min', ms: 15 * 60_000 },
  { id: '1h', label: 'Last hour', short: '1 h', ms: 3600_000 },
  { id: '4h', label: 'Last 4 hours', short: '4 h', ms: 4 * 3600_000 },
  { id: '24h', label: 'Last 24 hours', short: '24 h', ms: 24 * 3600_000 },
  { id: '7d', label: 'Last 7 days', short: '7 d', ms: 7 * 86400_000 },
  { id: '30d', label: 'Last 30 days', short: '30 d', ms: 30 * 86400_000 },
] as const;

export type PresetId = (typeof PRESETS)[number]['id'];
export const DEFAULT_PRESET: PresetId = '24h';

export type RangeSpec =
  | { kind: 'relative'; preset: PresetId }
  /** Everything the fractal (or the prism's members) holds, resolved from its stats when the query runs. */
  | { kind: 'all' }
  | { kind: 'absolute'; start: Date; end: Date };

export function isPreset(id: string): id is PresetId {
  return PRESETS.some((p) => p.id === id);
}

export function presetOf(id: PresetId) {
  return PRESETS.find((p) => p.id === id)!;
}

export interface Span {
  oldest: Date;
  newest: Date;
}

/**
 * The concrete range to query. "all" needs the scope's span (without one: the last 30 days); its end gets
 * one extra millisecond because stored times have more digits than the stats report.
 */
export function resolveRange(spec: RangeSpec, now: Date, span?: Span | null): { start: Date; end: Date } {
  if (spec.kind === 'absolute') return { start: spec.start, end: spec.end };
  if (spec.kind === 'all') {
    if (span) return { start: new Date(span.oldest.getTime()), end: new Date(span.newest.getTime() + 1) };
    return { start: new Date(now.getTime() - presetOf('30d').ms), end: now };
  }
  return { start: new Date(now.getTime() - presetOf(spec.preset).ms), end: now };
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** "2026-01-02 03:04:05" (with ".678" when `ms`) in the zone. */
export function formatTime(d: Date, zone: Zone, ms = false): string {
  const u = zone === 'utc';
  const s =
    `${u ? d.getUTCFullYear() : d.getFullYear()}-${pad((u ? d.getUTCMonth() : d.getMonth()) + 1)}-${pad(u ? d.getUTCDate() : d.getDate())} ` +
    `${pad(u ? d.getUTCHours() : d.getHours())}:${pad(u ? d.getUTCMinutes() : d.getMinutes())}:${pad(u ? d.getUTCSeconds() : d.getSeconds())}`;
  return ms ? `${s}.${pad(u ? d.getUTCMilliseconds() : d.getMilliseconds(), 3)}` : s;
}

/** "UTC" or the local offset, "UTC+02:00". */
export function zoneLabel(zone: Zone, at: Date = new Date()): string {
  if (zone === 'utc') return 'UTC';
  const off = -at.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  return `UTC${sign}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

/**
 * Reads a typed time in the zone: "2026-01-02", "2026-01-02 03:04", "2026-01-02 03:04:05.678", a "T" in
 * place of the space, or a full RFC 3339 time with its own offset (which wins). Also "now". Null if not a time.
 */
export function parseTime(text: string, zone: Zone, now: Date = new Date()): Date | null {
  const s = text.trim();
  if (/^now$/i.test(s)) return new Date(now.getTime());
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(s);
  if (!m) return null;
  const [, y, mo, da, h = '0', mi = '0', se = '0', frac = '', off] = m;
  const ms = Number((frac + '000').slice(0, 3));
  const parts = [Number(y), Number(mo) - 1, Number(da), Number(h), Number(mi), Number(se), ms] as const;
  if (parts[1] > 11 || parts[2] < 1 || parts[2] > 31 || parts[3] > 23 || parts[4] > 59 || parts[5] > 59) return null;
  const utcLike = off !== undefined || zone === 'utc';
  const base = utcLike ? Date.UTC(...parts) : new Date(...parts).getTime();
  if (Number.isNaN(base)) return null;
  // Reject dates that rolled over (2026-02-31 would be March 3rd).
  const probe = new Date(base);
  if ((utcLike ? probe.getUTCDate() : probe.getDate()) !== parts[2]) return null;
  let t = base;
  if (off !== undefined && off.toUpperCase() !== 'Z') {
    const sign = off[0] === '-' ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    t -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return new Date(t);
}

/** Event times come as "YYYY-MM-DD hh:mm:ss.mmm" in UTC (§5). */
export function parseEventTime(v: unknown): Date | null {
  if (typeof v !== 'string' || v === '') return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(v);
  if (!m) return null;
  const t = Date.parse(`${m[1]}T${m[2]!.replace(/(\.\d{3})\d+$/, '$1')}${m[3] ?? 'Z'}`);
  return Number.isNaN(t) ? null : new Date(t);
}

/** A short human duration: "15 min", "2 h 30 min", "3 d". */
export function formatDuration(ms: number): string {
  const min = Math.round(ms / 60_000);
  if (min < 1) return `${Math.max(0, Math.round(ms / 1000))} s`;
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.round(h / 24);
  return `${d} d`;
}

/** How the picker names a range. */
export function rangeLabel(spec: RangeSpec, zone: Zone): string {
  if (spec.kind === 'relative') return presetOf(spec.preset).label;
  if (spec.kind === 'all') return 'All data';
  const a = formatTime(spec.start, zone);
  const b = formatTime(spec.end, zone);
  const sameDay = a.slice(0, 10) === b.slice(0, 10);
  return `${a} → ${sameDay ? b.slice(11) : b}`;
}

// Times in the detail panel: rows carry "YYYY-MM-DD hh:mm:ss.mmm" (UTC); the panel shows them in the
// user's zone with UTC beside, written as the workspace writes times (lib/search/time.ts).
// Pure: tests/ui/detail.test.ts.
import { formatTime, zoneLabel, type Zone } from '../search/time.ts';

export type { Zone };
/** A row's time text or RFC 3339 → Date; null when it is neither: read as the workspace reads it. */
export { parseEventTime as parseRowTime } from '../search/time.ts';

/** "2026-01-02 03:04:05.678" in the zone (the time only with `timeOnly`). */
export function formatInZone(d: Date, zone: Zone, timeOnly = false): string {
  const text = formatTime(d, zone, true);
  return timeOnly ? text.slice(text.indexOf(' ') + 1) : text;
}

/** "UTC" or the local offset, "UTC+02:00" ("UTC" too when the local zone is UTC). */
export function zoneName(zone: Zone, at: Date = new Date()): string {
  return zone === 'local' && at.getTimezoneOffset() === 0 ? 'UTC' : zoneLabel(zone, at);
}

/** "+1.250 s", "−3 min 2 s", "+2 d 4 h": an event's distance from the opened one. */
export function offsetText(ms: number): string {
  const sign = ms < 0 ? '−' : '+';
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${a} ms`;
  if (a < 60_000) return `${sign}${(a / 1000).toFixed(a < 10_000 ? 3 : 1).replace(/\.?0+$/, '')} s`;
  if (a < 3600_000) return `${sign}${Math.floor(a / 60_000)} min${a % 60_000 >= 1000 ? ` ${Math.floor((a % 60_000) / 1000)} s` : ''}`;
  if (a < 86_400_000) return `${sign}${Math.floor(a / 3600_000)} h${a % 3600_000 >= 60_000 ? ` ${Math.floor((a % 3600_000) / 60_000)} min` : ''}`;
  return `${sign}${Math.floor(a / 86_400_000)} d${a % 86_400_000 >= 3600_000 ? ` ${Math.floor((a % 86_400_000) / 3600_000)} h` : ''}`;
}

/** A comment's time (RFC 3339) in the zone, to the minute. */
export function commentTime(iso: string, zone: Zone): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return formatInZone(d, zone).slice(0, 16);
}

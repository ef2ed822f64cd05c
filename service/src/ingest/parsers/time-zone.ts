// An IANA time zone (`Europe/Berlin`), for syslog timestamps written in local time without a zone
// (RFC 3164's `Nov 25 16:00:07`): a syslog listener reads them in the zone it is configured with.
// Offsets come from the runtime's own time-zone data (Intl), cached per quarter hour, the finest
// step at which any zone's offset changes.

const QUARTER_HOUR_MS = 900_000;

export class TimeZone {
  private readonly format: Intl.DateTimeFormat;
  private readonly offsets = new Map<number, number>();

  private constructor(readonly name: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  private static zones = new Map<string, TimeZone>();

  /** The zone of that name, or null when the runtime does not know it. */
  static of(name: string): TimeZone | null {
    const hit = TimeZone.zones.get(name);
    if (hit) return hit;
    let zone: TimeZone;
    try {
      zone = new TimeZone(name);
    } catch {
      return null;
    }
    TimeZone.zones.set(name, zone);
    return zone;
  }

  get isUtc(): boolean {
    return this.name === 'UTC' || this.name === 'Etc/UTC';
  }

  /** Milliseconds east of UTC at the instant `utcMs`. */
  offsetAt(utcMs: number): number {
    const key = Math.floor(utcMs / QUARTER_HOUR_MS);
    const hit = this.offsets.get(key);
    if (hit !== undefined) return hit;
    const at = key * QUARTER_HOUR_MS;
    const p: Record<string, number> = {};
    for (const part of this.format.formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
    const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
    const offset = wall - at;
    if (this.offsets.size > 10_000) this.offsets.clear();
    this.offsets.set(key, offset);
    return offset;
  }

  /**
   * The offset (ms east of UTC) that applies to the wall-clock time `wallMs` (its fields read as if
   * UTC). In the hour a clock is set back, the earlier of the two; in the hour skipped going
   * forward, the offset before the change.
   */
  offsetOfWall(wallMs: number): number {
    // Offsets half a day either side (zones change at most twice a year): a candidate fits when
    // the instant it gives has that offset.
    const before = this.offsetAt(wallMs - 43_200_000);
    const after = this.offsetAt(wallMs + 43_200_000);
    const fitsBefore = this.offsetAt(wallMs - before) === before;
    const fitsAfter = this.offsetAt(wallMs - after) === after;
    if (fitsBefore && fitsAfter) return Math.max(before, after);
    return fitsAfter && !fitsBefore ? after : before;
  }
}

/** `+01:00`, `-05:30`, `Z` for zero. */
export function offsetText(offsetMs: number): string {
  if (offsetMs === 0) return 'Z';
  const sign = offsetMs < 0 ? '-' : '+';
  const m = Math.round(Math.abs(offsetMs) / 60_000);
  return `${sign}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

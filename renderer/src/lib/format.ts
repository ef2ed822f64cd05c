// Pure formatting helpers (no DOM): unit-tested in tests/ui/format.test.ts.

export function formatCount(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return '—';
  return Math.round(n).toLocaleString('en-US');
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function formatBytes(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n) || n < 0) return '—';
  let v = n;
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${v} B`;
  return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ${UNITS[i]}`;
}

/**
 * Reads the timestamp forms a log store hands back: ISO 8601, ClickHouse's "YYYY-MM-DD hh:mm:ss[.fff]"
 * (no zone: taken as UTC), or epoch seconds / milliseconds as a number or digit string.
 */
export function parseTimestamp(v: string | number | null | undefined): Date | null {
  if (v == null || v === '') return null;
  if (typeof v === 'number' || /^\d+(\.\d+)?$/.test(v)) {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) return null;
    const ms = n < 1e11 ? n * 1000 : n < 1e14 ? n : n < 1e17 ? n / 1e3 : n / 1e6;
    return new Date(ms);
  }
  let s = v.trim();
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(.*)$/.exec(s);
  if (m) {
    // Trim sub-millisecond digits: Date.parse does not accept more than 3 fraction digits everywhere.
    const time = m[2].replace(/(\.\d{3})\d+$/, '$1');
    const zone = m[3].trim();
    s = `${m[1]}T${time}${zone === '' ? 'Z' : zone}`;
  }
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : new Date(t);
}

/** "2024-05-01 12:34:56 UTC": investigators compare times across sources, so the UI speaks UTC. */
export function formatUtc(d: Date | null): string {
  if (!d) return '—';
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/Z$/, ' UTC');
}

/** "3 h ago", "12 d ago"; for future times (clock skew) "in 5 min". */
export function formatAge(d: Date | null, now: Date = new Date()): string {
  if (!d) return '';
  const diff = now.getTime() - d.getTime();
  const abs = Math.abs(diff);
  const sec = Math.round(abs / 1000);
  let text: string;
  if (sec < 60) text = `${sec} s`;
  else if (sec < 3600) text = `${Math.floor(sec / 60)} min`;
  else if (sec < 86400) text = `${Math.floor(sec / 3600)} h`;
  else if (sec < 86400 * 365) text = `${Math.floor(sec / 86400)} d`;
  else text = `${(sec / (86400 * 365)).toFixed(1)} y`;
  return diff >= 0 ? `${text} ago` : `in ${text}`;
}

/**
 * A time in a table cell: the first `chars` of its UTC text (10: the day, 16: to the minute), with the
 * whole time and its age for the tooltip; empty for no time.
 */
export function shortUtc(v: string | number | null | undefined, chars: number): { text: string; title: string } {
  const d = parseTimestamp(v);
  return d ? { text: formatUtc(d).slice(0, chars), title: `${formatUtc(d)} (${formatAge(d)})` } : { text: '', title: '' };
}

/** Shows the start and end of a secret so tokens can be told apart without revealing them. */
export function maskToken(token: string): string {
  if (token.length <= 8) return '•'.repeat(Math.max(token.length, 4));
  return `${token.slice(0, 4)}${'•'.repeat(8)}${token.slice(-4)}`;
}

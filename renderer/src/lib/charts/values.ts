// Reading cells of a query result for charts: numbers that may arrive as text ("52.52"), labels of any
// value, the columns of a result, and number formatting for axes, legends and tooltips.
// Pure: tests/ui/charts.test.ts. A label is a cell's text as the results table shows it (search/export.ts cellText).

export type Row = Record<string, unknown>;

/** Columns a chart never plots (event bookkeeping that rides along with rows). */
export const HIDDEN_COLUMNS: ReadonlySet<string> = new Set([
  'timestamp',
  'log_id',
  'fractal_id',
  'norm_log',
  'raw_log',
  '_chain_ts',
  '_chain_done',
]);

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A finite number from a number or numeric text, else null (booleans, empty text, "slow" are not numbers). */
export function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') {
    const t = v.trim();
    if (!NUMERIC.test(t)) return null;
    const n = Number(t);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** The result's columns: `field_order` when the response gave one, else the keys of the first rows. */
export function columnsOf(rows: readonly Row[], fieldOrder: readonly string[]): string[] {
  if (fieldOrder.length > 0) return [...fieldOrder];
  const seen = new Set<string>();
  for (const r of rows.slice(0, 50)) for (const k of Object.keys(r)) seen.add(k);
  return [...seen];
}

/** A short human name for an output column: `_count` → count, `_heatmap_value` → value, `sum_bytes` stays. */
export function fieldLabel(name: string): string {
  if (name === '_heatmap_value') return 'value';
  if (name === '_bin_count') return 'count';
  if (/^_[a-z]+$/.test(name)) return name.slice(1);
  return name;
}

/** "(empty)" for an empty label, so a slice or node of absent values still has a name. */
export const displayLabel = (s: string): string => (s === '' ? '(empty)' : s);

/** Full precision for tooltips: grouped integers, up to 4 decimals otherwise. */
export function formatNumber(n: number | null | undefined, unit?: string | null): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const abs = Math.abs(n);
  const digits = Number.isInteger(n) ? 0 : abs >= 100 ? 2 : abs >= 1 ? 3 : 4;
  const s = n.toLocaleString('en-US', { maximumFractionDigits: digits });
  return unit === 'percent' ? `${s}%` : s;
}

/** Short form for axes and big numbers: 950, 1.2k, 34k, 5.6M, 7.8G; small fractions kept. */
export function formatCompact(n: number, unit?: string | null): string {
  if (!Number.isFinite(n)) return '';
  const abs = Math.abs(n);
  let s: string;
  if (abs >= 1e9) s = `${trim(n / 1e9)}G`;
  else if (abs >= 1e6) s = `${trim(n / 1e6)}M`;
  else if (abs >= 1e4) s = `${trim(n / 1e3)}k`;
  else if (abs >= 100 || Number.isInteger(n)) s = n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  else if (abs >= 1) s = String(+n.toFixed(2));
  else if (abs === 0) s = '0';
  else s = String(+n.toPrecision(2));
  return unit === 'percent' ? `${s}%` : s;
}

function trim(x: number): string {
  return String(+x.toFixed(Math.abs(x) >= 100 ? 0 : 1));
}

/** Percent of a whole, one decimal ("12.5%"), "<0.1%" for tiny non-zero shares. */
export function formatShare(part: number, whole: number): string {
  if (whole <= 0) return '—';
  const p = (100 * part) / whole;
  if (p > 0 && p < 0.1) return '<0.1%';
  return `${p.toFixed(1)}%`;
}

/** Cuts a label to `max` characters with an ellipsis. */
export function truncate(s: string, max: number): string {
  if (max <= 1) return s.length > 0 ? '…' : '';
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A bucket span in words: 60 → "1 min", 3600 → "1 h", 86400 → "1 d". */
export function formatSpan(s: number): string {
  if (s % 604800 === 0) return `${s / 604800} w`;
  if (s % 86400 === 0) return `${s / 86400} d`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

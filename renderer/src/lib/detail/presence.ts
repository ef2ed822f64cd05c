// The field sidebar's arithmetic: which fields the result rows carry and how many rows carry each
// (computed here, from the rows the table holds), and the bars of a field's top values
// (POST /api/v1/query/fieldstats). Pure: tests/ui/detail.test.ts.
import type { FieldStats } from '../search/query-client.ts';
import { compareNames, HIDDEN } from './fields.ts';

export interface FieldCount {
  name: string;
  /** Rows holding a non-empty value. */
  count: number;
  /** Percent of the rows (0–100). */
  share: number;
}

export type FieldSort = 'count' | 'name';

const present = (v: unknown) => v !== undefined && v !== null && v !== '';

/**
 * The fields present in the rows with their counts. Sorted by count (most rows first; ties in the
 * result's column order, then by name) or by name. A field no row carries is not listed.
 */
export function fieldPresence(rows: readonly Record<string, unknown>[], fieldOrder: readonly string[] = [], sort: FieldSort = 'count'): FieldCount[] {
  const counts = new Map<string, number>();
  for (const row of rows) {
    for (const k in row) {
      if (HIDDEN.has(k) || !present(row[k])) continue;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
  }
  const total = rows.length;
  const list = [...counts].map(([name, count]) => ({ name, count, share: total ? (100 * count) / total : 0 }));
  const pos = (n: string) => {
    const i = fieldOrder.indexOf(n);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  if (sort === 'name') return list.sort((a, b) => compareNames(a.name, b.name));
  return list.sort((a, b) => b.count - a.count || pos(a.name) - pos(b.name) || compareNames(a.name, b.name));
}

export function searchFields(list: readonly FieldCount[], text: string): FieldCount[] {
  const q = text.trim().toLowerCase();
  return q ? list.filter((f) => f.name.toLowerCase().includes(q)) : [...list];
}


export interface ValueBar {
  value: string;
  count: number;
  /** Percent of all rows of the result, as the service computed it. */
  share: number;
  /** Bar length in percent of its track: the share itself, at least 1 so a value that exists shows. */
  width: number;
  label: string;
}

export function valueBars(stats: FieldStats): ValueBar[] {
  return stats.top.map((t) => ({
    value: t.value,
    count: t.count,
    share: t.share,
    width: t.count > 0 ? Math.min(100, Math.max(1, t.share)) : 0,
    label: formatPercent(t.share),
  }));
}

/** 42.345 → "42%", 4.26 → "4.3%", 0.04 → "<0.1%", 0 → "0%". */
export function formatPercent(p: number): string {
  if (!Number.isFinite(p) || p <= 0) return '0%';
  if (p < 0.1) return '<0.1%';
  if (p < 10) return `${(Math.round(p * 10) / 10).toString()}%`;
  return `${Math.round(p)}%`;
}

/** Numeric statistics: integers as they are, others to 4 significant digits past the point. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  const abs = Math.abs(n);
  const digits = abs >= 1000 ? 1 : abs >= 1 ? 3 : 4;
  return n.toLocaleString('en-US', { maximumFractionDigits: digits });
}

/** Stable key of the inputs a field's stats depend on: a change empties the cache. */
export function statsKey(parts: { query: string; scope: { fractal_id?: string; prism_id?: string }; start: string; end: string }): string {
  return JSON.stringify([parts.query, parts.scope.fractal_id ?? '', parts.scope.prism_id ?? '', parts.start, parts.end]);
}

/** A time bound as the query API takes it (RFC 3339), from a Date or text. */
export function timeParam(t: string | Date): string {
  return t instanceof Date ? t.toISOString() : t;
}

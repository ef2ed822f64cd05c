// Pie and bar data: one item per label, the renderer's `limit` (§4), the pie's "Other" slice, and the
// SVG arcs of the slices. Pure: tests/ui/charts.test.ts.
import { toNumber, type Row } from './values.ts';
import { cellText } from '../search/export.ts';

export interface CategoryItem {
  label: string;
  value: number;
  /** Position in the result (bars keep the result's order). */
  index: number;
}

export interface Slice extends CategoryItem {
  /** Share of the pie, 0..1. */
  fraction: number;
  /** Angles in radians, clockwise from 12 o'clock. */
  start: number;
  end: number;
  /** The "Other" slice: the groups past the limit. */
  other: boolean;
  /** Groups in this slice (1, or how many "Other" holds). */
  members: number;
}

/** One item per distinct label (rows with the same label add up); rows whose value is not a number are left out. */
export function categoryItems(rows: readonly Row[], labelField: string, valueField: string): { items: CategoryItem[]; skipped: number } {
  const byLabel = new Map<string, CategoryItem>();
  let skipped = 0;
  rows.forEach((r) => {
    const v = toNumber(r[valueField]);
    if (v === null) {
      skipped++;
      return;
    }
    const label = cellText(r[labelField]);
    const seen = byLabel.get(label);
    if (seen) seen.value += v;
    else byLabel.set(label, { label, value: v, index: byLabel.size });
  });
  return { items: [...byLabel.values()], skipped };
}

/** Largest value first, ties in the result's order. */
export const byValueDesc = (a: CategoryItem, b: CategoryItem) => b.value - a.value || a.index - b.index;

/** The `limit` largest items in the result's order (a sorted query keeps its sort); how many were left out. */
export function topItems(items: readonly CategoryItem[], limit: number): { items: CategoryItem[]; hidden: number } {
  if (items.length <= limit) return { items: [...items], hidden: 0 };
  const keep = new Set([...items].sort(byValueDesc).slice(0, Math.max(0, limit)));
  return { items: items.filter((i) => keep.has(i)), hidden: items.length - keep.size };
}

/**
 * Bar order: a result already in order (labels ascending, as `sort(status_code)` gives, or values rising or
 * falling) keeps it; groups in no particular order are drawn largest first.
 */
export function barOrder(items: readonly CategoryItem[]): CategoryItem[] {
  const inOrder = (cmp: (a: CategoryItem, b: CategoryItem) => number) => items.every((it, i) => i === 0 || cmp(items[i - 1]!, it) <= 0);
  const byLabel = (a: CategoryItem, b: CategoryItem) => {
    const x = Number(a.label);
    const y = Number(b.label);
    if (a.label !== '' && b.label !== '' && Number.isFinite(x) && Number.isFinite(y)) return x - y;
    return a.label < b.label ? -1 : a.label > b.label ? 1 : 0;
  };
  if (inOrder(byLabel) || inOrder((a, b) => a.value - b.value) || inOrder((a, b) => b.value - a.value)) return [...items];
  return [...items].sort(byValueDesc);
}

/**
 * Pie slices, largest first: the top `limit` groups and one "Other" slice for the rest. Values ≤ 0 cannot be
 * drawn as area and are counted in `dropped`.
 */
export function pieSlices(items: readonly CategoryItem[], limit: number): { slices: Slice[]; total: number; dropped: number } {
  const positive = items.filter((i) => i.value > 0);
  const dropped = items.length - positive.length;
  const sorted = [...positive].sort(byValueDesc);
  const top = sorted.slice(0, Math.max(1, limit));
  const rest = sorted.slice(top.length);
  const total = positive.reduce((n, i) => n + i.value, 0);
  const parts: Array<CategoryItem & { other: boolean; members: number }> = top.map((i) => ({ ...i, other: false, members: 1 }));
  if (rest.length > 0) {
    parts.push({ label: 'Other', value: rest.reduce((n, i) => n + i.value, 0), index: -1, other: true, members: rest.length });
  }
  let angle = 0;
  const slices = parts.map((p) => {
    const fraction = total > 0 ? p.value / total : 0;
    const start = angle;
    angle += fraction * 2 * Math.PI;
    return { ...p, fraction, start, end: angle };
  });
  return { slices, total, dropped };
}

const f = (n: number) => +n.toFixed(2);

/** Point at `angle` (clockwise from 12 o'clock) on a circle of radius r around (cx, cy). */
export function polar(cx: number, cy: number, r: number, angle: number): [number, number] {
  return [cx + r * Math.sin(angle), cy - r * Math.cos(angle)];
}

/** SVG path of a ring segment (a pie slice when r0 = 0); a full turn is drawn as two halves. */
export function arcPath(cx: number, cy: number, r0: number, r1: number, a0: number, a1: number): string {
  const sweep = a1 - a0;
  if (sweep >= 2 * Math.PI - 1e-9) {
    const mid = a0 + Math.PI;
    return `${arcPath(cx, cy, r0, r1, a0, mid)} ${arcPath(cx, cy, r0, r1, mid, a0 + 2 * Math.PI)}`;
  }
  const large = sweep > Math.PI ? 1 : 0;
  const [x0, y0] = polar(cx, cy, r1, a0);
  const [x1, y1] = polar(cx, cy, r1, a1);
  if (r0 <= 0) return `M${f(cx)},${f(cy)} L${f(x0)},${f(y0)} A${f(r1)},${f(r1)} 0 ${large} 1 ${f(x1)},${f(y1)} Z`;
  const [x2, y2] = polar(cx, cy, r0, a1);
  const [x3, y3] = polar(cx, cy, r0, a0);
  return `M${f(x0)},${f(y0)} A${f(r1)},${f(r1)} 0 ${large} 1 ${f(x1)},${f(y1)} L${f(x2)},${f(y2)} A${f(r0)},${f(r0)} 0 ${large} 0 ${f(x3)},${f(y3)} Z`;
}

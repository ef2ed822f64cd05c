// Histogram bins (`_bin_lower`, `_bin_upper`, `_bin_count`, §3.10) and heatmap grids (`_heatmap_x/_y/_value`
// or x/y columns with `_count`, §4). Pure: tests/ui/charts.test.ts.
import type { ChartSpec } from './spec.ts';
import { toNumber, type Row } from './values.ts';
import { cellText } from '../search/export.ts';

export interface Bin {
  lower: number;
  upper: number;
  count: number;
}

/** The bins of a histogram result, ordered by lower edge; rows without numeric edges are left out. */
export function histogramBins(rows: readonly Row[]): Bin[] {
  const bins: Bin[] = [];
  for (const r of rows) {
    const lower = toNumber(r._bin_lower);
    const upper = toNumber(r._bin_upper);
    const count = toNumber(r._bin_count);
    if (lower === null || upper === null) continue;
    bins.push({ lower, upper: Math.max(lower, upper), count: count ?? 0 });
  }
  return bins.sort((a, b) => a.lower - b.lower);
}

export interface BinStats {
  total: number;
  max: number;
  /** Width of one bin (0 when all values were equal: one bin at a point). */
  width: number;
  min: number;
  maxEdge: number;
}

export function binStats(bins: readonly Bin[]): BinStats {
  let total = 0;
  let max = 0;
  for (const b of bins) {
    total += b.count;
    max = Math.max(max, b.count);
  }
  const first = bins[0];
  const last = bins[bins.length - 1];
  return { total, max, width: first ? first.upper - first.lower : 0, min: first?.lower ?? 0, maxEdge: last?.upper ?? 0 };
}

/** Centres of the bins (uPlot's x values); a point bin sits on its value. */
export const binCenters = (bins: readonly Bin[]): number[] => bins.map((b) => (b.lower + b.upper) / 2);

/** The x range a histogram shows: its outer edges, widened by a half unit when all values were equal. */
export function binRange(bins: readonly Bin[]): [number, number] {
  if (bins.length === 0) return [0, 1];
  const lo = bins[0]!.lower;
  const hi = bins[bins.length - 1]!.upper;
  if (hi > lo) return [lo, hi];
  const pad = Math.abs(lo) > 0 ? Math.abs(lo) * 0.05 : 0.5;
  return [lo - pad, hi + pad];
}

// ---- heatmap --------------------------------------------------------------------------------------------

type HeatSpec = Extract<ChartSpec, { kind: 'heatmap' }>;

export interface HeatGrid {
  xs: string[];
  ys: string[];
  /** values[y][x], null where the result has no cell. */
  values: Array<Array<number | null>>;
  min: number;
  max: number;
  /** Cells with a value. */
  cells: number;
  /** Categories past the limit on each axis. */
  hiddenX: number;
  hiddenY: number;
}

/**
 * Axis order: numbers ascending when every label is a number (status codes, ports), else by total
 * descending (the busiest host first), ties by name.
 */
export function axisOrder(totals: ReadonlyMap<string, number>): string[] {
  const labels = [...totals.keys()];
  if (labels.length > 0 && labels.every((l) => toNumber(l) !== null)) return labels.sort((a, b) => toNumber(a)! - toNumber(b)!);
  return labels.sort((a, b) => totals.get(b)! - totals.get(a)! || (a < b ? -1 : a > b ? 1 : 0));
}

/** The grid of a heatmap result, each axis cut to the `limit` categories with the largest totals. */
export function heatmapGrid(rows: readonly Row[], spec: HeatSpec): HeatGrid {
  const cellsIn: Array<{ x: string; y: string; v: number }> = [];
  const xTot = new Map<string, number>();
  const yTot = new Map<string, number>();
  for (const r of rows) {
    const v = toNumber(r[spec.valueCol]);
    if (v === null) continue;
    const x = cellText(r[spec.xCol]);
    const y = cellText(r[spec.yCol]);
    cellsIn.push({ x, y, v });
    xTot.set(x, (xTot.get(x) ?? 0) + Math.abs(v));
    yTot.set(y, (yTot.get(y) ?? 0) + Math.abs(v));
  }
  const keep = (tot: Map<string, number>) => {
    if (tot.size <= spec.limit) return tot;
    const top = [...tot.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, spec.limit);
    return new Map(top);
  };
  const xKeep = keep(xTot);
  const yKeep = keep(yTot);
  const xs = axisOrder(xKeep);
  const ys = axisOrder(yKeep);
  const xi = new Map(xs.map((x, i) => [x, i]));
  const yi = new Map(ys.map((y, i) => [y, i]));
  const values: Array<Array<number | null>> = ys.map(() => xs.map(() => null));
  let min = Infinity;
  let max = -Infinity;
  let cells = 0;
  for (const c of cellsIn) {
    const i = xi.get(c.x);
    const j = yi.get(c.y);
    if (i === undefined || j === undefined) continue;
    const prev = values[j]![i];
    const v = (prev ?? 0) + c.v;
    if (prev === null) cells++;
    values[j]![i] = v;
  }
  for (const row of values) for (const v of row) if (v !== null) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  if (cells === 0) {
    min = 0;
    max = 0;
  }
  return { xs, ys, values, min, max, cells, hiddenX: xTot.size - xs.length, hiddenY: yTot.size - ys.length };
}

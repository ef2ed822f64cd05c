// Colour and size scales: categorical palettes (fallbacks for the CSS variables the chart component
// defines per theme), sequential ramps for heatmaps and scores, square-root sizes, nice ticks.
// Pure: tests/ui/charts.test.ts.

/** Fallbacks of --chart-1 … --chart-10 (the component's CSS holds the live values per theme). */
export const CATEGORY_DARK = ['#4d9cff', '#f0883e', '#3fb950', '#ff7b72', '#bc8cff', '#39c5cf', '#e3b341', '#f778ba', '#a5d6ff', '#7ee2a8'];
/** Fallbacks of the heatmap ramp, low → high (--heat-0 … --heat-4). */
export const HEAT_DARK = ['#1a3552', '#1f5597', '#2f7de0', '#6cb2ff', '#dff0ff'];
/** Fallbacks of the anomaly score colours, 0 → 1 (--score-0 … --score-2): calm, notable, alarming. */
export const SCORE_DARK = ['#3fb950', '#d29922', '#ff5b4f'];

export type Rgb = [number, number, number];

/** `#rgb`, `#rrggbb`, `rgb(r, g, b)` / `rgb(r g b)` → [r, g, b]; null otherwise. */
export function parseColor(c: string): Rgb | null {
  const s = c.trim().toLowerCase();
  let m = /^#([0-9a-f]{3})$/.exec(s);
  if (m) return [...m[1]!].map((h) => parseInt(h + h, 16)) as Rgb;
  m = /^#([0-9a-f]{6})([0-9a-f]{2})?$/.exec(s);
  if (m) return [0, 2, 4].map((i) => parseInt(m![1]!.slice(i, i + 2), 16)) as Rgb;
  m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)/.exec(s);
  if (m) return [+m[1]!, +m[2]!, +m[3]!].map((x) => Math.round(Math.min(255, x))) as Rgb;
  return null;
}

export const rgbText = ([r, g, b]: Rgb): string => `rgb(${r}, ${g}, ${b})`;

/** `color` with alpha as an rgba() text (for canvas fills from CSS colours). */
export function withAlpha(color: string, alpha: number): string {
  const c = parseColor(color);
  return c ? `rgba(${c[0]}, ${c[1]}, ${c[2]}, ${alpha})` : color;
}

/** Colour at t ∈ [0, 1] along evenly spaced stops, interpolated in RGB. */
export function rampColor(stops: readonly string[], t: number): string {
  const cs = stops.map((s) => parseColor(s) ?? ([128, 128, 128] as Rgb));
  if (cs.length === 0) return 'rgb(128, 128, 128)';
  if (cs.length === 1) return rgbText(cs[0]!);
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (cs.length - 1);
  const i = Math.min(cs.length - 2, Math.floor(x));
  const f = x - i;
  const a = cs[i]!;
  const b = cs[i + 1]!;
  return rgbText([0, 1, 2].map((k) => Math.round(a[k]! + (b[k]! - a[k]!) * f)) as Rgb);
}

/** Relative luminance (WCAG), to pick a readable text colour over a fill. */
export function luminance(color: string): number {
  const c = parseColor(color);
  if (!c) return 0.5;
  const [r, g, b] = c.map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export interface ColorScale {
  mode: 'linear' | 'log';
  min: number;
  max: number;
  /** Position of a value on the ramp, 0..1. */
  t(v: number): number;
  color(v: number): string;
  /** Values for the legend's ticks, low → high. */
  ticks: number[];
}

/**
 * A sequential scale over [min, max]. `auto` turns logarithmic when all values are positive and span more
 * than two orders of magnitude (one busy cell would otherwise wash every other cell out).
 */
export function colorScale(min: number, max: number, stops: readonly string[], mode: 'linear' | 'log' | 'auto' = 'auto'): ColorScale {
  const useLog = mode === 'log' || (mode === 'auto' && min > 0 && max / min > 100);
  const lo = useLog ? Math.log10(Math.max(min, Number.MIN_VALUE)) : min;
  const hi = useLog ? Math.log10(Math.max(max, Number.MIN_VALUE)) : max;
  const t = (v: number) => {
    if (!(hi > lo)) return 1;
    const x = useLog ? Math.log10(Math.max(v, Number.MIN_VALUE)) : v;
    return Math.min(1, Math.max(0, (x - lo) / (hi - lo)));
  };
  const ticks = useLog ? logTicks(min, max) : niceTicks(min, max, 4);
  return { mode: useLog ? 'log' : 'linear', min, max, t, color: (v) => rampColor(stops, t(v)), ticks };
}

/** Round tick values covering [min, max] (about `count` of them); the ends are min and max themselves. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (max <= min) return [min];
  const raw = (max - min) / Math.max(1, count);
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
  const out = [min];
  for (let v = Math.ceil(min / step) * step; v < max - step * 0.25; v += step) if (v > min + step * 0.25) out.push(+v.toPrecision(12));
  out.push(max);
  return out;
}

function logTicks(min: number, max: number): number[] {
  const out = [min];
  for (let e = Math.ceil(Math.log10(min)); 10 ** e < max; e++) if (10 ** e > min * 1.5 && 10 ** e < max / 1.5) out.push(10 ** e);
  out.push(max);
  return out;
}

/** Radius (or width) for a value: the area grows with the value, from rMin at 0 to rMax at `domainMax`. */
export function sqrtScale(domainMax: number, rMin: number, rMax: number): (v: number) => number {
  return (v) => {
    if (!(domainMax > 0) || !(v > 0)) return rMin;
    return rMin + (rMax - rMin) * Math.sqrt(Math.min(1, v / domainMax));
  };
}

/** A colour index for each category: the most frequent first; past the palette everything shares `other`. */
export function categoryIndex(counts: ReadonlyMap<string, number>, paletteSize: number): Map<string, number> {
  const order = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => k);
  return new Map(order.map((k, i) => [k, i < paletteSize ? i : -1]));
}

// DOM helpers shared by the chart components: their props, the theme's chart colours read from CSS
// variables (the component's stylesheet defines them per theme, app.css the base ones), a ResizeObserver
// action, a theme-switch watcher, and keyboard stepping.
import { CATEGORY_DARK, HEAT_DARK, SCORE_DARK } from '../../lib/charts/scale.ts';
import type { ChartSpec } from '../../lib/charts/spec.ts';
import type { Row } from '../../lib/charts/values.ts';

/** A click on a value filters the search on it; `negate` (Alt) excludes it instead. */
export type FilterHandler = (field: string, value: string, negate: boolean) => void;

/** The props of a chart that draws one kind of spec from the result's rows. */
export interface ChartProps<K extends ChartSpec['kind']> {
  rows: Row[];
  spec: Extract<ChartSpec, { kind: K }>;
  theme: ChartTheme;
  onFilter?: FilterHandler;
}

export interface ChartTheme {
  categories: string[];
  other: string;
  heat: string[];
  score: string[];
  text: string;
  strong: string;
  muted: string;
  grid: string;
  axis: string;
  surface: string;
  surface2: string;
  bg: string;
  accent: string;
  focus: string;
  font: string;
  mono: string;
  dark: boolean;
  /** Type size against the usual (the kiosk's `--ui-unit`, app.css): canvas labels and their room grow with it. */
  scale: number;
}

/** The chart colours in effect for `el` (a .chart-view element or inside one). */
export function readTheme(el: Element): ChartTheme {
  const cs = getComputedStyle(el);
  const v = (name: string, fallback: string) => cs.getPropertyValue(name).trim() || fallback;
  return {
    categories: CATEGORY_DARK.map((c, i) => v(`--chart-${i + 1}`, c)),
    other: v('--chart-other', '#8b949e'),
    heat: HEAT_DARK.map((c, i) => v(`--heat-${i}`, c)),
    score: SCORE_DARK.map((c, i) => v(`--score-${i}`, c)),
    text: v('--text', '#d9dfe7'),
    strong: v('--text-strong', '#f1f4f8'),
    muted: v('--muted', '#8d98a8'),
    grid: v('--chart-grid', v('--border', '#2b333f')),
    axis: v('--border-strong', '#3a4452'),
    surface: v('--surface', '#151a21'),
    surface2: v('--surface-2', '#1c222b'),
    bg: v('--bg', '#0e1116'),
    accent: v('--accent', '#4d9cff'),
    focus: v('--focus', '#79b4ff'),
    font: v('--font', 'system-ui, sans-serif'),
    mono: v('--mono', 'monospace'),
    dark: document.documentElement.dataset.theme !== 'light',
    scale: Number.parseFloat(v('--ui-unit', '1px')) || 1,
  };
}

/** Calls back on every theme switch (`<html data-theme>`). */
export function watchTheme(cb: () => void): () => void {
  const mo = new MutationObserver(cb);
  mo.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  return () => mo.disconnect();
}

/** Svelte action: reports the element's content size now and on every change (ResizeObserver). */
export function measure(node: HTMLElement, cb: (w: number, h: number) => void) {
  let fn = cb;
  const ro = new ResizeObserver((entries) => {
    const r = entries[0]!.contentRect;
    fn(Math.floor(r.width), Math.floor(r.height));
  });
  ro.observe(node);
  return {
    update(next: (w: number, h: number) => void) {
      fn = next;
    },
    destroy() {
      ro.disconnect();
    },
  };
}

/** Arrow keys, Home and End as a new index into n items (wrapping), or null for other keys. Left/Up go back, Right/Down forward. */
export function stepKey(e: KeyboardEvent, i: number, n: number): number | null {
  if (n <= 0) return null;
  if (e.key === 'ArrowRight' || e.key === 'ArrowDown') return i < 0 ? 0 : (i + 1) % n;
  if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') return i < 0 ? n - 1 : (i - 1 + n) % n;
  if (e.key === 'Home') return 0;
  if (e.key === 'End') return n - 1;
  return null;
}

/** Enter filters for the active item, Alt+Enter, Delete or "-" against it; null for other keys. */
export function filterKey(e: KeyboardEvent): { negate: boolean } | null {
  if (e.key === 'Enter' || e.key === ' ') return { negate: e.altKey };
  if (e.key === 'Delete' || e.key === '-') return { negate: true };
  return null;
}

/** Tick steps of a value axis whose values are all whole numbers (counts): no 0.5 between 0 and 1. */
const WHOLE_STEPS = Array.from({ length: 16 }, (_, e) => [1, 2, 2.5, 5].map((m) => m * 10 ** e)).flat().filter((s) => Number.isInteger(s));

/** uPlot `incrs` for a value axis: whole steps when every value is a whole number, else uPlot's own. */
export function wholeIncrs(values: Iterable<number | null | undefined>): number[] | undefined {
  for (const v of values) if (v != null && !Number.isInteger(v)) return undefined;
  return WHOLE_STEPS;
}

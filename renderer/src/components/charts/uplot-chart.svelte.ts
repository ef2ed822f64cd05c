// What the uPlot charts share (BarPlot, TimeChart; the search histogram takes the time zone): the plot's
// life with its component, the value axis, the top of that axis and the time zone of a time axis.
import { untrack } from 'svelte';
import uPlot from 'uplot';
import { formatCompact } from '../../lib/charts/values.ts';
import { wholeIncrs, type ChartTheme } from './chart-dom.ts';

/**
 * One uPlot kept in step with its component: drawn again by `build` when one of `inputs()` is no longer
 * the same value, only resized when the size alone changed, destroyed with the component. `build` returns
 * null when there is nothing to draw (no size yet, no data). Create it while the component initialises.
 */
export class PlotHost {
  plot: uPlot | null = null;
  private built: readonly unknown[] | null = null;

  constructor(inputs: () => readonly unknown[], size: () => { width: number; height: number }, build: () => uPlot | null) {
    $effect(() => {
      const now = inputs();
      const { width, height } = size();
      untrack(() => {
        const plot = this.plot;
        if (plot && this.built && now.every((v, i) => v === this.built![i])) {
          if (width > 0 && height > 0 && (plot.width !== width || plot.height !== height)) plot.setSize({ width, height });
          return;
        }
        this.destroy();
        this.plot = build();
        this.built = this.plot ? now : null;
      });
    });
    $effect(() => () => this.destroy());
  }

  private destroy(): void {
    this.plot?.destroy();
    this.plot = null;
  }
}

/** uPlot's `tzDate` for a time axis in UTC or in the browser's zone (uPlot times are seconds). */
export function zoneDate(zone: 'utc' | 'local'): (ts: number) => Date {
  return zone === 'utc' ? (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') : (ts) => new Date(ts * 1000);
}

/** The top of a value axis: the next of 1, 1.2, 1.5, 2 … 10 × a power of ten with room (4 %) above `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= max * 1.04) return m * p;
  return 10 * p;
}

/** The value (y) axis: grid lines, no ticks, compact numbers in the unit, whole steps for counts. */
export function valueAxis(theme: ChartTheme, label: string, values: Iterable<number | null | undefined>, unit?: string): uPlot.Axis {
  const font = `${11 * theme.scale}px ${theme.font}`;
  return {
    stroke: theme.muted,
    font,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { show: false },
    size: 50 * theme.scale,
    incrs: unit === 'percent' ? undefined : wholeIncrs(values),
    values: (_u, splits) => splits.map((v) => formatCompact(v, unit)),
    label,
    labelSize: 18 * theme.scale,
    labelFont: font,
  };
}

// Timechart rows → aligned series for uPlot: one series per series key (and per value column when
// percent() charts several fields), buckets missing between the first and last filled with 0 for counts
// and sums (no events) and left as gaps for averages, extremes and percents. Pure: tests/ui/charts.test.ts.
import type { ChartSpec } from './spec.ts';
import { displayLabel, fieldLabel, toNumber, type Row } from './values.ts';
import { cellText } from '../search/export.ts';

type TimeSpec = Extract<ChartSpec, { kind: 'time' }>;

export interface TimeSeries {
  /** Stable identity: key values and value column. */
  id: string;
  label: string;
  /** The series key's fields and values (what a click filters on). */
  keys: Record<string, string>;
  valueField: string;
  values: Array<number | null>;
  /** Sum of the values (orders the series and the legend). */
  total: number;
  max: number | null;
  /** The series past `maxSeries`, added up (counts and sums only). */
  other: boolean;
}

export interface TimeData {
  /** Bucket starts, epoch seconds, ascending. */
  times: number[];
  series: TimeSeries[];
  /** Series not drawn (beyond `maxSeries`; added into "Other" when additive). */
  hiddenSeries: number;
}

/**
 * `YYYY-MM-DD hh:mm:ss[.mmm]` (UTC, the service's bucket text), RFC 3339, or epoch seconds/milliseconds,
 * as epoch seconds; null otherwise.
 */
export function parseBucketTime(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v > 1e11 ? v / 1000 : v;
  if (typeof v !== 'string') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(v.trim());
  if (!m) return null;
  if (m[8]) {
    const t = Date.parse(v.trim().replace(' ', 'T'));
    return Number.isFinite(t) ? t / 1000 : null;
  }
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0), m[7] ? Math.round(Number(m[7]) * 1000) : 0);
  return Number.isFinite(ms) ? ms / 1000 : null;
}

/** Bucket starts from first to last, `span` apart, when they line up and are not too many; else the given ones. */
export function fillTimes(times: readonly number[], span: number | null, maxBuckets = 5000): number[] {
  const sorted = [...new Set(times)].sort((a, b) => a - b);
  if (!span || sorted.length < 2) return sorted;
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  const n = Math.round((last - first) / span) + 1;
  if (n > maxBuckets || n < sorted.length) return sorted;
  if (sorted.some((t) => Math.abs((t - first) / span - Math.round((t - first) / span)) > 1e-6)) return sorted;
  return Array.from({ length: n }, (_, i) => first + i * span);
}

export function buildTimeSeries(rows: readonly Row[], spec: TimeSpec, maxSeries = 10): TimeData {
  interface Acc {
    id: string;
    keys: Record<string, string>;
    valueField: string;
    byTime: Map<number, number>;
    total: number;
  }
  const accs = new Map<string, Acc>();
  const seenTimes: number[] = [];
  for (const r of rows) {
    const t = parseBucketTime(r[spec.timeField]);
    if (t === null) continue;
    seenTimes.push(t);
    const keys: Record<string, string> = {};
    for (const k of spec.keyFields) keys[k] = cellText(r[k]);
    const keyText = spec.keyFields.map((k) => keys[k]).join('\u0000');
    for (const vf of spec.valueFields) {
      const v = toNumber(r[vf]);
      if (v === null) continue;
      const id = `${keyText}\u0001${vf}`;
      let a = accs.get(id);
      if (!a) accs.set(id, (a = { id, keys, valueField: vf, byTime: new Map(), total: 0 }));
      // Two rows of one series and bucket (a key column the chart does not separate) add up.
      a.byTime.set(t, (spec.additive ? (a.byTime.get(t) ?? 0) : 0) + v);
      a.total += v;
    }
  }
  const times = fillTimes(seenTimes, spec.spanSeconds);
  const empty = spec.additive ? 0 : null;
  const manyValues = spec.valueFields.length > 1;
  const labelOf = (a: Acc) => {
    const keyText = spec.keyFields.map((k) => displayLabel(a.keys[k]!)).join(' · ');
    if (!keyText) return fieldLabel(a.valueField);
    return manyValues ? `${keyText} · ${fieldLabel(a.valueField)}` : keyText;
  };
  const toSeries = (a: Acc, other = false): TimeSeries => {
    const values = times.map((t) => a.byTime.get(t) ?? empty);
    let max: number | null = null;
    for (const v of values) if (v !== null && (max === null || v > max)) max = v;
    return { id: a.id, label: other ? 'Other' : labelOf(a), keys: a.keys, valueField: a.valueField, values, total: a.total, max, other };
  };
  const sorted = [...accs.values()].sort((x, y) => y.total - x.total || (labelOf(x) < labelOf(y) ? -1 : 1));
  const shown = sorted.slice(0, maxSeries);
  const rest = sorted.slice(maxSeries);
  const series = shown.map((a) => toSeries(a));
  if (rest.length > 0 && spec.additive) {
    const sum: Acc = { id: '\u0002other', keys: {}, valueField: rest[0]!.valueField, byTime: new Map(), total: 0 };
    for (const a of rest) {
      for (const [t, v] of a.byTime) sum.byTime.set(t, (sum.byTime.get(t) ?? 0) + v);
      sum.total += a.total;
    }
    series.push(toSeries(sum, true));
  }
  return { times, series, hiddenSeries: rest.length };
}

/** The series of a result with one key column can be filtered on: that field and the series' value. */
export function seriesFilter(s: TimeSeries): { field: string; value: string } | null {
  if (s.other) return null;
  const fields = Object.keys(s.keys);
  if (fields.length !== 1) return null;
  return { field: fields[0]!, value: s.keys[fields[0]!]! };
}

/** Calendar parts of epoch seconds in UTC or the browser's zone. */
function timeParts(t: number, zone: 'utc' | 'local') {
  const d = new Date(t * 1000);
  const u = zone === 'utc';
  return {
    Y: u ? d.getUTCFullYear() : d.getFullYear(),
    M: (u ? d.getUTCMonth() : d.getMonth()) + 1,
    D: u ? d.getUTCDate() : d.getDate(),
    h: u ? d.getUTCHours() : d.getHours(),
    m: u ? d.getUTCMinutes() : d.getMinutes(),
    s: u ? d.getUTCSeconds() : d.getSeconds(),
  };
}
const p2 = (n: number) => String(n).padStart(2, '0');

/**
 * Labels of time axis ticks `incr` seconds apart, 24-hour: `hh:mm` (with seconds under a minute), the date
 * under the first tick and wherever the day changes; whole days as dates.
 */
export function timeTickLabels(splits: readonly number[], incr: number, zone: 'utc' | 'local'): string[] {
  let prevDay = '';
  return splits.map((t) => {
    const { Y, M, D, h, m, s } = timeParts(t, zone);
    const day = `${Y}-${p2(M)}-${p2(D)}`;
    if (incr >= 86400) return incr >= 28 * 86400 ? `${Y}-${p2(M)}` : day;
    const time = incr < 60 ? `${p2(h)}:${p2(m)}:${p2(s)}` : `${p2(h)}:${p2(m)}`;
    const label = day !== prevDay ? `${time}\n${day}` : time;
    prevDay = day;
    return label;
  });
}

/** A bucket start as `YYYY-MM-DD hh:mm[:ss]`, with " UTC" in UTC. */
export function formatBucket(t: number, zone: 'utc' | 'local'): string {
  const { Y, M, D, h, m, s } = timeParts(t, zone);
  return `${Y}-${p2(M)}-${p2(D)} ${p2(h)}:${p2(m)}${s ? `:${p2(s)}` : ''}${zone === 'utc' ? ' UTC' : ''}`;
}

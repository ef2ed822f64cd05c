// Live tail's update of the histogram. Pure: tests/ui/search-lib.test.ts.
import type { ResultRow } from './export.ts';
import type { HistogramFrame } from './query-client.ts';
import { parseEventTime } from './time.ts';

/** Counts new events into the histogram's buckets, adding buckets at the end when time moved past it. */
export function addToHistogram(h: HistogramFrame | null, rows: ResultRow[]): HistogramFrame | null {
  if (!h || h.histogram.length === 0 || rows.length === 0) return h;
  const step = h.bucket_seconds * 1000;
  const first = Date.parse(h.histogram[0]!.time);
  const buckets = h.histogram.map((b) => ({ ...b }));
  for (const r of rows) {
    const t = parseEventTime(r.timestamp)?.getTime();
    if (t === undefined || t < first) continue;
    const i = Math.floor((t - first) / step);
    while (buckets.length <= i) buckets.push({ time: new Date(first + buckets.length * step).toISOString(), count: 0 });
    buckets[i]!.count++;
  }
  const end = first + buckets.length * step;
  return { ...h, histogram: buckets, time_end: new Date(Math.max(end, Date.parse(h.time_end))).toISOString() };
}

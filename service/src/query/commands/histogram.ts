import { asNumberOrNull } from '../plan/columns.ts';
import { Args } from './args.ts';
import { setChart } from './chart.ts';
import { defineCommand } from './command.ts';

/**
 * The bins of `histogram(f, buckets=n)` (query-language.md §3.10): `n` equal-width bins from the
 * minimum to the maximum of the numeric values (one bin when they are all equal), each
 * `[lower, upper)` except the last, which also holds the maximum; edges rounded to 4 decimals,
 * empty bins included. Planned as two stages: one aggregated row holding (min, max, values),
 * then one row per bin, unfolded with arrayJoin and grouped by its edges.
 */
export default defineCommand({
  name: 'histogram',
  tier: 'STANDARD',
  category: 'chart',
  aggregates: true,
  signature: 'histogram(field, buckets=20)',
  description:
    'The distribution of a numeric field: equal-width bins from its minimum to its maximum (the maximum in the last bin), with the number of values in each; non-numeric values are left out. buckets at most 200.',
  outputs: '_bin_lower, _bin_upper, _bin_count',
  example: '* | histogram(bytes, buckets=30)',
  apply(call, p) {
    const args = new Args(call);
    const field = args.field(['field'], 0, 'histogram() requires a field, e.g. histogram(bytes)');
    const requested = args.int(['buckets'], 1, 20);
    const buckets = requested <= 0 ? 20 : Math.min(requested, 200);
    setChart(p, 'histogram', { field, buckets });

    const source = p.current.agg ? p.newStage() : p.current;
    const x = asNumberOrNull(p.resolveIn(source, field));
    p.addAggregate(source, { name: '_histogram', sql: `tuple(minOrNull(${x}), maxOrNull(${x}), groupArray(${x}))`, type: 'list' });

    const bins = p.newStage();
    const h = p.resolveIn(bins, '_histogram').sql;
    const n = p.params.bind(buckets, 'UInt64');
    const lo = `ifNull(tupleElement(${h}, 1), 0)`;
    const hi = `ifNull(tupleElement(${h}, 2), 0)`;
    const width = `((${hi} - ${lo}) / ${n})`;
    const count = `if(${hi} = ${lo}, 1, ${n})`;
    const binOf = `v -> if(${hi} = ${lo}, 0, least(toUInt64(floor((v - ${lo}) / ${width})), ${n} - 1))`;
    const binIndex = `arrayMap(${binOf}, tupleElement(${h}, 3))`;
    // (bin indexes, counts) of the bins that hold values, in O(values).
    const counted = `arrayReduce('sumMap', arrayMap(b -> [b], ${binIndex}), arrayMap(b -> [toUInt64(1)], ${binIndex}))`;
    const rows =
      `arrayMap(i -> (round(${lo} + i * ${width}, 4), if(i = ${count} - 1, round(${hi}, 4), round(${lo} + (i + 1) * ${width}, 4)), ` +
      `arrayElement(tupleElement(${counted}, 2), indexOf(tupleElement(${counted}, 1), i))), ` +
      `range(if(isNull(tupleElement(${h}, 1)), 0, ${count})))`;
    // The three arrayJoin calls are one expression, so they unfold the bins once.
    bins.agg = {
      kind: 'group',
      keys: [
        { name: '_bin_lower', sql: `tupleElement(arrayJoin(${rows}), 1)`, type: 'number' },
        { name: '_bin_upper', sql: `tupleElement(arrayJoin(${rows}), 2)`, type: 'number' },
      ],
      values: [],
    };
    p.addAggregate(bins, { name: '_bin_count', sql: `sum(tupleElement(arrayJoin(${rows}), 3))`, type: 'number' });
    p.markDerived('_bin_lower');
    p.markDerived('_bin_upper');
    bins.sort.push({ name: '_bin_lower', desc: false });
  },
});

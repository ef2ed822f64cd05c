import { applyAggregate } from './aggregate-command.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'mad',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'mad(field)',
  description:
    'Median absolute deviation: one row with the median and the median of |x - median| over all rows, even after groupBy (per group use groupBy(…, function=mad(f))).',
  outputs: '_median, _mad',
  example: '* | mad(bytes)',
  apply(call, p) {
    const field = new Args(call).text(['field'], 0);
    const cur = p.current;
    const agg = cur.agg;
    // §3.2: over all rows even after groupBy, so a grouping in this stage gives way, unless the
    // field is one of its outputs (then mad() is chained over the groups, in a new stage).
    if (agg?.kind === 'group' && !agg.values.some((v) => v.name === field)) cur.agg = null;
    applyAggregate(call, p, 'mad');
  },
});

import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'mad',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'mad(field)',
  description: 'Median absolute deviation: the median of |x - median| over the rows.',
  outputs: '_median, _mad',
  example: '* | mad(bytes)',
  apply: (call, p) => applyAggregate(call, p, 'mad'),
});

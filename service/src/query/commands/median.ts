import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'median',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'median(field)',
  description: 'Median of the numeric values of a field.',
  outputs: '_median',
  example: '* | median(latency)',
  apply: (call, p) => applyAggregate(call, p, 'median'),
});

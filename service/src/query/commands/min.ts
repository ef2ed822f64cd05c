import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'min',
  tier: 'CORE',
  category: 'aggregate',
  aggregates: true,
  signature: 'min(field)',
  description: 'Smallest numeric value of a field; min(timestamp) gives the earliest event time.',
  outputs: '_min (min_timestamp)',
  example: '* | min(timestamp)',
  apply: (call, p) => applyAggregate(call, p, 'min'),
});

import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'max',
  tier: 'CORE',
  category: 'aggregate',
  aggregates: true,
  signature: 'max(field)',
  description: 'Largest numeric value of a field; max(timestamp) gives the latest event time.',
  outputs: '_max (max_timestamp)',
  example: '* | groupBy(host) | max(bytes)',
  apply: (call, p) => applyAggregate(call, p, 'max'),
});

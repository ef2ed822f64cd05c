import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'sum',
  tier: 'CORE',
  category: 'aggregate',
  aggregates: true,
  signature: 'sum(field)',
  description: 'Sum of the numeric values of a field; values that are not numbers are ignored.',
  outputs: '_sum',
  example: '* | groupBy(user) | sum(bytes)',
  apply: (call, p) => applyAggregate(call, p, 'sum'),
});

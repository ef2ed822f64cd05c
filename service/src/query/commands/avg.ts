import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'avg',
  tier: 'CORE',
  category: 'aggregate',
  aggregates: true,
  signature: 'avg(field)',
  description: 'Average of the numeric values of a field.',
  outputs: '_avg',
  example: '* | avg(response_time)',
  apply: (call, p) => applyAggregate(call, p, 'avg'),
});

import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'iqr',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'iqr(field)',
  description: 'Interquartile range of a field: the 25th and 75th percentiles and their difference.',
  outputs: '_q1, _q3, _iqr',
  example: '* | stddev(rt) | iqr(rt)',
  apply: (call, p) => applyAggregate(call, p, 'iqr'),
});

import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'percentile',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'percentile(field)',
  description: 'The 50th, 75th and 99th percentiles of a field, as a list.',
  outputs: 'percentile_<field> (chained: _percentile)',
  example: '* | groupBy(host) | percentile(latency)',
  apply: (call, p) => applyAggregate(call, p, 'percentile'),
});

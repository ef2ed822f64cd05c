import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'stddev',
  aliases: ['stdDev'],
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'stddev(field)',
  description: 'Population standard deviation of a field.',
  outputs: 'stddev_<field> (chained: _stddev)',
  example: '* | stddev(rt)',
  apply: (call, p) => applyAggregate(call, p, 'stddev'),
});

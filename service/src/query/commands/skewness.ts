import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'skewness',
  aliases: ['skew'],
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'skewness(field)',
  description: 'Population skewness of a field.',
  outputs: '_skewness',
  example: '* | skewness(bytes)',
  apply: (call, p) => applyAggregate(call, p, 'skewness'),
});

import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'kurtosis',
  aliases: ['kurt'],
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'kurtosis(field)',
  description: 'Population excess kurtosis of a field.',
  outputs: '_kurtosis',
  example: '* | kurtosis(bytes)',
  apply: (call, p) => applyAggregate(call, p, 'kurtosis'),
});

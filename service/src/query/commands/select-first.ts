import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'selectFirst',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'selectFirst(field)',
  description: 'The value of the field on the earliest event (by time), per group after groupBy.',
  outputs: 'first_<field> (first_timestamp for timestamp)',
  example: '* | groupBy(user) | selectFirst(image)',
  apply: (call, p) => applyAggregate(call, p, 'selectfirst'),
});

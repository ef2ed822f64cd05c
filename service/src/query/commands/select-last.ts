import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'selectLast',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'selectLast(field)',
  description: 'The value of the field on the latest event (by time), per group after groupBy.',
  outputs: 'last_<field> (last_timestamp for timestamp)',
  example: '* | groupBy(user) | selectLast(timestamp)',
  apply: (call, p) => applyAggregate(call, p, 'selectlast'),
});

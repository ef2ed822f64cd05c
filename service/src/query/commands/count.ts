import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'count',
  tier: 'CORE',
  category: 'aggregate',
  aggregates: true,
  signature: 'count([field], unique=false)',
  description:
    'Counts rows; with a field, rows where it is present; with unique=true (distinct=true), its distinct values. After groupBy, count() counts the groups.',
  outputs: '_count',
  example: '* | count(computer_name, unique=true)',
  apply: (call, p) => applyAggregate(call, p, 'count'),
});

import { Args } from './args.ts';
import { applyAggregate } from './aggregate-command.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'top',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'top(field, percent=false, limit=10, as=top_<field>)',
  description:
    'The most frequent values of a field (per group after groupBy), most frequent first. percent=true gives (value, % of rows) pairs, 2 decimals. Absent values are not listed.',
  outputs: 'top_<field> (a list)',
  example: '* | groupBy(user) | top(image, percent=true, limit=3)',
  apply(call, p) {
    new Args(call).allowOnly(['field', 'percent', 'limit', 'as']);
    applyAggregate(call, p, 'top');
  },
});

import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'in',
  tier: 'CORE',
  category: 'filter',
  signature: 'in(field, values=[v1, v2])',
  description:
    'Keeps events whose field equals one of the values. Values may also be one string "v1,v2" or more positional arguments; !in() negates.',
  example: '* | in(status, values=[200, 404])',
  condition(call, p, resolve) {
    const args = new Args(call);
    args.allowOnly(['values', 'field']);
    const field = args.field(['field'], 0, 'in() requires a field and values, e.g. in(status, values=[200, 404])');
    const values = args.list(['values'], args.has('field') ? 0 : 1) ?? [];
    if (values.length === 0) throw new QueryCompileError('in() requires values, e.g. in(status, values=[200, 404])', call.span);
    return `has(${p.params.bind(values, 'Array(String)')}, ${asText(resolve(field))})`;
  },
});

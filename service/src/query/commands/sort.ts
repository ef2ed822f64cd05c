import { QueryCompileError } from '../plan/errors.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'sort',
  tier: 'CORE',
  category: 'display',
  signature: 'sort(field, order=asc)',
  description:
    'Orders the rows of its stage by one field (numbers numerically, other values as text); order=asc|desc or a bare asc/desc. Each further sort() adds a lower-priority key.',
  example: '* | groupBy(user, function=sum(bytes)) | sort(_sum, order=desc) | limit(10)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field', 'order']);
    const words = args.positional.map((v) => (v.kind === 'word' || v.kind === 'string' ? v.text : ''));
    const dirWord = words.find((w) => /^(asc|desc)$/i.test(w));
    const field = args.text(['field']) ?? words.find((w) => w !== '' && w !== dirWord);
    if (!field) throw new QueryCompileError('sort() requires a field, e.g. sort(_count, order=desc)', call.span);
    const order = (args.text(['order']) ?? dirWord ?? 'asc').toLowerCase();
    if (order !== 'asc' && order !== 'desc') throw new QueryCompileError(`sort(): order must be asc or desc, got "${order}"`, call.span);
    p.current.sort.push({ name: field, desc: order === 'desc' });
  },
});

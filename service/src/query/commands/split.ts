import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args, valueText } from './args.ts';
import { defineCommand } from './command.ts';

const INTEGER = /^[+-]?\d+$/;

export default defineCommand({
  name: 'split',
  tier: 'STANDARD',
  category: 'string',
  signature: 'split(field, "delim", index)',
  description:
    'Splits a field on a literal delimiter and keeps one element: index is 1-based, negative counts from the end (quote it: "-1"); 0 or out of range gives an empty value. An empty delimiter splits into characters. All three arguments are required.',
  outputs: '_split',
  example: '* | split(email, "@", 2) | groupBy(_split)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly([]);
    const [fieldArg, delimArg, indexArg] = args.positional;
    if (!fieldArg || !delimArg || !indexArg || args.positional.length > 3) {
      throw new QueryCompileError('split() requires a field, a delimiter and an index, e.g. split(email, "@", 2)', call.span);
    }
    const index = valueText(indexArg).trim();
    if (!INTEGER.test(index)) throw new QueryCompileError(`split(): index must be numeric, got "${valueText(indexArg)}"`, indexArg.span);
    const delim = valueText(delimArg);
    // Beyond any possible element count: out of range either way.
    const n = Math.abs(Number(index)) > 2 ** 31 ? 0 : Number(index);
    const stage = p.rowStage();
    const text = asText(p.resolveIn(stage, valueText(fieldArg)));
    const parts = delim === '' ? `ngrams(${text}, 1)` : `splitByString(${p.params.text(delim)}, ${text})`;
    p.addComputed('_split', `arrayElement(${parts}, ${p.params.bind(n, 'Int64')})`, 'text', { stage });
  },
});

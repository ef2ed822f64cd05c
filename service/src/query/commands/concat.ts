import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args, listOf } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'concat',
  tier: 'STANDARD',
  category: 'string',
  signature: 'concat([f1, f2, …], as=_concat)',
  description: 'Joins the values of the listed fields without a separator (absent fields are empty; timestamp as its text).',
  outputs: '_concat (or as=)',
  example: '* | concat([user, host], as=user_host)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['as']);
    const fields = args.positional.flatMap(listOf);
    if (fields.length === 0) throw new QueryCompileError('concat() requires fields, e.g. concat([user, host], as=user_host)', call.span);
    const as = args.text(['as']) || '_concat';
    const stage = p.rowStage();
    const texts = fields.map((f) => asText(p.resolveIn(stage, f)));
    p.addComputed(as, texts.length === 1 ? texts[0] : `concat(${texts.join(', ')})`, 'text', { stage });
  },
});

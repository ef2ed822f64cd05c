import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args, listOf } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'coalesce',
  tier: 'STANDARD',
  category: 'string',
  signature: 'coalesce(f1, f2, …)',
  description: 'The first non-empty value among the fields, else empty. Needs at least two fields.',
  outputs: '_coalesced',
  example: '* | coalesce(user, username, account_name) | groupBy(_coalesced)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly([]);
    const fields = args.positional.flatMap(listOf);
    if (fields.length < 2) throw new QueryCompileError('coalesce() requires at least 2 fields, e.g. coalesce(user, username, account_name)', call.span);
    const stage = p.rowStage();
    const texts = fields.map((f) => asText(p.resolveIn(stage, f)));
    const branches = texts.map((t) => `${t} != '', ${t}`).join(', ');
    p.addComputed('_coalesced', `multiIf(${branches}, '')`, 'text', { stage });
  },
});

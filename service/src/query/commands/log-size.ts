import { asText } from '../plan/columns.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'logSize',
  tier: 'STANDARD',
  category: 'string',
  signature: 'logSize(field=norm_log, as=_size)',
  description:
    'Estimated size in bytes (UTF-8) of a field; by default of the whole event (its serialized fields, norm_log). The output is a number.',
  outputs: '_size (number, or as=)',
  example: '* | logSize() | groupBy(computer_name, function=sum(_size))',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field', 'as']);
    const field = args.text(['field'], 0) || 'norm_log';
    const as = args.text(['as']) || '_size';
    const stage = p.rowStage();
    p.addComputed(as, `length(${asText(p.resolveIn(stage, field))})`, 'number', { stage });
  },
});

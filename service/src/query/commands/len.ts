import { asText } from '../plan/columns.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'len',
  tier: 'STANDARD',
  category: 'string',
  signature: 'len(field, as=_len)',
  description: 'Length of a field in characters (Unicode code points); an absent field has length 0. The output is a number.',
  outputs: '_len (number, or as=)',
  example: '* | len(commandline) | _len > 1000 | sort(_len, desc)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field', 'as']);
    const field = args.field(['field'], 0, 'len() requires a field, e.g. len(commandline)');
    const as = args.text(['as']) || '_len';
    const stage = p.rowStage();
    p.addComputed(as, `lengthUTF8(${asText(p.resolveIn(stage, field))})`, 'number', { stage });
  },
});

import { asText } from '../plan/columns.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'lowercase',
  tier: 'STANDARD',
  category: 'string',
  signature: 'lowercase(field, output=field)',
  description:
    'Lower-cases a field with Unicode case mapping. Without an output column the field itself is overwritten for the rest of the pipeline.',
  outputs: 'output (default: the field)',
  example: '* | lowercase(user) | user=admin',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field', 'output']);
    const field = args.field(['field'], 0, 'lowercase() requires a field, e.g. lowercase(user)');
    const output = args.text(['output'], args.has('field') ? 0 : 1) || field;
    const stage = p.rowStage();
    p.addComputed(output, `lowerUTF8(${asText(p.resolveIn(stage, field))})`, 'text', { stage });
  },
});

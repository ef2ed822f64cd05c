import { asText } from '../plan/columns.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'uppercase',
  tier: 'STANDARD',
  category: 'string',
  signature: 'uppercase(field, output=field)',
  description:
    'Upper-cases a field with Unicode case mapping (ß becomes SS). Without an output column the field itself is overwritten for the rest of the pipeline.',
  outputs: 'output (default: the field)',
  example: '* | uppercase(level) | groupBy(level)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field', 'output']);
    const field = args.field(['field'], 0, 'uppercase() requires a field, e.g. uppercase(level)');
    const output = args.text(['output'], args.has('field') ? 0 : 1) || field;
    const stage = p.rowStage();
    p.addComputed(output, `upperUTF8(${asText(p.resolveIn(stage, field))})`, 'text', { stage });
  },
});

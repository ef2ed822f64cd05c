import { defineCommand } from './command.ts';
import { applyLetterCase } from './letter-case.ts';

export default defineCommand({
  name: 'uppercase',
  tier: 'STANDARD',
  category: 'string',
  signature: 'uppercase(field, output=field)',
  description:
    'Upper-cases a field with Unicode case mapping (ß becomes SS). Without an output column the field itself is overwritten for the rest of the pipeline.',
  outputs: 'output (default: the field)',
  example: '* | uppercase(level) | groupBy(level)',
  apply: (call, p) => applyLetterCase(call, p, 'uppercase', 'level'),
});

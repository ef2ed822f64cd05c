import { defineCommand } from './command.ts';
import { applyLetterCase } from './letter-case.ts';

export default defineCommand({
  name: 'lowercase',
  tier: 'STANDARD',
  category: 'string',
  signature: 'lowercase(field, output=field)',
  description:
    'Lower-cases a field with Unicode case mapping. Without an output column the field itself is overwritten for the rest of the pipeline.',
  outputs: 'output (default: the field)',
  example: '* | lowercase(user) | user=admin',
  apply: (call, p) => applyLetterCase(call, p, 'lowercase', 'user'),
});

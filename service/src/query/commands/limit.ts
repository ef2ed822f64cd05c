import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'limit',
  tier: 'CORE',
  category: 'display',
  signature: 'limit(n)',
  description: 'At most n rows of its stage (0: none). A non-integer or negative n is ignored; the last limit wins.',
  example: '* | sort(timestamp, order=asc) | limit(100)',
  apply(call, p) {
    const n = new Args(call).text(['n'], 0);
    if (n !== undefined && /^\d+$/.test(n)) p.setLimit(Number(n));
  },
});

import { applyEdge } from './edge.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'head',
  tier: 'CORE',
  category: 'display',
  signature: 'head(n=200)',
  description: 'Events: the n earliest, oldest first. Aggregated rows: the first n in the current order. Invalid n means 200.',
  example: 'level=error | head(20)',
  apply: (call, p) => applyEdge(call, p, 'head'),
});

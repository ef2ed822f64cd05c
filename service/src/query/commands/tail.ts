import { applyEdge } from './edge.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'tail',
  tier: 'CORE',
  category: 'display',
  signature: 'tail(n=200)',
  description: 'Events: the n latest, newest first. Aggregated rows: flips every sort key, then takes n. Invalid n means 200.',
  example: 'level=error | tail(20)',
  apply: (call, p) => applyEdge(call, p, 'tail'),
});

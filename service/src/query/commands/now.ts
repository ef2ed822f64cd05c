import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'now',
  tier: 'STANDARD',
  category: 'time',
  signature: 'now(output=_now)',
  description: 'The current time (UTC, when the query runs) as YYYY-MM-DD hh:mm:ss, the same on every row.',
  outputs: '_now (or the given column)',
  example: '* | now(snapshot_time)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['output']);
    const output = args.text(['output'], 0) || '_now';
    const stage = p.rowStage();
    p.addComputed(output, "toString(now('UTC'))", 'text', { stage });
  },
});

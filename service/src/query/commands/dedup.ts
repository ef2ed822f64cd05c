import { QueryCompileError } from '../plan/errors.ts';
import { Args, listOf, valueText } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'dedup',
  tier: 'CORE',
  category: 'display',
  signature: 'dedup(f1, …)',
  description:
    "Keeps the first row per distinct combination of the fields in the stage's order: by default the most recent event. After an aggregation the fields must be its outputs.",
  example: '* | dedup(src_ip, dst_ip) | table(src_ip, dst_ip, dst_port)',
  apply(call, p) {
    const args = new Args(call);
    const fields = args.positional.flatMap(listOf);
    if (fields.length === 0) throw new QueryCompileError('dedup() requires at least one field, e.g. dedup(user)', call.span);
    const stage = p.current;
    if (stage.agg) {
      const outs = p.outputsOf(stage).map((c) => c.name);
      const missing = fields.find((f) => !outs.includes(f));
      if (missing) {
        const text = args.positional.map(valueText).join(', ');
        throw new QueryCompileError(
          `dedup(${text}): "${missing}" is not produced by the preceding aggregation; dedup on a grouped field or move dedup() before the aggregation`,
          call.span,
        );
      }
    }
    if (!stage.agg) stage.dedupEvents = true;
    stage.dedup = [...(stage.dedup ?? []), ...fields];
  },
});

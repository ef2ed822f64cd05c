import { QueryCompileError } from '../plan/errors.ts';
import { isNumeric } from '../plan/conditions.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';
import { planFrequency } from './frequency.ts';

export default defineCommand({
  name: 'headTail',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'headTail(field, threshold=80)',
  description:
    'The frequency() rows of a field plus _segment: "head" while the cumulative percentage is at most the threshold, "tail" after. The threshold may be positional.',
  outputs: 'value, _count, _percentage, _cumulative_pct, _segment',
  example: '* | headTail(process_name, 90) | _segment=tail',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field', 'threshold']);
    const field = args.field(['field'], 0, 'headTail() requires a field, e.g. headTail(process_name, threshold=80)');
    const thresholdArg = args.value(['threshold'], args.has('field') ? 0 : 1);
    const thresholdText = args.text(['threshold'], args.has('field') ? 0 : 1) ?? '80';
    if (!isNumeric(thresholdText)) {
      throw new QueryCompileError(`headTail(): invalid threshold: expected numeric value, got "${thresholdText}"`, thresholdArg?.span ?? call.span);
    }
    const { stage, cumulative } = planFrequency(p, field);
    const threshold = p.params.number(Number(thresholdText));
    p.addAggregate(stage, { name: '_segment', sql: `if(${cumulative} <= ${threshold}, 'head', 'tail')`, type: 'text' });
  },
});

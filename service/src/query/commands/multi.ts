import { QueryCompileError } from '../plan/errors.ts';
import { aggregateColumns, isSubFunction, multiSpecs } from './aggregate-functions.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'multi',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'multi(fn, …) or multi([fn, …])',
  description:
    'Several aggregates in one pass (per group after groupBy). Sub-functions take field=f or a positional field, and as= renames the output.',
  outputs: 'one column per sub-function (count() → _count, count(f) → total, count(f, distinct=true) → unique_<f>, median(f) → median_<f>, collect(f) → collect_<f> …)',
  example: '* | groupBy(user) | multi(count(field=event_id, distinct=true, as=unique_events), count(field=event_id, as=total))',
  apply(call, p) {
    const specs = multiSpecs(call.args.map((a) => a.value));
    if (specs.length === 0) throw new QueryCompileError('multi() requires at least one aggregation, e.g. multi(count(), sum(bytes))', call.span);
    const fields = specs.map((s) => s.field).filter((f): f is string => !!f);
    const stage = p.aggregateStage(fields);
    for (const spec of specs) {
      if (!isSubFunction(spec.fn)) throw new QueryCompileError(`unknown aggregation function in multi(): "${spec.fn}"`, spec.span);
      for (const col of aggregateColumns(p, stage, spec, 'sub')) p.addAggregate(stage, col);
    }
  },
});

// The shared planning of the aggregate commands (`count`, `sum`, `avg`, …; query-language.md
// §3.2): standalone, after `groupBy` in the same stage, or chained over aggregated rows.
import type { Call } from '../syntax/ast.ts';
import type { Pipeline } from '../plan/pipeline.ts';
import { aggregateColumns, type AggregateSpec } from './aggregate-functions.ts';
import { Args } from './args.ts';

export function applyAggregate(call: Call, p: Pipeline, fn: string, extra: Partial<AggregateSpec> = {}): void {
  const args = new Args(call);
  const field = args.text(['field'], 0);
  const before = p.current;
  const countsRows = fn === 'count' && !field;
  // `count(field…)` right after groupBy is documented to have no effect (use function=).
  if (fn === 'count' && field && before.agg?.kind === 'group') return;
  const stage = p.aggregateStage(field ? [field] : [], { countsRows });
  const chained = !stage.isEvents;
  const spec: AggregateSpec = {
    fn,
    field,
    distinct: args.bool(['unique', 'distinct'], false),
    as: args.text(['as']),
    span: call.span,
    ...extra,
  };
  for (const col of aggregateColumns(p, stage, spec, chained ? 'chained' : 'command')) p.addAggregate(stage, col);
}

// The shared planning of the aggregate commands (`count`, `sum`, `avg`, …; query-language.md
// §3.2): standalone, after `groupBy` in the same stage, or chained over aggregated rows.
import type { Call } from '../syntax/ast.ts';
import type { Pipeline } from '../plan/pipeline.ts';
import { aggregateColumns, type AggregateSpec } from './aggregate-functions.ts';
import { Args } from './args.ts';

/** The aggregate a command call asks for: `sum(bytes)`, `count(user, unique=true)`, `top(f, percent=true, limit=3)` … */
export function aggregateSpecOf(call: Call, fn: string, extra: Partial<AggregateSpec> = {}): AggregateSpec {
  const args = new Args(call);
  const limit = args.text(['limit']);
  return {
    fn,
    field: args.text(['field'], 0),
    distinct: args.bool(['unique', 'distinct'], false),
    as: args.text(['as']),
    percent: args.bool(['percent'], false),
    limit: limit !== undefined && /^\d+$/.test(limit) && Number(limit) > 0 ? Number(limit) : undefined,
    span: call.span,
    ...extra,
  };
}

export function applyAggregate(call: Call, p: Pipeline, fn: string, extra: Partial<AggregateSpec> = {}): void {
  const spec = aggregateSpecOf(call, fn, extra);
  const field = spec.field;
  const before = p.current;
  const countsRows = fn === 'count' && !field;
  // `count(field…)` right after groupBy is documented to have no effect (use function=).
  if (fn === 'count' && field && before.agg?.kind === 'group') return;
  // After `case { … }` with field assignments, count() groups by the assigned fields (§3.2).
  if (countsRows && !before.agg && before.caseKeys?.length) {
    const stage = p.groupBy(before.caseKeys);
    p.addAggregate(stage, { name: spec.as ?? '_count', sql: 'count()', type: 'number' });
    return;
  }
  const stage = p.aggregateStage(field ? [field] : [], { countsRows });
  const chained = !stage.isEvents;
  for (const col of aggregateColumns(p, stage, spec, chained ? 'chained' : 'command')) p.addAggregate(stage, col);
}

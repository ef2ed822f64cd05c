import { QueryCompileError } from '../plan/errors.ts';
import { aggregateColumns, type AggregateSpec } from './aggregate-functions.ts';
import { Args, valueText } from './args.ts';
import { defineCommand } from './command.ts';
import type { ArgValue } from '../syntax/ast.ts';

const INLINE = new Set(['count', 'sum', 'avg', 'max', 'min', 'percentile', 'stddev', 'median', 'mad', 'skewness', 'skew', 'kurtosis', 'kurt', 'iqr']);

/** An inline aggregate of table(): `count`, `count()`, `sum(bytes)` …; undefined for a plain column. */
function inlineAggregate(v: ArgValue): AggregateSpec | undefined {
  if (v.kind === 'word' && v.text.toLowerCase() === 'count') return { fn: 'count', as: '_count', span: v.span };
  if (v.kind !== 'call' || !INLINE.has(v.name.toLowerCase())) return undefined;
  const fn = v.name.toLowerCase();
  const field = v.args.find((a) => !a.key || a.key === 'field');
  return { fn, field: field ? valueText(field.value) : undefined, span: v.span, as: fn === 'count' ? '_count' : undefined };
}

export default defineCommand({
  name: 'table',
  tier: 'CORE',
  category: 'display',
  signature: 'table(f1, f2, …, limit=N)',
  description:
    'On events, keeps the listed columns plus the event time. Inline aggregates (count, sum(f), avg(f) …) make it an aggregation grouped by the other listed fields. After an aggregation it projects the listed output columns in order.',
  outputs: 'the listed columns',
  example: '* | table(timestamp, image, user, limit=50)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['limit']);
    const items = args.positional.flatMap((v) => (v.kind === 'list' ? v.items : [v]));
    if (items.length === 0) throw new QueryCompileError('table() requires at least one column, e.g. table(timestamp, user)', call.span);
    const limitText = args.text(['limit']);
    const limit = limitText !== undefined && /^\d+$/.test(limitText) ? Number(limitText) : undefined;
    const aggs = items.map(inlineAggregate);
    if (aggs.some(Boolean) && !p.current.agg) {
      const keys = items.filter((_, i) => !aggs[i]).map(valueText);
      const stage = p.groupBy(keys);
      for (const spec of aggs) {
        if (!spec) continue;
        const naming = spec.fn === 'iqr' || spec.fn === 'count' || ['sum', 'avg', 'min', 'max'].includes(spec.fn) ? 'command' : 'sub';
        for (const col of aggregateColumns(p, stage, spec, naming)) p.addAggregate(stage, col);
      }
      if (limit !== undefined) p.setLimit(limit, stage);
      return;
    }
    const names = items.map((v) => {
      const t = valueText(v);
      return t.toLowerCase() === 'count' || t.toLowerCase() === 'count()' ? '_count' : t;
    });
    const stage = p.current.agg ? p.newStage() : p.current;
    stage.projection = names;
    if (limit !== undefined) p.setLimit(limit, stage);
  },
});

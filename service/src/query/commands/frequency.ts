import { asText } from '../plan/columns.ts';
import type { Pipeline, Stage } from '../plan/pipeline.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

/**
 * The rows of `frequency(f)` (query-language.md §3.2), shared with `headTail`: one row per value
 * (absent values left out), `_count`, `_percentage` of the total and `_cumulative_pct`, the running
 * total in display order (by `_count` desc, then value), both rounded to 2 decimals. The
 * percentages are window functions over the grouped rows, so the stage is `windowed`: conditions
 * on its rows apply after they exist (`frequency(f) | _percentage > 1.0`).
 */
export function planFrequency(p: Pipeline, field: string): { stage: Stage; cumulative: string } {
  const stage = p.current.agg ? p.newStage() : p.current;
  const text = asText(p.resolveIn(stage, field));
  stage.agg = { kind: 'group', keys: [{ name: 'value', sql: text, type: 'text' }], values: [] };
  p.markDerived('value');
  const key = p.outputsOf(stage)[0].alias;
  stage.post.push(`${key} != ''`);
  const total = 'sum(count()) OVER ()';
  const order = `count() DESC, toFloat64OrNull(${key}) ASC NULLS LAST, ${key} ASC`;
  const cumulative = `round(100 * sum(count()) OVER (ORDER BY ${order} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) / ${total}, 2)`;
  p.addAggregate(stage, { name: '_count', sql: 'count()', type: 'number' });
  p.addAggregate(stage, { name: '_percentage', sql: `round(100 * count() / ${total}, 2)`, type: 'number' });
  p.addAggregate(stage, { name: '_cumulative_pct', sql: cumulative, type: 'number' });
  stage.windowed = true;
  stage.defaultSort = [
    { name: '_count', desc: true },
    { name: 'value', desc: false },
  ];
  return { stage, cumulative };
}

export default defineCommand({
  name: 'frequency',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'frequency(field)',
  description:
    'The distribution of a field: per value its count, its percentage of all counted rows and the running (cumulative) percentage, 2 decimals, most frequent first. Absent values are not counted.',
  outputs: 'value, _count, _percentage, _cumulative_pct',
  example: '* | frequency(event_name) | _percentage > 1.0',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field']);
    const field = args.field(['field'], 0, 'frequency() requires a field, e.g. frequency(event_name)');
    planFrequency(p, field);
  },
});

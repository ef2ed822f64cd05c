import { asText, NORM_LOG_SQL } from '../plan/columns.ts';
import type { Pipeline, Stage } from '../plan/pipeline.ts';
import { Args, listOf } from './args.ts';
import { defineCommand } from './command.ts';

const DEFAULT_SCAN = 50_000;
const MAX_SCAN = 200_000;
const MAX_ROWS = 10_000;
/** Nested objects are flattened to dotted names down to this depth. */
const FLATTEN_DEPTH = 8;

/** (name, value) of every field of the event's JSON text, nested objects as dotted names, strings unquoted. */
function eventFieldPairs(json: string): string {
  let pairs = `JSONExtractKeysAndValuesRaw(${json})`;
  for (let i = 1; i < FLATTEN_DEPTH; i++) {
    pairs = `arrayFlatten(arrayMap(t -> if(startsWith(t.2, '{'), arrayMap(u -> (concat(t.1, '.', u.1), u.2), JSONExtractKeysAndValuesRaw(t.2)), [t]), ${pairs}))`;
  }
  // A null is no value (the `fields` JSON does not store it): dropped.
  return `arrayMap(t -> (t.1, if(startsWith(t.2, '"'), JSONExtractString(t.2), t.2)), arrayFilter(t -> t.2 != 'null', ${pairs}))`;
}

/** (name, value) of the listed columns, or of every column the scanned rows carry. */
function pairsSql(p: Pipeline, source: Stage, listed: string[]): string {
  const pair = (name: string) => `(${p.params.text(name)}, ${asText(p.resolveIn(source, name))})`;
  if (listed.length) return `[${listed.map(pair).join(', ')}]`;
  const computed = source.computedOrder.map((c) => c.name);
  if (source.isEvents) {
    const extra = computed.length ? `, [${computed.map(pair).join(', ')}]` : '';
    return `arrayConcat(${eventFieldPairs(NORM_LOG_SQL)}${extra})`;
  }
  const names = [...source.input!.filter((c) => !c.hidden && !source.computed.has(c.name)).map((c) => c.name), ...computed];
  return names.length ? `[${names.map(pair).join(', ')}]` : `CAST([], 'Array(Tuple(String, String))')`;
}

export default defineCommand({
  name: 'analyzeFields',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'analyzeFields(f1, …, limit=50000)',
  description:
    'Scans up to limit matching events (max, or anything above 200000, means 200000) and returns per field (only the listed ones, if any) how many events carry it, its distinct values and, over the values that parse as numbers, mean, min, max and population standard deviation (mean and stdev 2 decimals). Ordered by _events desc unless sorted; at most 10000 rows.',
  outputs: 'field_name, _events, _distinct_vals, _mean, _min, _max, _stdev',
  example: '* | analyzeFields() | _events < 10',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['limit']);
    const listed = args.positional.flatMap(listOf);
    const limitText = args.text(['limit'])?.toLowerCase();
    let scan = DEFAULT_SCAN;
    if (limitText === 'max') scan = MAX_SCAN;
    else if (limitText !== undefined && /^\d+$/.test(limitText) && Number(limitText) > 0) scan = Math.min(Number(limitText), MAX_SCAN);

    // 1. The scanned rows (events, or the rows of a previous aggregation), each with its pairs.
    const source = p.current.agg ? p.newStage() : p.current;
    source.limit = Math.min(source.limit ?? scan, scan);
    p.addComputed('_af_pairs', pairsSql(p, source, listed), 'list', { stage: source });
    // 2. One row per (row, field).
    const pairs = p.newStage();
    p.addComputed('_af_pair', `arrayJoin(${p.resolveIn(pairs, '_af_pairs').sql})`, 'list', { stage: pairs });
    // 3. Per field.
    const stage = p.newStage();
    const pair = p.resolveIn(stage, '_af_pair').sql;
    const v = `tupleElement(${pair}, 2)`;
    const n = `toFloat64OrNull(${v})`;
    stage.agg = { kind: 'group', keys: [{ name: 'field_name', sql: `tupleElement(${pair}, 1)`, type: 'text' }], values: [] };
    p.markDerived('field_name');
    p.addAggregate(stage, { name: '_events', sql: `countIf(${v} != '')`, type: 'number' });
    p.addAggregate(stage, { name: '_distinct_vals', sql: `uniqExactIf(${v}, ${v} != '')`, type: 'number' });
    p.addAggregate(stage, { name: '_mean', sql: `round(avgOrNull(${n}), 2)`, type: 'number' });
    p.addAggregate(stage, { name: '_min', sql: `minOrNull(${n})`, type: 'number' });
    p.addAggregate(stage, { name: '_max', sql: `maxOrNull(${n})`, type: 'number' });
    p.addAggregate(stage, { name: '_stdev', sql: `round(stddevPopOrNull(${n}), 2)`, type: 'number' });
    stage.defaultSort = [
      { name: '_events', desc: true },
      { name: 'field_name', desc: false },
    ];
    stage.limit = MAX_ROWS;
    p.ownCap = true;
  },
});

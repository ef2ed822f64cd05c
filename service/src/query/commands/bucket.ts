import { asNumberOrNull, type Column } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import type { ArgValue } from '../syntax/ast.ts';
import { Args, valueText } from './args.ts';
import { defineCommand } from './command.ts';
import { bucketTime, parseSpan } from './span.ts';

/** `count()`, `sum(bytes)`, `"sum(bytes)"`, `sum(field=bytes)` → name and field. */
function functionOf(v: ArgValue | undefined): { fn: string; field?: string } {
  if (!v) return { fn: 'count' };
  if (v.kind === 'call') {
    const a = v.args.find((x) => x.key === undefined || x.key.toLowerCase() === 'field');
    return { fn: v.name.toLowerCase(), field: a ? valueText(a.value) : undefined };
  }
  const m = /^\s*([A-Za-z_][\w]*)\s*(?:\(\s*(?:field\s*=\s*)?["']?([^"')]*?)["']?\s*\))?\s*$/.exec(valueText(v));
  if (!m) return { fn: '' };
  return { fn: m[1].toLowerCase(), field: m[2] || undefined };
}

export default defineCommand({
  name: 'bucket',
  tier: 'STANDARD',
  category: 'aggregate',
  aggregates: true,
  signature: 'bucket("span", "function")',
  description:
    'Per time bucket (span as in timechart, default 1h): time_bucket (the bucket start) plus bucket_count for count() or bucket_sum for sum(f); other functions add no column. Also accepts span= and function=. Ordered by time_bucket.',
  outputs: 'time_bucket, bucket_count | bucket_sum',
  example: '* | bucket("5m", "sum(bytes)")',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['span', 'function']);
    const span = parseSpan(args.text(['span'], 0));
    const { fn, field } = functionOf(args.value(['function'], args.has('span') ? 0 : 1));
    // After groupBy(g) in this stage g stays a key and the bucket joins it (as in timechart);
    // after another aggregation the buckets group that aggregation's rows in a new stage.
    const prior = p.current.agg;
    const keys = prior?.kind === 'group' ? prior.keys.map((k) => k.name) : [];
    if (prior?.kind === 'group') p.current.agg = null;
    else if (prior) p.newStage();
    const stage = p.groupBy(keys);
    const time = p.resolveIn(stage, 'timestamp');
    if (time.type !== 'time') {
      throw new QueryCompileError('bucket() needs event times: place it before other aggregations (groupBy(x) | bucket("5m") is fine)', call.span);
    }
    stage.agg!.keys.push({ name: 'time_bucket', sql: bucketTime(time.sql, span), type: 'time' });
    p.markDerived('time_bucket');
    const values: Column[] = [];
    if (fn === 'count') values.push({ name: 'bucket_count', sql: 'count()', type: 'number' });
    else if (fn === 'sum' && field) values.push({ name: 'bucket_sum', sql: `sum(${asNumberOrNull(p.resolveIn(stage, field))})`, type: 'number' });
    for (const v of values) p.addAggregate(stage, v);
    stage.defaultSort = [{ name: 'time_bucket', desc: false }];
  },
});

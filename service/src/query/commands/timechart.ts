import { asText, type Column } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { aggregateColumns, subFunctionSpec } from './aggregate-functions.ts';
import { Args, valueText } from './args.ts';
import { defineCommand } from './command.ts';
import { bucketTime, parseSpan } from './span.ts';

const FUNCTIONS = ['count', 'sum', 'avg', 'max', 'min', 'percent', 'groupby'];

export default defineCommand({
  name: 'timechart',
  tier: 'CORE',
  category: 'chart',
  aggregates: true,
  signature: 'timechart(span=1h, function=count())',
  description:
    'Counts (or sums, averages, maxima, minima) per time bucket, ordered by time_bucket; after groupBy(g) one series per g. function= also takes percent(f1, …) and groupby(f1, …[, distinct=true]).',
  outputs: 'time_bucket, then _count / _sum / _avg / _max / _min (after groupBy: g, time_bucket, value)',
  example: '* | groupBy(status) | timechart(span=5m, function=count())',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['span', 'function']);
    const spanText = args.text(['span'], 0);
    const span = parseSpan(spanText);
    const fnArg = args.value(['function'], args.has('span') ? 0 : 1);
    const spec = fnArg ? subFunctionSpec(fnArg) : { fn: 'count' };
    if (!FUNCTIONS.includes(spec.fn)) {
      throw new QueryCompileError(`timechart(): unsupported function "${spec.fn}" (supported: count(), sum(f), avg(f), max(f), min(f), percent(f1, …), groupby(f1, …))`, fnArg?.span);
    }
    // Only events have times: after a standalone aggregation (`iqr(f) | timechart()`) there are none.
    if (p.current.agg && p.current.agg.kind !== 'group') {
      throw new QueryCompileError('timechart() needs event times: place it before other aggregations (groupBy(x) | timechart() is fine)', call.span);
    }
    // After groupBy(g) in this stage: g stays a key, the bucket joins it, the value replaces _count.
    const prior = p.current.agg?.kind === 'group' ? p.current : undefined;
    const groupKeys = prior ? prior.agg!.keys.map((k) => k.name) : [];
    if (prior) prior.agg = null;
    const stage = p.current;
    const time = p.resolveIn(stage, 'timestamp');
    if (time.type !== 'time') {
      throw new QueryCompileError('timechart() needs event times: place it before other aggregations (groupBy(x) | timechart() is fine)', call.span);
    }
    const bucket: Column = { name: 'time_bucket', sql: bucketTime(time.sql, span), type: 'time' };
    const subArgs = fnArg?.kind === 'call' ? fnArg.args : [];
    let keys = groupKeys;
    const values: Column[] = [];
    if (spec.fn === 'groupby') {
      const fields = subArgs.filter((a) => !a.key).map((a) => valueText(a.value));
      const distinct = subArgs.some((a) => ['distinct', 'unique'].includes(a.key?.toLowerCase() ?? '') && /^(true|1|yes)$/i.test(valueText(a.value)));
      if (distinct) {
        const last = fields[fields.length - 1];
        if (!last) throw new QueryCompileError('timechart(): groupby() needs a field', fnArg?.span);
        const t = asText(p.resolveIn(stage, last));
        values.push({ name: '_count', sql: `uniqExactIf(${t}, ${t} != '')`, type: 'number' });
      } else {
        keys = [...keys, ...fields];
        values.push({ name: '_count', sql: 'count()', type: 'number' });
      }
    } else if (spec.fn === 'percent') {
      const fields = subArgs.filter((a) => !a.key).map((a) => valueText(a.value));
      if (fields.length === 0) throw new QueryCompileError('timechart(): percent() needs at least one field', fnArg?.span);
      for (const f of fields) {
        const t = asText(p.resolveIn(stage, f));
        values.push({ name: f, sql: `round(100 * countIf(lowerUTF8(${t}) IN ('true', '1')) / count(), 2)`, type: 'number' });
      }
      p.chartConfig = { valueFields: fields, unit: 'percent', yLabel: 'Percent' };
    } else {
      values.push(...aggregateColumns(p, stage, { ...spec, as: undefined }, 'command'));
    }
    const grouped = p.groupBy(keys);
    grouped.agg!.keys.push(bucket);
    for (const v of values) p.addAggregate(grouped, v);
    grouped.sort.length = 0;
    grouped.sort.push({ name: 'time_bucket', desc: false });
    p.chartType = 'timechart';
    p.chartConfig = { span: span.text, ...(spec.fn === 'percent' ? p.chartConfig : {}) };
    if (!spanText) p.chartConfig.span = '1h';
  },
});

import { QueryCompileError } from '../plan/errors.ts';
import { Args } from './args.ts';
import { lastAggregation, setChart } from './chart.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'singleval',
  tier: 'STANDARD',
  category: 'chart',
  signature: 'singleval(label=…)',
  description:
    'Shows one number: the first row\'s _count, _sum, _avg, _min, _max, sum_*, avg_*, min_*, max_* or stddev_* (the first present), else its first column. Needs an aggregation yielding one row; groupBy(x) | count() | singleval() counts the groups.',
  outputs: 'the row unchanged; chart_type "singleval", chart_config {label} when given',
  example: '* | avg(response_time) | singleval(label="Avg response")',
  apply(call, p) {
    const agg = lastAggregation(p)?.agg;
    if (!agg) throw new QueryCompileError('singleval() requires an aggregation function (e.g. count(), avg(), sum())', call.span);
    if (agg.kind === 'group') throw new QueryCompileError('singleval() cannot be used with groupBy() - it displays a single value only', call.span);
    const label = new Args(call).text(['label'], 0);
    setChart(p, 'singleval', label === undefined ? {} : { label });
  },
});

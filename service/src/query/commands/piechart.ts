import { QueryCompileError } from '../plan/errors.ts';
import { Args } from './args.ts';
import { chartLimit, lastAggregation, setChart } from './chart.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'piechart',
  tier: 'STANDARD',
  category: 'chart',
  signature: 'piechart(limit=10)',
  description:
    'Shows grouped rows as a pie chart: the label is the first column, the value _count (else the first column whose name contains "count", else the second column). Needs groupBy(); the chart, not the query, keeps the `limit` largest slices.',
  outputs: 'the rows unchanged; chart_type "piechart", chart_config {limit}',
  example: '* | groupBy(status) | piechart(limit=5)',
  apply(call, p) {
    if (lastAggregation(p)?.agg?.kind !== 'group') {
      throw new QueryCompileError('piechart() requires groupby() - cannot create pie chart without grouped data', call.span);
    }
    setChart(p, 'piechart', { limit: chartLimit(new Args(call), 10, Number.MAX_SAFE_INTEGER, 0) });
  },
});

import { applyGroupChart } from './chart.ts';
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
  apply: (call, p) => applyGroupChart(call, p, 'piechart', 'pie chart'),
});

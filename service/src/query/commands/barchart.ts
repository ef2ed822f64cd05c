import { applyGroupChart } from './chart.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'barchart',
  tier: 'STANDARD',
  category: 'chart',
  signature: 'barchart(limit=10)',
  description:
    'Shows grouped rows as a bar chart: the label is the first column, the value _count (else the first column whose name contains "count", else the second column). Needs groupBy(); the chart, not the query, keeps the `limit` largest bars.',
  outputs: 'the rows unchanged; chart_type "barchart", chart_config {limit}',
  example: 'status_code>=400 | groupBy(status_code) | barchart()',
  apply: (call, p) => applyGroupChart(call, p, 'barchart', 'bar chart'),
});

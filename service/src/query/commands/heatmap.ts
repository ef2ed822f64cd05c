import { QueryCompileError } from '../plan/errors.ts';
import { aggregateColumns, subFunctionSpec } from './aggregate-functions.ts';
import { Args } from './args.ts';
import { chartLimit, setChart } from './chart.ts';
import { defineCommand } from './command.ts';

const VALUES = ['count', 'sum', 'avg', 'max', 'min'];

export default defineCommand({
  name: 'heatmap',
  tier: 'STANDARD',
  category: 'chart',
  aggregates: true,
  signature: 'heatmap(x=f, y=f, value=count(), limit=50)',
  description:
    'A grid of x by y. On events: one row per (x, y) cell with value= (count(), sum(f), avg(f), max(f) or min(f)), largest first, at most limit² cells (limit at most 200). On already aggregated rows it charts their x and y columns with _count, keeping the limit² largest.',
  outputs: '_heatmap_x, _heatmap_y, _heatmap_value (on aggregated rows: the rows unchanged)',
  example: '* | heatmap(x=user, y=action, value=sum(bytes), limit=20)',
  apply(call, p) {
    const args = new Args(call);
    const x = args.text(['x']);
    const y = args.text(['y']);
    if (!x || !y) throw new QueryCompileError('heatmap() requires x= and y= parameters', call.span);
    const limit = chartLimit(args, 50, 200);
    const cells = limit * limit;
    // heatmap caps its own rows (§5 Row cap): max_query_rows does not apply.
    p.ownCap = true;
    setChart(p, 'heatmap', { xField: x, yField: y, limit });
    if (p.aggregated) {
      // Already aggregated rows (`groupBy(user, action) | heatmap(…)`): the chart reads the x/y
      // columns with _count; the query keeps the limit² largest cells.
      const stage = p.current;
      if (stage.sort.length === 0 && p.outputsOf(stage).some((c) => c.name === '_count')) stage.sort.push({ name: '_count', desc: true });
      stage.limit = Math.min(stage.limit ?? cells, cells);
      return;
    }
    const valueArg = args.value(['value']);
    const spec = valueArg ? subFunctionSpec(valueArg) : { fn: 'count' };
    if (!VALUES.includes(spec.fn)) {
      throw new QueryCompileError(`heatmap(): unsupported value "${spec.fn}" (supported: count(), sum(f), avg(f), max(f), min(f))`, valueArg?.span ?? call.span);
    }
    const stage = p.groupBy([x, y]);
    const [kx, ky] = stage.agg!.keys;
    stage.agg!.keys = [
      { ...kx, name: '_heatmap_x' },
      { ...ky, name: '_heatmap_y' },
    ];
    p.markDerived('_heatmap_x');
    p.markDerived('_heatmap_y');
    const [value] = aggregateColumns(p, stage, { ...spec, as: '_heatmap_value' }, 'command');
    p.addAggregate(stage, value);
    // By value, largest first; ties in a stable order.
    stage.sort.length = 0;
    stage.sort.push({ name: '_heatmap_value', desc: true }, { name: '_heatmap_x', desc: false }, { name: '_heatmap_y', desc: false });
    stage.limit = Math.min(stage.limit ?? cells, cells);
  },
});

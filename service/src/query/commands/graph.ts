import { QueryCompileError } from '../plan/errors.ts';
import { Args, listOf } from './args.ts';
import { chartLimit, setChart } from './chart.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'graph',
  tier: 'STANDARD',
  category: 'chart',
  signature: 'graph(child=f, parent=f, labels=f1,f2, limit=100)',
  description:
    'Draws rows as a tree or graph: each row links its child value to its parent value; labels= picks the columns shown on a node (default: all others). The chart, not the query, keeps `limit` rows (at most 500).',
  outputs: 'the rows unchanged; chart_type "graph", chart_config {childField, parentField, limit, labels}',
  example:
    'event_id=1 | table(process_guid, parent_process_guid, image) | graph(child=process_guid, parent=parent_process_guid, labels=image)',
  apply(call, p) {
    const args = new Args(call);
    const child = args.text(['child']);
    const parent = args.text(['parent']);
    if (!child || !parent) throw new QueryCompileError('graph() requires child= and parent= parameters', call.span);
    // `labels=f1,f2` reads as labels=f1 followed by a bare f2: bare arguments are more labels.
    const named = args.list(['labels', 'label']);
    const labels = named === undefined && args.positional.length === 0 ? undefined : [...(named ?? []), ...args.positional.flatMap(listOf)];
    const config: Record<string, unknown> = { childField: child, parentField: parent, limit: chartLimit(args, 100, 500) };
    if (labels?.length) config.labels = labels;
    setChart(p, 'graph', config);
  },
});

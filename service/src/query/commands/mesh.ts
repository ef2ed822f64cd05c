import { QueryCompileError } from '../plan/errors.ts';
import { Args, listOf } from './args.ts';
import { chartLimit, setChart } from './chart.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'mesh',
  tier: 'STANDARD',
  category: 'chart',
  signature: 'mesh(src=f, dst=f, weight=_count, size=_count, color=auto, labels=…, directed=false, limit=100)',
  description:
    'Draws an edge list (e.g. groupBy(src_ip, dst_ip)) as a network: one edge per row from src to dst, weighted by weight=, nodes sized by size=. label= is labels=; directed=true|1|yes draws arrows. The chart, not the query, keeps `limit` edges (at most 500).',
  outputs: 'the rows unchanged; chart_type "mesh", chart_config {srcField, dstField, weightField, sizeField, directed, limit, color, labels}',
  example: '* | groupBy(src_ip, dst_ip) | mesh(src=src_ip, dst=dst_ip, directed=true)',
  apply(call, p) {
    const args = new Args(call);
    const src = args.text(['src']);
    const dst = args.text(['dst']);
    if (!src || !dst) throw new QueryCompileError('mesh() requires src= and dst= parameters', call.span);
    const config: Record<string, unknown> = {
      srcField: src,
      dstField: dst,
      weightField: args.text(['weight']) || '_count',
      sizeField: args.text(['size']) || '_count',
      directed: args.bool(['directed'], false),
      limit: chartLimit(args, 100, 500),
    };
    const color = args.text(['color']);
    if (color) config.color = color;
    const named = args.list(['labels', 'label']);
    const labels = named === undefined && args.positional.length === 0 ? undefined : [...(named ?? []), ...args.positional.flatMap(listOf)];
    if (labels?.length) config.labels = labels;
    setChart(p, 'mesh', config);
  },
});

import { Args } from './args.ts';
import { chartLimit, setChart } from './chart.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'graphWorld',
  aliases: ['graphworld', 'worldmap'],
  tier: 'STANDARD',
  category: 'chart',
  signature: 'graphWorld(lat=latitude, lon=longitude, label=f, limit=5000)',
  description:
    'Places rows on a world map by their latitude and longitude columns (numbers as text, e.g. from lookupIP()), labelled by label=. The map, not the query, keeps `limit` points (at most 50000).',
  outputs: 'the rows unchanged; chart_type "worldmap", chart_config {latField, lonField, limit, labelField}',
  example: 'latitude=* | table(latitude, longitude, country) | graphWorld(label=country)',
  apply(call, p) {
    const args = new Args(call);
    const config: Record<string, unknown> = {
      latField: args.text(['lat']) || 'latitude',
      lonField: args.text(['lon']) || 'longitude',
      limit: chartLimit(args, 5000, 50000),
    };
    const label = args.text(['label']);
    if (label) config.labelField = label;
    setChart(p, 'worldmap', config);
  },
});

// Pure logic of the charts (renderer/src/lib/charts): which columns each chart_type reads (query-language.md
// §4), the singleval column rule, pie grouping with "Other" and the renderer's limit, timechart series,
// histogram bins, heatmap grids, colour scales, graph building and the force layout, the world map.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { categoryColumns, chartSpec, parseSpanSeconds, singleValueColumn, specColumns, timeColumns } from '../../renderer/src/lib/charts/spec.ts';
import { arcPath, barOrder, categoryItems, pieSlices, polar, topItems } from '../../renderer/src/lib/charts/category.ts';
import { buildTimeSeries, fillTimes, parseBucketTime, seriesFilter } from '../../renderer/src/lib/charts/timeseries.ts';
import { axisOrder, binCenters, binRange, binStats, heatmapGrid, histogramBins } from '../../renderer/src/lib/charts/bins.ts';
import { categoryIndex, colorScale, luminance, niceTicks, parseColor, rampColor, sqrtScale, withAlpha } from '../../renderer/src/lib/charts/scale.ts';
import { buildGraph, fitPositions, forceLayout, initLayout, layoutStep } from '../../renderer/src/lib/charts/graph.ts';
import { formatLatLon, graticulePath, LAND, landPath, mapBox, mapPoints, project, unproject } from '../../renderer/src/lib/charts/geo.ts';
import { columnsOf, fieldLabel, formatCompact, formatNumber, formatShare, toNumber, truncate } from '../../renderer/src/lib/charts/values.ts';
import { cellText as toText } from '../../renderer/src/lib/search/export.ts';

const spec = <K extends string>(kind: K, ...args: Parameters<typeof chartSpec>) => {
  const s = chartSpec(...args);
  assert.equal(s.kind, kind, JSON.stringify(s));
  return s as Extract<ReturnType<typeof chartSpec>, { kind: K }>;
};

describe('values', () => {
  test('numbers arrive as numbers or numeric text', () => {
    assert.equal(toNumber(3), 3);
    assert.equal(toNumber('52.52'), 52.52);
    assert.equal(toNumber(' -13.4 '), -13.4);
    assert.equal(toNumber('1e3'), 1000);
    for (const v of ['', 'slow', '12abc', null, undefined, true, NaN, Infinity, [1], '0x10']) assert.equal(toNumber(v), null, String(v));
  });

  test('text of cells, columns, labels, formatting', () => {
    assert.equal(toText(null), '');
    assert.equal(toText(404), '404');
    assert.equal(toText(['a', 1]), '["a",1]');
    assert.deepEqual(columnsOf([{ a: 1, b: 2 }, { c: 3 }], []), ['a', 'b', 'c']);
    assert.deepEqual(columnsOf([{ a: 1 }], ['b', 'a']), ['b', 'a']);
    assert.equal(fieldLabel('_count'), 'count');
    assert.equal(fieldLabel('_heatmap_value'), 'value');
    assert.equal(fieldLabel('sum_bytes'), 'sum_bytes');
    assert.equal(formatNumber(1234567), '1,234,567');
    assert.equal(formatNumber(45.15625), '45.156');
    assert.equal(formatNumber(19.35, 'percent'), '19.35%');
    assert.equal(formatNumber(null), '—');
    assert.equal(formatCompact(950), '950');
    assert.equal(formatCompact(12_300), '12.3k');
    assert.equal(formatCompact(5_600_000), '5.6M');
    assert.equal(formatCompact(0.0123), '0.012');
    assert.equal(formatCompact(40, 'percent'), '40%');
    assert.equal(formatShare(1, 3), '33.3%');
    assert.equal(formatShare(1, 10_000), '<0.1%');
    assert.equal(truncate('abcdef', 4), 'abc…');
    assert.equal(truncate('abc', 4), 'abc');
  });
});

describe('chartSpec: the rows and columns of §4', () => {
  test('piechart and barchart: label = first column; value = _count, else a column containing count, else the second', () => {
    assert.deepEqual(categoryColumns(['status', '_count']), { labelField: 'status', valueField: '_count' });
    assert.deepEqual(categoryColumns(['user', 'unique_count_host', 'x']), { labelField: 'user', valueField: 'unique_count_host' });
    assert.deepEqual(categoryColumns(['user', '_sum', '_avg']), { labelField: 'user', valueField: '_sum' });
    assert.equal(categoryColumns(['user']), null);
    const p = spec('category', 'piechart', ['status', '_count'], { limit: 5 });
    assert.deepEqual(p, { kind: 'category', chart: 'piechart', labelField: 'status', valueField: '_count', limit: 5 });
    assert.equal(spec('category', 'barchart', ['host', '_count'], {}).limit, 10, 'default limit 10');
    assert.equal(spec('category', 'barchart', ['host', '_count'], { limit: 'lots' }).limit, 10);
    // No field_order: the keys of the rows.
    assert.equal(spec('category', 'piechart', [], {}, [{ user: 'a', _count: 1 }]).labelField, 'user');
  });

  test('timechart: time_bucket + value columns; other columns are series keys; percent() unit', () => {
    assert.deepEqual(timeColumns(['status', 'time_bucket', '_count'], { span: '1m' }), { valueFields: ['_count'], keyFields: ['status'] });
    assert.deepEqual(timeColumns(['time_bucket', '_sum'], {}), { valueFields: ['_sum'], keyFields: [] });
    assert.deepEqual(timeColumns(['time_bucket', 'ok', 'err'], { valueFields: ['ok', 'err'], unit: 'percent' }), { valueFields: ['ok', 'err'], keyFields: [] });
    const t = spec('time', 'timechart', ['status', 'time_bucket', '_count'], { span: '5m' });
    assert.equal(t.spanSeconds, 300);
    assert.equal(t.additive, true);
    assert.equal(t.unit, null);
    const p = spec('time', 'timechart', ['time_bucket', 'ok'], { span: '5m', valueFields: ['ok'], unit: 'percent', yLabel: 'Percent' });
    assert.equal(p.unit, 'percent');
    assert.equal(p.yLabel, 'Percent');
    assert.equal(p.additive, false);
    assert.equal(spec('time', 'timechart', ['time_bucket', '_avg'], { span: '1h' }).additive, false);
    assert.equal(chartSpec('timechart', ['_count'], {}).kind, 'unsupported');
    assert.equal(parseSpanSeconds('1d'), 86400);
    assert.equal(parseSpanSeconds('2w'), 1_209_600);
    assert.equal(parseSpanSeconds('soon'), null);
  });

  test('singleval: first of _count, _sum, _avg, _min, _max, sum_*, avg_*, min_*, max_*, stddev_*, else the first column', () => {
    assert.equal(singleValueColumn(['_avg']), '_avg');
    assert.equal(singleValueColumn(['_sum', '_count']), '_count');
    assert.equal(singleValueColumn(['_max', '_min']), '_min');
    assert.equal(singleValueColumn(['stddev_rt', 'max_rt', 'avg_rt']), 'avg_rt');
    assert.equal(singleValueColumn(['stddev_rt', '_q1']), 'stddev_rt');
    assert.equal(singleValueColumn(['_median', '_mad']), '_median');
    assert.equal(singleValueColumn([]), null);
    assert.deepEqual(spec('single', 'singleval', ['_count'], { label: 'Events' }), { kind: 'single', field: '_count', label: 'Events' });
    assert.equal(spec('single', 'singleval', ['_avg'], {}).label, '_avg');
  });

  test('histogram, heatmap (both shapes), mitre', () => {
    assert.deepEqual(spec('histogram', 'histogram', ['_bin_lower', '_bin_upper', '_bin_count'], { field: 'bytes', buckets: 10 }), {
      kind: 'histogram',
      field: 'bytes',
      buckets: 10,
    });
    assert.equal(chartSpec('histogram', ['x'], {}).kind, 'unsupported');
    const h = spec('heatmap', 'heatmap', ['_heatmap_x', '_heatmap_y', '_heatmap_value'], { xField: 'host', yField: 'status', limit: 50 });
    assert.deepEqual([h.xCol, h.yCol, h.valueCol, h.xField, h.yField, h.limit], ['_heatmap_x', '_heatmap_y', '_heatmap_value', 'host', 'status', 50]);
    const agg = spec('heatmap', 'heatmap', ['host', 'status', '_count'], { xField: 'host', yField: 'status', limit: 500 });
    assert.deepEqual([agg.xCol, agg.yCol, agg.valueCol, agg.limit], ['host', 'status', '_count', 200]);
    assert.equal(chartSpec('heatmap', ['host', '_count'], { xField: 'host', yField: 'status' }).kind, 'unsupported');
    assert.equal(spec('category', 'mitre', ['attack_tag', '_count'], { tagField: 'tags', limit: 5000 }).labelField, 'attack_tag');
    assert.equal(spec('heatmap', 'mitre', ['attack_tag', 'host', '_count'], { byField: 'host' }).yCol, 'host');
  });

  test('graph, mesh, pgraph, worldmap', () => {
    const g = spec('graph', 'graph', ['process_guid', 'parent_process_guid', 'image', 'timestamp', 'fractal_id'], {
      childField: 'process_guid',
      parentField: 'parent_process_guid',
      limit: 100,
    });
    assert.deepEqual([g.srcCol, g.dstCol, g.directed, g.labelCols], ['parent_process_guid', 'process_guid', true, ['image']], 'labels default to all others');
    assert.deepEqual(
      spec('graph', 'graph', ['c', 'p', 'image', 'user'], { childField: 'c', parentField: 'p', labels: ['user'] }).labelCols,
      ['user'],
    );
    const m = spec('graph', 'mesh', ['src_ip', 'dst_ip', '_sum'], {
      srcField: 'src_ip',
      dstField: 'dst_ip',
      weightField: '_sum',
      sizeField: '_sum',
      directed: true,
      limit: 2,
      color: 'src_ip',
    });
    assert.deepEqual([m.srcCol, m.dstCol, m.weightCol, m.sizeCol, m.colorCol, m.directed, m.limit], ['src_ip', 'dst_ip', '_sum', '_sum', 'src_ip', true, 2]);
    assert.equal(spec('graph', 'mesh', ['a', 'b', '_count'], { srcField: 'a', dstField: 'b', directed: false }).directed, false);
    assert.equal(chartSpec('mesh', ['a'], { srcField: 'a', dstField: 'b' }).kind, 'unsupported');
    const p = spec('graph', 'pgraph', ['parent', 'child', 'label', 'event_type', 'anomaly_score', 'parent_label'], { limit: 3000, focus: 'G1' });
    assert.deepEqual([p.srcCol, p.dstCol, p.typeCol, p.scoreCol, p.srcLabelCol, p.focus], ['parent', 'child', 'event_type', 'anomaly_score', 'parent_label', 'G1']);
    const w = spec('map', 'worldmap', ['lat', 'lon', 'city', '_count'], { latField: 'lat', lonField: 'lon', labelField: 'city', limit: 5000 });
    assert.deepEqual(specColumns(w), ['lat', 'lon', 'city', '_count']);
    assert.equal(spec('map', 'worldmap', ['latitude', 'longitude'], {}).latField, 'latitude');
    assert.match(spec('unsupported', 'worldmap', ['x'], {}).reason, /“latitude” or “longitude”/);
    assert.equal(chartSpec('', [], {}).kind, 'unsupported');
    assert.equal(chartSpec('sankey', [], {}).kind, 'unsupported');
  });
});

describe('pie and bars', () => {
  const rows = [
    { user: 'a', _count: 5 },
    { user: 'b', _count: 30 },
    { user: 'c', _count: 10 },
    { user: 'd', _count: '20' },
    { user: 'e', _count: 'n/a' },
    { user: null, _count: 2 },
  ];

  test('items per label; non-numeric values are skipped', () => {
    const { items, skipped } = categoryItems(rows, 'user', '_count');
    assert.deepEqual(
      items.map((i) => [i.label, i.value]),
      [
        ['a', 5],
        ['b', 30],
        ['c', 10],
        ['d', 20],
        ['', 2],
      ],
    );
    assert.equal(skipped, 1);
    assert.deepEqual(categoryItems([{ k: 'x', v: 1 }, { k: 'x', v: 2 }], 'k', 'v').items.map((i) => i.value), [3]);
  });

  test('bars: the limit keeps the largest, in the result order', () => {
    const { items } = categoryItems(rows, 'user', '_count');
    const top = topItems(items, 3);
    assert.deepEqual(top.items.map((i) => i.label), ['b', 'c', 'd']);
    assert.equal(top.hidden, 2);
    assert.equal(topItems(items, 10).hidden, 0);
  });

  test('bars: a sorted result keeps its order, an unsorted one is drawn largest first', () => {
    const it = (pairs: Array<[string, number]>) => pairs.map(([label, value], index) => ({ label, value, index }));
    const labels = (xs: ReturnType<typeof barOrder>) => xs.map((x) => x.label);
    assert.deepEqual(labels(barOrder(it([['404', 2], ['500', 9], ['1000', 1]]))), ['404', '500', '1000'], 'numeric labels ascending');
    assert.deepEqual(labels(barOrder(it([['b', 1], ['a', 5], ['c', 3]]))), ['a', 'c', 'b']);
    assert.deepEqual(labels(barOrder(it([['b', 1], ['a', 3], ['c', 5]]))), ['b', 'a', 'c'], 'sort(_count) kept');
    assert.deepEqual(labels(barOrder(it([['a', 1], ['b', 3]]))), ['a', 'b']);
  });

  test('pie: top `limit` slices by value, then one "Other"; angles cover the circle', () => {
    const { items } = categoryItems(rows, 'user', '_count');
    const { slices, total } = pieSlices(items, 2);
    assert.equal(total, 67);
    assert.deepEqual(
      slices.map((s) => [s.label, s.value, s.other, s.members]),
      [
        ['b', 30, false, 1],
        ['d', 20, false, 1],
        ['Other', 17, true, 3],
      ],
    );
    assert.ok(Math.abs(slices.at(-1)!.end - 2 * Math.PI) < 1e-9);
    assert.ok(Math.abs(slices.reduce((n, s) => n + s.fraction, 0) - 1) < 1e-9);
    assert.equal(pieSlices(items, 10).slices.some((s) => s.other), false, 'no Other when everything fits');
    const neg = pieSlices([{ label: 'x', value: -1, index: 0 }, { label: 'y', value: 0, index: 1 }, { label: 'z', value: 4, index: 2 }], 5);
    assert.equal(neg.dropped, 2);
    assert.deepEqual(neg.slices.map((s) => s.label), ['z']);
  });

  test('arcs: slices and rings, a full circle in two halves', () => {
    assert.deepEqual(polar(0, 0, 10, 0).map((v) => Math.round(v) + 0), [0, -10]);
    assert.deepEqual(polar(0, 0, 10, Math.PI / 2).map((v) => Math.round(v) + 0), [10, 0]);
    assert.equal(arcPath(50, 50, 0, 40, 0, Math.PI / 2), 'M50,50 L50,10 A40,40 0 0 1 90,50 Z');
    assert.match(arcPath(50, 50, 20, 40, 0, Math.PI * 1.5), /^M50,10 A40,40 0 1 1 10,50 L30,50 A20,20 0 1 0 50,30 Z$/);
    assert.equal(arcPath(50, 50, 20, 40, 0, 2 * Math.PI).match(/M/g)!.length, 2);
  });
});

describe('timechart series', () => {
  const T = (m: number) => `2026-03-01 10:${String(m).padStart(2, '0')}:00`;
  const rows = [
    { status: '200', time_bucket: T(0), _count: 5 },
    { status: '404', time_bucket: T(0), _count: 1 },
    { status: '200', time_bucket: T(1), _count: 7 },
    { status: '200', time_bucket: T(3), _count: 2 },
    { status: '500', time_bucket: T(3), _count: 4 },
  ];

  test('bucket times are UTC text, RFC 3339 or epoch', () => {
    assert.equal(parseBucketTime('2026-03-01 10:00:00'), Date.UTC(2026, 2, 1, 10) / 1000);
    assert.equal(parseBucketTime('2026-03-01T10:00:00+01:00'), Date.UTC(2026, 2, 1, 9) / 1000);
    assert.equal(parseBucketTime('2026-03-01 10:00:00.500'), Date.UTC(2026, 2, 1, 10) / 1000 + 0.5);
    assert.equal(parseBucketTime(1_700_000_000_000), 1_700_000_000);
    assert.equal(parseBucketTime('yesterday'), null);
  });

  test('missing buckets between first and last are filled when they line up with the span', () => {
    assert.deepEqual(fillTimes([0, 180, 60], 60), [0, 60, 120, 180]);
    assert.deepEqual(fillTimes([0, 90], 60), [0, 90], 'misaligned: kept as given');
    assert.deepEqual(fillTimes([0, 60_000], 60, 100), [0, 60_000], 'too many: kept as given');
    assert.deepEqual(fillTimes([5, 5], null), [5]);
  });

  test('one series per key, largest first; counts are 0 where a key has no row', () => {
    const s = spec('time', 'timechart', ['status', 'time_bucket', '_count'], { span: '1m' });
    const d = buildTimeSeries(rows, s);
    assert.equal(d.times.length, 4);
    assert.deepEqual(
      d.series.map((x) => [x.label, x.values, x.total]),
      [
        ['200', [5, 7, 0, 2], 14],
        ['500', [0, 0, 0, 4], 4],
        ['404', [1, 0, 0, 0], 1],
      ],
    );
    assert.deepEqual(seriesFilter(d.series[0]!), { field: 'status', value: '200' });
  });

  test('past maxSeries the rest add up into "Other" (counts) or are left out (averages)', () => {
    const s = spec('time', 'timechart', ['status', 'time_bucket', '_count'], { span: '1m' });
    const d = buildTimeSeries(rows, s, 1);
    assert.deepEqual(d.series.map((x) => [x.label, x.values, x.other]), [
      ['200', [5, 7, 0, 2], false],
      ['Other', [1, 0, 0, 4], true],
    ]);
    assert.equal(d.hiddenSeries, 2);
    assert.equal(seriesFilter(d.series[1]!), null);
    const avg = spec('time', 'timechart', ['status', 'time_bucket', '_avg'], { span: '1m' });
    const a = buildTimeSeries(rows.map((r) => ({ status: r.status, time_bucket: r.time_bucket, _avg: r._count })), avg, 1);
    assert.deepEqual(a.series.map((x) => x.values), [[5, 7, null, 2]], 'gaps, no Other');
    const one = buildTimeSeries(rows, spec('time', 'timechart', ['time_bucket', '_count'], { span: '1m' }));
    assert.deepEqual(one.series.map((x) => [x.label, x.total]), [['count', 19]], 'no key: one series named after its value');
  });

  test('percent(): one series per value field, no key', () => {
    const s = spec('time', 'timechart', ['time_bucket', 'ok', 'err'], { span: '1m', valueFields: ['ok', 'err'], unit: 'percent' });
    const d = buildTimeSeries(
      [
        { time_bucket: T(0), ok: 40, err: 5 },
        { time_bucket: T(2), ok: '19.35', err: 0 },
      ],
      s,
    );
    assert.deepEqual(d.series.map((x) => [x.label, x.values]), [
      ['ok', [40, null, 19.35]],
      ['err', [5, null, 0]],
    ]);
    assert.equal(seriesFilter(d.series[0]!), null, 'no key field to filter on');
  });
});

describe('histogram bins and heatmap grids', () => {
  test('bins ordered by lower edge, stats, centres and range', () => {
    const bins = histogramBins([
      { _bin_lower: 25, _bin_upper: 50, _bin_count: 4 },
      { _bin_lower: 0, _bin_upper: 25, _bin_count: 5 },
      { _bin_lower: 'x', _bin_upper: 1, _bin_count: 1 },
    ]);
    assert.deepEqual(bins, [
      { lower: 0, upper: 25, count: 5 },
      { lower: 25, upper: 50, count: 4 },
    ]);
    assert.deepEqual(binStats(bins), { total: 9, max: 5, width: 25, min: 0, maxEdge: 50 });
    assert.deepEqual(binCenters(bins), [12.5, 37.5]);
    assert.deepEqual(binRange(bins), [0, 50]);
    assert.deepEqual(binRange([{ lower: 200, upper: 200, count: 12 }]), [190, 210], 'one point bin gets room');
    assert.deepEqual(binRange([]), [0, 1]);
  });

  test('axis order: numbers ascending, else busiest first', () => {
    assert.deepEqual(axisOrder(new Map([['500', 1], ['200', 9], ['404', 3]])), ['200', '404', '500']);
    assert.deepEqual(axisOrder(new Map([['web1', 1], ['db1', 9], ['mail', 9]])), ['db1', 'mail', 'web1']);
  });

  test('grid of _heatmap_x/_y/_value; empty cells are null; the limit keeps the busiest categories', () => {
    const s = spec('heatmap', 'heatmap', ['_heatmap_x', '_heatmap_y', '_heatmap_value'], { xField: 'host', yField: 'status', limit: 2 });
    const g = heatmapGrid(
      [
        { _heatmap_x: 'web1', _heatmap_y: '200', _heatmap_value: 10 },
        { _heatmap_x: 'db1', _heatmap_y: '200', _heatmap_value: 4 },
        { _heatmap_x: 'web1', _heatmap_y: '500', _heatmap_value: 3 },
        { _heatmap_x: 'mail', _heatmap_y: '404', _heatmap_value: 1 },
      ],
      s,
    );
    assert.deepEqual(g.xs, ['web1', 'db1']);
    assert.deepEqual(g.ys, ['200', '500']);
    assert.deepEqual(g.values, [
      [10, 4],
      [3, null],
    ]);
    assert.deepEqual([g.min, g.max, g.cells, g.hiddenX, g.hiddenY], [3, 10, 3, 1, 1]);
    const agg = spec('heatmap', 'heatmap', ['host', 'status', '_count'], { xField: 'host', yField: 'status' });
    const a = heatmapGrid([{ host: 'h', status: 200, _count: 2 }], agg);
    assert.deepEqual([a.xs, a.ys, a.values], [['h'], ['200'], [[2]]]);
    assert.deepEqual([heatmapGrid([], agg).min, heatmapGrid([], agg).max], [0, 0]);
  });
});

describe('colour scales', () => {
  test('colours parse and interpolate', () => {
    assert.deepEqual(parseColor('#fff'), [255, 255, 255]);
    assert.deepEqual(parseColor(' #0b63ce '), [11, 99, 206]);
    assert.deepEqual(parseColor('rgb(1, 2, 3)'), [1, 2, 3]);
    assert.deepEqual(parseColor('rgb(1 2 3 / 50%)'), [1, 2, 3]);
    assert.equal(parseColor('blue'), null);
    assert.equal(rampColor(['#000000', '#ffffff'], 0.5), 'rgb(128, 128, 128)');
    assert.equal(rampColor(['#000000', '#ff0000', '#ffffff'], 1), 'rgb(255, 255, 255)');
    assert.equal(rampColor(['#000000', '#ff0000', '#ffffff'], 0.25), 'rgb(128, 0, 0)');
    assert.equal(rampColor(['#000000', '#ffffff'], 7), 'rgb(255, 255, 255)', 'clamped');
    assert.equal(withAlpha('#ff0000', 0.5), 'rgba(255, 0, 0, 0.5)');
    assert.ok(luminance('#ffffff') > 0.9 && luminance('#000000') < 0.01);
  });

  test('linear scale with nice ticks; log when the values span orders of magnitude', () => {
    const lin = colorScale(0, 100, ['#000000', '#ffffff']);
    assert.equal(lin.mode, 'linear');
    assert.equal(lin.t(50), 0.5);
    assert.equal(lin.color(100), 'rgb(255, 255, 255)');
    assert.deepEqual(lin.ticks, [0, 25, 50, 75, 100]);
    const log = colorScale(1, 10_000, ['#000000', '#ffffff']);
    assert.equal(log.mode, 'log');
    assert.equal(log.t(100), 0.5);
    assert.deepEqual(log.ticks, [1, 10, 100, 1000, 10_000]);
    assert.equal(colorScale(5, 5, ['#000', '#fff']).t(5), 1, 'one value: the top of the ramp');
    assert.deepEqual(niceTicks(0, 7, 4), [0, 2, 4, 6, 7]);
    assert.deepEqual(niceTicks(3, 3), [3]);
  });

  test('sizes grow with area; categories get palette slots by frequency', () => {
    const r = sqrtScale(100, 4, 20);
    assert.equal(r(0), 4);
    assert.equal(r(100), 20);
    assert.equal(r(25), 12);
    assert.equal(r(1000), 20);
    assert.deepEqual([...categoryIndex(new Map([['a', 1], ['b', 5], ['c', 3]]), 2)], [['b', 0], ['c', 1], ['a', -1]]);
  });
});

describe('graphs and the force layout', () => {
  const meshSpec = spec('graph', 'mesh', ['src', 'dst', '_count'], { srcField: 'src', dstField: 'dst', weightField: '_count', sizeField: '_count', limit: 3 });

  test('mesh: nodes from both ends, size = sum over edges, the limit keeps the heaviest edges', () => {
    const g = buildGraph(
      [
        { src: 'a', dst: 'b', _count: 5 },
        { src: 'a', dst: 'c', _count: 1 },
        { src: 'b', dst: 'c', _count: 3 },
        { src: 'c', dst: 'd', _count: 2 },
      ],
      meshSpec,
    );
    assert.deepEqual(g.nodes.map((n) => [n.id, n.size, n.role, n.field]), [
      ['a', 5, 'source', 'src'],
      ['b', 8, 'both', 'dst'],
      ['c', 5, 'both', 'dst'],
      ['d', 2, 'target', 'dst'],
    ]);
    assert.deepEqual(g.edges.map((e) => [g.nodes[e.source]!.id, g.nodes[e.target]!.id, e.weight]), [
      ['a', 'b', 5],
      ['b', 'c', 3],
      ['c', 'd', 2],
    ]);
    assert.deepEqual([g.hiddenEdges, g.totalEdges], [1, 4]);
  });

  test('graph: repeated rows are one edge; labels from the child row; roots without a parent', () => {
    const s = spec('graph', 'graph', ['guid', 'parent', 'image'], { childField: 'guid', parentField: 'parent', labels: ['image'] });
    const g = buildGraph(
      [
        { guid: 'G1', parent: '', image: 'explorer.exe' },
        { guid: 'G2', parent: 'G1', image: 'cmd.exe' },
        { guid: 'G2', parent: 'G1', image: 'cmd.exe' },
        { guid: 'G3', parent: 'G2', image: 'powershell.exe' },
      ],
      s,
    );
    assert.deepEqual(g.nodes.map((n) => [n.id, n.label, n.size]), [
      ['G1', 'explorer.exe', 1],
      ['G2', 'cmd.exe', 2],
      ['G3', 'powershell.exe', 1],
    ]);
    assert.deepEqual(g.edges.map((e) => [e.source, e.target, e.rows]), [
      [0, 1, 2],
      [1, 2, 1],
    ]);
    assert.equal(g.nodes[0]!.field, 'parent', 'a root is only ever a parent');
  });

  test('pgraph: scores onto the child, types and the focus node', () => {
    const s = spec('graph', 'pgraph', ['parent', 'child', 'label', 'event_type', 'anomaly_score', 'parent_label'], { focus: 'P' });
    const g = buildGraph(
      [
        { parent: 'P', child: 'C', label: 'cmd.exe', event_type: 'spawn', anomaly_score: 0.2, parent_label: 'explorer.exe' },
        { parent: 'C', child: 'evil.com', label: 'evil.com', event_type: 'dns_query', anomaly_score: 0.95, parent_label: 'cmd.exe' },
      ],
      s,
    );
    assert.deepEqual(g.nodes.map((n) => [n.id, n.label, n.score, n.focus]), [
      ['P', 'explorer.exe', null, true],
      ['C', 'cmd.exe', 0.2, false],
      ['evil.com', 'evil.com', 0.95, false],
    ]);
    assert.deepEqual(g.edges.map((e) => e.type), ['spawn', 'dns_query']);
  });

  test('layout: deterministic, finite, linked nodes end closer than unlinked ones, no two nodes on one spot', () => {
    // Two triangles joined by one edge.
    const edges = [
      [0, 1],
      [1, 2],
      [2, 0],
      [3, 4],
      [4, 5],
      [5, 3],
      [2, 3],
    ].map(([source, target]) => ({ source: source!, target: target! }));
    const a = forceLayout(6, edges);
    const b = forceLayout(6, edges);
    assert.deepEqual([...a.x], [...b.x]);
    assert.ok([...a.x, ...a.y].every(Number.isFinite));
    const d = (i: number, j: number) => Math.hypot(a.x[i]! - a.x[j]!, a.y[i]! - a.y[j]!);
    assert.ok(d(0, 1) < d(0, 5), `inside a triangle ${d(0, 1)} < across ${d(0, 5)}`);
    for (let i = 0; i < 6; i++) for (let j = i + 1; j < 6; j++) assert.ok(d(i, j) > 5, `${i}-${j} apart`);
  });

  test('layout step: alpha cools, a stretched link shortens', () => {
    const st = initLayout(2, [{ source: 0, target: 1 }], { distance: 40 });
    st.x[1] = 400;
    st.y[1] = 0;
    const before = Math.hypot(st.x[1]! - st.x[0]!, st.y[1]! - st.y[0]!);
    const alpha = layoutStep(st);
    assert.ok(alpha < 1);
    assert.ok(Math.hypot(st.x[1]! - st.x[0]!, st.y[1]! - st.y[0]!) < before);
    assert.equal(st.ticks, 1);
  });

  test('big graphs (the grid of cells) come to rest with every node placed; fitting keeps everything inside the box', () => {
    // Its speed is a benchmark's business, not a timed test's: here, that the grid path settles.
    const n = 900;
    const edges = Array.from({ length: n - 1 }, (_, i) => ({ source: Math.floor(i / 3), target: i + 1 }));
    const { x, y, ticks } = forceLayout(n, edges);
    assert.ok(ticks > 0);
    assert.ok(x.every(Number.isFinite) && y.every(Number.isFinite));
    assert.ok(new Set(Array.from(x, (v, i) => `${v.toFixed(3)},${y[i]!.toFixed(3)}`)).size === n, 'no two nodes on the same spot');
    const fit = fitPositions(x, y, 800, 400, 20);
    assert.ok(fit.x.every((v) => v >= 19.99 && v <= 780.01));
    assert.ok(fit.y.every((v) => v >= 19.99 && v <= 380.01));
    const one = fitPositions([5], [5], 100, 50, 10);
    assert.deepEqual([one.x, one.y], [[50], [25]]);
  });
});

describe('world map', () => {
  test('the map box is 2:1 and centred; projection and its inverse', () => {
    assert.deepEqual(mapBox(1000, 400, 0), { x: 100, y: 0, w: 800, h: 400 });
    assert.deepEqual(mapBox(400, 400, 0), { x: 0, y: 100, w: 400, h: 200 });
    const box = mapBox(720, 360, 0);
    assert.deepEqual(project(0, 0, box), [360, 180]);
    assert.deepEqual(project(-180, 90, box), [0, 0]);
    assert.deepEqual(project(13.4, 52.5, box), [386.8, 75]);
    assert.deepEqual(unproject(386.8, 75, box).map((v) => +v.toFixed(6)), [13.4, 52.5]);
  });

  test('graticule and land paths stay inside the box', () => {
    const box = mapBox(720, 360, 0);
    const g = graticulePath(box, 30);
    assert.equal((g.match(/M/g) ?? []).length, 13 + 7);
    assert.ok(LAND.every((ring) => ring.length % 2 === 0 && ring.length >= 6));
    const nums = landPath(box).match(/-?[\d.]+/g)!.map(Number);
    assert.ok(nums.every((v) => v >= 0 && v <= 720));
  });

  test('points: numeric text, merged per place and label, bad coordinates skipped, limit applied', () => {
    const s = spec('map', 'worldmap', ['lat', 'lon', 'city', '_count'], { latField: 'lat', lonField: 'lon', labelField: 'city', limit: 2 });
    const r = mapPoints(
      [
        { lat: '52.52', lon: '13.405', city: 'Berlin', _count: 3 },
        { lat: 52.52, lon: 13.405, city: 'Berlin', _count: 2 },
        { lat: '48.8566', lon: '2.3522', city: 'Paris', _count: 1 },
        { lat: 'x', lon: '2', city: 'bad', _count: 1 },
        { lat: '91', lon: '2', city: 'north of north', _count: 1 },
        { lat: '-33.9', lon: '151.2', city: 'Sydney', _count: 4 },
      ],
      s,
    );
    assert.deepEqual(r.points.map((p) => [p.label, p.count, p.rows]), [
      ['Berlin', 5, 2],
      ['Paris', 1, 1],
    ]);
    assert.deepEqual([r.skipped, r.hidden], [2, 1]);
    assert.equal(formatLatLon(52.52, -13.406), '52.52° N, 13.41° W');
  });
});

describe('time axis labels', () => {
  test('24-hour ticks, the date under the first and at day changes; whole days as dates', async () => {
    const { timeTickLabels, formatBucket } = await import('../../renderer/src/lib/charts/timeseries.ts');
    const t0 = Date.UTC(2026, 2, 1, 23, 30) / 1000;
    assert.deepEqual(timeTickLabels([t0, t0 + 900, t0 + 1800, t0 + 2700], 900, 'utc'), ['23:30\n2026-03-01', '23:45', '00:00\n2026-03-02', '00:15']);
    assert.deepEqual(timeTickLabels([t0], 30, 'utc'), ['23:30:00\n2026-03-01']);
    assert.deepEqual(timeTickLabels([Date.UTC(2026, 2, 1) / 1000], 86400, 'utc'), ['2026-03-01']);
    assert.deepEqual(timeTickLabels([Date.UTC(2026, 2, 1) / 1000], 86400 * 31, 'utc'), ['2026-03']);
    assert.equal(formatBucket(t0, 'utc'), '2026-03-01 23:30 UTC');
    assert.equal(formatBucket(t0 + 5, 'utc'), '2026-03-01 23:30:05 UTC');
  });
});

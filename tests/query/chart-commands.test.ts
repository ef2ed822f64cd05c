// Visualisation commands of query-language.md §3.10 and §4 against real events sent through the
// ingest endpoint: chart_type, chart_config (keys and defaults), the rows each chart reads,
// field_order, is_aggregated, row caps, and every error message. Expected numbers are worked out
// by hand from the table below.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { col, query, queryDataset } from '../support/query.ts';

// #, user, action, bytes, status, response_time, src_ip, dst_ip, computer_name. Event 1 is the
// newest. bytes of event 13 and response_time of event 13 are not numbers.
const ROWS: Array<[string, string, number | string, number, number | string, string, string, string]> = [
  ['alice', 'login', 100, 200, 0, '10.0.0.1', '10.0.0.9', 'ws1'],
  ['alice', 'get', 200, 200, 10, '10.0.0.1', '10.0.0.9', 'ws1'],
  ['alice', 'get', 300, 404, 25, '10.0.0.1', '10.0.0.9', 'ws1'],
  ['alice', 'get', 400, 200, 30, '10.0.0.1', '10.0.0.8', 'ws2'],
  ['alice', 'get', 100, 200, 49.5, '10.0.0.1', '10.0.0.8', 'ws2'],
  ['alice', 'put', 200, 500, 50, '10.0.0.1', '10.0.0.8', 'ws2'],
  ['alice', 'get', 300, 200, 74, '10.0.0.2', '10.0.0.9', 'ws3'],
  ['alice', 'logout', 5000, 200, 75, '10.0.0.2', '10.0.0.9', 'ws3'],
  ['bob', 'login', 100, 200, 100, '10.0.0.2', '10.0.0.9', 'ws3'],
  ['bob', 'get', 200, 404, 99, '10.0.0.2', '10.0.0.8', 'ws4'],
  ['carol', 'get', 300, 200, 12, '10.0.0.3', '10.0.0.8', 'ws4'],
  ['dave', 'login', 400, 500, 60, '10.0.0.3', '10.0.0.8', 'ws4'],
  ['dave', 'get', '-', 200, 'slow', '10.0.0.3', '10.0.0.9', 'ws4'],
  ['erin', 'get', 200, 200, 5, '10.0.0.4', '10.0.0.9', 'ws1'],
  ['erin', 'get', 100, 301, 20, '10.0.0.4', '10.0.0.9', 'ws1'],
  ['erin', 'put', 300, 200, 33, '10.0.0.4', '10.0.0.9', 'ws1'],
  ['frank', 'get', 2.5, 200, 80, '10.0.0.5', '10.0.0.9', 'ws2'],
];

/** Extra fields: a process tree on events 1–3, coordinates on events 9 and 10. */
const EXTRA: Record<number, object> = {
  1: { event_id: 1, process_guid: 'G1', parent_process_guid: 'G0', image: 'explorer.exe' },
  2: { event_id: 1, process_guid: 'G2', parent_process_guid: 'G1', image: 'cmd.exe' },
  3: { event_id: 1, process_guid: 'G3', parent_process_guid: 'G2', image: 'powershell.exe' },
  9: { latitude: '52.52', longitude: '13.405', country: 'DE' },
  10: { latitude: '48.8566', longitude: '2.3522', country: 'FR' },
};

function events(base = Date.now()) {
  return ROWS.map(([user, action, bytes, status, response_time, src_ip, dst_ip, computer_name], i) => ({
    timestamp: new Date(base - (i + 1) * 60_000).toISOString(),
    user,
    action,
    bytes,
    status,
    status_code: status,
    response_time,
    src_ip,
    dst_ip,
    computer_name,
    event_id: 3,
    ...EXTRA[i + 1],
  }));
}

const data = queryDataset('charts', events);

const { run } = data;

async function fails(q: string, message: string): Promise<void> {
  const r = await query(data.admin, q, { fractal_id: data.fractal });
  assert.equal(r.status, 400, `${q}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.success, false);
  assert.equal(r.body.error, `Query error: ${message}`);
  assert.equal(r.body.error_type, 'translate');
}

/** Runs `q` with `max_query_rows` set to `rows`, then restores the default. */
async function withRowCap<T>(rows: number, fn: () => Promise<T>): Promise<T> {
  assert.equal((await data.admin.put('/api/v1/settings', { max_query_rows: rows })).status, 200);
  try {
    return await fn();
  } finally {
    await data.admin.put('/api/v1/settings', { max_query_rows: 10000 });
  }
}

describe('piechart and barchart', () => {
  test('§3.10 example: groupBy(status) | piechart(limit=5)', async () => {
    const r = await run('* | groupBy(status) | piechart(limit=5) | sort(status)');
    assert.equal(r.chart_type, 'piechart');
    assert.deepEqual(r.chart_config, { limit: 5 });
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['status', '_count']);
    assert.deepEqual(r.results, [
      { status: '200', _count: 12 },
      { status: '301', _count: 1 },
      { status: '404', _count: 2 },
      { status: '500', _count: 2 },
    ]);
  });

  test('§3.10 example: status_code>=400 | groupBy(status_code) | barchart() with the default limit', async () => {
    const r = await run('status_code>=400 | groupBy(status_code) | barchart() | sort(status_code)');
    assert.equal(r.chart_type, 'barchart');
    assert.deepEqual(r.chart_config, { limit: 10 });
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.results, [
      { status_code: '404', _count: 2 },
      { status_code: '500', _count: 2 },
    ]);
  });

  test('the renderer applies limit: the query returns every group', async () => {
    const r = await run('* | groupBy(user) | piechart(limit=2)');
    assert.deepEqual(r.chart_config, { limit: 2 });
    assert.equal(r.count, 6);
    assert.equal((await run('* | groupBy(user) | barchart(3)')).count, 6);
    assert.deepEqual((await run('* | groupBy(user) | barchart(3)')).chart_config, { limit: 3 });
    // A bad limit keeps the default.
    assert.deepEqual((await run('* | groupBy(user) | piechart(limit=lots)')).chart_config, { limit: 10 });
  });

  test('grouped rows are needed, also after other commands of the group stage', async () => {
    const r = await run('* | groupBy(action) | sort(_count, order=desc) | barchart()');
    assert.deepEqual(col(r, 'action'), ['get', 'login', 'put', 'logout']);
    await fails('* | piechart()', 'piechart() requires groupby() - cannot create pie chart without grouped data');
    await fails('user=alice | piechart(limit=5)', 'piechart() requires groupby() - cannot create pie chart without grouped data');
    await fails('* | barchart()', 'barchart() requires groupby() - cannot create bar chart without grouped data');
    await fails('* | count() | barchart()', 'barchart() requires groupby() - cannot create bar chart without grouped data');
    await fails('* | groupBy(user) | count() | piechart()', 'piechart() requires groupby() - cannot create pie chart without grouped data');
  });

  test('the last chart command wins', async () => {
    const r = await run('* | groupBy(status) | piechart() | barchart(limit=3)');
    assert.equal(r.chart_type, 'barchart');
    assert.deepEqual(r.chart_config, { limit: 3 });
    const back = await run('* | groupBy(status) | barchart(limit=3) | piechart()');
    assert.equal(back.chart_type, 'piechart');
    assert.deepEqual(back.chart_config, { limit: 10 });
  });
});

describe('singleval', () => {
  test('§3.10 example: avg(response_time) | singleval(label="Avg response")', async () => {
    const r = await run('* | avg(response_time) | singleval(label="Avg response")');
    assert.equal(r.chart_type, 'singleval');
    assert.deepEqual(r.chart_config, { label: 'Avg response' });
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['_avg']);
    // 722.5 over the 16 numeric response times ("slow" is left out).
    assert.deepEqual(r.results, [{ _avg: 45.15625 }]);
  });

  test('§3.2 example: groupBy(computer_name) | count() | singleval() counts the computers', async () => {
    const r = await run('* | groupBy(computer_name) | count() | singleval()');
    assert.equal(r.chart_type, 'singleval');
    assert.deepEqual(r.chart_config, {});
    assert.deepEqual(r.field_order, ['_count']);
    assert.deepEqual(r.results, [{ _count: 4 }]);
    assert.deepEqual((await run('user=alice | count() | sum(bytes) | singleval()')).results, [{ _count: 8, _sum: 6600 }]);
  });

  test('its two errors', async () => {
    await fails('* | singleval()', 'singleval() requires an aggregation function (e.g. count(), avg(), sum())');
    await fails('user=alice | singleval(label="x")', 'singleval() requires an aggregation function (e.g. count(), avg(), sum())');
    await fails('* | groupBy(user) | singleval()', 'singleval() cannot be used with groupBy() - it displays a single value only');
    await fails('* | groupBy(user) | sort(_count) | singleval(label=x)', 'singleval() cannot be used with groupBy() - it displays a single value only');
  });
});

describe('histogram', () => {
  test('equal-width bins from min to max; a value on an edge opens the next bin; the max is in the last', async () => {
    // response_time: 16 numbers from 0 to 100 → width 25.
    const r = await run('* | histogram(response_time, buckets=4)');
    assert.equal(r.chart_type, 'histogram');
    assert.deepEqual(r.chart_config, { field: 'response_time', buckets: 4 });
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['_bin_lower', '_bin_upper', '_bin_count']);
    assert.deepEqual(r.results, [
      { _bin_lower: 0, _bin_upper: 25, _bin_count: 5 }, // 0 5 10 12 20
      { _bin_lower: 25, _bin_upper: 50, _bin_count: 4 }, // 25 30 33 49.5
      { _bin_lower: 50, _bin_upper: 75, _bin_count: 3 }, // 50 60 74
      { _bin_lower: 75, _bin_upper: 100, _bin_count: 4 }, // 75 80 99 100
    ]);
  });

  test('empty bins are rows too; edges are rounded to 4 decimals', async () => {
    // bytes: 2.5 … 5000 over 3 bins of 1665.8333… ("-" is not a number).
    const r = await run('* | histogram(bytes, buckets=3)');
    assert.deepEqual(r.results, [
      { _bin_lower: 2.5, _bin_upper: 1668.3333, _bin_count: 15 },
      { _bin_lower: 1668.3333, _bin_upper: 3334.1667, _bin_count: 0 },
      { _bin_lower: 3334.1667, _bin_upper: 5000, _bin_count: 1 },
    ]);
  });

  test('§3.10 example: histogram(bytes, buckets=30); 20 bins by default, at most 200', async () => {
    const r = await run('* | histogram(bytes, buckets=30)');
    assert.deepEqual(r.chart_config, { field: 'bytes', buckets: 30 });
    assert.equal(r.count, 30);
    assert.equal(r.results.reduce((n, b) => n + b._bin_count, 0), 16);
    assert.equal(r.results[29]._bin_upper, 5000);
    const d = await run('histogram(response_time)');
    assert.deepEqual(d.chart_config, { field: 'response_time', buckets: 20 });
    assert.equal(d.count, 20);
    assert.deepEqual(d.results[1], { _bin_lower: 5, _bin_upper: 10, _bin_count: 1 });
    const lower = col(d, '_bin_lower');
    assert.deepEqual([...lower].sort((x, y) => x - y), lower);
    const big = await run('* | histogram(response_time, buckets=500)');
    assert.deepEqual(big.chart_config, { field: 'response_time', buckets: 200 });
    assert.equal(big.count, 200);
    assert.deepEqual(big.results[199], { _bin_lower: 99.5, _bin_upper: 100, _bin_count: 1 });
  });

  test('one bin when all values are equal, none without numbers; filters apply first', async () => {
    assert.deepEqual((await run('status=200 | histogram(status, buckets=5)')).results, [{ _bin_lower: 200, _bin_upper: 200, _bin_count: 12 }]);
    const none = await run('* | histogram(user)');
    assert.equal(none.count, 0);
    assert.deepEqual(none.field_order, ['_bin_lower', '_bin_upper', '_bin_count']);
    assert.deepEqual((await run('user=erin | histogram(bytes, buckets=2)')).results, [
      { _bin_lower: 100, _bin_upper: 200, _bin_count: 1 },
      { _bin_lower: 200, _bin_upper: 300, _bin_count: 2 },
    ]);
  });

  test('over aggregated rows: the distribution of group counts', async () => {
    // _count per user: 8 2 1 2 3 1 → bins [1, 4.5) and [4.5, 8].
    const r = await run('* | groupBy(user) | histogram(_count, buckets=2)');
    assert.deepEqual(r.results, [
      { _bin_lower: 1, _bin_upper: 4.5, _bin_count: 5 },
      { _bin_lower: 4.5, _bin_upper: 8, _bin_count: 1 },
    ]);
  });

  test('conditions on the bin columns filter the bins', async () => {
    const r = await run('* | histogram(response_time, buckets=4) | _bin_lower >= 50');
    assert.deepEqual(col(r, '_bin_count'), [3, 4]);
    assert.deepEqual(col(await run('* | histogram(bytes, buckets=3) | _bin_count = 0'), '_bin_lower'), [1668.3333]);
  });

  test('a field is required', async () => {
    await fails('* | histogram()', 'histogram() requires a field, e.g. histogram(bytes)');
  });
});

describe('heatmap', () => {
  test('§3.10 example: heatmap(x=user, y=action, value=sum(bytes), limit=20)', async () => {
    const r = await run('* | heatmap(x=user, y=action, value=sum(bytes), limit=20)');
    assert.equal(r.chart_type, 'heatmap');
    assert.deepEqual(r.chart_config, { xField: 'user', yField: 'action', limit: 20 });
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['_heatmap_x', '_heatmap_y', '_heatmap_value']);
    // By value, largest first (ties by x, then y). dave/get holds only "-": no number to sum, so
    // its value is null (as sum() gives) and sorts last.
    assert.deepEqual(
      r.results.map((c) => [c._heatmap_x, c._heatmap_y, c._heatmap_value]),
      [
        ['alice', 'logout', 5000],
        ['alice', 'get', 1300],
        ['dave', 'login', 400],
        ['carol', 'get', 300],
        ['erin', 'get', 300],
        ['erin', 'put', 300],
        ['alice', 'put', 200],
        ['bob', 'get', 200],
        ['alice', 'login', 100],
        ['bob', 'login', 100],
        ['frank', 'get', 2.5],
        ['dave', 'get', null],
      ],
    );
  });

  test('value=count() by default; avg, max, min; at most limit² cells', async () => {
    const c = await run('heatmap(x=user, y=action, limit=2)');
    assert.deepEqual(c.chart_config, { xField: 'user', yField: 'action', limit: 2 });
    assert.equal(c.count, 4);
    assert.deepEqual(c.results.slice(0, 2), [
      { _heatmap_x: 'alice', _heatmap_y: 'get', _heatmap_value: 5 },
      { _heatmap_x: 'erin', _heatmap_y: 'get', _heatmap_value: 2 },
    ]);
    assert.deepEqual((await run('heatmap(x=user, y=action)')).chart_config, { xField: 'user', yField: 'action', limit: 50 });
    const avg = await run('user=alice | heatmap(x=user, y=action, value=avg(bytes), limit=1)');
    assert.deepEqual(avg.results, [{ _heatmap_x: 'alice', _heatmap_y: 'logout', _heatmap_value: 5000 }]);
    const max = await run('heatmap(x=computer_name, y=status, value=max(response_time), limit=1)');
    assert.deepEqual(max.results, [{ _heatmap_x: 'ws3', _heatmap_y: '200', _heatmap_value: 100 }]);
    const min = await run('action=get | heatmap(x=user, y=action, value=min(bytes), limit=1)');
    assert.deepEqual(min.results, [{ _heatmap_x: 'carol', _heatmap_y: 'get', _heatmap_value: 300 }]);
    assert.equal((await run('heatmap(x=user, y=action, limit=900)')).chart_config.limit, 200);
  });

  test('conditions on the cell columns filter the cells', async () => {
    const r = await run('* | heatmap(x=user, y=action) | _heatmap_x = erin');
    assert.deepEqual(r.results, [
      { _heatmap_x: 'erin', _heatmap_y: 'get', _heatmap_value: 2 },
      { _heatmap_x: 'erin', _heatmap_y: 'put', _heatmap_value: 1 },
    ]);
  });

  test('heatmap has its own cap: max_query_rows does not cut it', async () => {
    await withRowCap(3, async () => {
      assert.equal((await run('* | groupBy(user)')).count, 3);
      const r = await run('heatmap(x=user, y=action)');
      assert.equal(r.count, 12);
      assert.equal(r.limit_hit, undefined);
    });
  });

  test('on aggregated rows it reads the x/y columns and _count, largest first', async () => {
    const r = await run('* | groupBy(user, action) | heatmap(x=user, y=action, limit=1)');
    assert.equal(r.chart_type, 'heatmap');
    assert.deepEqual(r.chart_config, { xField: 'user', yField: 'action', limit: 1 });
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['user', 'action', '_count']);
    assert.deepEqual(r.results, [{ user: 'alice', action: 'get', _count: 5 }]);
    assert.equal((await run('* | groupBy(user, action) | heatmap(x=user, y=action)')).count, 12);
  });

  test('errors: x and y are required; value takes count/sum/avg/max/min', async () => {
    await fails('* | heatmap(x=user)', 'heatmap() requires x= and y= parameters');
    await fails('* | heatmap(y=user)', 'heatmap() requires x= and y= parameters');
    await fails(
      '* | heatmap(x=user, y=action, value=median(bytes))',
      'heatmap(): unsupported value "median" (supported: count(), sum(f), avg(f), max(f), min(f))',
    );
  });
});

describe('graph, mesh and graphWorld', () => {
  test('§3.10 example: a process tree as a graph', async () => {
    const r = await run(
      'event_id=1 | table(process_guid, parent_process_guid, image) | graph(child=process_guid, parent=parent_process_guid, labels=image)',
    );
    assert.equal(r.chart_type, 'graph');
    assert.deepEqual(r.chart_config, { childField: 'process_guid', parentField: 'parent_process_guid', limit: 100, labels: ['image'] });
    assert.equal(r.is_aggregated, false);
    assert.deepEqual(r.field_order, ['process_guid', 'parent_process_guid', 'image', 'timestamp', 'fractal_id']);
    assert.deepEqual(
      r.results.map((x) => [x.process_guid, x.parent_process_guid, x.image]),
      [
        ['G1', 'G0', 'explorer.exe'],
        ['G2', 'G1', 'cmd.exe'],
        ['G3', 'G2', 'powershell.exe'],
      ],
    );
  });

  test('graph: labels lists and limit cap; child and parent are required', async () => {
    const r = await run('event_id=1 | graph(child=process_guid, parent=parent_process_guid, labels=[image, user], limit=9000)');
    assert.deepEqual(r.chart_config, { childField: 'process_guid', parentField: 'parent_process_guid', limit: 500, labels: ['image', 'user'] });
    const bare = await run('event_id=1 | graph(child=process_guid, parent=parent_process_guid, labels=image,user)');
    assert.deepEqual(bare.chart_config.labels, ['image', 'user']);
    assert.deepEqual((await run('event_id=1 | graph(child=process_guid, parent=parent_process_guid)')).chart_config, {
      childField: 'process_guid',
      parentField: 'parent_process_guid',
      limit: 100,
    });
    await fails('* | graph(child=process_guid)', 'graph() requires child= and parent= parameters');
    await fails('* | graph(parent=parent_process_guid)', 'graph() requires child= and parent= parameters');
  });

  test('§3.10 example: groupBy(src_ip, dst_ip) | mesh(src=src_ip, dst=dst_ip, directed=true)', async () => {
    const r = await run('* | groupBy(src_ip, dst_ip) | mesh(src=src_ip, dst=dst_ip, directed=true) | sort(src_ip) | sort(dst_ip)');
    assert.equal(r.chart_type, 'mesh');
    assert.deepEqual(r.chart_config, {
      srcField: 'src_ip',
      dstField: 'dst_ip',
      weightField: '_count',
      sizeField: '_count',
      directed: true,
      limit: 100,
    });
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['src_ip', 'dst_ip', '_count']);
    assert.deepEqual(
      r.results.map((x) => `${x.src_ip}>${x.dst_ip}:${x._count}`),
      [
        '10.0.0.1>10.0.0.8:3',
        '10.0.0.1>10.0.0.9:3',
        '10.0.0.2>10.0.0.8:1',
        '10.0.0.2>10.0.0.9:3',
        '10.0.0.3>10.0.0.8:2',
        '10.0.0.3>10.0.0.9:1',
        '10.0.0.4>10.0.0.9:3',
        '10.0.0.5>10.0.0.9:1',
      ],
    );
  });

  test('mesh: options, label= as labels=, limit cap, the renderer applies the limit; src and dst are required', async () => {
    const r = await run(
      '* | groupBy(src_ip, dst_ip, function=sum(bytes)) | mesh(src=src_ip, dst=dst_ip, weight=_sum, size=_sum, color=src_ip, label=dst_ip, directed=yes, limit=2)',
    );
    assert.deepEqual(r.chart_config, {
      srcField: 'src_ip',
      dstField: 'dst_ip',
      weightField: '_sum',
      sizeField: '_sum',
      directed: true,
      limit: 2,
      color: 'src_ip',
      labels: ['dst_ip'],
    });
    assert.equal(r.count, 8);
    const d = await run('* | groupBy(src_ip, dst_ip) | mesh(src=src_ip, dst=dst_ip, directed=false, limit=10000)');
    assert.equal(d.chart_config.directed, false);
    assert.equal(d.chart_config.limit, 500);
    await fails('* | groupBy(src_ip, dst_ip) | mesh(src=src_ip)', 'mesh() requires src= and dst= parameters');
    await fails('* | groupBy(src_ip, dst_ip) | mesh(dst=dst_ip)', 'mesh() requires src= and dst= parameters');
  });

  test('graphWorld and its aliases set chart_type worldmap', async () => {
    const r = await run('latitude=* | table(latitude, longitude, country) | graphWorld(label=country)');
    assert.equal(r.chart_type, 'worldmap');
    assert.deepEqual(r.chart_config, { latField: 'latitude', lonField: 'longitude', limit: 5000, labelField: 'country' });
    assert.equal(r.is_aggregated, false);
    assert.deepEqual(
      r.results.map((x) => [x.latitude, x.longitude, x.country]),
      [
        ['52.52', '13.405', 'DE'],
        ['48.8566', '2.3522', 'FR'],
      ],
    );
    const w = await run('* | worldmap(lat=lat_deg, lon=lon_deg, limit=99999)');
    assert.equal(w.chart_type, 'worldmap');
    assert.deepEqual(w.chart_config, { latField: 'lat_deg', lonField: 'lon_deg', limit: 50000 });
    assert.equal(w.count, 17, 'the map, not the query, applies limit');
    const g = await run('* | groupBy(country) | graphworld(limit=10)');
    assert.deepEqual(g.chart_config, { latField: 'latitude', lonField: 'longitude', limit: 10 });
    assert.equal(g.is_aggregated, true);
  });

  test('renderer-limited charts keep the ordinary row cap', async () => {
    await withRowCap(3, async () => {
      const r = await run('* | groupBy(user) | piechart(limit=10)');
      assert.equal(r.count, 3);
      assert.equal(r.limit_hit, 'search');
    });
  });
});

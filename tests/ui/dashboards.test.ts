// The dashboard page's logic without a browser (renderer/src/lib/dashboards/): how live events
// change the page's dashboard, which widgets run on opening, the pointer and keys turned into grid
// cells, the row height of a wall screen, what a widget draws (the service's own rule), and the
// search a click on a widget's value opens.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyEvent, dragCells, drawn, drillDown, dueWidgets, fitRowHeight, keyCells, refreshLabel, withCells, type DashboardDoc, type Widget, type WidgetResult } from '../../renderer/src/lib/dashboards/dashboard-model.ts';
import { displayChart } from '../../renderer/src/lib/dashboards/display.ts';
import { viewToParams } from '../../renderer/src/lib/search/view-state.ts';

const result = (over: Partial<WidgetResult> = {}): WidgetResult => ({
  success: true,
  results: [{ host: 'web1', _count: 3 }],
  count: 1,
  field_order: ['host', '_count'],
  is_aggregated: true,
  query_chart_type: '',
  query_chart_config: {},
  limit_hit: '',
  start: '2026-01-01T00:00:00.000Z',
  end: '2026-01-02T00:00:00.000Z',
  executed_at: '2026-01-02T00:00:00.000Z',
  chart_type: '',
  chart_config: {},
  ...over,
});

const widget = (id: string, over: Partial<Widget> = {}): Widget => ({
  id,
  dashboard_id: 'd',
  title: id,
  query_content: 'groupBy(host)',
  chart_type: 'auto',
  chart_config: {},
  time_range: null,
  start: null,
  end: null,
  pos_x: 0,
  pos_y: 0,
  width: 6,
  height: 4,
  version: 1,
  created_by: 'ana',
  updated_by: 'ana',
  created_at: '',
  updated_at: '',
  result: null,
  ...over,
});

const doc = (widgets: Widget[], over: Partial<DashboardDoc> = {}): DashboardDoc => ({
  id: 'd',
  name: 'D',
  description: '',
  fractal_id: 'f',
  prism_id: null,
  variables: [{ name: 'h', value: 'web1' }],
  time_range: '24h',
  start: null,
  end: null,
  refresh_interval_s: 30,
  shared_hide_queries: true,
  version: 3,
  created_by: 'ana',
  updated_by: 'ana',
  created_at: '',
  updated_at: '',
  scope: { type: 'fractal', id: 'f', name: 'ops' },
  can_edit: true,
  live_event_id: 'x-1',
  widgets,
  ...over,
});

const docOf = (r: ReturnType<typeof applyEvent>) => {
  assert.ok('doc' in r, `expected a document, got ${JSON.stringify(r)}`);
  return r.doc;
};

describe('live events on the dashboard page', () => {
  test('a widget added elsewhere appears with the widgets it pushed; its echo changes nothing', () => {
    const d = doc([widget('a')]);
    const added = docOf(applyEvent(d, 'widget_added', { widget: widget('b', { pos_y: 0 }), moved: [{ id: 'a', pos_x: 0, pos_y: 4, width: 6, height: 4 }], version: 4 }));
    assert.deepEqual(added.widgets.map((w) => [w.id, w.pos_y]), [['b', 0], ['a', 4]], 'top to bottom');
    assert.equal(added.version, 4);
    const again = docOf(applyEvent(added, 'widget_added', { widget: widget('b'), moved: [], version: 4 }));
    assert.equal(again.widgets.length, 2);
  });

  test('an edit replaces what a widget shows but keeps its cells; a changed query marks its results stale', () => {
    const d = doc([widget('a', { pos_x: 6, result: result() })]);
    const renamed = docOf(applyEvent(d, 'widget_updated', { widget: widget('a', { title: 'Hosts', version: 2, pos_x: 0 }) }));
    assert.equal(renamed.widgets[0]!.title, 'Hosts');
    assert.equal(renamed.widgets[0]!.pos_x, 6, 'cells come from layout events, not edits');
    assert.equal(renamed.widgets[0]!.result!.stale, undefined);
    const requeried = docOf(applyEvent(renamed, 'widget_updated', { widget: widget('a', { title: 'Hosts', query_content: 'count()', version: 3 }) }));
    assert.equal(requeried.widgets[0]!.result!.stale, true);
    const old = docOf(applyEvent(requeried, 'widget_updated', { widget: widget('a', { title: 'older', version: 2 }) }));
    assert.equal(old.widgets[0]!.title, 'Hosts', 'an older version is ignored');
    assert.deepEqual(applyEvent(d, 'widget_updated', { widget: widget('zz', { version: 2 }) }), { reload: true });
  });

  test('layout changes move the named widgets; one the page does not know means reading it again', () => {
    const d = doc([widget('a'), widget('b', { pos_x: 6 })]);
    const moved = docOf(applyEvent(d, 'layout_changed', { moved: [{ id: 'a', pos_x: 6, pos_y: 0, width: 6, height: 2 }, { id: 'b', pos_x: 6, pos_y: 2, width: 6, height: 4 }] }));
    assert.deepEqual(moved.widgets.map((w) => [w.id, w.pos_x, w.pos_y, w.height]), [['a', 6, 0, 2], ['b', 6, 2, 4]]);
    assert.deepEqual(applyEvent(d, 'layout_changed', { moved: [{ id: 'c', pos_x: 0, pos_y: 0, width: 1, height: 1 }] }), { reload: true });
  });

  test('results arrive live; older ones than shown are ignored; omitted ones are read with the dashboard', () => {
    const d = doc([widget('a', { result: result({ executed_at: '2026-01-02T00:00:10.000Z' }) })]);
    const newer = docOf(applyEvent(d, 'widget_results', { widget_id: 'a', result: result({ executed_at: '2026-01-02T00:00:20.000Z', count: 7 }) }));
    assert.equal(newer.widgets[0]!.result!.count, 7);
    const older = docOf(applyEvent(newer, 'widget_results', { widget_id: 'a', result: result({ executed_at: '2026-01-02T00:00:15.000Z', count: 1 }) }));
    assert.equal(older.widgets[0]!.result!.count, 7);
    assert.deepEqual(applyEvent(d, 'widget_results', { widget_id: 'a', results_omitted: true }), { reload: true });
  });

  test('variables, refresh interval and fields by version; deletion', () => {
    const d = doc([]);
    assert.deepEqual(docOf(applyEvent(d, 'variables_updated', { variables: [{ name: 'h', value: 'db1' }], version: 4 })).variables, [{ name: 'h', value: 'db1' }]);
    assert.equal(docOf(applyEvent(d, 'variables_updated', { variables: [], version: 3 })).variables.length, 1, 'not newer');
    assert.equal(docOf(applyEvent(d, 'refresh_interval_updated', { refresh_interval_s: 5, version: 4 })).refresh_interval_s, 5);
    assert.equal(docOf(applyEvent(d, 'dashboard_updated', { id: 'other', name: 'Renamed', version: 4 })).name, 'Renamed');
    assert.equal(docOf(applyEvent(d, 'dashboard_updated', { id: 'other', name: 'Renamed', version: 4 })).id, 'd');
    assert.deepEqual(applyEvent(d, 'dashboard_deleted', { id: 'd', by: 'ben' }), { deleted: true, by: 'ben' });
    assert.deepEqual(withCells([widget('a')], []).map((w) => w.id), ['a']);
  });
});

describe('running on opening', () => {
  test('widgets without results, with stale ones, or older than the interval run', () => {
    const now = Date.parse('2026-01-02T00:01:00.000Z');
    const d = doc([
      widget('never'),
      widget('fresh', { result: result({ executed_at: '2026-01-02T00:00:50.000Z' }) }),
      widget('old', { result: result({ executed_at: '2026-01-02T00:00:00.000Z' }) }),
      widget('stale', { result: result({ executed_at: '2026-01-02T00:00:59.000Z', stale: true }) }),
    ]);
    assert.deepEqual(dueWidgets(d, 30, now), ['never', 'old', 'stale']);
  });
});

describe('the grid on screen', () => {
  const c = { pos_x: 2, pos_y: 3, width: 4, height: 2 };
  test('a drag moves by whole cells and stays on the grid; a resize from the corner sizes', () => {
    assert.deepEqual(dragCells(c, 210, 150, 100, 72, 'move'), { pos_x: 4, pos_y: 5, width: 4, height: 2 });
    assert.deepEqual(dragCells(c, 2000, -1000, 100, 72, 'move'), { pos_x: 8, pos_y: 0, width: 4, height: 2 });
    assert.deepEqual(dragCells(c, 140, 80, 100, 72, 'resize'), { pos_x: 2, pos_y: 3, width: 5, height: 3 });
    assert.deepEqual(dragCells(c, 5000, -500, 100, 72, 'resize'), { pos_x: 2, pos_y: 3, width: 10, height: 1 });
  });
  test('arrow keys move a cell at a time, Shift+arrows resize; nothing past the edges', () => {
    assert.deepEqual(keyCells(c, 'ArrowRight', false), { ...c, pos_x: 3 });
    assert.deepEqual(keyCells(c, 'ArrowDown', true), { ...c, height: 3 });
    assert.deepEqual(keyCells(c, 'ArrowLeft', true), { ...c, width: 3 });
    assert.equal(keyCells({ ...c, pos_y: 0 }, 'ArrowUp', false), null);
    assert.equal(keyCells({ ...c, pos_x: 8 }, 'ArrowRight', true), null, 'already at the right edge');
    assert.equal(keyCells(c, 'Enter', false), null);
  });
  test('a wall screen fits every row; rows never shrink below readable', () => {
    assert.equal(fitRowHeight(9, 2160 - 16), Math.floor((2144 - 8 * 8) / 9));
    assert.equal(fitRowHeight(40, 720), 32);
    assert.equal(refreshLabel(0), 'Off');
    assert.equal(refreshLabel(30), '30 s');
    assert.equal(refreshLabel(300), '5 min');
  });
});

describe('what a widget draws', () => {
  test('auto follows the query, a chart type overrides it, table shows the rows; the page agrees with the service', () => {
    const run = { query_chart_type: 'timechart', query_chart_config: { span: '1h' } };
    assert.deepEqual(displayChart({ chart_type: 'auto', chart_config: {} }, run), { chart_type: 'timechart', chart_config: { span: '1h' } });
    assert.deepEqual(displayChart({ chart_type: 'table', chart_config: { limit: 3 } }, run), { chart_type: '', chart_config: {} });
    assert.deepEqual(displayChart({ chart_type: 'barchart', chart_config: { limit: 3 } }, run), { chart_type: 'barchart', chart_config: { limit: 3 } });
    assert.deepEqual(displayChart({ chart_type: 'timechart', chart_config: { yLabel: 'Hits' } }, run), { chart_type: 'timechart', chart_config: { span: '1h', yLabel: 'Hits' } });
    // Switching a widget's chart redraws its stored result without running it again.
    const r = drawn({ chart_type: 'piechart', chart_config: {} }, result({ query_chart_type: '', chart_type: '' }));
    assert.equal(r.chart_type, 'piechart');
  });

  test('a click on a value opens the search: the widget’s query narrowed to it, over its range, with the variables', () => {
    const d = doc([]);
    const v = drillDown(d, widget('a', { query_content: 'user=@h | groupBy(host)' }), 'host', 'web 1', false)!;
    assert.equal(viewToParams(v), 'q=user%3D%40h%20%7C%20groupBy%28host%29%20%7C%20host%3D%22web%201%22&t=24h&scope=fractal%3Af&v.h=web1');
    const own = drillDown(d, widget('a', { time_range: 'custom', start: '2026-01-01T00:00:00.000Z', end: '2026-01-02T00:00:00.000Z' }), 'status', '500', true)!;
    assert.equal(own.range.kind, 'absolute');
    assert.match(own.q, /status!=500$/);
    assert.equal(drillDown(d, widget('a'), 'bad field!', 'x', false), null);
  });
});

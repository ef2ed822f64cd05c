// ChartView in a real browser (Debian's Chromium via playwright-core) on real query results: a fresh
// appliance receives sample events through the real ingest endpoint, runs each chart query of the spec
// (POST /api/v1/query), and a standalone harness page (tests/e2e/fixtures/chart-harness, built with its own
// Vite config into a temporary folder) mounts ChartView with the response. For every chart_type: the drawn
// SVG/canvas with the expected number of slices/bars/cells/nodes/points, the legend, a tooltip on hover,
// keyboard focus and stepping, onFilter on click (Alt excludes), the Table switch. Screenshots of each
// chart go to test-artifacts/charts-*.png for a person to look at.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { ADMIN_PASSWORD, defaultIngest, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { artifacts, launchChromium, prepareBrowserTest } from '../support/browser.ts';
import { ingest, ok, type QueryResponse } from '../support/query.ts';
import { buildHarness, largeMesh, manyPlaces, openHarness } from './fixtures/chart-harness/harness.ts';
import { chartEvents, CITIES, EVENT_COUNT, USERS } from './fixtures/chart-harness/events.ts';
import { barOrder, categoryItems } from '../../renderer/src/lib/charts/category.ts';

let a: TestAppliance;
let admin: Client;
let fractalId: string;
let browser: Browser;
let page: Page;
let outDir: string;
const pageErrors: string[] = [];

before(async () => {
  prepareBrowserTest({ ui: false });
  outDir = await buildHarness();
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  let token: string;
  ({ fractalId, token } = defaultIngest(a));
  await ingest(a, token, fractalId, chartEvents());
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1040, height: 520 } });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  await openHarness(page, outDir);
});

after(async () => {
  await browser?.close();
  await a?.dispose();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

const run = (q: string): Promise<QueryResponse> => ok(admin, q, { fractal_id: fractalId });

interface RenderOpts {
  theme?: 'dark' | 'light';
  width?: number;
  height?: number;
  /** Wait for a drawn plot (anything with data-count); off for results that cannot be drawn. */
  drawn?: boolean;
}

/** Mounts ChartView with a response and waits for it to have drawn. */
async function show(r: Pick<QueryResponse, 'results' | 'field_order' | 'chart_type' | 'chart_config'>, opts: RenderOpts = {}): Promise<Locator> {
  await page.evaluate(([resp, o]) => (window as unknown as { renderChart: (r: unknown, o: unknown) => void }).renderChart(resp, o), [r, opts] as const);
  const view = page.locator(`.chart-view[data-chart-type="${r.chart_type}"]`);
  await view.waitFor();
  if (opts.drawn !== false) await view.locator('[data-count]').first().waitFor();
  await page.mouse.move(2, 2);
  return view;
}

const events = () => page.evaluate(() => (window as unknown as { chartEvents: Array<Record<string, unknown>> }).chartEvents.slice());
const tooltip = () => page.locator('.chart-view [role="tooltip"]');
const shot = (name: string) => page.locator('#chart').screenshot({ path: path.join(artifacts, `charts-${name}.png`) });
const count = async (l: Locator) => Number(await l.getAttribute('data-count'));
const distinct = (r: QueryResponse, ...cols: string[]) => new Set(r.results.map((x) => cols.map((c) => String(x[c])).join('\u0000'))).size;

async function assertTableSwitch(view: Locator) {
  await view.getByRole('button', { name: 'Table' }).click();
  assert.deepEqual((await events()).at(-1), { type: 'table' });
}

/** Focuses the chart's plot with Tab from its Table switch (keyboard reachable), not by script. */
async function tabToPlot(view: Locator): Promise<Locator> {
  await view.getByRole('button', { name: 'Table' }).focus();
  await page.keyboard.press('Tab');
  const focused = view.locator('[data-count]:focus');
  await focused.waitFor();
  return focused;
}

describe('ChartView on real query results', () => {
  test('timechart: one uPlot line per status, legend, tooltip, keyboard, filter on a series', async () => {
    const r = await run('* | groupBy(status) | timechart(span=1m)');
    assert.equal(r.chart_type, 'timechart');
    const view = await show(r);
    const plot = view.locator('.plot');
    assert.equal(await plot.locator('canvas').count(), 1, 'uPlot drew a canvas');
    assert.equal(Number(await plot.getAttribute('data-series')), distinct(r, 'status'));
    const legend = view.getByRole('group', { name: 'Series', exact: true });
    assert.equal(await legend.getByRole('button').count(), distinct(r, 'status'));
    assert.match(await legend.innerText(), /\b200\b[\s\S]*\b404\b/);
    // Hover in the middle of the plot: the bucket's time and values.
    const box = (await plot.locator('.u-over').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), /\d{4}-\d\d-\d\d \d\d:\d\d UTC[\s\S]*200/);
    await shot('timechart');
    // Keyboard: Tab reaches the plot, arrows step, Enter filters on the focused series (the largest: 200).
    await page.mouse.move(2, 2);
    await tabToPlot(view);
    await page.keyboard.press('ArrowRight');
    await tooltip().waitFor();
    await page.keyboard.press('Enter');
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'status', value: '200', negate: false });
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Delete');
    const ex = (await events()).at(-1)!;
    assert.equal(ex.negate, true);
    assert.notEqual(ex.value, '200');
    // Sized to its container: a narrower box redraws narrower, the header and legend keep their height.
    const wide = (await plot.locator('canvas').boundingBox())!.width;
    const headH = (await view.locator('.chart-head').boundingBox())!.height;
    await page.evaluate(() => (document.getElementById('chart')!.style.width = '760px'));
    await page.waitForFunction((w) => document.querySelector('.chart-view .plot canvas')!.getBoundingClientRect().width < w - 150, wide);
    assert.equal((await view.locator('.chart-head').boundingBox())!.height, headH);
    await page.evaluate(() => (document.getElementById('chart')!.style.width = '980px'));
    // Legend switches a series off and on.
    await legend.getByRole('button').first().click();
    assert.equal(await legend.getByRole('button').first().getAttribute('aria-pressed'), 'false');
    await legend.getByRole('button').first().click();
    await assertTableSwitch(view);
  });

  test('timechart percent(): a 0–100 % axis', async () => {
    const r = await run('timechart(span=5m, function=percent(failed))');
    assert.equal(r.chart_config.unit, 'percent');
    const view = await show(r, { theme: 'light' });
    assert.match(await view.locator('.chart-caption').innerText(), /% failed per 5 minutes/);
    const box = (await view.locator('.u-over').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), /\d%/);
    await shot('timechart-percent-light');
  });

  test('barchart: a bar per host, labels, tooltip, click filters, Alt+click excludes', async () => {
    const r = await run('groupBy(host) | barchart()');
    const view = await show(r);
    const plot = view.locator('.plot');
    const n = distinct(r, 'host');
    assert.equal(await count(plot), n);
    const legend = view.getByRole('group', { name: 'Legend' });
    assert.equal(await legend.getByRole('listitem').count(), n);
    const top = [...r.results].sort((x, y) => y._count - x._count)[0]!;
    assert.match(await legend.innerText(), new RegExp(`1\\s*${top.host}`), 'the legend ranks the groups');
    // Hover the first bar: its tooltip names a group of the result with its count.
    const over = (await plot.locator('.u-over').boundingBox())!;
    const x = over.x + over.width * (0.5 / n);
    await page.mouse.move(x, over.y + over.height - 4);
    await tooltip().waitFor();
    const firstHost = (await tooltip().locator('.tt-title').innerText()).trim();
    const first = r.results.find((row) => row.host === firstHost)!;
    assert.ok(first, `the first bar is a host of the result (${firstHost})`);
    assert.match(await tooltip().innerText(), new RegExp(`count\\s*${first._count}`));
    const expected = barOrder(categoryItems(r.results, 'host', '_count').items)[0]!;
    assert.equal(firstHost, expected.label, 'groups in no order are drawn largest first');
    await shot('barchart');
    await page.mouse.click(x, over.y + over.height - 4);
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'host', value: first.host, negate: false });
    await page.keyboard.down('Alt');
    await page.mouse.click(x, over.y + over.height - 4);
    await page.keyboard.up('Alt');
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'host', value: first.host, negate: true });
    // Keyboard stepping shows the tooltip of each bar; Enter filters on it.
    await page.mouse.move(2, 2);
    await tabToPlot(view);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    const second = (await tooltip().locator('.tt-title').innerText()).trim();
    assert.notEqual(second, firstHost);
    await shot('barchart-keyboard');
    await page.keyboard.press('Enter');
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'host', value: second, negate: false });
    // A sorted result keeps its order.
    const sorted = await run('groupBy(host) | sort(host) | barchart(limit=3)');
    const v2 = await show(sorted, { theme: 'light' });
    assert.equal(await count(v2.locator('.plot')), 3);
    assert.match(await v2.getByRole('group', { name: 'Legend' }).innerText(), new RegExp(`top 3 of ${n} groups`));
    await shot('barchart-limit-light');
    await assertTableSwitch(view);
  });

  test('piechart: the 10 largest users and "Other", tooltip, keyboard, click filters', async () => {
    const r = await run('groupBy(user) | piechart()');
    assert.equal(r.chart_config.limit, 10);
    const groups = distinct(r, 'user');
    assert.ok(groups > 10, `more users (${groups}) than the limit`);
    const view = await show(r);
    const svg = view.locator('svg.pie');
    assert.equal(await svg.locator('path.slice').count(), 11);
    assert.equal(await count(svg), 11);
    const legend = view.getByRole('group', { name: 'Slices', exact: true });
    assert.match(await legend.innerText(), new RegExp(`Other \\(${groups - 10} groups\\)`));
    assert.match(await view.locator('text.total').textContent() ?? '', new RegExp(String(EVENT_COUNT)));
    const biggest = [...r.results].sort((x, y) => y._count - x._count)[0]!;
    const slice = svg.locator(`path.slice[data-label="${biggest.user}"]`);
    await slice.hover();
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), new RegExp(`${biggest.user}[\\s\\S]*${biggest._count}[\\s\\S]*%`));
    await shot('piechart');
    // A theme switch recolours the chart from the light theme's variables.
    const fill = () => svg.locator('path.slice').first().getAttribute('fill');
    const darkFill = await fill();
    await page.evaluate(() => (document.documentElement.dataset.theme = 'light'));
    await page.waitForFunction((f) => document.querySelector('.chart-view path.slice')!.getAttribute('fill') !== f, darkFill);
    assert.equal((await fill())?.toLowerCase(), '#0b63ce');
    await page.evaluate(() => (document.documentElement.dataset.theme = 'dark'));
    await slice.click();
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'user', value: biggest.user, negate: false });
    // "Other" is not a value: clicking it filters nothing.
    const before = (await events()).length;
    await svg.locator('path.slice[data-label="Other"]').click();
    assert.equal((await events()).length, before);
    await page.mouse.move(2, 2);
    await tabToPlot(view);
    await page.keyboard.press('ArrowRight');
    assert.match(await tooltip().innerText(), new RegExp(biggest.user));
    await page.keyboard.press('ArrowLeft');
    assert.match(await tooltip().innerText(), /Other/);
    assert.ok(USERS.length === 13);
    await assertTableSwitch(view);
    // Narrow: the legend moves under the plot, the plot keeps its size.
    const narrow = await show(r, { theme: 'light', width: 520, height: 460 });
    const plotBox = (await narrow.locator('svg.pie').boundingBox())!;
    const legendBox = (await narrow.getByRole('group', { name: 'Slices', exact: true }).boundingBox())!;
    assert.ok(legendBox.y >= plotBox.y + plotBox.height - 1, 'legend below the plot');
    await shot('piechart-narrow-light');
  });

  test('histogram: 10 bins of bytes as touching bars, tooltip with the range', async () => {
    const r = await run('* | histogram(bytes, buckets=10)');
    const view = await show(r);
    const plot = view.locator('.plot');
    assert.equal(await count(plot), 10);
    assert.match(await view.getByRole('group', { name: 'Legend' }).innerText(), new RegExp(`values\\s*${EVENT_COUNT}[\\s\\S]*bins\\s*10`));
    const over = (await plot.locator('.u-over').boundingBox())!;
    await page.mouse.move(over.x + over.width * 0.05, over.y + over.height - 3);
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), new RegExp(`bytes ${r.results[0]!._bin_lower} – [\\d,.]+[\\s\\S]*count\\s*${r.results[0]!._bin_count}`));
    await shot('histogram');
    const before = (await events()).length;
    await page.mouse.click(over.x + over.width * 0.05, over.y + over.height - 3);
    assert.equal((await events()).length, before, 'a bin is a range: no field=value filter');
    await tabToPlot(view);
    await page.keyboard.press('End');
    assert.match(await tooltip().innerText(), new RegExp(`– ${Number(r.results[9]!._bin_upper).toLocaleString('en-US')}`));
  });

  test('heatmap: host × status cells on a canvas, colour legend, tooltip, click filters by column, Shift by row', async () => {
    const r = await run('heatmap(x=host, y=status)');
    assert.equal(r.chart_type, 'heatmap');
    const view = await show(r);
    const canvas = view.locator('.heat-wrap');
    assert.equal(await count(canvas), r.results.length);
    assert.equal(Number(await canvas.getAttribute('data-columns')), distinct(r, '_heatmap_x'));
    assert.equal(Number(await canvas.getAttribute('data-rows')), distinct(r, '_heatmap_y'));
    const legend = view.getByRole('group', { name: 'Colour scale' });
    assert.match(await legend.innerText(), /value[\s\S]*no events/);
    // Keyboard: the first cell is the busiest host at the lowest status.
    await tabToPlot(view);
    await page.keyboard.press('ArrowRight');
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), /host[\s\S]*status\s*200[\s\S]*value/);
    await page.keyboard.press('Enter');
    const e1 = (await events()).at(-1)!;
    assert.equal(e1.field, 'host');
    await page.keyboard.press('Shift+Enter');
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'status', value: '200', negate: false });
    // Mouse: hover a cell in the first row, click it.
    const b = (await canvas.boundingBox())!;
    await page.mouse.move(b.x + b.width * 0.45, b.y + 30);
    await tooltip().waitFor();
    await shot('heatmap');
    await page.mouse.click(b.x + b.width * 0.45, b.y + 30);
    assert.equal((await events()).at(-1)!.field, 'host');
    // The aggregated shape: groupBy(host, status) | heatmap(…) reads the x/y columns and _count.
    const agg = await run('groupBy(host, status) | heatmap(x=host, y=status)');
    const v2 = await show(agg, { theme: 'light' });
    assert.equal(await count(v2.locator('.heat-wrap')), agg.results.length);
    assert.match(await v2.getByRole('group', { name: 'Colour scale' }).innerText(), /count/);
    await shot('heatmap-light');
  });

  test('singleval: the event count, big, with its label', async () => {
    const r = await run('count() | singleval(label="Events")');
    const view = await show(r);
    const single = view.locator('.single');
    assert.equal(await single.locator('.label').innerText(), 'EVENTS');
    assert.equal(await single.locator('.value').innerText(), String(EVENT_COUNT));
    await single.hover();
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), new RegExp(`_count\\s*${EVENT_COUNT}`));
    await shot('singleval');
    await page.mouse.move(2, 2);
    await tabToPlot(view);
    await tooltip().waitFor();
    // §4: the first of _count, _sum, _avg, … — here _avg beats a label-like first column.
    const avg = await run('avg(bytes) | singleval(label="Average bytes")');
    const v2 = await show(avg, { theme: 'light', width: 420, height: 260 });
    assert.equal(await v2.locator('.single .value').innerText(), Number(avg.results[0]!._avg).toLocaleString('en-US', { maximumFractionDigits: 1 }));
    await shot('singleval-light');
  });

  test('mesh: a node per address, edge widths by _count, tooltip, click filters on the node field', async () => {
    const r = await run('groupBy(src, dst) | mesh(src=src, dst=dst)');
    assert.equal(r.chart_type, 'mesh');
    const view = await show(r);
    const svg = view.locator('svg.graph');
    const nodes = new Set(r.results.flatMap((x) => [x.src, x.dst])).size;
    assert.equal(await svg.locator('g.node').count(), nodes);
    assert.equal(Number(await svg.getAttribute('data-edges')), r.results.length);
    assert.equal(await svg.locator('g.edge path[d*="Z"]').count(), 0, 'undirected: no arrowheads');
    assert.match(await view.getByRole('group', { name: 'Graph legend' }).innerText(), /source only[\s\S]*destination only[\s\S]*Node size: _count/);
    await shot('mesh');
    const node = svg.locator('g.node[data-id="185.220.101.4"]');
    await node.hover();
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), /185\.220\.101\.4[\s\S]*_count \(sum\)/);
    await shot('mesh-hover');
    await node.click();
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'dst', value: '185.220.101.4', negate: false });
    await page.mouse.move(2, 2);
    await tabToPlot(view);
    await page.keyboard.press('ArrowRight');
    await tooltip().waitFor();
    await page.keyboard.press('Enter');
    assert.equal((await events()).at(-1)!.type, 'filter');
    // directed=true draws arrowheads; limit keeps the heaviest edges.
    const d = await run('groupBy(src, dst) | mesh(src=src, dst=dst, directed=true, limit=10)');
    const v2 = await show(d, { theme: 'light' });
    assert.equal(Number(await v2.locator('svg.graph').getAttribute('data-edges')), 10);
    assert.ok((await v2.locator('svg.graph g.edge path[d*="Z"]').count()) >= 8, 'arrowheads on directed edges');
    assert.match(await v2.getByRole('group', { name: 'Graph legend' }).innerText(), new RegExp(`10 heaviest of ${d.results.length} links \\(limit 10\\)`));
    await shot('mesh-directed-light');
  });

  test('graph: a process tree, parent → child arrows, labels from image', async () => {
    const r = await run(
      'event_id=1 | table(process_guid, parent_process_guid, image) | graph(child=process_guid, parent=parent_process_guid, labels=image)',
    );
    assert.equal(r.chart_type, 'graph');
    const view = await show(r);
    const svg = view.locator('svg.graph');
    const ids = new Set(r.results.flatMap((x) => [x.process_guid, x.parent_process_guid]));
    assert.equal(await svg.locator('g.node').count(), ids.size);
    assert.equal(await svg.locator('g.edge path[d*="Z"]').count(), r.results.length, 'an arrow per parent → child');
    assert.match(await svg.innerHTML(), /powershell\.exe/);
    await shot('graph');
    const node = svg.locator('g.node[data-id="P3"]');
    await node.hover();
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), /powershell\.exe[\s\S]*process_guid\s*P3[\s\S]*in\s*1[\s\S]*out\s*2/);
    await node.click();
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'process_guid', value: 'P3', negate: false });
    await svg.locator('g.node[data-id="P0"]').click();
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'parent_process_guid', value: 'P0', negate: false }, 'a root is only a parent');
  });

  test('worldmap: a point per city on the offline world, sized by _count, click filters on the label', async () => {
    const r = await run('city=* | groupBy(lat, lon, city) | worldmap(lat=lat, lon=lon, label=city)');
    assert.equal(r.chart_type, 'worldmap');
    const view = await show(r);
    const svg = view.locator('svg.map');
    assert.equal(await svg.locator('circle.pt').count(), CITIES.length);
    assert.equal(await svg.locator('path.land').count(), 1);
    assert.match(await view.getByRole('group', { name: 'Map legend' }).innerText(), /city[\s\S]*Point size: _count per place/);
    const berlin = svg.locator('circle.pt[data-label="Berlin"]');
    const bb = (await berlin.boundingBox())!;
    const mb = (await svg.locator('rect.sea').boundingBox())!;
    // Berlin sits at 13.4° E, 52.5° N of the equirectangular frame.
    assert.ok(Math.abs(bb.x + bb.width / 2 - (mb.x + ((13.405 + 180) / 360) * mb.width)) < 2);
    assert.ok(Math.abs(bb.y + bb.height / 2 - (mb.y + ((90 - 52.52) / 180) * mb.height)) < 2);
    await berlin.hover();
    await tooltip().waitFor();
    assert.match(await tooltip().innerText(), /Berlin[\s\S]*52\.52° N, 13\.4\d?° E[\s\S]*_count/);
    await shot('worldmap');
    await berlin.click();
    assert.deepEqual((await events()).at(-1), { type: 'filter', field: 'city', value: 'Berlin', negate: false });
    await page.mouse.move(2, 2);
    await tabToPlot(view);
    await page.keyboard.press('ArrowRight');
    assert.match(await tooltip().innerText(), /San Francisco/, 'west to east');
    const light = await show(r, { theme: 'light' });
    await light.locator('circle.pt').first().waitFor();
    await shot('worldmap-light');
  });

  test('pgraph and ATT&CK shapes (§3.12 rows; the service has no pgr()/mitre() yet)', async () => {
    const pgr = {
      chart_type: 'pgraph',
      chart_config: { limit: 3000, focus: 'G1' },
      field_order: ['parent', 'child', 'label', 'event_type', 'anomaly_score', 'log_id', 'timestamp', 'fractal_id', 'command_line', 'proc_user', 'host', 'parent_label'],
      results: [
        ['G0', 'G1', 'winword.exe', 'spawn', 0.1, 'explorer.exe'],
        ['G1', 'G2', 'cmd.exe', 'spawn', 0.72, 'winword.exe'],
        ['G2', 'G3', 'powershell.exe', 'spawn', 0.91, 'cmd.exe'],
        ['G3', 'evil.example', 'evil.example', 'dns_query', 0.97, 'powershell.exe'],
        ['G3', '185.220.101.4:443', '185.220.101.4:443', 'net_connect', 0.88, 'powershell.exe'],
        ['G3', 'C:\\Users\\p\\AppData\\x.dll', 'x.dll', 'file_write', 0.8, 'powershell.exe'],
        ['G1', 'G4', 'splwow64.exe', 'spawn', 0.05, 'winword.exe'],
      ].map(([parent, child, label, event_type, anomaly_score, parent_label]) => ({ parent, child, label, event_type, anomaly_score, parent_label })),
    } as unknown as QueryResponse;
    const view = await show(pgr);
    const svg = view.locator('svg.graph');
    assert.equal(await svg.locator('g.node').count(), 8);
    assert.match(await view.getByRole('group', { name: 'Graph legend' }).innerText(), /anomaly score[\s\S]*event type[\s\S]*dns_query/i);
    await shot('pgraph');
    await svg.locator('g.node[data-id="G3"]').hover();
    assert.match(await tooltip().innerText(), /powershell\.exe[\s\S]*anomaly score\s*0\.91/);
    const mitre = {
      chart_type: 'mitre',
      chart_config: { tagField: 'rule_tags', byField: 'host', limit: 5000 },
      field_order: ['attack_tag', 'host', '_count'],
      results: [
        ['attack.t1059.001', 'web1', 14],
        ['attack.t1059.001', 'db1', 3],
        ['attack.t1105', 'web1', 6],
        ['attack.t1003', 'db1', 2],
        ['attack.t1021.002', 'web2', 5],
        ['attack.t1105', 'web2', 1],
      ].map(([attack_tag, host, _count]) => ({ attack_tag, host, _count })),
    } as unknown as QueryResponse;
    const m = await show(mitre);
    assert.equal(await count(m.locator('.heat-wrap')), 6);
    await shot('mitre');
  });

  // How fast they draw is measured by npm run bench:charts, not here: this machine is shared.
  test('large results: a 500-link mesh and 5,000 map points draw and stay usable', async () => {
    const view = await show(largeMesh() as unknown as QueryResponse);
    assert.equal(Number(await view.locator('svg.graph').getAttribute('data-edges')), 500);
    await shot('mesh-large');
    const places = manyPlaces();
    const map = await show(places as unknown as QueryResponse);
    assert.equal(await count(map.locator('svg.map')), new Set(places.results.map((p) => `${p.lat},${p.lon}`)).size);
    await tabToPlot(map);
    await page.keyboard.press('ArrowRight');
    await tooltip().waitFor();
  });

  test('no chart, an unknown chart and an empty result say so in words and offer the table', async () => {
    const view = await show({ chart_type: 'sankey', chart_config: {}, field_order: ['a'], results: [{ a: 1 }] } as unknown as QueryResponse, { drawn: false });
    assert.equal(await view.locator('[data-count]').count(), 0, 'nothing is drawn');
    assert.match(await view.innerText(), /no drawing for the chart type “sankey”/);
    await view.getByRole('button', { name: 'Show the table' }).click();
    assert.deepEqual((await events()).at(-1), { type: 'table' });
    const empty = await show({ chart_type: 'barchart', chart_config: { limit: 10 }, field_order: ['host', '_count'], results: [] } as unknown as QueryResponse, {
      drawn: false,
    });
    assert.match(await empty.innerText(), /No rows to chart/);
  });

  test('no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});

// Dashboards in a real browser (Debian's Chromium via playwright-core) against a real appliance: two
// browser contexts, the administrator (A) and Ben, an analyst (B). A builds a dashboard from the
// page (the widget editor with the workspace's query editor and chart picker), drags one widget
// onto another, resizes one, moves one with the keyboard; B sees every change live and where the
// service stored it; every chart type of the picker draws through the workspace's charts; a shared
// link made in the Share dialog opens in a context without cookies and shows the cached charts with
// no navigation and no query text; kiosk at a wall screen's size; export and import; both themes.
// Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN_PASSWORD, Client, defaultIngest, makeUser, passwordOf, signIn, type TestAppliance } from '../support/appliance.ts';
import { expectOk, grant } from '../support/api.ts';
import { collectPageErrors, screenshot, signInWithForm, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingest, sampleEvents } from '../support/query.ts';
import { waitFor } from '../support/wait.ts';

let a: TestAppliance;
let browser: Browser;
let admin: Client;
let fractalId: string;
let ctxA: BrowserContext;
let ctxB: BrowserContext;
let pageA: Page;
let pageB: Page;
let dashboardId = '';
const errors: string[] = [];

async function openAs(ctx: BrowserContext, who: 'admin' | 'ben', path: string): Promise<Page> {
  const page = await ctx.newPage();
  collectPageErrors(page, errors);
  await page.goto(a.url + path);
  if (who === 'admin') await signInWithForm(page);
  else {
    await page.getByLabel('Username').fill('ben');
    await page.getByLabel('Password').fill(passwordOf('ben'));
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  return page;
}

const card = (page: Page, title: string) => page.locator(`section.card[aria-label="${title}"]`);
const cellsOn = (page: Page, title: string) => card(page, title).getAttribute('data-cells');
async function storedCells(): Promise<Record<string, string>> {
  const d = expectOk(await admin.get(`/api/v1/dashboards/${dashboardId}`));
  return Object.fromEntries(d.widgets.map((w: any) => [w.title, `${w.pos_x},${w.pos_y},${w.width},${w.height}`]));
}
async function waitCells(page: Page, title: string, cells: string): Promise<void> {
  try {
    await page.waitForFunction(([t, c]) => document.querySelector(`section.card[aria-label="${t}"]`)?.getAttribute('data-cells') === c, [title, cells] as const, { timeout: 60_000 });
  } catch {
    const now = await page.locator('section.card').evaluateAll((cs) => cs.map((c) => `${c.getAttribute('aria-label')}=${c.getAttribute('data-cells')}`));
    throw new Error(`"${title}" never reached cells ${cells}; the page shows ${now.join(' ')}`);
  }
}
/** Drags from the middle of `from` by (dx, dy) pixels with the mouse, in steps as a hand would. */
async function drag(page: Page, from: { x: number; y: number }, dx: number, dy: number): Promise<void> {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(from.x + (dx * i) / 8, from.y + (dy * i) / 8);
  await page.mouse.up();
}

before(async () => {
  ({ a, browser } = await startBrowserTest());
  const ingestInfo = defaultIngest(a);
  fractalId = ingestInfo.fractalId;
  const events: object[] = sampleEvents();
  for (let i = 0; i < 60; i++) {
    events.push({
      timestamp: new Date(Date.now() - (i + 10) * 600_000).toISOString(),
      host: `web${i % 3}`,
      user: ['alice', 'bob', 'carol'][i % 3],
      status: [200, 404, 500][i % 3],
      bytes: (i * 37) % 900,
      latitude: 48.85 + (i % 3),
      longitude: 2.35 + (i % 3),
      tags: ['attack.t1059.001', 'attack.t1021'][i % 2],
      process_guid: `p${i}`,
      parent_guid: `p${Math.floor(i / 2)}`,
      msg: `event ${i}`,
    });
  }
  await ingest(a, ingestInfo.token, fractalId, events);
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  await makeUser(admin, 'ben');
  await grant(admin, fractalId, { username: 'ben' }, 'analyst');
  ctxA = await browser.newContext({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
  ctxB = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  // Generous waits: the machine is shared, and a wait ends as soon as its condition holds.
  for (const c of [ctxA, ctxB]) c.setDefaultTimeout(60_000);
});
after(async () => {
  await ctxA?.close();
  await ctxB?.close();
  await stopBrowserTest(a, browser);
});

test('two browsers build one dashboard: widgets added from the page, dragged, resized, moved by keyboard, seen live', async () => {
  pageA = await openAs(ctxA, 'admin', '/#/dashboards');
  await pageA.getByRole('heading', { name: 'Dashboards', level: 1 }).waitFor();
  // `n` focuses the new dashboard's name; Enter creates it.
  await pageA.keyboard.press('n');
  await pageA.keyboard.insertText('Ops wall');
  await pageA.keyboard.press('Enter');
  await pageA.getByRole('heading', { name: 'Ops wall', level: 1 }).waitFor();
  dashboardId = /#\/dashboards\/([0-9a-f-]{36})$/.exec(pageA.url())![1]!;

  pageB = await openAs(ctxB, 'ben', `/#/dashboards/${dashboardId}`);
  await pageB.getByRole('heading', { name: 'Ops wall', level: 1 }).waitFor();
  await pageA.locator('.avatar[data-name="ben"]').waitFor();
  await pageB.locator('.avatar[data-name="admin"]').waitFor();

  // A adds a widget with the editor: `a` opens it, the workspace's query editor, the chart picker.
  await pageA.keyboard.press('a');
  const editor = pageA.getByRole('dialog', { name: 'Add a widget' });
  await editor.waitFor();
  await editor.getByLabel('Title').fill('Errors by host');
  await editor.locator('.cm-content').click();
  await pageA.keyboard.insertText('status>=500 | groupBy(host)');
  await editor.getByLabel('Draw as').selectOption('barchart');
  // Enter in the query editor previews the query, drawn as chosen.
  await editor.locator('.cm-content').click();
  await pageA.keyboard.press('Enter');
  await editor.locator('.chart-view[data-chart-type="barchart"]').waitFor();
  await editor.getByRole('button', { name: 'Add widget' }).click();
  await editor.waitFor({ state: 'detached' });
  await card(pageA, 'Errors by host').locator('.chart-view[data-chart-type="barchart"]').waitFor();
  // B sees the widget and its results arrive live.
  await card(pageB, 'Errors by host').locator('.chart-view[data-chart-type="barchart"]').waitFor();

  // A second widget, a table, goes to the first free cells beside the first.
  await pageA.getByRole('button', { name: 'Add widget' }).first().click();
  await editor.waitFor();
  await editor.getByLabel('Title').fill('Recent events');
  await editor.locator('.cm-content').click();
  await pageA.keyboard.insertText('table(host, user, status) | head(20)');
  await editor.getByLabel('Draw as').selectOption('table');
  await editor.getByRole('button', { name: 'Add widget' }).click();
  await card(pageA, 'Recent events').getByRole('grid').waitFor();
  // The listed columns and the event time; not the id of the one fractal every row comes from.
  const heads = await card(pageA, 'Recent events').getByRole('columnheader').allInnerTexts();
  assert.deepEqual(heads.map((h) => h.replace(/\s*UTC$/, '')), ['host', 'user', 'status', 'timestamp']);
  assert.equal(await cellsOn(pageA, 'Errors by host'), '0,0,6,4');
  assert.equal(await cellsOn(pageA, 'Recent events'), '6,0,6,4');
  await card(pageB, 'Recent events').getByRole('grid').waitFor();
  await screenshot(pageA, 'dashboard-built.png');

  // A drags "Recent events" by its head onto "Errors by host": it takes those cells, the other goes below.
  const head = await card(pageA, 'Recent events').locator('.card-head').boundingBox();
  const target = await card(pageA, 'Errors by host').locator('.card-head').boundingBox();
  await drag(pageA, { x: head!.x + head!.width / 2, y: head!.y + 10 }, target!.x - head!.x, 0);
  await waitCells(pageA, 'Recent events', '0,0,6,4');
  await waitCells(pageA, 'Errors by host', '0,4,6,4');
  assert.deepEqual(await storedCells(), { 'Recent events': '0,0,6,4', 'Errors by host': '0,4,6,4' }, 'the service stored what the page showed');
  await waitCells(pageB, 'Recent events', '0,0,6,4');
  await waitCells(pageB, 'Errors by host', '0,4,6,4');

  // A resizes "Recent events" from its corner: three columns wider, one row taller; the widget below moves down.
  const corner = await card(pageA, 'Recent events').locator('.resize').boundingBox();
  const grid = await pageA.locator('.grid[role="list"]').boundingBox();
  const colPx = (grid!.width + 8) / 12;
  await drag(pageA, { x: corner!.x + 7, y: corner!.y + 7 }, colPx * 3, 72);
  await waitCells(pageA, 'Recent events', '0,0,9,5');
  await waitCells(pageA, 'Errors by host', '0,5,6,4');
  await waitCells(pageB, 'Recent events', '0,0,9,5');
  await waitCells(pageB, 'Errors by host', '0,5,6,4');

  // The keyboard: A's grip on "Errors by host" moves it right, Shift+Down makes it taller; the
  // service stores the same.
  await card(pageA, 'Errors by host').locator('.grip').focus();
  await pageA.keyboard.press('ArrowRight');
  await waitCells(pageA, 'Errors by host', '1,5,6,4');
  await pageA.keyboard.press('Shift+ArrowDown');
  await waitCells(pageA, 'Errors by host', '1,5,6,5');
  assert.deepEqual(await storedCells(), { 'Recent events': '0,0,9,5', 'Errors by host': '1,5,6,5' });
  await waitCells(pageB, 'Errors by host', '1,5,6,5');

  // B sets the refresh interval and a variable; A sees both.
  await pageB.getByLabel('Refresh every').selectOption('5');
  await pageA.waitForFunction(() => (document.querySelector('select[aria-label="Refresh every"]') as HTMLSelectElement)?.value === '5');
  await pageB.getByLabel('New variable name').fill('who');
  await pageB.getByLabel('New variable value').fill('alice');
  await pageB.getByRole('button', { name: 'Add variable' }).click();
  await pageA.getByLabel('Value of @who').waitFor();

  // A query that does not compile is refused in the editor, where it is wrong; nothing is added.
  await pageA.getByRole('button', { name: 'Add widget' }).first().click();
  await editor.waitFor();
  await editor.locator('.cm-content').click();
  await pageA.keyboard.insertText('status>=500 | groupBy(host');
  await editor.getByRole('button', { name: 'Add widget' }).click();
  await editor.getByRole('alert').filter({ hasText: 'Parse error' }).waitFor();
  await pageA.keyboard.press('Escape');
  await editor.waitFor({ state: 'detached' });
  assert.equal(Object.keys(await storedCells()).length, 2);
  await screenshot(pageB, 'dashboard-live-b.png');
  assert.deepEqual(errors, []);
});

test('every chart type of the picker draws through the workspace’s charts; dark and light', async () => {
  const chartQueries: Array<[string, string, string]> = [
    ['timechart', 'Per hour', 'timechart(span=1h)'],
    ['barchart', 'Bars', 'groupBy(host)'],
    ['piechart', 'Pie', 'groupBy(status)'],
    ['singleval', 'Total', 'count()'],
    ['histogram', 'Bytes', 'histogram(bytes, buckets=6)'],
    ['heatmap', 'Heat', 'heatmap(x=host, y=user)'],
    ['graph', 'Tree', 'table(process_guid, parent_guid, host) | graph(child=process_guid, parent=parent_guid, labels=host)'],
    ['mesh', 'Mesh', 'groupBy(user, host) | mesh(src=user, dst=host)'],
    ['pgraph', 'Process graph', 'eval(parent=parent_guid) | eval(child=process_guid) | table(parent, child, host)'],
    ['worldmap', 'Map', 'groupBy(latitude, longitude) | worldmap()'],
    ['mitre', 'ATT&CK', 'eval(attack_tag=tags) | groupBy(attack_tag)'],
  ];
  const d = expectOk(await admin.post('/api/v1/dashboards', { name: 'Every chart', fractal_id: fractalId, time_range: '7d' }), 201);
  for (const [i, [type, title, query]] of chartQueries.entries()) {
    expectOk(await admin.post(`/api/v1/dashboards/${d.id}/widgets`, { title, query_content: query, chart_type: type, pos_x: (i % 3) * 4, pos_y: Math.floor(i / 3) * 4, width: 4, height: 4 }), 201);
  }
  await pageA.goto(`${a.url}/#/dashboards/${d.id}`);
  await pageA.getByRole('heading', { name: 'Every chart', level: 1 }).waitFor();
  for (const [type, title] of chartQueries) {
    const view = card(pageA, title).locator(`.chart-view[data-chart-type="${type}"]`);
    await view.waitFor();
    assert.equal(await view.locator('.chart-empty').count(), 0, `${type} draws (no “cannot chart” message)`);
  }
  // The editor's picker offers each of them.
  await card(pageA, 'Bars').getByRole('button', { name: 'Edit Bars' }).click();
  const editor = pageA.getByRole('dialog', { name: 'Edit “Bars”' });
  const options = await editor.getByLabel('Draw as').locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  assert.deepEqual(options, ['auto', 'table', ...chartQueries.map(([t]) => t)]);
  await editor.getByRole('button', { name: 'Cancel' }).click();
  await screenshot(pageA, 'dashboard-charts-dark.png', { fullPage: true });
  await pageA.getByRole('button', { name: /Switch to light/ }).click();
  await screenshot(pageA, 'dashboard-charts-light.png', { fullPage: true });
  await pageA.getByRole('button', { name: /Switch to dark/ }).click();
  assert.deepEqual(errors, []);
});

test('a shared link made in the Share dialog opens without cookies: the cached charts, no navigation, no query text; deleted, it is gone', async () => {
  expectOk(await admin.put('/api/v1/settings', { shared_links_enabled: true }));
  await pageA.goto(`${a.url}/#/dashboards/${dashboardId}`);
  await pageA.getByRole('heading', { name: 'Ops wall', level: 1 }).waitFor();
  await card(pageA, 'Errors by host').locator('.chart-view').waitFor();
  await pageA.getByRole('button', { name: 'Share' }).click();
  const share = pageA.getByRole('dialog', { name: 'Share “Ops wall”' });
  await share.getByLabel('Label').fill('NOC screen');
  await share.getByRole('button', { name: 'Make a link' }).click();
  const url = await share.getByLabel('The new shared link').inputValue();
  assert.match(url, new RegExp(`^${a.url}/shared/svc_share_[A-Za-z0-9_-]{43}$`));
  await share.getByRole('table', { name: 'Shared links' }).getByRole('cell', { name: 'NOC screen', exact: true }).waitFor();

  const stranger = await browser.newContext({ viewport: { width: 1920, height: 1080 } });
  stranger.setDefaultTimeout(60_000);
  try {
    assert.deepEqual(await stranger.cookies(), []);
    const pub = await stranger.newPage();
    collectPageErrors(pub, errors);
    const res = await pub.goto(url);
    assert.equal(res!.status(), 200);
    await pub.getByRole('heading', { name: 'Ops wall', level: 1 }).waitFor();
    await card(pub, 'Errors by host').locator('.chart-view[data-chart-type="barchart"]').waitFor();
    await card(pub, 'Recent events').getByRole('grid').waitFor();
    assert.equal(await pub.locator('nav, .topbar, form').count(), 0, 'no navigation, no sign-in');
    const editable = await pub.locator('section.card .card-head .grip, section.card > .resize, .cm-content').evaluateAll((es) => es.map((e) => e.outerHTML.slice(0, 120)));
    assert.deepEqual(editable, [], 'nothing to edit');
    const text = await pub.locator('body').innerText();
    assert.ok(!text.includes('status>=500') && !text.includes('groupBy(host)'), 'no query text');
    assert.deepEqual(await stranger.cookies(), [], 'still no cookie');
    await screenshot(pub, 'dashboard-shared-public.png');

    // On a wall screen the public page grows like the kiosk: header, widget titles, charts, tables; at 1280×720 the usual sizes.
    for (const [width, height] of [
      [3840, 2160],
      [1280, 720],
    ] as const) {
      await pub.setViewportSize({ width, height });
      for (const theme of ['dark', 'light'] as const) {
        await pub.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
        const name = await pub.getByRole('heading', { name: 'Ops wall', level: 1 }).evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));
        const title = (await typeSizes(pub, 'Errors by host')).title;
        // Charts and tables measure again once their boxes have changed.
        const wall = width === 3840;
        const chartAxis = await waitFor(`${theme} at ${width} px: the chart's value axis room`, async () => {
          const axis = (await typeSizes(pub, 'Errors by host')).axis;
          return (wall ? axis >= 110 : axis >= 45 && axis <= 55) && axis;
        });
        const table = await waitFor(`${theme} at ${width} px: the table's text and rows`, async () => {
          const t = await tableSizes(pub, 'Recent events');
          return (wall ? t.text >= 26 && t.text <= 31 && t.row >= 52 && t.row <= 62 : t.text === 12 && t.row === 24) && t;
        });
        if (wall) {
          assert.ok(name >= 38 && name <= 43, `${theme}: the dashboard's name on the wall: ${name}px`);
          assert.ok(title >= 28 && title <= 33, `${theme}: a widget's title on the wall: ${title}px`);
        } else assert.deepEqual({ name, title }, { name: 17, title: 13 }, `${theme}: the usual sizes at 1280 px`);
        assert.ok(chartAxis && table);
        await screenshot(pub, `dashboard-shared-${width}-${theme}.png`);
      }
    }

    // Deleted in the dialog: the public page is gone (404) on its next load.
    await share.getByRole('button', { name: 'Delete the link NOC screen' }).click();
    await share.getByText('No shared links.').waitFor();
    const gone = await pub.reload();
    assert.equal(gone!.status(), 404);
    await pub.getByRole('heading', { name: 'This shared dashboard is not available' }).waitFor();
  } finally {
    await stranger.close();
  }
  await share.getByRole('button', { name: 'Close' }).click();
  assert.deepEqual(errors, []);
});

test('kiosk on a wall screen: no chrome, the layout fills the screen; Escape brings the page back', async () => {
  const wall = await browser.newContext({ viewport: { width: 3840, height: 2160 } });
  wall.setDefaultTimeout(60_000);
  try {
    const page = await openAs(wall, 'admin', `/#/dashboards/${dashboardId}?kiosk=1`);
    await card(page, 'Errors by host').locator('.chart-view').waitFor();
    assert.equal(await page.locator('header.topbar, .db-head').count(), 0, 'no chrome');
    const gridBox = await page.locator('.grid[role="list"]').boundingBox();
    assert.ok(gridBox!.height > 2000 && gridBox!.height <= 2160, `the rows fill the screen: ${gridBox!.height}px`);
    // Type and chart labels grow with the wall (2.4× at 3840 px wide), in both themes.
    for (const theme of ['dark', 'light'] as const) {
      await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
      const wall = await typeSizes(page, 'Errors by host');
      assert.ok(wall.title >= 28 && wall.title <= 33, `${theme}: the widget's title is read across a room: ${wall.title}px`);
      assert.ok(wall.axis >= 110, `${theme}: the chart's value axis makes room for its larger labels: ${wall.axis}px`);
      assert.notEqual(wall.color, '', theme);
      // The event rows of a table widget grow the same way: their type and their rows.
      const table = await tableSizes(page, 'Recent events');
      assert.ok(table.text >= 26 && table.text <= 31, `${theme}: the table's text is read across a room: ${table.text}px`);
      assert.ok(table.row >= 52 && table.row <= 62, `${theme}: the table's rows grow with their text: ${table.row}px`);
      await screenshot(page, `dashboard-kiosk-wall-${theme}.png`);
    }
    await page.keyboard.press('Escape');
    await page.locator('header.topbar').waitFor({ timeout: 60_000 }).catch(async (err) => {
      const where = await page.evaluate(() => `${location.href} focus=${document.activeElement?.tagName}.${document.activeElement?.className}`);
      throw new Error(`Escape did not leave kiosk: ${where}; ${err.message}`);
    });
    await page.getByRole('heading', { name: 'Ops wall', level: 1 }).waitFor();
  } finally {
    await wall.close();
  }
  await pageA.goto(`${a.url}/#/dashboards/${dashboardId}?kiosk=1`);
  await card(pageA, 'Errors by host').waitFor();
  // At 1280×720 kiosk type stays the usual size, in both themes.
  for (const theme of ['light', 'dark'] as const) {
    await pageA.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
    const laptop = await typeSizes(pageA, 'Errors by host');
    assert.equal(laptop.title, 13, `${theme}: the usual title size at 1280 px`);
    assert.ok(laptop.axis >= 45 && laptop.axis <= 55, `${theme}: the usual axis room at 1280 px: ${laptop.axis}px`);
    assert.deepEqual(await tableSizes(pageA, 'Recent events'), { text: 12, row: 24 }, `${theme}: the usual table at 1280 px`);
    await screenshot(pageA, `dashboard-kiosk-1280-${theme}.png`);
  }
  await pageA.getByRole('button', { name: 'Exit kiosk' }).focus();
  await pageA.keyboard.press('Enter');
  await pageA.locator('header.topbar').waitFor({ timeout: 60_000 }).catch(async (err) => {
    const where = await pageA.evaluate(() => `${location.href} focus=${document.activeElement?.tagName}.${document.activeElement?.className} topbars=${document.querySelectorAll('header.topbar').length}`);
    throw new Error(`Exit kiosk did not leave kiosk: ${where}; ${err.message}`);
  });
  assert.deepEqual(errors, []);
});

/** A table widget's cell text size and row height. */
async function tableSizes(page: Page, title: string): Promise<{ text: number; row: number }> {
  const row = card(page, title).getByRole('grid').locator('.row').first();
  await row.waitFor();
  return row.evaluate((el) => ({ text: Number.parseFloat(getComputedStyle(el).fontSize), row: Math.round(el.getBoundingClientRect().height) }));
}

/** A widget's title size, its chart's value-axis width (uPlot's room for its labels) and the title's colour. */
async function typeSizes(page: Page, title: string): Promise<{ title: number; axis: number; color: string }> {
  const c = card(page, title);
  await c.locator('.chart-view .u-axis').first().waitFor();
  const titleCss = await c.locator('.w-title').evaluate((el) => ({ size: Number.parseFloat(getComputedStyle(el).fontSize), color: getComputedStyle(el).color }));
  // The value axis is the leftmost (the bottom one starts where the plot does, right of it). A
  // theme switch redraws the chart, whose axes are laid out on its first frame: measured at once,
  // the axis read 0 px (a flaky failure in CI). So it is read once its width is the same for three
  // frames running (0 after 10 s, which fails the caller's assertion).
  const axis = await c
    .locator('.chart-view')
    .first()
    .evaluate(async (view) => {
      const until = performance.now() + 10_000;
      let last = -1;
      let same = 0;
      while (performance.now() < until) {
        const rects = [...view.querySelectorAll('.u-axis')].map((e) => e.getBoundingClientRect()).sort((x, y) => x.left - y.left);
        const w = rects[0]?.width ?? 0;
        same = w > 0 && w === last ? same + 1 : 0;
        last = w;
        if (same >= 2) return w;
        await new Promise((r) => requestAnimationFrame(r));
      }
      return 0;
    });
  return { title: titleCss.size, axis, color: titleCss.color };
}

test('export the YAML and import it from the list', async () => {
  await pageA.goto(`${a.url}/#/dashboards/${dashboardId}`);
  await pageA.getByRole('heading', { name: 'Ops wall', level: 1 }).waitFor();
  const [download] = await Promise.all([
    pageA.waitForEvent('download', { timeout: 60_000 }).catch(async (err) => {
      throw new Error(`no download: ${await pageA.locator('[role="alert"]').allInnerTexts()} ${pageA.url()} ${err.message}`);
    }),
    pageA.getByRole('button', { name: 'Export', exact: true }).click(),
  ]);
  assert.equal(download.suggestedFilename(), 'dashboard-Ops-wall.yaml');
  const file = await download.path();
  await pageA.getByRole('link', { name: 'Dashboards', exact: true }).first().click();
  await pageA.getByLabel('Import a dashboard (a YAML export)').setInputFiles(file!);
  await pageA.getByRole('heading', { name: 'Ops wall (2)', level: 1 }).waitFor();
  await card(pageA, 'Errors by host').locator('.chart-view').waitFor();
  assert.equal(await cellsOn(pageA, 'Errors by host'), '1,5,6,5');
  assert.equal(await cellsOn(pageA, 'Recent events'), '0,0,9,5');
  assert.deepEqual(errors, []);
});

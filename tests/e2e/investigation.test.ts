// One investigation in a real browser (Debian's Chromium via playwright-core) against a real appliance on
// a fresh data dir — the "Done when" of issue 5 as one flow through the search workspace with its field
// sidebar, log detail and charts mounted: sign in, ingest sample logs through the real ingest endpoint,
// run a query and see the histogram, the rows and the fields, click a value to filter, open a log with
// Enter and read it, comment on it (and find the comment through the API), add a filter from a top value
// in the field sidebar, draw a timechart, a barchart and a piechart of groupBy results, switch to the table
// and back with the keyboard, see a syntax error underlined, export CSV and read it back. The admin part
// (create an ingest token on the admin page, ship a record with its snippet) is tests/e2e/admin.test.ts.
//
// Screenshots of each main screen go to test-artifacts/workspace-*.png for a person to look at.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, defaultIngest, signIn as apiSignIn, type TestAppliance } from '../support/appliance.ts';
import { screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingest } from '../support/query.ts';
import { editor, queryText, rows, setQuery, waitDone } from '../support/workspace.ts';

let a: TestAppliance;
let browser: Browser;
let fractalId: string;
let token: string;

before(async () => {
  ({ a, browser } = await startBrowserTest());
  ({ fractalId, token } = defaultIngest(a));
});
after(() => stopBrowserTest(a, browser));

// ---- the data: a web estate's last half hour, deterministic ------------------------------------------------
// Background traffic, one request every 20 s, and an incident 8–12 minutes ago: web1 answers 500/503 to a
// burst of POSTs, mostly for alice and mallory. Newest first, like the table.

const HOSTS = ['web1', 'web2', 'web1', 'db1', 'web2', 'api1', 'web1', 'db1'];
const USERS = ['alice', 'bob', 'alice', 'carol', 'bob', 'dave', 'erin', 'alice', 'bob'];
const STATUSES = [200, 200, 200, 404, 200, 301, 200, 200, 200, 503];
const ACTIONS = ['login', 'get', 'get', 'query', 'logout', 'post'];
const base = Date.now();
const background = Array.from({ length: 90 }, (_, i) => {
  const host = HOSTS[(i * 5 + (i >> 3)) % HOSTS.length]!;
  const user = USERS[(i * 4 + (i >> 2)) % USERS.length]!;
  const status = STATUSES[(i * 7 + 3) % STATUSES.length]!;
  const action = ACTIONS[i % ACTIONS.length]!;
  return {
    timestamp: new Date(base - (15 + i * 20) * 1000).toISOString(),
    host,
    user,
    status,
    action,
    src_ip: `10.0.${i % 3}.${10 + (i % 17)}`,
    bytes: (i * 137) % 4000,
    msg: status >= 500 ? `upstream failed for ${user}` : `${action} ${status === 404 ? '/missing' : 'ok'} by ${user}`,
  };
});
const incident = Array.from({ length: 30 }, (_, i) => {
  const user = ['alice', 'mallory', 'alice', 'mallory', 'bob'][i % 5]!;
  return {
    timestamp: new Date(base - (8 * 60 + 3 + i * 8) * 1000).toISOString(),
    host: i % 5 === 4 ? 'web2' : 'web1',
    user,
    status: i % 3 === 0 ? 503 : 500,
    action: 'post',
    src_ip: `203.0.113.${40 + (i % 4)}`,
    bytes: 0,
    msg: `upstream failed for ${user}`,
  };
});
const EVENTS = [...background, ...incident].sort((x, y) => y.timestamp.localeCompare(x.timestamp));
const N = EVENTS.length;
const count = (pred: (e: (typeof EVENTS)[number]) => boolean) => EVENTS.filter(pred).length;
const countsBy = (key: 'host' | 'user' | 'status') => {
  const m = new Map<string, number>();
  for (const e of EVENTS) m.set(String(e[key]), (m.get(String(e[key])) ?? 0) + 1);
  return m;
};

// ---- page helpers ---------------------------------------------------------------------------------------------

const sidebar = (page: Page) => page.getByRole('complementary', { name: /^Fields/ });
const detail = (page: Page) => page.getByRole('complementary', { name: /^(Surrounding log|Log)\b/ });

async function run(page: Page, q: string, n?: number) {
  await setQuery(page, q);
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction((q) => decodeURIComponent(location.hash).includes(`q=${q}&`), q);
  await waitDone(page, n);
}

/** A chart of the given type drawn in the results area: its SVG or canvas has a size. */
async function waitChart(page: Page, type: string) {
  const chart = page.locator(`.results .chart-view[data-chart-type="${type}"]`);
  await chart.waitFor();
  await page.waitForFunction(
    (type) => {
      const el = document.querySelector(`.results .chart-view[data-chart-type="${type}"] .chart-body`);
      const marks = [...(el?.querySelectorAll('svg, canvas') ?? [])].filter((m) => {
        const r = m.getBoundingClientRect();
        return r.width > 100 && r.height > 100;
      });
      return marks.length > 0;
    },
    type,
  );
  return chart;
}

test('investigation: query, pivot, read and comment on a log, field sidebar, three charts, table, syntax error, CSV', async () => {
  const { page, pageErrors } = await signedInPage(browser, a.url + '/', { downloads: true });
  await editor(page).waitFor();

  // ---- sample logs through the real ingest endpoint; a query shows histogram, rows and fields
  await ingest(a, token, fractalId, EVENTS);
  await page.getByRole('button', { name: /^Time range:/ }).click();
  await page.getByRole('button', { name: 'Last hour' }).click();
  await run(page, '*', N);
  const histogram = page.locator('section[aria-label="Events over time"]');
  await histogram.locator('canvas').first().waitFor();
  assert.ok((await histogram.locator('canvas').first().boundingBox())!.height > 40, 'the histogram is drawn');
  assert.match(await histogram.innerText(), new RegExp(`${N} matching events`));
  assert.match(await rows(page).first().innerText(), new RegExp(`msg=${EVENTS[0]!.msg}`), 'newest first');
  await sidebar(page).waitFor();
  for (const f of ['host', 'user', 'status', 'msg', 'src_ip']) {
    assert.match(await sidebar(page).getByRole('button', { name: new RegExp(`^${f} ${N}$`) }).innerText(), new RegExp(f));
  }
  // The three columns at 1280×720: sidebar ~260 px at the left, the table beside it, nothing overlapping.
  const sideBox = (await page.locator('#field-column').boundingBox())!;
  const gridBox = (await page.locator('[role="grid"]').boundingBox())!;
  assert.ok(sideBox.width >= 240 && sideBox.width <= 280, `sidebar width ${sideBox.width}`);
  assert.ok(gridBox.x >= sideBox.x + sideBox.width - 1, 'the table starts where the sidebar ends');
  await screenshot(page, 'workspace-results.png');

  // ---- no layout shift while rows stream: the same query again, with the layout-shift entries counted
  await page.evaluate(() => {
    const w = window as unknown as { __shifts: number };
    w.__shifts = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as Array<PerformanceEntry & { value: number; hadRecentInput: boolean }>) if (!e.hadRecentInput) w.__shifts += e.value;
    }).observe({ type: 'layout-shift', buffered: false });
  });
  const gridBefore = (await page.locator('[role="grid"]').boundingBox())!;
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await waitDone(page, N);
  await page.waitForTimeout(300);
  assert.deepEqual((await page.locator('[role="grid"]').boundingBox())!, gridBefore, 'the table did not move');
  assert.ok((await page.evaluate(() => (window as unknown as { __shifts: number }).__shifts)) < 0.01, 'no layout shift');

  // ---- click a value: host=web1 is added and the query runs again
  const web1 = count((e) => e.host === 'web1');
  await rows(page).locator('[data-f="host"]', { hasText: 'web1' }).first().click();
  await waitDone(page, web1);
  assert.equal(await queryText(page), 'host=web1');

  // ---- open a log with Enter: the full detail replaces the row view; Escape closes it
  await page.locator('[role="grid"]').focus();
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('Enter');
  await detail(page).waitFor();
  const opened = EVENTS.filter((e) => e.host === 'web1')[1]!;
  const fieldsTable = detail(page).getByRole('table', { name: 'Fields of the log' });
  await fieldsTable.getByRole('row', { name: /^msg\b/ }).waitFor();
  assert.match(await fieldsTable.getByRole('row', { name: /^msg\b/ }).innerText(), new RegExp(opened.msg));
  assert.match(await fieldsTable.getByRole('row', { name: /^user\b/ }).innerText(), new RegExp(opened.user));
  // The open field's top values in the sidebar beside it: the main screen with everything open.
  await sidebar(page).getByRole('button', { name: /^user \d/ }).click();
  await sidebar(page).getByRole('list', { name: 'Top values of user' }).waitFor();
  await screenshot(page, 'workspace-detail.png');
  // A click on the time of another row opens that one.
  await rows(page).nth(3).locator('.time').click();
  await page.waitForFunction(() => document.querySelector('[role="row"][aria-selected="true"]')?.getAttribute('data-i') === '3');
  await page.waitForFunction(
    (msg) => [...document.querySelectorAll('aside table[aria-label="Fields of the log"] tr')].some((tr) => tr.textContent?.includes(msg)),
    EVENTS.filter((e) => e.host === 'web1')[3]!.msg,
  );
  // The time picker offers a range around the open log.
  await page.getByRole('button', { name: /^Time range:/ }).click();
  await page.getByRole('group', { name: 'Around the open log' }).getByRole('button', { name: '±5 min' }).waitFor();
  await screenshot(page, 'workspace-around.png');
  await page.keyboard.press('Escape');

  // ---- comment on it: the thread in the panel, the comment stored in the service
  const logId = await page.evaluate(() => {
    const tr = [...document.querySelectorAll('aside table[aria-label="Fields of the log"] tr')].find((r) => r.querySelector('th')?.textContent?.trim() === 'log_id');
    return tr?.querySelector('td')?.textContent?.trim() ?? '';
  });
  assert.match(logId, /^[0-9a-f-]{36}$/);
  await detail(page).getByRole('tab', { name: /^Comments/ }).click();
  await detail(page).getByLabel('Add a comment').fill('Same user hit web1 and web2 within a minute — checking the session.');
  await detail(page).getByLabel('Tags').fill('triage, session');
  await detail(page).getByRole('button', { name: 'Add comment' }).click();
  await detail(page).getByRole('status').filter({ hasText: 'Comment added.' }).waitFor();
  await detail(page).getByRole('list', { name: 'Comments' }).getByText('checking the session').waitFor();
  const api = await apiSignIn(a.url, 'admin', ADMIN_PASSWORD);
  const stored = (await api.get(`/api/v1/logs/${logId}/comments?fractal_id=${fractalId}`)).body.data as Array<{ content: string; tags: string[]; author: string }>;
  assert.equal(stored.length, 1);
  assert.match(stored[0]!.content, /checking the session/);
  assert.deepEqual([...stored[0]!.tags].sort(), ['session', 'triage']);
  assert.equal(stored[0]!.author, 'admin');
  assert.equal(await detail(page).getByRole('tab', { name: /^Comments/ }).getAttribute('aria-label'), 'Comments (1)');
  await screenshot(page, 'workspace-comments.png');
  // Light theme, same screen.
  await page.getByRole('button', { name: /Switch to light/ }).click();
  await screenshot(page, 'workspace-comments-light.png');
  await page.getByRole('button', { name: /Switch to dark/ }).click();
  await page.keyboard.press('Escape'); // focus is in the panel: its own Escape closes it
  await detail(page).waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('role')), 'grid', 'back to the table');

  // ---- the field sidebar: a top value adds a filter
  const web1Errors = count((e) => e.host === 'web1' && e.status === 500);
  assert.ok(web1Errors > 0);
  await sidebar(page).getByRole('button', { name: /^status \d/ }).click();
  const top = sidebar(page).getByRole('list', { name: 'Top values of status' });
  await top.waitFor();
  await top.getByRole('button', { name: /^Filter for status = 500 / }).click();
  await waitDone(page, web1Errors);
  assert.equal(await queryText(page), 'host=web1 | status=500');

  // ---- the field sidebar collapses with `f` (remembered) and comes back
  await page.locator('[role="grid"]').focus();
  await page.keyboard.press('f');
  await sidebar(page).waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => localStorage.getItem('svc.search.fields')), 'closed');
  assert.ok((await page.locator('[role="grid"]').boundingBox())!.x < 20, 'the table takes the room');
  await page.reload();
  await waitDone(page, web1Errors);
  assert.equal(await sidebar(page).count(), 0, 'still collapsed after a reload');
  await page.getByRole('button', { name: 'Fields', exact: true }).click();
  await sidebar(page).waitFor();

  // ---- charts: groupBy results drawn as their chart_type
  await run(page, 'groupBy(status) | timechart(span=1m)');
  const timechart = await waitChart(page, 'timechart');
  assert.equal(await histogram.count(), 0, 'an aggregation has no event histogram');
  for (const s of countsBy('status').keys()) assert.match(await timechart.innerText(), new RegExp(`\\b${s}\\b`), `series ${s} in the legend`);
  await screenshot(page, 'workspace-timechart.png');

  await run(page, 'groupBy(host) | barchart()');
  const barchart = await waitChart(page, 'barchart');
  for (const [h, n] of countsBy('host')) assert.match(await barchart.innerText(), new RegExp(`${h}\\s+${n}`), `bar ${h} = ${n} in the legend`);
  await screenshot(page, 'workspace-barchart.png');

  await run(page, 'groupBy(user) | piechart()');
  const pie = await waitChart(page, 'piechart');
  assert.ok((await pie.locator('svg path, svg circle').count()) >= countsBy('user').size, 'a slice per user');
  await screenshot(page, 'workspace-piechart.png');
  await page.getByRole('button', { name: /Switch to light/ }).click();
  await screenshot(page, 'workspace-piechart-light.png');
  await page.getByRole('button', { name: /Switch to dark/ }).click();

  // ---- the table, and back to the chart, from the toolbar with the keyboard
  const switcher = page.locator('.workspace > .toolbar').getByRole('group', { name: 'Show the result as' });
  await switcher.getByRole('button', { name: 'Table' }).focus();
  await page.keyboard.press('Enter');
  await waitDone(page, countsBy('user').size);
  assert.equal(await switcher.getByRole('button', { name: 'Table' }).getAttribute('aria-pressed'), 'true');
  const tableText = await page.locator('[role="grid"]').innerText();
  for (const [u, n] of countsBy('user')) assert.match(tableText, new RegExp(`${u}\\s+${n}`));
  await screenshot(page, 'workspace-table.png');

  // ---- export CSV of what is shown, and read it back
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  const csv = readFileSync((await csvDownload.path())!, 'utf8').split('\r\n');
  assert.equal(csv[0], 'user,_count');
  assert.equal(csv.length, countsBy('user').size + 2, 'header, a row per user, final CRLF');
  const fromCsv = new Map(csv.slice(1, -1).map((l) => [l.split(',')[0]!, Number(l.split(',')[1])]));
  assert.deepEqual(fromCsv, countsBy('user'));

  await switcher.getByRole('button', { name: 'Table' }).focus();
  await page.keyboard.press('Shift+Tab'); // Table → Chart
  await page.keyboard.press('Space');
  await waitChart(page, 'piechart');

  // ---- a syntax error, underlined as it is typed, in the service's words
  await setQuery(page, 'groupBy(host) | barchart(');
  await page.locator('.cm-lintRange-error, .cm-lintPoint-error').first().waitFor();
  await page.locator('#query-help .error-text').waitFor();
  if (await page.locator('.cm-tooltip-autocomplete').count()) await page.keyboard.press('Escape'); // the completion list, not the message
  assert.match(await page.locator('#query-help').innerText(), /Parse error/);
  await screenshot(page, 'workspace-error.png');
  assert.deepEqual(pageErrors, []);
  await page.close();
});

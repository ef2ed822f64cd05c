// The log detail panel and the field sidebar in a real browser (Debian's Chromium via playwright-core)
// against a real appliance on a fresh data dir, mounted alone by a small harness page
// (tests/e2e/fixtures/detail-harness) that lists every onFilter call, so the buttons can be seen to fire
// (the workspace around them is tests/e2e/investigation.test.ts). The harness is built with its own Vite
// config into a temporary directory and served by `vite preview`, whose proxy forwards /api to the
// appliance. Page and API share one origin, so sign-in sets the real session cookie and the components
// call the API exactly as in the product (no CORS, no test-only route).
//
// Checked: every field shown and searchable, filter and copy buttons, the original record
// pretty-printed, surrounding logs in order (and with the same host), a log opened from that list,
// a comment added, refused, edited, deleted (each visible through the API), focus kept in the panel,
// Escape closing it; the sidebar's counts, top values with bars, filters and numeric statistics.
// Screenshots: test-artifacts/detail-*.png.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build, preview, type PreviewServer } from 'vite';
import { ADMIN_PASSWORD, defaultIngest, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { launchChromium, prepareBrowserTest, screenshot } from '../support/browser.ts';
import { waitForLogs, storedLogs } from '../support/logs.ts';

const harnessConfig = path.join(import.meta.dirname, 'fixtures/detail-harness/vite.config.ts');

let a: TestAppliance;
let api: Client;
let browser: Browser;
let server: PreviewServer;
let harness: string;
let outDir: string;
let fractalId: string;

const base = Date.now() - 2 * 3600_000;
const at = (i: number) => new Date(base + i * 7_000).toISOString();
const HOSTS = ['web1', 'web2', 'db1'];
/** Thirty events 7 s apart; seq 15 is the one opened. */
function events() {
  return Array.from({ length: 30 }, (_, i) => ({
    timestamp: at(i),
    seq: i,
    host: HOSTS[i % 3],
    source: i % 2 ? 'sshd' : 'nginx',
    user: ['alice', 'bob', 'carol', 'dave'][i % 4],
    bytes: 100 + i * 10,
    msg: `event ${i}`,
    http: { status: i % 5 === 0 ? 404 : 200, path: `/item/${i}` },
  }));
}

before(async () => {
  prepareBrowserTest();
  a = await startTestAppliance();
  api = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  let token: string;
  ({ fractalId, token } = defaultIngest(a));
  // Sent as NDJSON through the real ingest endpoint; one record carries an integer beyond 2^53.
  const lines = events().map((e) => JSON.stringify(e));
  lines[15] = lines[15]!.replace('"msg":', '"trace_id":123456789012345678901,"msg":');
  const r = await fetch(`${a.url}/api/v1/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body: lines.join('\n'),
  });
  assert.equal(r.status, 200, await r.text());
  await waitForLogs(a, fractalId, 30);

  outDir = mkdtempSync(path.join(tmpdir(), 'detail-harness-'));
  await build({ configFile: harnessConfig, build: { outDir }, logLevel: 'warn' });
  server = await preview({
    configFile: harnessConfig,
    build: { outDir },
    logLevel: 'warn',
    preview: { host: '127.0.0.1', port: 0, strictPort: false, proxy: { '/api': { target: a.url, changeOrigin: false } } },
  });
  harness = server.resolvedUrls!.local[0]!.replace(/\/$/, '');

  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await a?.dispose();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});


async function openHarness(
  opts: { theme?: string; zone?: string; pick?: string; q?: string; vars?: Array<{ name: string; value: string }> } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: harness });
  const page = await context.newPage();
  const login = await page.request.post(`${harness}/api/v1/auth/login`, { data: { username: 'admin', password: ADMIN_PASSWORD } });
  assert.equal(login.status(), 200, 'signed in through the proxy: the cookie belongs to the harness origin');
  const q = new URLSearchParams({
    fractal: fractalId,
    q: opts.q ?? '',
    ...(opts.vars ? { vars: JSON.stringify(opts.vars) } : {}),
    start: new Date(base - 3600_000).toISOString(),
    end: new Date(base + 3600_000).toISOString(),
    ...(opts.pick ? { pick: opts.pick } : {}),
    ...(opts.theme ? { theme: opts.theme } : {}),
    ...(opts.zone ? { zone: opts.zone } : {}),
  });
  await page.goto(`${harness}/?${q}`);
  return { context, page };
}

const detail = (page: Page) => page.getByRole('complementary', { name: /^(Surrounding log|Log) / });
const sidebar = (page: Page) => page.getByRole('complementary', { name: /^Fields/ });
const calls = (page: Page) => page.getByRole('region', { name: 'Filter calls' }).getByRole('listitem').allInnerTexts();

async function logOf(seq: number) {
  const logs = await storedLogs(a, fractalId);
  return logs.find((l) => Number(l.fields.seq) === seq)!;
}

test('log detail: fields, filters, copy, the original record, surrounding logs, comments, keyboard', async () => {
  const anchor = await logOf(15);
  const { context, page } = await openHarness({ pick: anchor.log_id });
  const panel = detail(page);
  await panel.waitFor();
  assert.match(await panel.getByRole('heading', { level: 2 }).innerText(), /^Log\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\s+UTC$/);
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Close the log (Escape)', 'focus starts in the panel');

  // ---- every field, sorted; the full log's own fields (ingest time) once it has loaded
  const fields = panel.getByRole('table', { name: 'Fields of the log' });
  await fields.getByRole('rowheader', { name: 'ingest_timestamp' }).waitFor();
  const names = await fields.getByRole('rowheader').allInnerTexts();
  assert.deepEqual(names.slice(0, 4), ['timestamp', 'ingest_timestamp', 'log_id', 'fractal_id']);
  const stored = names.slice(4);
  for (const f of ['bytes', 'host', 'http.path', 'http.status', 'msg', 'seq', 'source', 'trace_id', 'user']) assert.ok(stored.includes(f), `${f} listed: ${stored}`);
  assert.deepEqual(stored, [...stored].sort((x, y) => x.localeCompare(y, 'en', { numeric: true, sensitivity: 'base' })), 'sorted by name');
  const valueOf = async (name: string) => (await fields.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) }).getByRole('cell').first().innerText()).trim();
  assert.equal(await valueOf('host'), 'web1');
  assert.equal(await valueOf('msg'), 'event 15');
  assert.equal(await valueOf('log_id'), anchor.log_id);
  assert.equal(await valueOf('trace_id'), '123456789012345678901', 'a big integer keeps every digit');

  // search by name or value
  await panel.getByLabel('Search fields and values').fill('http');
  assert.deepEqual(await fields.getByRole('rowheader').allInnerTexts(), ['http.path', 'http.status']);
  await panel.getByLabel('Search fields and values').fill('SSHD');
  assert.deepEqual(await fields.getByRole('rowheader').allInnerTexts(), ['source']);
  await page.keyboard.press('Escape'); // clears the search; the panel stays
  assert.equal(await panel.getByLabel('Search fields and values').inputValue(), '');
  assert.equal(await fields.getByRole('rowheader').count(), names.length);

  // filter for / against, copy
  await panel.getByRole('button', { name: 'Filter for host', exact: true }).click();
  await panel.getByRole('button', { name: 'Filter out user', exact: true }).click();
  await panel.getByRole('button', { name: 'Filter for http.status', exact: true }).click();
  assert.deepEqual(await calls(page), ['host=web1', 'NOT user=dave', 'http.status=404']);
  assert.equal(await panel.getByRole('button', { name: 'Filter for timestamp' }).count(), 0, 'no filter on a time');
  await panel.getByRole('button', { name: 'Copy msg', exact: true }).click();
  await panel.getByRole('button', { name: 'Copy msg', exact: true }).filter({ hasText: '✓' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'event 15');
  await screenshot(page, 'detail-fields.png');

  // ---- the original record, pretty-printed, values untouched
  await panel.getByRole('tab', { name: 'Original' }).click();
  const pre = panel.getByLabel('Original record');
  const text = await pre.innerText();
  assert.ok(text.startsWith('{\n  "'), `indented JSON: ${text.slice(0, 40)}`);
  assert.ok(text.includes('\n  "http": {\n    "status": 404,\n    "path": "/item/15"\n  }\n}'), text);
  assert.ok(text.includes('"trace_id": 123456789012345678901,'), 'the big integer as received');
  assert.deepEqual(JSON.parse(text), JSON.parse(anchor.raw), 'the same record');
  await panel.getByText('JSON, indented for reading').waitFor();
  await screenshot(page, 'detail-record.png');

  // ---- surrounding logs: ten before and after, oldest first, the opened one in the middle
  await panel.getByRole('tab', { name: 'Surrounding' }).click();
  const around = panel.getByRole('table', { name: 'Surrounding logs' });
  await around.locator('tr[data-side="before"]').first().waitFor();
  const seqsShown = async () =>
    (await around.locator('tbody tr:not(.edge)').allInnerTexts()).map((t) => {
      const m = /event (\d+)/.exec(t);
      return m ? Number(m[1]) : NaN;
    });
  assert.deepEqual(await seqsShown(), Array.from({ length: 21 }, (_, i) => i + 5));
  assert.equal(await around.locator('tr.anchor').innerText().then((t) => /this log/.test(t)), true);
  const times = await around.locator('tbody tr:not(.edge) td.t').allInnerTexts();
  // Times ascend; shown as the time of day, they may wrap once at midnight.
  const seconds = times.map((t) => {
    const m = /(\d{2}):(\d{2}):(\d{2})/.exec(t)!;
    return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  });
  for (let i = 1; i < seconds.length; i++) {
    const step = (seconds[i] - seconds[i - 1] + 86400) % 86400;
    assert.ok(step < 3600, `times ascend: ${times[i - 1]} then ${times[i]}`);
  }
  assert.match(await around.locator('tr[data-side="after"] td.num').first().innerText(), /^\+7 s$/);

  // the same host only, fewer before
  await panel.getByRole('group', { name: 'Only logs with the same' }).getByRole('button', { name: 'host', exact: true }).click();
  await panel.getByLabel('Logs before').selectOption('5');
  await panel.getByText('5 before and 4 after this log in its fractal with host = web1, oldest first.').waitFor();
  await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Surrounding logs"] tr[data-side="before"]').length === 5);
  assert.deepEqual(await seqsShown(), [0, 3, 6, 9, 12, 15, 18, 21, 24, 27], 'web1 is every third event; none after 27');
  await around.getByText('Nothing later with host = web1 in this fractal.').waitFor();
  await screenshot(page, 'detail-surrounding.png');

  // a log of the list opens here, with a way back
  await around.getByRole('button', { name: 'event 12' }).click();
  await page.getByRole('complementary', { name: /^Surrounding log/ }).waitFor();
  assert.equal(await valueOf('msg'), 'event 12');
  await panel.getByRole('button', { name: '← Back' }).click();
  await page.getByRole('complementary', { name: /^Log / }).waitFor();
  assert.equal(await valueOf('msg'), 'event 15');

  // ---- comments: add (with tags), a refusal in the API's words, edit, delete
  const commentsUrl = `/api/v1/logs/${anchor.log_id}/comments?fractal_id=${fractalId}`;
  await panel.getByRole('tab', { name: 'Comments' }).click();
  await panel.getByText('No comments on this log yet.').waitFor();
  await panel.getByLabel('Add a comment').fill('Seen in the phishing campaign; same user agent as on web2.');
  await panel.getByLabel('Tags').fill('triage, "phishing"');
  await panel.getByRole('button', { name: 'Add comment' }).click();
  const addAlert = panel.locator('.add-form').getByRole('alert');
  await addAlert.waitFor();
  assert.match(await addAlert.innerText(), /tags cannot contain commas, quotes or control characters/);
  assert.equal(await panel.getByLabel('Tags').getAttribute('aria-invalid'), 'true', 'the tags input is marked');
  assert.equal(await panel.getByLabel('Add a comment').getAttribute('aria-invalid'), null);
  await screenshot(page, 'detail-comment-error.png');
  assert.equal((await api.get(commentsUrl)).body.data.length, 0, 'nothing stored');
  await panel.getByLabel('Tags').fill('triage, phishing');
  await panel.getByRole('button', { name: 'Add comment' }).click();
  const thread = panel.getByRole('list', { name: 'Comments' });
  await thread.getByText('Seen in the phishing campaign').waitFor();
  assert.equal(await addAlert.count(), 0, 'the refusal is gone');
  await panel.getByRole('tab', { name: 'Comments (1)' }).waitFor();
  let stored1 = (await api.get(commentsUrl)).body.data;
  assert.equal(stored1.length, 1);
  assert.equal(stored1[0].content, 'Seen in the phishing campaign; same user agent as on web2.');
  assert.deepEqual(stored1[0].tags, ['phishing', 'triage']);
  assert.equal(stored1[0].timestamp.slice(0, 23), new Date(at(15)).toISOString().slice(0, 23), 'the log time, from the row');

  await thread.getByRole('button', { name: 'Edit comment by admin' }).click();
  const edit = panel.locator('.edit-form');
  await edit.getByLabel('Comment text').fill('   ');
  await edit.getByRole('button', { name: 'Save' }).click();
  await edit.getByRole('alert').waitFor();
  assert.equal(await edit.getByRole('alert').innerText(), 'The field "content" must not be empty.');
  await edit.getByLabel('Comment text').fill('Confirmed phishing: same user agent as on web2.');
  await edit.getByLabel('Tags').fill('phishing, confirmed');
  await edit.getByRole('button', { name: 'Save' }).click();
  await thread.getByText('Confirmed phishing').waitFor();
  await panel.getByRole('status').filter({ hasText: 'Comment saved.' }).waitFor();
  stored1 = (await api.get(commentsUrl)).body.data;
  assert.equal(stored1[0].content, 'Confirmed phishing: same user agent as on web2.');
  assert.deepEqual(stored1[0].tags, ['confirmed', 'phishing']);
  assert.deepEqual(await thread.getByRole('list', { name: 'Tags' }).getByRole('listitem').allInnerTexts(), ['confirmed', 'phishing']);
  await screenshot(page, 'detail-comments.png');

  await thread.getByRole('button', { name: 'Delete comment by admin' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete this comment?' });
  await dialog.waitFor();
  await screenshot(page, 'detail-comment-delete.png');
  await page.keyboard.press('Escape'); // cancels the dialog only
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await panel.count(), 1, 'Escape in the dialog leaves the panel open');
  assert.equal((await api.get(commentsUrl)).body.data.length, 1);
  await thread.getByRole('button', { name: 'Delete comment by admin' }).click();
  await dialog.getByRole('button', { name: 'Delete comment' }).click();
  await panel.getByText('No comments on this log yet.').waitFor();
  assert.equal((await api.get(commentsUrl)).body.data.length, 0, 'deleted in the service');
  assert.equal(await page.evaluate(() => document.activeElement?.id.endsWith('-new')), true, 'focus continues at the form');

  // ---- keyboard: tabs by arrows, focus stays in the panel, visible focus, Escape closes
  await panel.getByRole('tab', { name: /Comments/ }).focus();
  await page.keyboard.press('Home');
  assert.equal(await panel.getByRole('tab', { name: 'Fields' }).getAttribute('aria-selected'), 'true');
  await page.keyboard.press('ArrowRight');
  assert.equal(await panel.getByRole('tab', { name: 'Original' }).getAttribute('aria-selected'), 'true');
  const inPanel = () => page.evaluate(() => !!document.activeElement?.closest('.log-detail'));
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('Tab');
    assert.ok(await inPanel(), `Tab ${i + 1} stays in the panel`);
  }
  await panel.getByRole('button', { name: 'Close the log (Escape)' }).focus();
  await page.keyboard.press('Shift+Tab');
  assert.ok(await inPanel(), 'Shift+Tab from the first control wraps to the last');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
  assert.equal(outline, 'solid', 'keyboard focus is visible');
  await page.keyboard.press('Escape');
  await page.getByRole('status').filter({ hasText: 'Detail closed (1)' }).waitFor();
  assert.equal(await detail(page).count(), 0);
  await context.close();
});

test('field sidebar: fields with counts, top values with bars, filters, numeric statistics', async () => {
  const { context, page } = await openHarness();
  const side = sidebar(page);
  await side.getByRole('button', { name: /^host/ }).waitFor();
  const fieldButton = (name: string) => side.getByRole('button', { name: new RegExp(`^${name.replace('.', '\\.')}\\s`) });
  assert.match(await fieldButton('host').innerText(), /host\s+30/);
  assert.match(await fieldButton('trace_id').innerText(), /trace_id\s+1/, 'counted from the rows: one row carries it');
  assert.equal(await side.getByRole('button', { name: /^norm_log/ }).count(), 0);

  // search, then sort by name
  await side.getByLabel('Search fields').fill('http');
  assert.deepEqual((await side.locator('button.field .name').allInnerTexts()).sort(), ['http.path', 'http.status']);
  await side.getByLabel('Search fields').fill('');
  await side.getByRole('button', { name: 'A–Z' }).click();
  const sorted = await side.locator('button.field .name').allInnerTexts();
  assert.deepEqual(sorted, [...sorted].sort((x, y) => x.localeCompare(y, 'en', { numeric: true, sensitivity: 'base' })));
  await side.getByRole('button', { name: 'Count' }).click();

  // top values of host: bars and percentages over the whole result
  await fieldButton('host').click();
  const top = side.getByRole('list', { name: 'Top values of host' });
  await top.waitFor();
  const items = await top.getByRole('listitem').allInnerTexts();
  assert.equal(items.length, 3);
  for (const it of items) assert.match(it, /^(web1|web2|db1)\s+33%\s+10/);
  const widths = await top.locator('.bar').evaluateAll((els) => els.map((e) => (e as HTMLElement).style.width));
  assert.deepEqual(widths, ['33.33%', '33.33%', '33.33%'], 'each bar is its share of the rows');
  await side.getByText('3 distinct · in 30 of 30 (100%)').waitFor();
  await top.getByRole('button', { name: /^Filter for host = web2/ }).click();
  await top.getByRole('button', { name: 'Filter out host = db1' }).click();
  assert.deepEqual(await calls(page), ['host=web2', 'NOT host=db1']);

  // uneven values: user (alice, bob 8 each; carol, dave 7)
  await fieldButton('user').click();
  const users = side.getByRole('list', { name: 'Top values of user' });
  await users.waitFor();
  assert.equal(await side.getByRole('list', { name: 'Top values of host' }).count(), 0, 'one field open at a time');
  const userWidths = await users.locator('.bar').evaluateAll((els) => els.map((e) => parseFloat((e as HTMLElement).style.width)));
  assert.deepEqual(userWidths, [26.67, 26.67, 23.33, 23.33]);
  assert.match((await users.getByRole('listitem').allInnerTexts())[0]!, /^alice\s+27%\s+8/);
  await screenshot(page, 'detail-sidebar.png');

  // numbers: min, avg, max
  await fieldButton('bytes').click();
  const stats = side.getByRole('definition');
  await stats.first().waitFor();
  assert.deepEqual(await stats.allInnerTexts(), ['100', '245', '390']);
  await context.close();

  // a query with @variables: the top values are counted over the same result
  const v = await openHarness({ q: 'host=@h', vars: [{ name: 'h', value: 'web2' }] });
  const side2 = sidebar(v.page);
  await side2.getByRole('button', { name: /^host\s/ }).click();
  const only = side2.getByRole('list', { name: 'Top values of host' });
  await only.waitFor();
  assert.deepEqual((await only.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()), ['web2 100% 10 −']);
  await v.context.close();
});

test('light theme and local time: screenshots', async () => {
  const anchor = await logOf(15);
  const { context, page } = await openHarness({ theme: 'light', zone: 'local', pick: anchor.log_id });
  await detail(page).getByRole('table', { name: 'Fields of the log' }).getByRole('rowheader', { name: 'ingest_timestamp' }).waitFor();
  await sidebar(page).getByRole('button', { name: /^source\s/ }).click();
  await sidebar(page).getByRole('list', { name: 'Top values of source' }).waitFor();
  await detail(page).getByRole('tab', { name: 'Surrounding' }).click();
  await detail(page).getByRole('table', { name: 'Surrounding logs' }).locator('tr[data-side="after"]').first().waitFor();
  await screenshot(page, 'detail-light.png');
  await context.close();
});

// The search workspace in a real browser (Debian's Chromium via playwright-core) against a real appliance
// on a fresh data dir: sign in to the workspace, ingest sample logs through the real ingest endpoint with
// the default fractal's token, run with Ctrl+Enter, see the histogram and the rows, click values to filter
// in and out, see a syntax error underlined with the service's message, export CSV and NDJSON and read
// them back, step rows with j/k and open one in the log detail, change the time preset (in the address)
// and reload into the same view, be offered the fractal's span when the range is empty, follow new logs
// live, and come back to the same view after the session expires; cancel a running query. The whole
// investigation flow (sidebar, comments, charts) is tests/e2e/investigation.test.ts. Screenshots go to
// test-artifacts/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { defaultIngest, type TestAppliance } from '../support/appliance.ts';
import { screenshot, signedInPage, signInWithForm, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
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

const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();

/** Recent events (minutes ago), one with quotes, a comma and a backslash to exercise quoting and CSV. */
const EVENTS = [
  { timestamp: ago(1), user: 'alice', host: 'web1', status: 200, action: 'login', msg: 'login ok' },
  { timestamp: ago(2), user: 'bob', host: 'web1', status: 404, action: 'get', msg: 'not found /admin' },
  { timestamp: ago(3), user: 'alice', host: 'web2', status: 500, action: 'get', msg: 'said "hi", then left' },
  { timestamp: ago(4), user: 'carol', host: 'db1', status: 200, action: 'query', msg: 'select ok' },
  { timestamp: ago(5), user: 'alice', host: 'web1', status: 200, action: 'logout', msg: 'bye Zoë' },
  { timestamp: ago(6), user: 'dave', host: 'web2', status: 301, action: 'get', msg: 'moved' },
  { timestamp: ago(7), user: 'bob', host: 'db1', status: 500, action: 'query', msg: 'deadlock detected' },
  { timestamp: ago(8), user: 'erin', host: 'web1', status: 200, action: 'login', image: 'C:\\Windows\\cmd.exe', msg: 'login ok' },
];
/** Imported evidence from long ago: outside every relative preset. */
const OLD = [
  { timestamp: '2025-03-01T10:00:00Z', user: 'mallory', host: 'legacy', status: 403, msg: 'old breach attempt' },
  { timestamp: '2025-03-02T11:30:00Z', user: 'mallory', host: 'legacy', status: 200, msg: 'old breach success' },
];

test('search workspace: run, histogram, filter by click, syntax error, export, keyboard, time range in the address, reload', async () => {
  const { page, pageErrors } = await signedInPage(browser, a.url + '/', { downloads: true });

  // ---- the default screen after sign-in: the workspace, empty fractal said in words
  await editor(page).waitFor();
  await page.getByRole('heading', { name: 'This fractal holds no logs yet' }).waitFor();
  assert.match(page.url(), /#\/search\?q=&t=24h&scope=fractal%3A/, 'the view is in the address');
  await screenshot(page, 'search-empty.png');

  // ---- logs arrive through the real ingest endpoint; Ctrl+Enter runs
  await ingest(a, token, fractalId, [...EVENTS, ...OLD]);
  await setQuery(page, '*');
  await page.keyboard.press('Control+Enter');
  await waitDone(page, EVENTS.length);
  const canvas = page.locator('section[aria-label="Events over time"] canvas');
  await canvas.first().waitFor();
  assert.ok((await canvas.first().boundingBox())!.height > 40, 'the histogram is drawn');
  assert.match(await page.locator('section[aria-label="Events over time"]').innerText(), /8 matching events/);
  assert.match(await rows(page).first().innerText(), /login ok/, 'newest first, the message leads the event column');
  // Times in the user's zone, UTC on hover.
  const firstTime = rows(page).first().locator('.time');
  assert.match((await firstTime.getAttribute('title'))!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} UTC$/);
  await screenshot(page, 'search-results.png');
  await page.getByRole('button', { name: /Switch to light/ }).click();
  await screenshot(page, 'search-results-light.png');
  await page.getByRole('button', { name: /Switch to dark/ }).click();

  // ---- click a value: field=value is added and the query runs again with fewer rows
  await rows(page).first().locator('[data-f="user"]').click();
  await waitDone(page, 3);
  assert.equal(await queryText(page), 'user=alice');
  assert.match(page.url(), /q=user%3Dalice/);
  // Alt+click excludes.
  const web2 = rows(page).locator('[data-f="host"]', { hasText: 'web2' });
  await web2.click({ modifiers: ['Alt'] });
  await waitDone(page, 2);
  assert.equal(await queryText(page), 'user=alice | host!=web2');
  // A value with quotes and a comma is quoted by the language's rules.
  await setQuery(page, 'user=alice');
  await page.keyboard.press('Enter');
  await waitDone(page, 3);
  await rows(page).locator('[data-f="msg"]', { hasText: 'said' }).click();
  await waitDone(page, 1);
  assert.equal(await queryText(page), 'user=alice | msg="said \\"hi\\", then left"');

  // ---- a syntax error: underlined at the service's position, its message under the editor
  await setQuery(page, 'status>=');
  const mark = page.locator('.cm-lintRange-error, .cm-lintPoint-error');
  await mark.first().waitFor({ timeout: 10_000 });
  const strip = page.locator('#query-help');
  await page.waitForFunction(() => /Parse error: expected value, got EOF/.test(document.querySelector('#query-help')?.textContent ?? ''));
  assert.match(await strip.innerText(), /Parse error: expected value, got EOF/);
  await screenshot(page, 'search-error.png');
  // Running it anyway: the refusal is shown in the service's words where the user acted.
  await page.keyboard.press('Control+Enter');
  await page.getByRole('alert').filter({ hasText: 'Parse error: expected value, got EOF' }).waitFor();

  // ---- export the current result as CSV and NDJSON, and read the files back
  await setQuery(page, 'user=alice');
  await page.keyboard.press('Control+Enter');
  await waitDone(page, 3);
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  assert.match(csvDownload.suggestedFilename(), /^search-default-.*\.csv$/);
  const csv = readFileSync((await csvDownload.path())!, 'utf8');
  const lines = csv.split('\r\n');
  assert.equal(lines[0], 'timestamp,norm_log,log_id,fractal_id', 'columns = field_order');
  assert.equal(lines.length, 5, 'header, three rows, final CRLF');
  assert.equal(lines[4], '');
  const said = lines.find((l) => l.includes('said'))!;
  assert.ok(said.includes('said \\""hi\\"", then left'), `RFC 4180 doubles the quotes of the JSON text: ${said}`);
  assert.ok(said.endsWith(`,${fractalId}`));
  assert.match(lines[1]!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3},"\{/);
  const [ndDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'NDJSON' }).click()]);
  const nd = readFileSync((await ndDownload.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(nd.length, 3);
  assert.deepEqual(nd.map((r) => r.user).sort(), ['alice', 'alice', 'alice']);
  assert.ok(nd.some((r) => r.msg === 'said "hi", then left'));

  // ---- keyboard: j/k step through rows, Enter opens one, Escape closes it
  await page.locator('[role="grid"]').focus();
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('k');
  assert.equal(await page.locator('[role="row"][aria-selected="true"]').getAttribute('data-i'), '1');
  await page.keyboard.press('Enter');
  // An event row opens in the log detail (its fields, original record, surrounding logs, comments).
  const detail = page.getByRole('complementary', { name: /^Log \d{4}-/ });
  await detail.waitFor();
  const detailFields = detail.getByRole('table', { name: 'Fields of the log' });
  assert.match(await detailFields.innerText(), /user\s+alice/);
  assert.match(await detailFields.innerText(), /msg\s+said "hi", then left/);
  // Stepping with the detail open follows the active row.
  await page.keyboard.press('j');
  await detailFields.getByText('bye Zoë').waitFor();
  assert.equal(await page.locator('[role="row"][aria-selected="true"]').getAttribute('data-i'), '2');
  await screenshot(page, 'search-row-open.png');
  await page.keyboard.press('Escape');
  await detail.waitFor({ state: 'detached' });

  // ---- time picker: a preset goes into the address and the query runs again
  await page.getByRole('button', { name: /^Time range:/ }).click();
  await page.getByRole('button', { name: 'Last 15 minutes' }).click();
  await page.waitForFunction(() => location.hash.includes('t=15m'));
  await waitDone(page, 3);
  assert.match(page.url(), /q=user%3Dalice&t=15m&scope=fractal%3A/);

  // ---- reload the address: the same view comes back
  const url = page.url();
  await page.reload();
  await waitDone(page, 3);
  assert.equal(page.url(), url);
  assert.equal(await queryText(page), 'user=alice');
  assert.match((await page.getByRole('button', { name: /^Time range:/ }).getAttribute('aria-label'))!, /Last 15 minutes/);

  // ---- the history remembers what ran; ArrowUp in the editor recalls it
  await setQuery(page, '');
  await page.keyboard.press('ArrowUp');
  assert.equal(await queryText(page), 'user=alice');
  await page.keyboard.press('ArrowUp');
  assert.equal(await queryText(page), 'status>=');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await queryText(page), '', 'back to the draft');

  // A formula in a logged value: the plain CSV keeps it exact (evidence), "CSV for Excel" makes it inert text.
  await setQuery(page, 'user=bob | replace("not found", "=1+1", msg, f) | table(user, f)');
  await page.keyboard.press('Control+Enter');
  await waitDone(page, 2);
  const csvCell = async (button: string) => {
    const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button, exact: true }).click()]);
    return readFileSync((await d.path())!, 'utf8').split('\r\n').find((l) => l.includes('/admin'))!;
  };
  assert.match(await csvCell('Export CSV'), /^bob,=1\+1 \/admin,/);
  assert.match(await csvCell('CSV for Excel'), /^bob,'=1\+1 \/admin,/);

  assert.deepEqual(pageErrors, []);
  await page.close();
});

test('search workspace: empty default range offers the span, drag-zoom, live tail, cancel, expired session returns to the same view', async () => {
  const { page } = await signedInPage(browser, a.url + '/#/search?q=user%3Dmallory&t=24h');

  // ---- imported evidence is older than the default range: said, and one click searches its span
  await page.getByRole('heading', { name: 'No matching events in the last 24 hours' }).waitFor({ timeout: 15_000 });
  assert.match(await page.locator('.results .empty').innerText(), /This fractal holds \d+ logs from 2025-03-01 10:00:00/);
  await screenshot(page, 'search-empty-range.png');
  await page.getByRole('button', { name: 'Search all its data' }).click();
  await waitDone(page, 2);
  assert.match(page.url(), /t=all/);

  // ---- drag across the histogram: the range zooms to the selection (an absolute range in the address)
  const plot = page.locator('section[aria-label="Events over time"] .u-over');
  const box = (await plot.boundingBox())!;
  await page.mouse.move(box.x + 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 3, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => /from=.*&to=/.test(location.hash));
  await waitDone(page, 2);
  const zoomed = new URL(page.url().replace('#/search?', '?')).searchParams;
  assert.ok(new Date(zoomed.get('from')!) <= new Date('2025-03-01T10:00:00Z'));
  assert.ok(new Date(zoomed.get('to')!) < new Date(Date.now() - 30 * 86400_000), 'the range ends long before now');
  assert.match(await page.getByRole('button', { name: /^Time range:/ }).innerText(), /→/);

  // ---- live tail: new logs go on top without a re-run by hand, and the rows being read stay in place
  await ingest(
    a,
    token,
    fractalId,
    Array.from({ length: 40 }, (_, i) => ({ timestamp: ago(2 + i / 10), host: 'live', msg: `bulk event ${i}` })),
  );
  await setQuery(page, 'host=live');
  await page.getByRole('button', { name: /^Time range:/ }).click();
  await page.getByRole('button', { name: 'Last 15 minutes' }).click();
  await waitDone(page, 40);
  const grid = page.locator('[role="grid"]');
  await grid.evaluate((el) => (el.scrollTop = 240)); // row 10 at the top of the view
  const reading = await page.locator('[role="row"][data-i="10"]').innerText();
  await page.getByRole('button', { name: 'Live' }).click();
  await ingest(a, token, fractalId, [{ timestamp: new Date().toISOString(), host: 'live', msg: 'tailed event' }]);
  await page.waitForFunction(() => /\+1 live/.test(document.querySelector('.toolbar [role="status"]')?.textContent ?? ''), undefined, {
    timeout: 15_000,
  });
  assert.equal(await grid.evaluate((el) => el.scrollTop), 264, 'moved down by the one new row');
  assert.equal(await page.locator('[role="row"][data-i="11"]').innerText(), reading, 'the same event is still at the top of the view');
  await grid.evaluate((el) => (el.scrollTop = 0));
  await page.locator('[role="row"][data-i="0"]', { hasText: 'tailed event' }).waitFor();
  assert.equal(await rows(page).count() > 0, true);
  await page.getByRole('button', { name: 'Live' }).click();

  // ---- a query in progress shows its progress and can be cancelled (the stream is held back here
  // until the cancel has been seen, however slow the machine)
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/api/v1/query/stream', async (route) => {
    await held;
    await route.continue().catch(() => undefined); // cancelled meanwhile
  });
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => /Running… 0 rows · \d/.test(document.querySelector('.toolbar [role="status"]')?.textContent ?? ''));
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.waitForFunction(() => /Cancelled after 0 rows/.test(document.querySelector('.toolbar [role="status"]')?.textContent ?? ''));
  await page.getByRole('button', { name: 'Run' }).waitFor();
  release();
  await page.unroute('**/api/v1/query/stream');

  // ---- the session ends: sign-in, then the same view
  const before = page.url();
  await page.context().clearCookies();
  await setQuery(page, 'user=bob');
  await page.keyboard.press('Control+Enter');
  await page.getByLabel('Username').waitFor();
  await signInWithForm(page);
  await editor(page).waitFor();
  await waitDone(page, 2);
  assert.equal(await queryText(page), 'user=bob');
  assert.match(page.url(), /q=user%3Dbob&t=15m/);
  assert.notEqual(page.url(), before);

  // ---- another page and back by "Search": the same view, not an empty one
  await page.getByRole('link', { name: 'Home', exact: true }).click();
  await page.getByRole('heading', { name: 'default', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'Search', exact: true }).click();
  await waitDone(page, 2);
  assert.equal(await queryText(page), 'user=bob');
  assert.match(page.url(), /#\/search\?q=user%3Dbob&t=15m/);
  await page.close();
});

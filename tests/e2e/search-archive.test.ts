// Search in place in a real browser: old logs the hot store no longer holds (hot retention took
// them; the local archive keeps them) are found by searching their window; the results header says
// the result includes the archive and how much it scanned, archived rows are marked, and the
// "Include archive" toggle in the query bar is reached and pressed with the keyboard.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { expectOk } from '../support/api.ts';
import { ADMIN_PASSWORD, defaultIngest, signIn, type TestAppliance } from '../support/appliance.ts';
import { screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingest } from '../support/query.ts';
import { rows, waitDone } from '../support/workspace.ts';
import { waitFor } from '../support/wait.ts';

let a: TestAppliance;
let browser: Browser;

before(async () => {
  ({ a, browser } = await startBrowserTest({}, { SVC_ARCHIVE_ROLL_S: '3600' }));
});
after(() => stopBrowserTest(a, browser));

const OLD = [
  { timestamp: '2025-03-01T10:00:00Z', user: 'mallory', host: 'legacy', msg: 'old breach attempt' },
  { timestamp: '2025-03-01T11:30:00Z', user: 'mallory', host: 'legacy', msg: 'old breach success' },
  { timestamp: '2025-03-01T12:15:00Z', user: 'trent', host: 'legacy', msg: 'old audit' },
];
const RECENT = [{ timestamp: '2025-03-02T09:00:00Z', user: 'alice', host: 'web1', msg: 'next morning' }];

test('an old window is answered from the archive: archived rows marked, the scan in the header, the toggle by keyboard', async () => {
  const { fractalId, token } = defaultIngest(a);
  const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  expectOk(await admin.put('/api/v1/archive', { enabled: true }));
  await ingest(a, token, fractalId, [...OLD, ...RECENT]);
  await waitFor('the archive to hold the logs', async () => {
    await a.context.archive.archiver.flush();
    return a.context.archive.status(fractalId).logs === 4;
  });
  // Hot retention took the first day; the archive keeps it.
  const ch = a.context.ch;
  await ch.client.command({
    query: `ALTER TABLE ${ch.table('logs')} DELETE WHERE fractal_id = {id:UUID} AND timestamp < '2025-03-02 00:00:00'`,
    query_params: { id: fractalId },
    clickhouse_settings: { mutations_sync: '2' },
  });

  const window = `from=2025-03-01T00:00:00.000Z&to=2025-03-02T23:59:59.000Z`;
  const { page, pageErrors } = await signedInPage(browser, `${a.url}/#/search?q=&${window}&scope=fractal%3A${fractalId}`);
  await waitDone(page, 4);
  const status = page.locator('.toolbar [role="status"]');
  await status.locator('.archive-scan').waitFor();
  assert.match(await status.innerText(), /Archive · 1 file · [\d.,]+ (KB|MB) · 4 rows/, "the one file (one ingest day) holds all four");
  const archived = rows(page).locator('.archived-mark');
  assert.equal(await archived.count(), 3, 'the three archived rows are marked');
  assert.match(await rows(page).first().innerText(), /next morning/, 'the hot row leads (newest first), unmarked');
  assert.equal(await rows(page).first().locator('.archived-mark').count(), 0);
  assert.doesNotMatch(await rows(page).nth(1).innerText(), /from_archive/, 'the marker is no field of the event');
  await screenshot(page, 'search-archive.png');

  // The toggle: reached with Tab from the time picker, pressed with Space, the query runs with it.
  const toggle = page.getByRole('button', { name: 'Include archive' });
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
  await toggle.focus();
  await page.keyboard.press('Space');
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  const sent = page.waitForRequest((r) => r.url().endsWith('/api/v1/query/stream') && JSON.parse(r.postData() ?? '{}').include_archive === true);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await sent;
  await waitDone(page, 4);
  assert.equal(await rows(page).locator('.archived-mark').count(), 3, 'the hot store still has the newest log: it is not read twice');
  assert.match(await status.innerText(), /Archive · 1 file/);
  assert.equal(await page.locator('#field-column').getByText('from_archive').count(), 0, 'the mark is no field in the sidebar');

  // A window from the hot store's oldest log on, without the toggle, does not read or mention the archive.
  await page.goto(`${a.url}/#/search?q=&from=2025-03-02T09:00:00.000Z&to=2025-03-02T23:59:59.000Z&scope=fractal%3A${fractalId}`);
  await page.reload();
  await waitDone(page, 1);
  assert.equal(await status.locator('.archive-scan').count(), 0);
  assert.deepEqual(pageErrors, []);
});

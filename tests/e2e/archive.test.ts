// The archive pages in a real browser: an administrator switches the archive on for a local folder
// (a folder that cannot be written refused inline with the service's sentence), logs are ingested
// and appear in the fractal's archive status, a restore job runs to done with its progress shown
// part-way (then its window opens in the search workspace), a reconcile is cancelled part-way from the page, and the fractal's lifecycle section
// edits hot retention, archive retention and quota; a user who is no global admin has no archive
// settings page and cannot restore. Screenshots in the dark and the light theme.
//
// A job reads one archived file at a time; to see it part-way every time (not only when the machine
// happens to be slow), the test holds the hot store's real restore of the second file until it has
// looked, then lets it go on.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, makeUser, passwordOf, signIn, type TestAppliance } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { collectPageErrors, screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingestFractal } from '../support/ingest.ts';
import { storedLogs } from '../support/logs.ts';
import { ingest } from '../support/query.ts';
import { waitFor } from '../support/wait.ts';
import { waitDone } from '../support/workspace.ts';

let a: TestAppliance;
let browser: Browser;

before(async () => {
  // Rolls are cut by the test (flush), one archived file per batch, not by time.
  ({ a, browser } = await startBrowserTest({}, { SVC_ARCHIVE_ROLL_S: '3600' }));
});
after(() => stopBrowserTest(a, browser));

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name, exact: true });

/** Holds the hot store's restore of the `nth` archived file a job reads until release() is called. */
function holdRestoreOf(nth: number) {
  const logs = a.context.logs;
  const real = logs.restoreFrom.bind(logs);
  let calls = 0;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  logs.restoreFrom = async (...args) => {
    if (++calls === nth) await held;
    return real(...args);
  };
  return {
    release() {
      release();
      logs.restoreFrom = real;
    },
  };
}

test('archive: switched on for a local folder, status of archived logs, restore with progress, cancel, lifecycle; none of it for others', async () => {
  const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  const { page, pageErrors } = await signedInPage(browser, `${a.url}/#/admin/archive`);
  await page.getByRole('heading', { name: 'Archive', level: 1 }).waitFor();
  const state = page.getByRole('status', { name: 'Archive state' });
  await state.getByText('off', { exact: true }).waitFor();

  // ---- a folder that cannot be written: the service's sentence under the form, nothing kept
  const settings = page.getByRole('form', { name: 'Archive settings' });
  const notAFolder = path.join(a.dataDir, 'a-file');
  writeFileSync(notAFolder, 'not a folder');
  await settings.getByRole('switch', { name: 'Archive every accepted log' }).check();
  assert.equal(await settings.getByRole('radio', { name: 'Local folder' }).isChecked(), true, 'a local folder by default');
  const folder = settings.getByLabel('Folder', { exact: true });
  assert.equal(await folder.inputValue(), path.join(a.dataDir, 'archive'), 'the default folder is shown');
  await folder.fill(path.join(notAFolder, 'archive'));
  await folder.press('Enter');
  await settings.getByRole('alert').filter({ hasText: `The archive folder ${path.join(notAFolder, 'archive')} cannot be written (ENOTDIR); check the path` }).waitFor();
  assert.equal(a.context.archive.settings().enabled, false, 'refused settings are not kept');

  await folder.fill('archive');
  await settings.getByRole('button', { name: 'Save archive settings' }).click();
  await settings.getByRole('alert').filter({ hasText: 'path must be an absolute folder path; "archive" is relative.' }).waitFor();

  // ---- an external folder: kept, and the state says it archives
  const external = path.join(a.dataDir, 'external-disk', 'archive');
  await folder.fill(external);
  await folder.press('Enter');
  await settings.getByRole('status').filter({ hasText: /^Saved at/ }).waitFor();
  await state.getByText('archiving', { exact: true }).waitFor();
  assert.deepEqual([a.context.archive.settings().enabled, a.context.archive.settings().path], [true, external]);
  await screenshot(page, 'archive-settings-dark.png', { fullPage: true });

  // ---- logs of three days ingested, each batch rolled into its own archived file
  const f = await ingestFractal(admin, 'edge-proxy');
  const day = (d: number) => Array.from({ length: 10 }, (_, i) => ({ timestamp: `2024-03-0${d}T10:0${i}:00Z`, host: `proxy-${d}`, msg: `request ${d}-${i}` }));
  for (const d of [1, 2, 3]) {
    await ingest(a, f.token, f.id, day(d));
    await waitFor(`day ${d} to be archived`, async () => {
      await a.context.archive.archiver.flush();
      return a.context.archive.status(f.id).logs >= d * 10;
    });
  }

  // The overview shows it (after a refresh from the keyboard), and leads to the fractal's archive.
  await folder.blur(); // out of the field, keys are the page's shortcuts
  await page.keyboard.press('r');
  const overview = page.getByRole('table', { name: 'Fractals in the archive' });
  const row = overview.locator('tbody > tr').filter({ hasText: 'edge-proxy' });
  await row.getByText('30', { exact: true }).waitFor();
  await row.getByRole('link', { name: 'Archive of edge-proxy' }).click();
  await page.getByRole('heading', { name: 'Fractal archive', level: 1 }).waitFor();
  const status = page.locator('dl[aria-label="Archive status of edge-proxy"]');
  await status.waitFor();
  const figure = async (name: string) => (await status.locator('div', { has: page.getByText(name, { exact: true }) }).locator('dd').innerText()).trim();
  await waitFor('the figures', async () => (await figure('Archived logs')) === '30');
  assert.equal(await figure('Files'), '3');
  assert.equal(await figure('Oldest (UTC)'), '2024-03-01 10:00:00');
  assert.equal(await figure('Newest (UTC)'), '2024-03-03 10:09:00');
  assert.equal(await figure('Waiting to be archived'), '0 logs');
  assert.match(await page.getByText('Iceberg table').innerText(), /external-disk\/archive\/.+\/metadata\/v\d+\.metadata\.json/);

  // ---- the hot store loses the fractal; a restore of the whole window, seen part-way, to done
  await a.context.logs.deleteFractal(f.id);
  assert.equal((await storedLogs(a, f.id)).length, 0);
  const form = page.getByRole('form', { name: 'Restore a window' });
  assert.equal(await form.getByLabel('From (UTC)').inputValue(), '2024-03-01 10:00', 'the window starts as everything archived');
  assert.equal(await form.getByLabel('To (UTC)').inputValue(), '2024-03-03 10:10');
  await page.keyboard.press('w');
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-keyshortcuts')), 'w', 'w goes to the window');
  await page.keyboard.type('yesterday');
  await page.keyboard.press('Enter');
  await form.getByRole('alert').filter({ hasText: '"yesterday" is not a time: write it as 2024-03-01 10:00 (UTC).' }).waitFor();

  let hold = holdRestoreOf(2);
  await form.getByLabel('From (UTC)').fill('2024-03-01 00:00');
  await form.getByRole('button', { name: 'Restore window' }).click();
  const jobs = page.getByRole('list', { name: 'Restore jobs of edge-proxy' });
  const first = jobs.getByRole('listitem').first();
  await first.getByText('Restoring · 33% · 1 of 3 files').waitFor();
  assert.equal(await first.getByRole('progressbar', { name: 'Restore progress' }).getAttribute('aria-valuenow'), '33');
  await screenshot(page, 'archive-restore-running-dark.png', { fullPage: true });
  hold.release();
  await first.getByText('30 restored, 0 already there · 3 of 3 files').waitFor();
  assert.equal(await first.locator('.badge').innerText(), 'done');
  assert.equal((await storedLogs(a, f.id)).length, 30, 'the hot store has them back');
  // On to the workspace over that window of the fractal, then back.
  await first.getByRole('link', { name: 'Search 2024-03-01 00:00:00 → 2024-03-03 10:10:00' }).click();
  await waitDone(page, 30);
  assert.match(decodeURIComponent(page.url()), new RegExp(`#/search\\?q=&from=2024-03-01T00:00:00.000Z&to=2024-03-03T10:10:00.000Z&scope=fractal:${f.id}$`));
  await page.goBack();
  await first.getByText('30 restored, 0 already there · 3 of 3 files').waitFor();

  // ---- a reconcile cancelled part-way: what was read stays, the rest is not read
  await a.context.logs.deleteFractal(f.id);
  hold = holdRestoreOf(2);
  await page.getByRole('button', { name: 'Reconcile all' }).click();
  const second = jobs.getByRole('listitem').first();
  await second.getByText('Restoring · 33% · 1 of 3 files').waitFor();
  const cancelled = page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().includes('/api/v1/archive/jobs/'));
  await second.getByRole('button', { name: /^Cancel the restore of/ }).click();
  assert.equal((await cancelled).status(), 200);
  await second.getByText('cancelling', { exact: true }).waitFor();
  hold.release();
  await second.getByText('cancelled', { exact: true }).waitFor();
  await second.getByText('20 restored, 0 already there · 2 of 3 files').waitFor();
  assert.equal((await storedLogs(a, f.id)).length, 20, 'the file being read when cancelled finished; the third was not read');

  // The history survives a reload, newest first.
  await page.reload();
  await jobs.waitFor();
  assert.deepEqual(await jobs.locator(':scope > li .badge').allInnerTexts(), ['cancelled', 'done']);
  await page.getByRole('button', { name: /Theme: dark/ }).click();
  await screenshot(page, 'archive-fractal-light.png', { fullPage: true });

  // ---- the lifecycle of the fractal: hot retention, archive retention and quota together
  await nav(page, 'Fractals').click();
  await page.getByRole('button', { name: 'Edit edge-proxy' }).click();
  const lifecycle = page.getByRole('region', { name: 'Lifecycle of edge-proxy' });
  await lifecycle.getByRole('note').filter({ hasText: 'The archive is on: hot retention and the quota delete from the hot store only logs the archive already holds' }).waitFor();
  await lifecycle.getByText('Holds 30 logs').waitFor();
  await lifecycle.getByLabel('Hot store: keep for (days)').fill('7');
  await lifecycle.getByLabel('Hot store: keep for (days)').press('Enter');
  await lifecycle.getByRole('status').filter({ hasText: 'Saved: 7 days.' }).waitFor();
  await lifecycle.getByLabel('Archive: keep for (days)').fill('0');
  await lifecycle.getByRole('button', { name: 'Save archive retention' }).click();
  await lifecycle.getByRole('alert').first().waitFor();
  await lifecycle.getByLabel('Archive: keep for (days)').fill('3650');
  await lifecycle.getByRole('button', { name: 'Save archive retention' }).click();
  await lifecycle.getByRole('status').filter({ hasText: 'Saved: archived for 3650 days.' }).waitFor();
  await lifecycle.getByLabel('Quota', { exact: true }).fill('2');
  await lifecycle.getByLabel('When full').selectOption('rollover');
  await lifecycle.getByRole('button', { name: 'Save quota' }).click();
  const fractalRow = page.getByRole('table', { name: 'Fractals' }).locator('tbody > tr').filter({ hasText: 'edge-proxy' }).first();
  await fractalRow.getByText('archive: 3650 days').waitFor();
  await fractalRow.getByText('2.00 GiB · drop oldest').waitFor();
  const saved = a.context.fractals.get(f.id)!;
  assert.deepEqual([saved.retention_days, saved.archive_retention_days, saved.quota_bytes, saved.quota_action], [7, 3650, 2 * 1024 ** 3, 'rollover']);
  await lifecycle.getByLabel('Archive: keep for (days)').fill('');
  await lifecycle.getByRole('button', { name: 'Save archive retention' }).click();
  await lifecycle.getByRole('status').filter({ hasText: 'Saved: the archive keeps them forever.' }).waitFor();
  assert.equal(a.context.fractals.get(f.id)!.archive_retention_days, null, 'empty keeps the archive forever');
  await screenshot(page, 'archive-lifecycle-light.png', { fullPage: true });
  await page.getByRole('button', { name: /Theme: light/ }).click();
  await screenshot(page, 'archive-lifecycle-dark.png', { fullPage: true });
  assert.deepEqual(pageErrors, []);
  await page.close();

  // ---- a viewer of the fractal who is no global admin: no settings page, status only
  await makeUser(admin, 'analyst-1');
  expectOk(await admin.post(`/api/v1/fractals/${f.id}/permissions`, { username: 'analyst-1', role: 'viewer' }), 201);
  const other = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const otherErrors = collectPageErrors(other);
  await other.goto(`${a.url}/#/admin/fractal-archive?fractal=${f.id}`);
  await other.getByLabel('Username').fill('analyst-1');
  await other.getByLabel('Password').fill(passwordOf('analyst-1'));
  await other.getByRole('button', { name: 'Sign in' }).click();
  await other.getByRole('heading', { name: 'Fractal archive', level: 1 }).waitFor();
  await other.locator('dl[aria-label="Archive status of edge-proxy"]').waitFor();
  await other.getByText('Restoring needs the admin role on this fractal; ask one of its admins.').waitFor();
  assert.equal(await other.getByRole('form', { name: 'Restore a window' }).count(), 0);
  assert.equal(await nav(other, 'Archive').count(), 0, 'no settings page in the navigation');
  await other.goto(`${a.url}/#/admin/archive`);
  await other.getByRole('heading', { name: 'Nothing here' }).waitFor();
  assert.equal(await other.getByRole('form', { name: 'Archive settings' }).count(), 0);
  assert.deepEqual(otherErrors, []);
  await other.close();
});

// The Evidence page in a real browser against a real appliance: files dropped on the window (as the
// desktop shell's window gets them) open the import page, each file shows its upload and import
// progress to completion with its format and counts, the events are found by "Search these events",
// a ragged CSV dropped on the drop zone shows the line it refused, the keyboard opens the file
// picker from the drop zone, and the custody log lists every file and verifies; dark and light.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, signIn, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectOk } from '../support/api.ts';
import { screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { unpackEvtxSamples, type EvtxSamples } from '../support/evtx-samples.ts';

let a: TestAppliance;
let browser: Browser;
let samples: EvtxSamples;

before(async () => {
  samples = unpackEvtxSamples();
  ({ a, browser } = await startBrowserTest());
});
after(async () => {
  await stopBrowserTest(a, browser);
  samples.remove();
});

/** Drops files on `selector` as a desktop drag would (a DataTransfer holding them). */
async function dropFiles(page: Page, selector: string, files: Array<{ name: string; data: Buffer }>): Promise<void> {
  const transfer = await page.evaluateHandle((list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
    return dt;
  }, files.map((f) => ({ name: f.name, b64: f.data.toString('base64') })));
  await page.locator(selector).first().dispatchEvent('dragover', { dataTransfer: transfer });
  await page.locator(selector).first().dispatchEvent('drop', { dataTransfer: transfer });
}

test('drop files on the window, watch them import, search their events, verify the custody log', async () => {
  const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  const fractal = await createFractal(admin, 'case-42');
  expectOk(await admin.post(`/api/v1/fractals/${fractal.id}/select`));

  const evtx = readFileSync(samples.files.find((f) => f.endsWith('DE_1102_security_log_cleared.evtx'))!);
  // Large enough that reading it takes a while: the import's own progress shows between 0 and 100.
  const lines: string[] = [];
  for (let i = 0; i < 150_000; i++) lines.push(`{"timestamp":"2018-07-0${(i % 9) + 1}T12:00:00Z","host":"web-${i % 7}","seq":${i},"msg":"request ${i} served"}`);
  const big = gzipSync(lines.join('\n'));

  const { page, pageErrors } = await signedInPage(browser, a.url + '/#/search');
  await page.locator('main').waitFor();
  // Record every value the import progress bars take, however briefly they show.
  await page.evaluate(() => {
    const seen: number[] = ((window as unknown as { progressSeen: number[] }).progressSeen = []);
    new MutationObserver(() => {
      for (const bar of document.querySelectorAll('[role="progressbar"][aria-label^="Import of"]')) seen.push(Number(bar.getAttribute('aria-valuenow')));
    }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-valuenow'] });
  });

  // Dropped on the search workspace, as on the desktop window: the import page opens with them.
  await dropFiles(page, 'main', [
    { name: 'Security-cleared.evtx', data: evtx },
    { name: 'web-requests.ndjson.gz', data: big },
  ]);
  await page.waitForURL(/#\/evidence$/);
  await page.getByRole('heading', { name: 'Evidence', level: 1 }).waitFor();
  const files = page.getByRole('list', { name: 'Files being imported' });
  const evtxRow = files.getByRole('listitem').filter({ hasText: 'Security-cleared.evtx' });
  const bigRow = files.getByRole('listitem').filter({ hasText: 'web-requests.ndjson.gz' });
  await evtxRow.locator('.badge', { hasText: 'done' }).waitFor();
  await evtxRow.getByText('evtx', { exact: true }).waitFor();
  await evtxRow.getByText('via Windows event logs (.evtx)').waitFor();
  assert.equal(await bigRow.getByText(/^via /).count(), 0, 'the other file went through the fractal\'s normalizer');
  await bigRow.locator('.badge', { hasText: 'done' }).waitFor();
  await bigRow.getByText('150,000 events imported').waitFor();
  await bigRow.getByText('ndjson · gzip').waitFor();
  const seen = await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);
  assert.ok(seen.some((v) => v > 0 && v < 100), `the import's progress showed between 0 and 100: ${JSON.stringify(seen.slice(0, 20))}`);
  await screenshot(page, 'evidence-imports.png', { fullPage: true });

  // A ragged CSV dropped on the drop zone: its refused line is named.
  await dropFiles(page, '.drop', [{ name: 'logins.csv', data: Buffer.from('time,user,action\n2017-01-01T00:00:00Z,alice,login\n2017-01-01T00:01:00Z,bob\n') }]);
  const csvRow = files.getByRole('listitem').filter({ hasText: 'logins.csv' });
  await csvRow.locator('.badge', { hasText: 'done' }).waitFor();
  await csvRow.getByText('1 event imported, 1 rejected').waitFor();
  await csvRow.getByText('CSV line 3: 2 fields where the header row has 3').waitFor();

  // The keyboard: Tab reaches the drop zone, Enter opens the file picker.
  const zone = page.getByRole('button', { name: /Drop files or folders here/ });
  const chooser = page.waitForEvent('filechooser');
  await zone.press('Enter');
  await (await chooser).setFiles({ name: 'auth.log', mimeType: 'text/plain', buffer: Buffer.from('<13>Oct 11 22:14:15 host1 sshd[12]: Accepted password for bob\n') });
  await files.getByRole('listitem').filter({ hasText: 'auth.log' }).locator('.badge', { hasText: 'done' }).waitFor();

  // The custody log: one entry per file, the chain verified.
  const custody = page.getByRole('table', { name: 'Custody log entries' });
  await custody.getByRole('cell', { name: 'auth.log' }).waitFor();
  for (const name of ['Security-cleared.evtx', 'web-requests.ndjson.gz', 'logins.csv']) await custody.getByRole('cell', { name }).waitFor();
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('status').filter({ hasText: /Verified .*all 4 entries chain/ }).waitFor();

  // Dark and light.
  await page.getByRole('button', { name: /Theme: / }).click();
  await screenshot(page, 'evidence-custody-other-theme.png', { fullPage: true });

  // The imported events, at their 2019 times, from the row's link.
  await evtxRow.getByRole('link', { name: 'Search these events' }).click();
  await page.waitForURL(/#\/search\?/);
  await page.getByText('PC01.example.corp').first().waitFor();
  // Dropped with no normalizer chosen, the .evtx file went through the shipped Windows one: its
  // events carry the names Sigma rules use, not evtx_dump's nesting.
  await page.locator('.field-name, button, span').filter({ hasText: /^Provider_Name$/ }).first().waitFor();
  assert.equal(await page.getByText('Event.System.Provider.#attributes.Name').count(), 0);
  // Each row's summary opens with what the event is (its EventID and Computer), not the envelope
  // every event of the log shares.
  const firstPairs = page.locator('.td.event').first().locator('.pair');
  assert.deepEqual(await firstPairs.evaluateAll((ps) => ps.slice(0, 2).map((p) => p.getAttribute('data-f'))), ['EventID', 'Computer']);
  await screenshot(page, 'evidence-search.png');
  assert.deepEqual(pageErrors, []);
});

// Admin › Case archive in a real browser: a fractal exported with the keyboard, its progress to done,
// the archive downloaded (its SHA-256 the one the page shows), then imported from the file picker
// as a new fractal holding the same events; a tampered archive refused with the service's sentence
// naming the file. Screenshots in the dark and the light theme.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { ADMIN_PASSWORD, signIn, type TestAppliance } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingestFractal } from '../support/ingest.ts';
import { storedLogs } from '../support/logs.ts';
import { ingest } from '../support/query.ts';

let a: TestAppliance;
let browser: Browser;

before(async () => {
  ({ a, browser } = await startBrowserTest());
});
after(() => stopBrowserTest(a, browser));

test('case archive page: export with progress and download, import with progress, a tampered archive refused naming the file', async () => {
  const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  const f = await ingestFractal(admin, 'laptop-case');
  await ingest(a, f.token, f.id, [
    { timestamp: '2024-05-01T10:00:00Z', host: 'ws-17', msg: 'macro dropped payload' },
    { timestamp: '2024-05-02T11:30:00.250Z', host: 'ws-17', msg: 'beacon to 203.0.113.9' },
    { timestamp: '2024-05-02T11:31:00Z', host: 'dc1', msg: 'new service installed' },
  ]);
  const { page, pageErrors } = await signedInPage(browser, `${a.url}/#/admin/cases?fractal=${f.id}`, { downloads: true });
  await page.getByRole('heading', { name: 'Case archive', level: 1 }).waitFor();

  // Export, from the keyboard.
  const exportButton = page.getByRole('button', { name: 'Export case' });
  await exportButton.focus();
  await page.keyboard.press('Enter');
  const exports = page.getByRole('list', { name: 'Exports of laptop-case' });
  const download = exports.getByRole('link', { name: /^Download case-laptop-case-.*\.tar\.gz$/ });
  await download.waitFor({ timeout: 120_000 });
  await exports.getByText('3 of 3 events').waitFor();
  const shown = await exports.locator('.hash .mono').first().innerText();
  await screenshot(page, 'case-archive-dark.png', { fullPage: true });

  const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
  const saved = await file.path();
  const archive = readFileSync(saved);
  assert.equal(createHash('sha256').update(archive).digest('hex'), shown, 'the file downloaded is the archive whose hash the page shows');
  assert.match(file.suggestedFilename(), /^case-laptop-case-\d{8}-\d{4}\.tar\.gz$/);

  // Import it as a new fractal.
  const form = page.getByRole('region', { name: 'Import a case' });
  await form.getByLabel('Archive (.tar.gz or .tar)').setInputFiles({ name: file.suggestedFilename(), mimeType: 'application/gzip', buffer: archive });
  await form.getByLabel('Name of the new fractal (optional)').fill('laptop-case on the box');
  await form.getByRole('button', { name: 'Import case' }).click();
  await form.getByRole('status').filter({ hasText: 'Imported as laptop-case on the box: 3 events.' }).waitFor({ timeout: 120_000 });
  const imported = a.context.fractals.byName('laptop-case on the box');
  assert.ok(imported, 'the fractal exists');
  const strip = (rows: Awaited<ReturnType<typeof storedLogs>>) => rows.map(({ log_id, timestamp, ingest_timestamp, raw, fields_json }) => ({ log_id, timestamp, ingest_timestamp, raw, fields_json }));
  assert.deepEqual(strip(await storedLogs(a, imported.id)), strip(await storedLogs(a, f.id)));
  const custody = expectOk(await admin.get(`/api/v1/fractals/${imported.id}/custody`));
  assert.equal(custody.entries[0].kind, 'case-import');
  assert.equal(custody.entries[0].details.archive_sha256, shown);
  assert.equal(custody.entries[0].details.archive_file, file.suggestedFilename());

  // A tampered archive: one event changed inside, the manifest left as it was.
  const tar = gunzipSync(archive);
  const at = tar.indexOf('ws-17');
  tar.write('ws-18', at, 'latin1');
  const before = a.context.fractals.list().length;
  await form.getByLabel('Archive (.tar.gz or .tar)').setInputFiles({ name: 'tampered.tar', mimeType: 'application/x-tar', buffer: tar });
  await form.getByRole('button', { name: 'Import case' }).click();
  const refusal = form.getByRole('alert');
  await refusal.filter({ hasText: /events\/2024-05-0\d\/0001\.ndjson" was changed/ }).waitFor();
  assert.equal(a.context.fractals.list().length, before, 'nothing was created');

  await page.getByRole('button', { name: /Theme: dark/ }).click();
  await screenshot(page, 'case-archive-light.png', { fullPage: true });
  assert.deepEqual(pageErrors, []);
  await page.close();
});

// Admin › Archive with an S3-compatible bucket (a real S3 server on loopback, s3rver) and a folder
// that breaks: a missing bucket and refused credentials are shown under the form in the service's
// words and nothing is kept; the secret key is write-only ("set", Replace, never shown back); then
// the archive's folder cannot be written while logs arrive: ingest goes on, both archive pages show
// the fault with what to do and the logs waiting (the footer of any page leads there), and once the folder is fixed the archive catches
// up with every log. Screenshots in the dark and the light theme.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import S3rver from 's3rver';
import { ADMIN_PASSWORD, signIn, type TestAppliance } from '../support/appliance.ts';
import { screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingestFractal } from '../support/ingest.ts';
import { ingest } from '../support/query.ts';
import { waitFor } from '../support/wait.ts';

const s3dir = mkdtempSync(path.join(tmpdir(), 'svc-s3rver-'));
let server: S3rver;
let endpoint: string;
let a: TestAppliance;
let browser: Browser;

before(async () => {
  server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3dir, configureBuckets: [{ name: 'logs-archive', configs: [] }] });
  endpoint = `http://127.0.0.1:${((await server.run()) as { port: number }).port}`;
  // Rolls are cut after a second: the archive writes (and fails) on its own while the page watches.
  ({ a, browser } = await startBrowserTest({}, { SVC_ARCHIVE_ROLL_S: '1' }));
});
after(async () => {
  await stopBrowserTest(a, browser);
  await server.close();
  rmSync(s3dir, { recursive: true, force: true });
});

test('archive settings: S3 refusals inline, a write-only secret; a folder that breaks is shown with what to do, then caught up', async () => {
  const { page, pageErrors } = await signedInPage(browser, `${a.url}/#/admin/archive`);
  const settings = page.getByRole('form', { name: 'Archive settings' });
  await settings.waitFor();

  // ---- S3: a missing bucket, then refused credentials, each in the service's words; nothing kept
  await settings.getByRole('switch', { name: 'Archive every accepted log' }).check();
  await settings.getByRole('radio', { name: 'S3-compatible bucket' }).check();
  await settings.getByLabel('Endpoint').fill(endpoint);
  await settings.getByLabel('Bucket', { exact: true }).fill('no-such-bucket');
  await settings.getByLabel('Prefix').fill('appliance-1');
  await settings.getByLabel('Access key').fill('S3RVER');
  await settings.getByLabel('Secret key').fill('S3RVER');
  await settings.getByLabel('Secret key').press('Enter');
  const refusal = settings.getByRole('alert');
  await refusal.filter({ hasText: 'no-such-bucket' }).waitFor();
  assert.match(await refusal.innerText(), /does not exist/);

  await settings.getByLabel('Bucket', { exact: true }).fill('logs-archive');
  await settings.getByLabel('Access key').fill('nobody');
  await settings.getByRole('button', { name: 'Save archive settings' }).click();
  await refusal.filter({ hasText: /credentials/ }).waitFor();
  assert.equal(a.context.archive.settings().enabled, false, 'refused settings are not kept');
  await screenshot(page, 'archive-s3-refused-dark.png', { fullPage: true });

  // ---- the right keys: kept; the secret is "set", never shown, replaced only on purpose
  await settings.getByLabel('Access key').fill('S3RVER');
  await settings.getByRole('button', { name: 'Save archive settings' }).click();
  await settings.getByRole('status').filter({ hasText: /^Saved at/ }).waitFor();
  const kept = a.context.archive.settings();
  assert.deepEqual([kept.enabled, kept.backend, kept.s3_bucket, kept.s3_prefix, kept.s3_secret_key], [true, 's3', 'logs-archive', 'appliance-1', 'S3RVER']);
  await settings.getByText('set', { exact: true }).waitFor();
  assert.equal(await settings.locator('input[type=password]').count(), 0, 'no field holds the stored secret');
  assert.equal(await page.getByRole('button', { name: 'Save archive settings' }).isDisabled(), true, 'nothing to save');

  // Replace, then think better of it: Undo leaves the stored one.
  await settings.getByRole('button', { name: 'Replace secret key' }).click();
  await settings.getByLabel('Secret key').fill('typed-by-mistake');
  await settings.getByRole('button', { name: 'Undo changes' }).click();
  await settings.getByText('set', { exact: true }).waitFor();
  assert.equal(a.context.archive.settings().s3_secret_key, 'S3RVER');
  // Replace it for real (s3rver checks the access key, not the secret): kept sealed, shown as "set".
  await settings.getByRole('button', { name: 'Replace secret key' }).click();
  await settings.getByLabel('Secret key').fill('rotated-secret');
  await settings.getByRole('button', { name: 'Save archive settings' }).click();
  await settings.getByText('set', { exact: true }).waitFor();
  assert.equal(a.context.archive.settings().s3_secret_key, 'rotated-secret');
  assert.equal(await settings.locator('input[type=password]').count(), 0);
  assert.ok(!(await page.content()).includes('rotated-secret'), 'the secret is nowhere on the page');

  // ---- back to a local folder that then breaks: a file where the fractal's table goes
  const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  const f = await ingestFractal(admin, 'branch-office');
  const folder = path.join(a.dataDir, 'box-archive');
  await settings.getByRole('radio', { name: 'Local folder' }).check();
  await settings.getByLabel('Folder', { exact: true }).fill(folder);
  await settings.getByRole('button', { name: 'Save archive settings' }).click();
  await settings.getByRole('status').filter({ hasText: /^Saved at/ }).waitFor();
  const blocker = path.join(folder, f.id);
  writeFileSync(blocker, 'in the way');

  const events = Array.from({ length: 25 }, (_, i) => ({ timestamp: `2024-06-01T08:00:${String(i).padStart(2, '0')}Z`, msg: `login ${i}` }));
  await ingest(a, f.token, f.id, events); // the hot store has them: ingest never waits for the archive
  const state = page.getByRole('status', { name: 'Archive state' });
  await state.getByText('cannot write', { exact: true }).waitFor();
  const fault = page.getByRole('alert').filter({ hasText: 'The archive cannot write' });
  await fault.getByText(`The archive folder ${folder} cannot be written (ENOTDIR`, { exact: false }).waitFor();
  assert.match(await fault.innerText(), /check the path, its permissions and free space, or that the disk is mounted\. Logs wait in the spool/);
  assert.match(await fault.innerText(), /Ingest goes on; fix the folder or bucket/);
  assert.equal((await state.locator('strong').innerText()).trim(), '25', '25 logs waiting');
  await screenshot(page, 'archive-fault-dark.png', { fullPage: true });
  // Every page's footer tells an admin, and leads to the page that says what to do.
  await page.goto(`${a.url}/#/search`);
  await page.reload();
  await page.getByRole('contentinfo').getByRole('link', { name: 'Archive cannot write · 25 logs waiting' }).click();
  await state.getByText('cannot write', { exact: true }).waitFor();

  // The fractal's own page says it too, and what the logs wait for.
  await page.goto(`${a.url}/#/admin/fractal-archive?fractal=${f.id}`);
  const pageFault = page.getByRole('alert').filter({ hasText: 'The archive cannot write' });
  await pageFault.waitFor();
  assert.match(await pageFault.innerText(), /Logs wait in the spool and are archived once it works again; check the folder or bucket in Archive settings/);
  const status = page.locator('dl[aria-label="Archive status of branch-office"]');
  await status.getByText('25 logs', { exact: true }).waitFor();
  await page.getByRole('button', { name: /Theme: dark/ }).click();
  await screenshot(page, 'archive-fault-light.png', { fullPage: true });

  // ---- fixed: every log archived, the fault gone from the page
  rmSync(blocker);
  await waitFor('the archive to catch up', () => a.context.archive.status(f.id).logs === 25 && a.context.archive.status(f.id).lag_logs === 0);
  await page.keyboard.press('r');
  await status.locator('div', { has: page.getByText('Archived logs', { exact: true }) }).getByText('25', { exact: true }).waitFor();
  await status.getByText('0 logs', { exact: true }).waitFor();
  assert.equal(await pageFault.count(), 0, 'no fault any more');
  assert.deepEqual(pageErrors, []);
  await page.close();
});

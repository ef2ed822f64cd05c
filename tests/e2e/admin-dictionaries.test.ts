// The Dictionaries admin page in a real browser (Debian's Chromium via playwright-core) against a real
// appliance on a fresh data dir: an administrator creates a dictionary (Enter submits), is told in the
// service's words when the name is taken, imports a CSV file and then pasted CSV, sees the rows and the
// row count, searches, edits a row inline, cancels a new row with Escape, deletes a row, sees a CSV
// refusal verbatim, exports the rows as CSV, and runs the page's ready-made match() query in the
// search workspace, whose rows carry a column from the dictionary. Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, defaultIngest, makeUser, passwordOf, signIn, type TestAppliance } from '../support/appliance.ts';
import { grant } from '../support/api.ts';
import { collectPageErrors, screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingest } from '../support/query.ts';
import { rows as resultRows, waitDone } from '../support/workspace.ts';

let a: TestAppliance;
let browser: Browser;

before(async () => {
  ({ a, browser } = await startBrowserTest());
  const { fractalId, token } = defaultIngest(a);
  const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
  await ingest(a, token, fractalId, [
    { timestamp: ago(1), src_ip: '203.0.113.7', action: 'login', msg: 'login from scanner' },
    { timestamp: ago(2), src_ip: '10.0.0.5', action: 'get', msg: 'internal fetch' },
  ]);
});
after(() => stopBrowserTest(a, browser));

const shot = (page: Page, name: string) => screenshot(page, name, { fullPage: true });
const region = (page: Page, name: string | RegExp) => page.getByRole('region', { name });
/** The body rows of a table, each one's first cell holding `text` when given. */
const tableRows = (page: Page, table: string, text?: string) => {
  const all = page.getByRole('table', { name: table, exact: true }).locator('tbody > tr');
  return text === undefined ? all : all.filter({ has: page.locator('td:first-child', { hasText: text }) });
};
/** Waits until the rows table shows exactly these primary keys, in order. */
async function waitForKeys(page: Page, keys: string[]) {
  await page.waitForFunction(
    (want) => {
      const table = document.querySelector('table[aria-label="Rows of threat_intel"]');
      if (!table) return false;
      const got = [...table.querySelectorAll('tbody > tr > td:first-child .value')].map((td) => td.textContent);
      return JSON.stringify(got) === JSON.stringify(want);
    },
    keys,
  );
}

test('dictionaries: create, import a file and pasted CSV, search, edit, delete, export, and match() in the search', async () => {
  const { page, pageErrors } = await signedInPage(browser, a.url + '/', { downloads: true });
  await page.getByRole('link', { name: 'Admin', exact: true }).click();
  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Dictionaries', exact: true }).click();
  await page.getByRole('heading', { name: 'Dictionaries', level: 1 }).waitFor();
  await tableRows(page, 'Dictionaries').filter({ hasText: 'No dictionaries yet' }).waitFor();

  // ---- create with the keyboard: Enter in the last field submits
  const create = region(page, 'New dictionary for default');
  await create.getByLabel('Name', { exact: true }).fill('threat_intel');
  await create.getByLabel('Description').fill('Addresses seen attacking');
  await create.getByLabel('Columns', { exact: true }).fill('ip, threat_score, category');
  await create.getByLabel('Key columns').press('Enter');
  const listed = tableRows(page, 'Dictionaries', 'threat_intel');
  await listed.waitFor();
  assert.match(await listed.innerText(), /own/);
  assert.match(await listed.innerText(), /ip, threat_score, category/);
  assert.equal(await listed.getByTestId('row-count').innerText(), '0');
  await region(page, 'Rows of threat_intel').waitFor();
  assert.match(page.url(), /#\/admin\/dictionaries\?fractal=[^&]+&dict=[0-9a-f-]{36}$/, 'the open dictionary is in the address');

  // The same name again: the service's sentence under the form.
  await create.getByLabel('Name', { exact: true }).fill('threat_intel');
  await create.getByLabel('Columns', { exact: true }).fill('ip');
  await create.getByRole('button', { name: 'Create dictionary' }).click();
  assert.equal(await create.getByRole('alert').innerText(), 'A dictionary named "threat_intel" already exists here.');
  await create.getByLabel('Name', { exact: true }).fill('');
  await create.getByLabel('Columns', { exact: true }).fill('');

  // ---- import a CSV file (add/update)
  const importer = page.getByRole('form', { name: 'Import CSV into threat_intel' });
  await importer.getByLabel('CSV file').setInputFiles({
    name: 'intel.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from('ip,threat_score,category\r\n203.0.113.7,90,scanner\r\n198.51.100.2,75,botnet\r\n192.0.2.44,40,"spam, bulk"\r\n'),
  });
  assert.match(await importer.innerText(), /intel\.csv/);
  await importer.getByRole('button', { name: 'Import' }).click();
  await importer.getByRole('status').filter({ hasText: 'Wrote 3 rows; threat_intel now holds 3.' }).waitFor();
  await waitForKeys(page, ['192.0.2.44', '198.51.100.2', '203.0.113.7']);
  assert.match(await tableRows(page, 'Rows of threat_intel', '192.0.2.44').innerText(), /spam, bulk/, 'a quoted comma stays in its value');
  await listed.getByTestId('row-count').filter({ hasText: /^3$/ }).waitFor();

  // ---- pasted CSV: one row updated, one added; Ctrl+Enter imports. A column the header leaves out
  // keeps its value in the updated row and is empty in the new one.
  const paste = importer.getByLabel('CSV text');
  await paste.fill('ip,category\n198.51.100.2,botnet-c2\n100.64.1.1,tor-exit');
  await paste.press('Control+Enter');
  await importer.getByRole('status').filter({ hasText: 'Wrote 2 rows; threat_intel now holds 4.' }).waitFor();
  await waitForKeys(page, ['100.64.1.1', '192.0.2.44', '198.51.100.2', '203.0.113.7']);
  assert.deepEqual((await tableRows(page, 'Rows of threat_intel', '198.51.100.2').locator('td').allInnerTexts()).slice(0, 3), ['198.51.100.2', '75', 'botnet-c2']);
  assert.deepEqual((await tableRows(page, 'Rows of threat_intel', '100.64.1.1').locator('td').allInnerTexts()).slice(0, 3), ['100.64.1.1', '', 'tor-exit']);
  await listed.getByTestId('row-count').filter({ hasText: /^4$/ }).waitFor();
  assert.match(await region(page, 'Rows of threat_intel').innerText(), /Rows 1–4 of 4/);

  // A column the dictionary lacks: refused in the service's words, nothing written.
  await paste.fill('ip,owner\n10.0.0.5,it');
  await importer.getByRole('button', { name: 'Import' }).click();
  const refusal = importer.getByRole('alert');
  await refusal.waitFor();
  assert.match(await refusal.innerText(), /CSV row 2 has the column "owner", which the dictionary "threat_intel" does not have/);
  await shot(page, 'admin-dictionary-import-error.png');
  await paste.fill('');
  await page.getByRole('heading', { name: 'Dictionaries', level: 1 }).scrollIntoViewIfNeeded();
  await shot(page, 'admin-dictionaries.png');

  // ---- search
  const searchBox = page.getByLabel('Search rows of threat_intel');
  await searchBox.fill('BOTNET');
  await waitForKeys(page, ['198.51.100.2']);
  assert.match(await region(page, 'Rows of threat_intel').innerText(), /Rows 1–1 of 1 matching the search/);
  await searchBox.fill('');
  await searchBox.press('Enter');
  await waitForKeys(page, ['100.64.1.1', '192.0.2.44', '198.51.100.2', '203.0.113.7']);

  // ---- edit a row inline: its key is fixed, Enter saves
  await page.getByRole('button', { name: 'Edit row 192.0.2.44' }).click();
  const edit = page.getByRole('form', { name: 'Edit row 192.0.2.44' });
  assert.ok(await edit.getByLabel('ip', { exact: true }).isDisabled(), 'the primary key cannot change');
  assert.equal(await edit.getByLabel('category', { exact: true }).inputValue(), 'spam, bulk');
  await edit.getByLabel('threat_score', { exact: true }).fill('55');
  await shot(page, 'admin-dictionary-edit-row.png');
  await edit.getByLabel('threat_score', { exact: true }).press('Enter');
  await edit.waitFor({ state: 'detached' });
  await page.getByRole('status').filter({ hasText: 'Row 192.0.2.44 saved.' }).waitFor();
  await tableRows(page, 'Rows of threat_intel', '192.0.2.44').locator('td').nth(1).filter({ hasText: /^55$/ }).waitFor();
  assert.match(await tableRows(page, 'Rows of threat_intel', '192.0.2.44').innerText(), /spam, bulk/, 'the other values stay');

  // A new row, then Escape: nothing is written.
  await page.getByRole('button', { name: 'Add row' }).click();
  const fresh = page.getByRole('form', { name: 'New row in threat_intel' });
  assert.ok(await fresh.getByLabel('ip', { exact: true }).evaluate((el) => el === document.activeElement), 'typing starts in the first field');
  await page.keyboard.type('1.2.3.4');
  await page.keyboard.press('Escape');
  await fresh.waitFor({ state: 'detached' });
  await listed.getByTestId('row-count').filter({ hasText: /^4$/ }).waitFor();

  // ---- delete a row
  await page.getByRole('button', { name: 'Delete row 100.64.1.1' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete row 100.64.1.1?' });
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await waitForKeys(page, ['192.0.2.44', '198.51.100.2', '203.0.113.7']);
  await listed.getByTestId('row-count').filter({ hasText: /^3$/ }).waitFor();

  // ---- export the rows as CSV
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  assert.equal(download.suggestedFilename(), 'dictionary-threat_intel.csv');
  assert.equal(
    readFileSync((await download.path())!, 'utf8'),
    'ip,threat_score,category\r\n192.0.2.44,55,"spam, bulk"\r\n198.51.100.2,75,botnet-c2\r\n203.0.113.7,90,scanner\r\n',
  );

  // ---- the ready-made query, for the field the logs use
  const usage = region(page, 'Use threat_intel in a query');
  const queryBox = usage.getByTestId('usage-query');
  assert.equal(await queryBox.innerText(), '* | match(dict="threat_intel", field=ip, column=ip, include=[threat_score,category])');
  await usage.getByLabel('Field of your logs holding the ip').fill('src_ip');
  const q = '* | match(dict="threat_intel", field=src_ip, column=ip, include=[threat_score,category])';
  assert.equal(await queryBox.innerText(), q);
  await usage.getByRole('button', { name: 'Copy the match() query' }).click();
  await usage.getByRole('button', { name: 'Copy the match() query' }).filter({ hasText: 'Copied' }).waitFor();
  await shot(page, 'admin-dictionary-rows.png');

  // Run it in the search workspace: the event from the listed address carries the dictionary's category.
  await usage.getByRole('link', { name: 'Run in search' }).click();
  await waitDone(page, 2);
  const scanner = resultRows(page).filter({ hasText: '203.0.113.7' });
  assert.equal(await scanner.locator('[data-f="category"]').innerText(), 'scanner');
  assert.equal(await scanner.locator('[data-f="threat_score"]').innerText(), '90');
  const unknown = resultRows(page).filter({ hasText: '10.0.0.5' });
  assert.doesNotMatch(await unknown.innerText(), /scanner|botnet|spam/, 'an address the dictionary lacks gets no values');
  await screenshot(page, 'search-match-dictionary.png');

  assert.deepEqual(pageErrors, []);
  await page.close();
});

test('dictionaries: a global one with two key columns, its definition edited, a row added by hand, then deleted', async () => {
  const { page, pageErrors } = await signedInPage(browser, a.url + '/#/admin/dictionaries');
  await page.getByRole('heading', { name: 'Dictionaries', level: 1 }).waitFor();

  const create = region(page, /^New dictionary/);
  await create.getByLabel('Name', { exact: true }).fill('asset_owner');
  await create.getByLabel('Columns', { exact: true }).fill('host, ip, owner');
  await create.getByLabel('Key columns').fill('host, ip');
  await create.getByRole('checkbox', { name: /Global/ }).check();
  await region(page, 'New dictionary for every scope').waitFor();
  await create.getByRole('button', { name: 'Create dictionary' }).click();
  const listed = tableRows(page, 'Dictionaries', 'asset_owner');
  await listed.waitFor();
  assert.match(await listed.innerText(), /global/);
  assert.match(await listed.innerText(), /host, ip/);

  // ---- the definition: a column added; the primary key cannot change (the service says why)
  await page.getByRole('button', { name: 'Edit definition' }).click();
  const def = page.getByRole('form', { name: 'Definition of asset_owner' });
  await def.getByLabel('Columns', { exact: true }).fill('host, ip, owner, team');
  await def.getByLabel('Columns', { exact: true }).press('Enter');
  await def.waitFor({ state: 'detached' });
  await page.getByRole('table', { name: 'Rows of asset_owner' }).getByRole('columnheader', { name: 'team' }).waitFor();
  assert.match(await listed.innerText(), /host, ip, owner, team/);
  await page.getByRole('button', { name: 'Edit definition' }).click();
  await def.getByLabel('Key columns').fill('ip, host');
  await def.getByRole('button', { name: 'Save definition' }).click();
  assert.equal(
    await def.getByRole('alert').innerText(),
    'The first key column ("host") identifies the rows and cannot change; create a new dictionary instead.',
  );
  await def.getByLabel('Key columns').press('Escape');
  await def.waitFor({ state: 'detached' });

  // ---- a row typed in by hand; Enter adds it
  await page.getByRole('button', { name: 'Add row' }).click();
  const fresh = page.getByRole('form', { name: 'New row in asset_owner' });
  await fresh.getByLabel('host', { exact: true }).fill('web1');
  await fresh.getByLabel('ip', { exact: true }).fill('10.0.0.5');
  await fresh.getByLabel('owner', { exact: true }).fill('Zoë "ops" Martin');
  await fresh.getByLabel('team', { exact: true }).press('Enter');
  await fresh.waitFor({ state: 'detached' });
  const added = tableRows(page, 'Rows of asset_owner', 'web1');
  await added.waitFor();
  assert.deepEqual((await added.locator('td').allInnerTexts()).slice(0, 4), ['web1', '10.0.0.5', 'Zoë "ops" Martin', '']);
  await listed.getByTestId('row-count').filter({ hasText: /^1$/ }).waitFor();

  // ---- rows keyed with the words the page once used for its own states are edited like any other
  // (each save is a write to the engine: generous waits on a shared machine)
  const slow = { timeout: 120_000 };
  for (const host of ['new', 'closed']) {
    await page.getByRole('button', { name: 'Add row' }).click();
    const form = page.getByRole('form', { name: 'New row in asset_owner' });
    await form.getByLabel('host', { exact: true }).fill(host);
    await form.getByLabel('ip', { exact: true }).fill('10.0.0.9');
    await form.getByLabel('owner', { exact: true }).fill('nobody');
    await form.getByLabel('owner', { exact: true }).press('Enter');
    await form.waitFor({ state: 'detached', ...slow });
    await tableRows(page, 'Rows of asset_owner', host).waitFor(slow);
    await page.getByRole('button', { name: `Edit row ${host}`, exact: true }).click();
    const edit = page.getByRole('form', { name: `Edit row ${host}`, exact: true });
    assert.ok(await edit.getByLabel('host', { exact: true }).isDisabled());
    await edit.getByLabel('owner', { exact: true }).fill(`owner of ${host}`);
    await edit.getByLabel('owner', { exact: true }).press('Enter');
    await edit.waitFor({ state: 'detached', ...slow });
    assert.equal(await page.getByRole('form', { name: /^Edit row / }).count(), 0, 'no editor left open');
    await tableRows(page, 'Rows of asset_owner', host).filter({ hasText: `owner of ${host}` }).waitFor(slow);
  }
  await listed.getByTestId('row-count').filter({ hasText: /^3$/ }).waitFor();

  // ---- the query looks up by the second key column when asked
  const usage = region(page, 'Use asset_owner in a query');
  await usage.getByLabel('Look up by column').selectOption('ip');
  await usage.getByLabel('Field of your logs holding the ip').fill('src_ip');
  assert.equal(await usage.getByTestId('usage-query').innerText(), '* | match(dict="asset_owner", field=src_ip, column=ip, include=[host,owner,team])');
  await shot(page, 'admin-dictionary-global.png');

  // ---- deleting the dictionary closes it
  await listed.getByRole('button', { name: 'Delete dictionary asset_owner' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete dictionary asset_owner?' });
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await listed.waitFor({ state: 'detached' });
  await region(page, 'Rows of asset_owner').waitFor({ state: 'detached' });
  assert.doesNotMatch(page.url(), /dict=/);

  assert.deepEqual(pageErrors, []);
  await page.close();
});

test('an analyst, who is no administrator, reaches Dictionaries from the top bar and keeps their fractal’s lists', async () => {
  const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  await makeUser(admin, 'ann');
  await grant(admin, defaultIngest(a).fractalId, { username: 'ann' }, 'analyst');
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const pageErrors = collectPageErrors(page);
  await page.goto(a.url + '/');
  await page.getByLabel('Username').fill('ann');
  await page.getByLabel('Password').fill(passwordOf('ann'));
  await page.getByRole('button', { name: 'Sign in' }).click();

  const sections = page.getByRole('navigation', { name: 'Sections' });
  await sections.getByRole('link', { name: 'Dictionaries', exact: true }).click();
  assert.equal(await sections.getByRole('link', { name: 'Admin', exact: true }).count(), 0, 'the rest of Admin stays with administrators');
  // The admin pages are a chunk of their own: read their menu once the page is drawn.
  await page.getByRole('heading', { name: 'Dictionaries', level: 1 }).waitFor();
  const nav = page.getByRole('navigation', { name: 'Administration' });
  assert.deepEqual(await nav.getByRole('link').allInnerTexts(), ['Dictionaries', 'Case archive', 'Fractal archive'], 'what an analyst may use: dictionaries, exporting their fractal as a case, and its archive status');

  const create = region(page, 'New dictionary for default');
  await create.getByLabel('Name', { exact: true }).fill('ann_watchlist');
  await create.getByLabel('Columns', { exact: true }).fill('user, reason');
  await create.getByLabel('Key columns').press('Enter');
  await tableRows(page, 'Dictionaries', 'ann_watchlist').waitFor();
  await tableRows(page, 'Dictionaries', 'threat_intel').waitFor();
  assert.deepEqual(pageErrors, []);
  await page.close();
});

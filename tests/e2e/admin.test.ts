// The Admin section in a real browser (Debian's Chromium via playwright-core) against a real
// appliance on a fresh data dir: an administrator creates a fractal and sets its retention and quota,
// creates a kv ingest token and ships a record with the page's own curl snippet, creates an API key
// (shown once), a user, a group with a role, a prism, changes a setting; API refusals appear where
// the person acted; an expired session returns to sign-in and then to the same page. Screenshots of
// every admin page go to test-artifacts/ for a person to look at.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, signIn, type TestAppliance } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { screenshot, signedInPage, signInWithForm, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { WAIT_MS } from '../support/wait.ts';

let a: TestAppliance;
let browser: Browser;

before(async () => {
  ({ a, browser } = await startBrowserTest());
});
after(() => stopBrowserTest(a, browser));

/** Whole admin pages, not only the viewport. */
const shot = (page: Page, name: string) => screenshot(page, name, { fullPage: true });
const region = (page: Page, name: string | RegExp) => page.getByRole('region', { name });
const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name, exact: true });

/** The row of a table that names `text` in its first cell. */
const row = (page: Page, table: string, text: string) =>
  page.getByRole('table', { name: table }).locator('tbody > tr').filter({ has: page.locator('td:first-child', { hasText: text }) });

test('admin: fractal, kv token and a real ingest, API key, user, group and role, prism, settings, inline errors', async () => {
  const { page } = await signedInPage(browser, a.url + '/');
  await page.getByRole('link', { name: 'Admin', exact: true }).click();
  await page.getByRole('heading', { name: 'Fractals', level: 1 }).waitFor();

  // ---- a fractal, then the same name again: the service's sentence under the form
  const create = region(page, 'New fractal');
  await create.getByLabel('Name').fill('edge-firewall');
  await create.getByLabel('Description').fill('Perimeter firewall, kv over HTTP');
  await create.getByRole('button', { name: 'Create fractal' }).click();
  await create.getByRole('status').filter({ hasText: 'edge-firewall' }).waitFor();
  await row(page, 'Fractals', 'edge-firewall').waitFor();
  const fractal = a.context.fractals.byName('edge-firewall');
  assert.ok(fractal, 'the fractal exists in the service');

  await create.getByLabel('Name').fill('edge-firewall');
  await create.getByRole('button', { name: 'Create fractal' }).click();
  const dup = create.getByRole('alert');
  await dup.waitFor();
  assert.equal(await dup.innerText(), 'A fractal named "edge-firewall" already exists.');
  assert.equal(await create.getByLabel('Name').getAttribute('aria-invalid'), 'true', 'the field is marked');
  await shot(page, 'admin-fractal-error.png');

  // ---- retention and quota, edited in place
  await page.getByRole('button', { name: 'Edit edge-firewall' }).click();
  await page.getByLabel('Hot store: keep for (days)').fill('30');
  await page.getByRole('button', { name: 'Save hot retention' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved: 30 days.' }).waitFor();
  await page.getByLabel('Quota', { exact: true }).fill('5');
  await page.getByLabel('When full').selectOption('rollover');
  await page.getByRole('button', { name: 'Save quota' }).click();
  const fwRow = row(page, 'Fractals', 'edge-firewall');
  await fwRow.getByText('5.00 GiB · drop oldest').waitFor();
  assert.match(await fwRow.innerText(), /30 days/);
  const saved = a.context.fractals.get(fractal.id)!;
  assert.equal(saved.retention_days, 30);
  assert.equal(saved.quota_bytes, 5 * 1024 ** 3);
  assert.equal(saved.quota_action, 'rollover');
  await shot(page, 'admin-fractals.png');

  // ---- a kv ingest token with a normalizer of its own and a timestamp field
  const firewallNames = a.context.normalizers.create(
    { name: 'firewall names', description: '', transforms: [], field_mappings: [{ sources: ['src'], target: 'src_ip' }], value_mappings: [], timestamp_fields: [] },
    'admin',
  );
  await page.getByRole('link', { name: 'Ingest tokens of edge-firewall' }).click();
  await page.getByRole('heading', { name: 'Tokens of edge-firewall' }).waitFor();
  assert.ok(page.url().includes(`#/admin/tokens?fractal=${fractal.id}`), 'the fractal is in the address');
  await page.getByRole('button', { name: 'New token' }).click();
  const form = page.getByRole('form', { name: 'New ingest token' });
  await form.getByLabel('Token name').fill('fw-kv');
  await form.getByRole('radio', { name: /^kv/ }).check();
  await form.getByLabel('Timestamp fields').fill('event_time');
  assert.equal(await form.getByLabel('Normalizer').inputValue(), 'default', 'a new token applies the default normalizer');
  await form.getByLabel('Normalizer').selectOption({ label: 'firewall names' });
  await form.getByRole('button', { name: 'Create token' }).click();
  const tokenRow = row(page, 'Ingest tokens', 'fw-kv');
  await tokenRow.waitFor();
  assert.match(await tokenRow.innerText(), /kv/);
  assert.match(await tokenRow.innerText(), /normalizer firewall names/);

  const stored = a.context.ingestTokens.list(fractal.id).find((t) => t.name === 'fw-kv')!;
  assert.equal(stored.parser_type, 'kv');
  assert.equal(stored.normalizer_id, firewallNames.id);
  assert.deepEqual(JSON.parse(stored.timestamp_fields), ['event_time']);
  const token = a.context.ingestTokens.reveal(stored);
  assert.ok(!(await tokenRow.innerText()).includes(token), 'masked in the list');
  await tokenRow.getByRole('button', { name: 'Show token fw-kv' }).click();
  assert.ok((await tokenRow.innerText()).includes(token), 'the real token, on request');

  // Edit it: names as they arrive; then off and on again with the switch.
  await tokenRow.getByRole('button', { name: 'Edit token fw-kv' }).click();
  const edit = page.getByRole('form', { name: 'Edit token fw-kv' });
  assert.equal(await edit.getByLabel('Normalizer').inputValue(), firewallNames.id, 'the form shows the saved normalizer');
  await edit.getByLabel('Normalizer').selectOption({ label: 'None: keep names as they arrive' });
  await shot(page, 'admin-token-form.png');
  await edit.getByRole('button', { name: 'Save token' }).click();
  await edit.waitFor({ state: 'detached' });
  assert.equal(a.context.ingestTokens.get(fractal.id, stored.id)!.normalization, 0);
  await row(page, 'Ingest tokens', 'fw-kv').getByText('names as sent').waitFor();
  await tokenRow.getByRole('button', { name: 'Edit token fw-kv' }).click();
  await page.getByRole('form', { name: 'Edit token fw-kv' }).getByLabel('Normalizer').selectOption({ label: 'firewall names' });
  await page.getByRole('form', { name: 'Edit token fw-kv' }).getByRole('button', { name: 'Save token' }).click();
  await row(page, 'Ingest tokens', 'fw-kv').getByText('normalizer firewall names').waitFor();
  const enabled = tokenRow.getByRole('switch', { name: 'Token fw-kv enabled' });
  await enabled.click();
  await page.waitForFunction(() => document.querySelector('[aria-label="Token fw-kv enabled"]')?.getAttribute('aria-checked') === 'false');
  assert.equal(a.context.ingestTokens.get(fractal.id, stored.id)!.enabled, 0);
  await enabled.click();
  await page.waitForFunction(() => document.querySelector('[aria-label="Token fw-kv enabled"]')?.getAttribute('aria-checked') === 'true');
  assert.equal(a.context.ingestTokens.get(fractal.id, stored.id)!.enabled, 1);

  // The curl snippet of the new token: the real token and this appliance's address.
  await region(page, 'Connect a shipper with token fw-kv').waitFor();
  const curl = await page.getByTestId('snippet-curl').innerText();
  assert.ok(curl.includes(token), 'the curl snippet has the real token');
  assert.ok(curl.includes(`${a.url}/api/v1/ingest`), 'and this appliance address');
  await shot(page, 'admin-tokens.png');
  for (const tab of ['Vector', 'Fluent Bit', 'OpenTelemetry Collector', 'Filebeat', 'Logstash', 'rsyslog', 'syslog-ng', 'syslog-ng (elasticsearch-http)']) {
    await page.getByRole('tab', { name: tab, exact: true }).click();
    assert.ok((await page.getByRole('tabpanel').innerText()).includes(token), `${tab} snippet has the token`);
  }
  // Syslog forwarders and devices send to a listener instead of naming the token.
  await page.getByRole('tab', { name: 'Network gear', exact: true }).click();
  assert.match(await page.getByRole('tabpanel').innerText(), /Syslog listeners/);
  await page.getByRole('tab', { name: 'rsyslog', exact: true }).click();
  await shot(page, 'admin-tokens-rsyslog.png');

  // Run what the snippet says, with Node's fetch.
  const url = /curl -sS -X POST '([^']+)'/.exec(curl)![1]!;
  const headers = Object.fromEntries([...curl.matchAll(/-H '([^:]+): ([^']+)'/g)].map((m) => [m[1]!, m[2]!]));
  const body = /--data-binary '(.*)'/.exec(curl)![1]!;
  const res = await fetch(url, { method: 'POST', headers, body });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal((await res.json()).accepted, 1);

  // ...and see the fractal's count go up on the Fractals page.
  await nav(page, 'Fractals').click();
  const countCell = row(page, 'Fractals', 'edge-firewall').getByTestId('count');
  const deadline = Date.now() + WAIT_MS;
  while ((await countCell.innerText()) !== '1') {
    assert.ok(Date.now() < deadline, `count still ${await countCell.innerText()}`);
    await page.waitForTimeout(300);
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
  }

  // ---- an API key, shown once
  await nav(page, 'API keys').click();
  await page.getByRole('heading', { name: 'Keys of edge-firewall' }).waitFor();
  const keyForm = region(page, 'New API key for edge-firewall');
  await keyForm.getByLabel('Name').fill('soar');
  await keyForm.getByRole('button', { name: 'Create key' }).click();
  const once = page.getByRole('region', { name: 'API key soar' });
  await once.waitFor();
  assert.match(await once.innerText(), /you will not see it again/i);
  const key = await once.getByTestId('secret-value').innerText();
  assert.match(key, /^svc_[0-9a-f]{32,}$/);
  const me = await fetch(`${a.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(me.status, 200, 'the key works');
  await row(page, 'API keys', 'soar').waitFor();
  await shot(page, 'admin-api-keys.png');
  await once.getByRole('button', { name: 'I have copied it' }).click();
  assert.ok(!(await page.locator('body').innerText()).includes(key), 'gone for good once dismissed');
  assert.match(await row(page, 'API keys', 'soar').innerText(), new RegExp(key.slice(0, 12)));

  // ---- a user, a group with that user, and a role for the group
  await nav(page, 'Users').click();
  const newUser = region(page, 'New user');
  await newUser.getByLabel('User name').fill('ana');
  await newUser.getByLabel('Initial password').fill('short');
  await newUser.getByRole('button', { name: 'Create user' }).click();
  assert.match(await newUser.getByRole('alert').innerText(), /password.*at least 8 characters/i, 'the service says why');
  await newUser.getByLabel('Initial password').fill('ana-password-1');
  await newUser.getByRole('button', { name: 'Create user' }).click();
  await row(page, 'Users', 'ana').waitFor();
  await shot(page, 'admin-users.png');

  await nav(page, 'Groups').click();
  const newGroup = region(page, 'New group');
  await newGroup.getByLabel('Name').fill('soc-tier1');
  await newGroup.getByRole('button', { name: 'Create group' }).click();
  const groupRow = row(page, 'Groups', 'soc-tier1');
  await groupRow.waitFor();
  await groupRow.getByLabel('User to add to group soc-tier1', { exact: true }).selectOption('ana');
  await groupRow.getByRole('button', { name: 'Add: User to add to group soc-tier1' }).click();
  await groupRow.getByRole('button', { name: 'Remove ana from group soc-tier1' }).waitFor();
  await shot(page, 'admin-groups.png');

  await nav(page, 'Permissions').click();
  const grant = region(page, 'Grant a role on edge-firewall');
  await grant.getByRole('radio', { name: 'Group' }).check();
  await grant.getByRole('combobox', { name: 'Group', exact: true }).selectOption({ label: 'soc-tier1' });
  await grant.getByLabel('Role').selectOption('analyst');
  await grant.getByRole('button', { name: 'Grant' }).click();
  const grantRow = row(page, 'Roles on edge-firewall', 'soc-tier1');
  await grantRow.waitFor();
  assert.equal(await grantRow.getByLabel('Role of group soc-tier1', { exact: true }).inputValue(), 'analyst');
  const perms = a.context.permissions.list('fractal', fractal.id);
  assert.deepEqual(perms.map((p) => [p.group_name, p.role]), [['soc-tier1', 'analyst']]);
  // Granting again is refused; the sentence appears under the grant form.
  await grant.getByRole('combobox', { name: 'Group', exact: true }).selectOption({ label: 'soc-tier1' });
  await grant.getByRole('button', { name: 'Grant' }).click();
  assert.match(await grant.getByRole('alert').innerText(), /already has a role on this fractal/);
  await shot(page, 'admin-permissions.png');

  // ---- a prism over the new fractal
  await nav(page, 'Prisms').click();
  const newPrism = region(page, 'New prism');
  await newPrism.getByLabel('Name').fill('perimeter');
  await newPrism.getByRole('checkbox', { name: 'edge-firewall' }).check();
  await newPrism.getByRole('checkbox', { name: 'default' }).check();
  await newPrism.getByRole('button', { name: 'Create prism' }).click();
  const prismRow = row(page, 'Prisms', 'perimeter');
  await prismRow.getByRole('button', { name: 'Remove edge-firewall from prism perimeter' }).waitFor();
  await prismRow.getByRole('button', { name: 'Remove default from prism perimeter' }).click();
  await prismRow.getByRole('button', { name: 'Remove default from prism perimeter' }).waitFor({ state: 'detached' });
  assert.equal(a.context.prisms.memberIds(a.context.prisms.list()[0]!.id).length, 1);
  await shot(page, 'admin-prisms.png');

  // The prism on the home view: its members' figures added up, and each member listed.
  await page.getByLabel('Viewing').selectOption({ label: 'perimeter (1)' });
  await page.getByRole('link', { name: 'Home', exact: true }).click();
  await page.getByRole('heading', { name: 'perimeter', level: 1 }).waitFor();
  const member = row(page, 'Member fractals', 'edge-firewall');
  await member.waitFor();
  assert.match(await member.innerText(), /\b1\b/, 'the member shows its one event');
  await shot(page, 'home-prism.png');
  await page.getByRole('link', { name: 'Admin', exact: true }).click();

  // ---- a setting, persisted across a reload
  await nav(page, 'Settings').click();
  await page.getByLabel('Query time-out (seconds)').fill('120');
  await page.getByLabel('Timestamp fields').fill('event_time, EventTime');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByRole('status').filter({ hasText: /^Saved at/ }).waitFor();
  await page.reload();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  assert.equal(await page.getByLabel('Query time-out (seconds)').inputValue(), '120');
  assert.equal(await page.getByLabel('Timestamp fields').inputValue(), 'event_time, EventTime');
  assert.equal(a.context.settings.get().query_timeout_s, 120);
  await page.getByLabel('Query time-out (seconds)').fill('0');
  await page.getByRole('button', { name: 'Save settings' }).click();
  assert.match(await page.getByRole('alert').innerText(), /query_timeout_s/, "the service's sentence names the field");
  await shot(page, 'admin-settings.png');

  // ---- deleting a fractal asks for its name
  await nav(page, 'Fractals').click();
  await page.getByRole('button', { name: 'Delete edge-firewall' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete fractal edge-firewall?' });
  await dialog.waitFor();
  const confirm = dialog.getByRole('button', { name: 'Delete' });
  assert.ok(await confirm.isDisabled(), 'not before the name is typed');
  await dialog.getByLabel('Type edge-firewall to confirm').fill('edge-firewall');
  await shot(page, 'admin-fractal-delete.png');
  await confirm.click();
  await dialog.waitFor({ state: 'hidden' });
  await row(page, 'Fractals', 'edge-firewall').waitFor({ state: 'detached' });
  assert.equal(a.context.fractals.byName('edge-firewall'), undefined);

  // ---- the light theme, too
  await page.getByRole('button', { name: /Theme: dark/ }).click();
  await nav(page, 'Ingest tokens').click();
  await page.getByRole('heading', { name: /^Tokens of / }).waitFor();
  await shot(page, 'admin-tokens-light.png');
  await page.close();
});

test('admin: keyboard only, with visible focus; a dialog returns focus to its button', async () => {
  const { page } = await signedInPage(browser, a.url + '/#/admin/users');
  await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
  // Tab from the top of the page to the Groups link of the side navigation.
  await page.locator('body').focus();
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.textContent === 'Groups');
  }
  assert.ok(reached, 'the Groups link is reachable with Tab');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
  assert.equal(outline, 'solid', 'focus is visible');
  await shot(page, 'admin-keyboard-focus.png');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Groups', level: 1 }).waitFor();

  await page.goto(a.url + '/#/admin/users');
  const reset = page.getByRole('button', { name: 'Reset password of admin' });
  await reset.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'New password for admin' });
  await dialog.waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  assert.ok(await reset.evaluate((el) => el === document.activeElement), 'focus is back on the button');
  await page.close();
});

test('admin: an expired session returns to sign-in, then to the same page', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await page.goto(a.url + '/#/admin/groups');
  await signInWithForm(page);
  await page.getByRole('heading', { name: 'Groups', level: 1 }).waitFor();

  await context.clearCookies(); // the session is gone, as after expiry
  // The next request finds it gone: the Refresh clicked here, or a poll of the page's footer that
  // gets there first (then the button is gone before the click lands).
  const signInButton = page.getByRole('button', { name: 'Sign in' });
  await Promise.race([page.getByRole('button', { name: 'Refresh', exact: true }).click().catch(() => undefined), signInButton.waitFor()]);
  await signInButton.waitFor();
  assert.match(await page.locator('body').innerText(), /Your session has ended/);
  assert.ok(page.url().endsWith('#/admin/groups'), 'the address still names the page');

  await signInWithForm(page);
  await page.getByRole('heading', { name: 'Groups', level: 1 }).waitFor();
  assert.ok(page.url().endsWith('#/admin/groups'));
  await context.close();
});

test("admin: a fractal's page lists the prisms that show it, and Remove takes it out of one", async () => {
  const api = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  const f = expectOk(await api.post('/api/v1/fractals', { name: 'dmz-proxy' }), 201);
  const p = expectOk(await api.post('/api/v1/prisms', { name: 'dmz-view', fractal_ids: [f.id] }), 201);
  const { page, pageErrors } = await signedInPage(browser, a.url + '/#/admin/fractals');
  await row(page, 'Fractals', 'dmz-proxy').waitFor();
  await page.getByRole('button', { name: 'Edit dmz-proxy' }).click();
  const section = region(page, 'Prisms showing dmz-proxy');
  await section.getByText('dmz-view').waitFor();
  await shot(page, 'admin-fractal-prisms.png');
  await section.getByRole('button', { name: 'Remove dmz-proxy from prism dmz-view' }).click();
  await section.getByText('No prism holds this fractal.').waitFor();
  assert.deepEqual(expectOk(await api.get(`/api/v1/prisms/${p.id}`)).fractal_ids, [], 'the service no longer holds the membership');
  assert.deepEqual(pageErrors, []);
  await page.close();
});

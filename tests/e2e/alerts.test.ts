// The Alerts pages in a real browser (Debian's Chromium via playwright-core) against a real appliance
// whose engine ticks every second, with a webhook receiver on loopback: an administrator creates a
// templated webhook, previews it and send-tests it side by side, writes an alert with the workspace's
// query editor and sees what it would have matched in the last 24 h, attaches the webhook, sees the
// firing in the executions history, and opens the matching logs from the search workspace's badge;
// then sets the SMTP server, makes an e-mail action whose test mail reaches a real SMTP server, and
// imports alerts from YAML and switches them off together from the list.
// Screenshots go to test-artifacts/alerts-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { defaultIngest, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { launchChromium, prepareBrowserTest, screenshot, signedInPage, stopBrowserTest } from '../support/browser.ts';
import { ingest } from '../support/query.ts';
import { MailReceiver, waitFor, WebhookReceiver } from '../support/alert-receivers.ts';
import { editor, waitDone } from '../support/workspace.ts';

let a: TestAppliance;
let browser: Browser;
let hooks: WebhookReceiver;
let fractal: { fractalId: string; token: string };

before(async () => {
  prepareBrowserTest();
  hooks = await new WebhookReceiver().start();
  a = await startTestAppliance({ SVC_ALERT_INTERVAL_S: '1' });
  browser = await launchChromium();
  fractal = defaultIngest(a);
  const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
  await ingest(a, fractal.token, fractal.fractalId, [
    { timestamp: ago(30), user: 'alice', action: 'login', status: 500 },
    { timestamp: ago(20), user: 'bob', action: 'login', status: 200 },
    { timestamp: ago(10), user: 'carol', action: 'login', status: 500 },
  ]);
});
after(async () => {
  await stopBrowserTest(a, browser);
  await hooks?.stop();
});

const region = (page: Page, name: string | RegExp) => page.getByRole('region', { name });

test('alerts: a webhook previewed and send-tested, an alert written with the query editor, its firing seen and opened', async () => {
  const { page, pageErrors } = await signedInPage(browser, a.url + '/');
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Alerts' }).click();
  await page.getByRole('table', { name: 'Alerts' }).getByText('No alerts yet').waitFor();

  // ---- the webhook: template, preview and send-test side by side, then save
  await page.getByRole('navigation', { name: 'Alerts' }).getByRole('link', { name: 'Actions' }).click();
  await page.getByRole('link', { name: 'New webhook' }).click();
  const form = region(page, 'New webhook');
  await form.getByLabel('Name', { exact: true }).fill('chat');
  await form.getByLabel('URL').fill(`${hooks.url}/chat`);
  await form.getByLabel('Body', { exact: true }).selectOption('template');
  await form.getByLabel('Body template').fill('{"text": {{ printf "%s (%d)" .AlertName .MatchCount | toJSON }}, "users": [{{ range $i, $r := .Results }}{{ if $i }},{{ end }}{{ $r.user | upper | toJSON }}{{ end }}]}');
  const side = region(page, 'Preview and test');
  await side.getByRole('button', { name: 'Preview' }).click();
  const preview = side.getByTestId('webhook-preview');
  await preview.waitFor();
  assert.match(await preview.innerText(), /\{"text": "Failed logins for alice \(2\)", "users": \["ALICE","BOB"\]\}/);
  assert.equal(hooks.on('/chat').length, 0, 'a preview sends nothing');
  await side.getByRole('button', { name: 'Send test' }).click();
  const tested = side.getByTestId('webhook-test');
  await tested.getByText('delivered').waitFor();
  assert.match(await tested.innerText(), /HTTP 200/);
  assert.equal(hooks.on('/chat').length, 1);
  assert.equal(hooks.on('/chat')[0]!.headers['x-alert-test'], 'true');
  await screenshot(page, 'alerts-webhook.png', { fullPage: true });
  await form.getByRole('button', { name: 'Create webhook' }).click();
  await region(page, 'Webhook: chat').waitFor();
  await page.getByRole('list', { name: 'Webhooks actions' }).getByRole('link', { name: 'chat' }).waitFor();

  // ---- the alert: query editor, 24 h preview, the webhook attached
  await page.getByRole('navigation', { name: 'Alerts' }).getByRole('link', { name: 'Alerts' }).click();
  await page.getByRole('link', { name: 'New alert' }).click();
  const alertForm = region(page, 'New alert');
  await alertForm.getByLabel('Name', { exact: true }).fill('Failed login by {{user}}');
  await alertForm.getByLabel('Severity').selectOption('high');
  await editor(page).click();
  await page.keyboard.insertText('action=login status=500');
  const last24 = region(page, 'Last 24 h');
  await page.waitForFunction(() => document.querySelector('[data-testid="preview-count"]')?.textContent === '2');
  assert.match(await last24.innerText(), /Would have matched 2 logs in the last 24 h/);
  await region(page, 'Actions').getByLabel('chat').check();
  await screenshot(page, 'alerts-editor.png', { fullPage: true });
  await alertForm.getByRole('button', { name: 'Create alert' }).click();
  await region(page, 'Alert: Failed login by {{user}}').waitFor();
  assert.match(page.url(), /#\/alerts\/edit\?id=[0-9a-f-]{36}$/);

  // ---- a new matching log fires it (with those that arrived in the minutes before the alert was
  // created: a new alert starts a few minutes back); the history shows the delivery
  await ingest(a, fractal.token, fractal.fractalId, [{ user: 'dave', action: 'login', status: 500 }]);
  const fired = await waitFor('the delivery with dave', () => hooks.on('/chat').slice(1).find((r) => r.body.includes('DAVE')));
  const body = JSON.parse(fired.body) as { text: string; users: string[] };
  assert.ok(body.users.includes('DAVE'));
  assert.ok(!body.users.includes('BOB'), 'bob did not fail');
  assert.match(body.text, /^Failed login by (dave|alice|carol) \(\d\)$/);
  const history = page.getByRole('table', { name: 'Executions of Failed login by {{user}}' });
  await history.getByText('delivered').first().waitFor({ timeout: 120_000 });
  assert.match(await history.innerText(), /webhook\s+chat/);
  assert.match(await history.innerText(), /HTTP 200/);
  await screenshot(page, 'alerts-history.png', { fullPage: true });

  // ---- the list shows it; the workspace's badge opens the matching logs
  await page.getByRole('navigation', { name: 'Alerts' }).getByRole('link', { name: 'Alerts' }).click();
  const row = page.getByRole('table', { name: 'Alerts' }).locator('tbody tr', { hasText: 'Failed login by {{user}}' });
  await row.waitFor();
  assert.match(await row.innerText(), /high/i);
  assert.match(await row.innerText(), /firing/);
  await screenshot(page, 'alerts-list.png', { fullPage: true });
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Search' }).click();
  const badge = page.getByRole('button', { name: /\d+ firings? · 1 alert/ });
  await badge.click();
  await page.getByRole('list', { name: 'Recent alert firings' }).getByRole('link', { name: /Failed login by/ }).first().click();
  await waitDone(page);
  assert.match(page.url(), /q=action%3Dlogin%20status%3D500/);
  assert.match(await page.locator('[role="grid"]').innerText(), /dave/);
  await screenshot(page, 'alerts-badge.png');

  // ---- the webhook's preview renders the alert's last firing instead of sample data
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Alerts' }).click();
  await page.getByRole('navigation', { name: 'Alerts' }).getByRole('link', { name: 'Actions' }).click();
  await page.getByRole('list', { name: 'Webhooks actions' }).getByRole('link', { name: 'chat' }).click();
  const saved = region(page, 'Preview and test');
  await saved.getByLabel('Render with').selectOption({ label: 'the last firing of Failed login by {{user}}' });
  await saved.getByRole('button', { name: 'Preview' }).click();
  await saved.getByText('last firing)').waitFor();
  assert.match(await saved.getByTestId('webhook-preview').innerText(), /"DAVE"/);
  assert.equal(hooks.on('/chat').filter((r) => r.headers['x-alert-test']).length, 1, 'a preview sends nothing');
  assert.deepEqual(pageErrors, []);
});

test('alerts: SMTP settings and an e-mail action from the pages, its test mail received; YAML import and bulk switch-off', async () => {
  const smtp = await new MailReceiver().start();
  try {
    const { page, pageErrors } = await signedInPage(browser, a.url + '/#/alerts/smtp');
    // ---- SMTP settings
    const settings = region(page, 'SMTP server');
    await settings.getByLabel('Host').fill('127.0.0.1');
    await settings.getByLabel('Port').fill(String(smtp.port));
    await settings.getByLabel('Security').selectOption('none');
    await settings.getByLabel('From address').fill('alerts@appliance.test');
    await settings.getByRole('button', { name: 'Save' }).click();
    await settings.getByRole('status').getByText('SMTP settings saved.').waitFor();

    // ---- an e-mail action: a test with the form as it is, then saved
    await page.getByRole('navigation', { name: 'Alerts' }).getByRole('link', { name: 'Actions' }).click();
    await page.getByRole('tablist', { name: 'Kinds of action' }).getByRole('tab', { name: 'E-mail' }).click();
    await page.getByRole('link', { name: 'New e-mail action' }).click();
    const form = region(page, 'New e-mail action');
    await form.getByLabel('Name', { exact: true }).fill('soc mail');
    await form.getByLabel('Recipients').fill('soc@example.test, oncall@example.test');
    await form.getByLabel('Subject template').fill('[{{ .Severity | upper }}] {{ .AlertName }}');
    await form.getByRole('button', { name: 'Send test e-mail' }).click();
    await form.getByRole('status').getByText('sent', { exact: true }).waitFor();
    const mail = await waitFor('the test mail', () => smtp.mails[0]);
    assert.deepEqual(mail.to, ['soc@example.test', 'oncall@example.test']);
    assert.match(mail.raw, /^Subject: \[HIGH\] Failed logins for alice\r?$/m);
    assert.match(await form.getByRole('status').innerText(), /Subject: \[HIGH\] Failed logins for alice/);
    await screenshot(page, 'alerts-email.png', { fullPage: true });
    await form.getByRole('button', { name: 'Create' }).click();
    await region(page, 'E-mail action: soc mail').waitFor();
    await page.getByRole('list', { name: 'E-mail actions' }).getByRole('link', { name: 'soc mail' }).waitFor();

    // ---- YAML import of two alerts, then both switched off at once
    await page.getByRole('navigation', { name: 'Alerts' }).getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('button', { name: 'Import YAML' }).click();
    await page.locator('#alerts-yaml').fill('- name: Imported one\n  query_string: status=503\n  severity: low\n- name: Imported two\n  query_string: user=root\n  severity: critical\n');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByRole('status').getByText('Imported 2 alerts.').waitFor();
    const table = page.getByRole('table', { name: 'Alerts' });
    await table.getByRole('checkbox', { name: 'Select Imported one' }).check();
    await table.getByRole('checkbox', { name: 'Select Imported two' }).check();
    await page.getByRole('button', { name: 'Switch off' }).click();
    await page.getByRole('status').getByText('2 alerts switched off.').waitFor();
    for (const name of ['Imported one', 'Imported two']) {
      await page.locator(`[role="switch"][aria-label="Alert ${name} enabled"][aria-checked="false"]`).waitFor();
    }
    const listed = await page.evaluate(() => fetch('/api/v1/alerts').then((r) => r.json() as Promise<{ data: Array<{ name: string; enabled: boolean; severity: string }> }>));
    const imported = listed.data.filter((x) => x.name.startsWith('Imported')).map((x) => [x.name, x.severity, x.enabled]).sort();
    assert.deepEqual(imported, [['Imported one', 'low', false], ['Imported two', 'critical', false]]);
    assert.ok(listed.data.some((x) => x.name === 'Failed login by {{user}}' && x.enabled), 'the alert not selected stays on');
    await screenshot(page, 'alerts-bulk.png', { fullPage: true });
    assert.deepEqual(pageErrors, []);
  } finally {
    await smtp.stop();
  }
});

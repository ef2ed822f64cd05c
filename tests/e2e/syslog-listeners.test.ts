// Admin › Syslog listeners in a real browser against a real appliance: a listener made with the
// form opens at once and takes real datagrams, its counters show on the page, a port in use is
// refused with the service's sentence under the form, switching it off closes it, and Delete asks
// first.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ADMIN_PASSWORD, signIn, type TestAppliance } from '../support/appliance.ts';
import { screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingestFractal } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';
import { sendUdp } from '../support/syslog.ts';

let a: TestAppliance;
let browser: Browser;

before(async () => {
  ({ a, browser } = await startBrowserTest());
});
after(() => stopBrowserTest(a, browser));

test('syslog listeners page: create, real datagrams counted, a port in use refused, off and on, delete', async () => {
  const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  const fractal = await ingestFractal(admin, 'network-gear', { parser_type: 'syslog' });
  const { page, pageErrors } = await signedInPage(browser, a.url + '/#/admin/syslog');
  await page.getByRole('heading', { name: 'Syslog listeners', level: 1 }).waitFor();

  const form = page.getByRole('region', { name: 'New listener' });
  await form.getByLabel('Name').fill('switches');
  await form.getByLabel('Bind address').fill('127.0.0.1');
  await form.getByLabel('Port').fill('0');
  await form.getByLabel('Fractal').selectOption({ label: 'network-gear' });
  await form.getByLabel('Ingest token').selectOption({ label: 'custom (syslog)' });
  await form.getByLabel('Time zone').fill('Europe/Berlin');
  await form.getByRole('button', { name: 'Create and open' }).click();

  const table = page.getByRole('table', { name: 'Syslog listeners' });
  const row = table.locator('tbody > tr').filter({ hasText: 'switches' });
  await row.getByText('listening').waitFor();
  const address = await row.locator('td:nth-child(2)').innerText();
  const port = Number(/127\.0\.0\.1:(\d+)\/udp/.exec(address)![1]);
  assert.ok(port > 0, address);

  await sendUdp(port, ['<189>Jan  2 03:04:05 sw-core-1 %LINK-3-UPDOWN: Interface Gi1/0/1, changed state to down', '<189>Jan  2 03:04:06 sw-core-1 %LINK-3-UPDOWN: Interface Gi1/0/1, changed state to up', 'not syslog at all']);
  const rows = await waitForLogs(a, fractal.id, 3, 60_000);
  assert.ok(rows.some((r) => r.fields.hostname === 'sw-core-1' && /\+01:00|02:04:05/.test(r.timestamp)), 'read in Berlin time');
  await page.getByRole('button', { name: 'Refresh' }).click();
  await row.locator('td:nth-child(5)').filter({ hasText: /^3$/ }).waitFor();
  await row.locator('td:nth-child(7)').filter({ hasText: /^1$/ }).waitFor(); // the line that is not syslog
  await screenshot(page, 'admin-syslog-listeners.png', { fullPage: true });

  // The same port again, over UDP: the service's sentence under the form.
  const squatter = dgram.createSocket('udp4');
  await new Promise<void>((r) => squatter.bind(0, '127.0.0.1', () => r()));
  const taken = squatter.address().port;
  try {
    await form.getByLabel('Name').fill('taken');
    await form.getByLabel('Port').fill(String(taken));
    await form.getByRole('button', { name: 'Create and open' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    // (The form was emptied after the first listener: the default address, every IPv4 one.)
    assert.equal(await alert.innerText(), `Port ${taken}/udp on 0.0.0.0 cannot be opened: it is already in use (EADDRINUSE).`);
  } finally {
    squatter.close();
  }

  // Off, then on again.
  await page.getByRole('switch', { name: 'Listener switches enabled' }).click();
  await row.getByText('stopped').waitFor();
  await page.getByRole('switch', { name: 'Listener switches enabled' }).click();
  await row.getByText('listening').waitFor();

  // Delete asks first.
  await page.getByRole('button', { name: 'Delete listener switches' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete listener switches?' });
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await row.waitFor({ state: 'detached' });
  assert.deepEqual((await admin.get('/api/v1/syslog-listeners')).body.data, []);
  assert.deepEqual(pageErrors, []);
});

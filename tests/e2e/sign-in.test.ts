// The UI in a real browser (Debian's Chromium, driven by playwright-core) against a real
// appliance: a wrong password shows the API's sentence, the right one opens the default
// fractal with its ingest token. Screenshots go to test-artifacts/ for a person to look at.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ADMIN_PASSWORD, defaultIngest, type TestAppliance } from '../support/appliance.ts';
import { screenshot, startBrowserTest, stopBrowserTest } from '../support/browser.ts';

let a: TestAppliance;
let browser: Browser;

before(async () => {
  ({ a, browser } = await startBrowserTest());
});
after(() => stopBrowserTest(a, browser));

test('sign in, see the default fractal and its ingest token, sign out', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(a.url + '/');
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  assert.match(await page.getByRole('alert').innerText(), /Wrong user name or password/);
  await screenshot(page, 'sign-in-error.png');

  await page.getByLabel('Password').fill(ADMIN_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  // The search workspace is the default screen; the fractal's home shows its ingest tokens.
  await page.getByRole('link', { name: 'Home', exact: true }).click();
  await page.getByRole('heading', { name: 'Ingest tokens' }).waitFor();
  const { token } = defaultIngest(a);
  // Masked until asked for; then the real value of the default fractal's token.
  const body = () => page.locator('body').innerText();
  assert.ok(!(await body()).includes(token), 'the token is masked at first');
  await page.getByRole('button', { name: 'Show token default' }).click();
  assert.ok((await body()).includes(token), 'Show reveals the real token');
  await screenshot(page, 'home.png', { fullPage: true });

  await page.getByRole('button', { name: /sign out/i }).click();
  await page.getByLabel('Username').waitFor();
  const me = await page.evaluate(async () => (await fetch('/api/v1/auth/me')).status);
  assert.equal(me, 401, 'the session is gone on the server too');
  await page.close();
});

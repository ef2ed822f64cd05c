// The UI in a real browser (Debian's Chromium, driven by playwright-core) against a real
// appliance: a wrong password shows the API's sentence, the right one opens the default
// fractal with its ingest token. Screenshots go to test-artifacts/ for a person to look at.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { ADMIN_PASSWORD, startTestAppliance, type TestAppliance } from '../support/appliance.ts';

const root = path.resolve(import.meta.dirname, '../..');
const artifacts = path.join(root, 'test-artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let a: TestAppliance;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  execFileSync(process.execPath, ['scripts/ensure-ui.mjs'], { cwd: root, stdio: 'inherit' });
  mkdirSync(artifacts, { recursive: true });
  a = await startTestAppliance();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
});
after(async () => {
  await browser?.close();
  await a?.dispose();
});

test('sign in, see the default fractal and its ingest token, sign out', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(a.url + '/');
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  assert.match(await page.getByRole('alert').innerText(), /Wrong user name or password/);
  await page.screenshot({ path: path.join(artifacts, 'sign-in-error.png') });

  await page.getByLabel('Password').fill(ADMIN_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  // The search workspace is the default screen; the fractal's home shows its ingest tokens.
  await page.getByRole('link', { name: 'Home', exact: true }).click();
  await page.getByRole('heading', { name: 'Ingest tokens' }).waitFor({ timeout: 10_000 });
  const token = a.context.ingestTokens.reveal(a.context.ingestTokens.list(a.context.fractals.defaultFractal()!.id)[0]!);
  // Masked until asked for; then the real value of the default fractal's token.
  const body = () => page.locator('body').innerText();
  assert.ok(!(await body()).includes(token), 'the token is masked at first');
  await page.getByRole('button', { name: 'Show token default' }).click();
  assert.ok((await body()).includes(token), 'Show reveals the real token');
  await page.screenshot({ path: path.join(artifacts, 'home.png'), fullPage: true });

  await page.getByRole('button', { name: /sign out/i }).click();
  await page.getByLabel('Username').waitFor();
  const me = await page.evaluate(async () => (await fetch('/api/v1/auth/me')).status);
  assert.equal(me, 401, 'the session is gone on the server too');
  await page.close();
});

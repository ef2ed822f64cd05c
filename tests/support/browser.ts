// Start-up shared by the browser tests: Debian's Chromium driven by playwright-core against a real
// appliance on a fresh data dir, the admin's sign-in through the form, and screenshots into
// test-artifacts/ for a person to look at.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN_PASSWORD, startTestAppliance, type TestAppliance } from './appliance.ts';
import { WAIT_MS } from './wait.ts';

const root = path.resolve(import.meta.dirname, '../..');
export const artifacts = path.join(root, 'test-artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Checks that Chromium is installed and makes the screenshot folder; `ui` also builds the UI the
 * appliance serves when it is missing or older than its sources (harness pages build their own).
 */
export function prepareBrowserTest({ ui = true }: { ui?: boolean } = {}): void {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  if (ui) execFileSync(process.execPath, ['scripts/ensure-ui.mjs'], { cwd: root, stdio: 'inherit' });
  mkdirSync(artifacts, { recursive: true });
}

/**
 * Debian's Chromium, headless unless `headless: false` (the UI benchmark's --headed). Its pages wait
 * up to WAIT_MS for what a test waits for (a locator, waitForFunction, an event, a navigation), not
 * Playwright's 30 s: on a busy shared machine a page can take longer than that to get there.
 */
export async function launchChromium({ headless = true }: { headless?: boolean } = {}): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const newContext = browser.newContext.bind(browser); // browser.newPage makes its context through it too
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(WAIT_MS);
    return context;
  };
  return browser;
}

/**
 * prepareBrowserTest, a fresh appliance (with `env` added to its configuration) and Chromium; stop
 * them with stopBrowserTest.
 */
export async function startBrowserTest(
  launch: { headless?: boolean } = {},
  env: Record<string, string> = {},
): Promise<{ a: TestAppliance; browser: Browser }> {
  prepareBrowserTest();
  const a = await startTestAppliance(env);
  try {
    return { a, browser: await launchChromium(launch) };
  } catch (err) {
    await a.dispose();
    throw err;
  }
}

/** Either may be missing when start-up failed half-way. */
export async function stopBrowserTest(a: TestAppliance | undefined, browser: Browser | undefined): Promise<void> {
  await browser?.close();
  await a?.dispose();
}

/** The page as test-artifacts/<name>: the viewport, or with `fullPage` the whole scrolled page. */
export function screenshot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<Buffer> {
  return page.screenshot({ path: path.join(artifacts, name), ...opts });
}

/** Signs in as the administrator through the sign-in form the page shows. */
export async function signInWithForm(page: Page): Promise<void> {
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Collects the page's uncaught errors and what its Content-Security-Policy refused into `errors`. */
export function collectPageErrors(page: Page, errors: string[] = []): string[] {
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) errors.push(m.text());
  });
  return errors;
}

/**
 * A new 1280×720 page opened at `url` and signed in through the form, with the page's uncaught errors
 * and Content-Security-Policy refusals collected in `pageErrors`; `downloads` lets it save files.
 */
export async function signedInPage(browser: Browser, url: string, { downloads = false } = {}): Promise<{ page: Page; pageErrors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 }, ...(downloads ? { acceptDownloads: true } : {}) });
  const pageErrors = collectPageErrors(page);
  await page.goto(url);
  await signInWithForm(page);
  return { page, pageErrors };
}

// The search workspace's query editor (CodeMirror) as the browser tests drive it.
import type { Page } from 'playwright-core';

export const editor = (page: Page) => page.locator('.cm-content');
/** The result table's data rows. */
export const rows = (page: Page) => page.locator('[role="grid"] [role="row"][data-i]');

/** The editor's text: its lines, without the placeholder and widgets. */
export const queryText = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('.cm-content .cm-line')]
      .map((line) => {
        const copy = line.cloneNode(true) as HTMLElement;
        copy.querySelectorAll('.cm-placeholder, .cm-widgetBuffer, .cm-lintPoint').forEach((w) => w.remove());
        return copy.textContent ?? '';
      })
      .join('\n'),
  );

/** Replaces the query by typing, as a person would. */
export async function setQuery(page: Page, q: string) {
  await editor(page).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  if (q) await page.keyboard.insertText(q);
}

/**
 * Waits until the run is over (the status shows its figures: neither running nor ready to run) and,
 * with `n`, the table shows n rows.
 */
export async function waitDone(page: Page, n?: number) {
  await page.waitForFunction(
    (n) => {
      const s = document.querySelector('.toolbar [role="status"]')?.textContent ?? '';
      if (/Running|Ready/.test(s) || !/\d/.test(s)) return false;
      if (n === null) return true;
      return Number(document.querySelector('[role="grid"]')?.getAttribute('aria-rowcount') ?? 0) - 1 === n; // minus the header row
    },
    n ?? null,
  );
}

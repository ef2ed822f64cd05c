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

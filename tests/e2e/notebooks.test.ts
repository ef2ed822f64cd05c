// Notebooks in a real browser (Debian's Chromium via playwright-core) against a real appliance, with
// two browser contexts editing one notebook at once: the administrator (A) and Ben, an analyst (B).
// A creates a notebook from the list page; B opens it; each sees the other's avatar; A writes a note
// with hostile Markdown (script, event-handler image, javascript: link), which both render inert; A
// adds a query and runs it, B sees the rows; B drags the query above the note and adds a variable, A
// sees both; both edit the same note, the later save is told who saved first and keeps their own text
// on request; a notebook is generated from tagged comments with the ATT&CK breakdown; export and
// import; the pages in the light theme and with the keyboard; a stored result far down a long
// notebook is read only when it is scrolled to. Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN_PASSWORD, Client, defaultIngest, makeUser, passwordOf, signIn, type TestAppliance } from '../support/appliance.ts';
import { expectOk, grant } from '../support/api.ts';
import { screenshot, signInWithForm, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingest, sampleEvents } from '../support/query.ts';

let a: TestAppliance;
let browser: Browser;
let admin: Client;
let ctxA: BrowserContext;
let ctxB: BrowserContext;
let pageA: Page;
let pageB: Page;
const errors: string[] = [];

async function openAs(ctx: BrowserContext, who: 'admin' | 'ben'): Promise<Page> {
  const page = await ctx.newPage();
  page.on('pageerror', (e) => errors.push(`${who}: ${e.message}`));
  await page.goto(a.url + '/#/notebooks');
  if (who === 'admin') await signInWithForm(page);
  else {
    await page.getByLabel('Username').fill('ben');
    await page.getByLabel('Password').fill(passwordOf('ben'));
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await page.getByRole('heading', { name: 'Notebooks', level: 1 }).waitFor();
  return page;
}

const section = (page: Page, n: number) => page.locator('article[data-section]').nth(n);

before(async () => {
  ({ a, browser } = await startBrowserTest());
  const { fractalId, token } = defaultIngest(a);
  await ingest(a, token, fractalId, sampleEvents());
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  await makeUser(admin, 'ben');
  await grant(admin, fractalId, { username: 'ben' }, 'analyst');
  // Comments tagged lateral-movement, naming techniques, for the generation.
  const logs = (await admin.post('/api/v1/query', { query: 'user=bob', fractal_id: fractalId })).body.results as any[];
  expectOk(await admin.post('/api/v1/comments', { log_id: logs[0].log_id, fractal_id: fractalId, content: 'SMB admin share write from web1 (T1021.002)', tags: ['lateral-movement'] }), 201);
  expectOk(await admin.post('/api/v1/comments', { log_id: logs[1].log_id, fractal_id: fractalId, content: 'PowerShell remoting, T1059.001', tags: ['lateral-movement'] }), 201);
  ctxA = await browser.newContext({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
  ctxB = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  // The machine is shared: every wait is for a condition, with a deadline far above what it takes.
  for (const c of [ctxA, ctxB]) c.setDefaultTimeout(90_000);
  pageA = await openAs(ctxA, 'admin');
  pageB = await openAs(ctxB, 'ben');
});
after(async () => {
  await ctxA?.close();
  await ctxB?.close();
  await stopBrowserTest(a, browser);
});

test('two browsers edit one notebook at once', async () => {
  // A creates it from the list page with the keyboard: `n` focuses the name, Enter creates.
  await pageA.keyboard.press('n');
  await pageA.keyboard.insertText('Web1 intrusion');
  await pageA.getByLabel('Tags').fill('ir, web');
  await pageA.getByLabel('Tags').press('Enter');
  await pageA.getByRole('heading', { name: 'Web1 intrusion', level: 1 }).waitFor();
  const url = pageA.url();
  assert.match(url, /#\/notebooks\/[0-9a-f-]{36}$/);

  // B finds it in the list (filtered by its tag) and opens it.
  await pageB.reload();
  await pageB.getByRole('group', { name: 'Filter by tag' }).getByRole('button', { name: 'ir' }).click();
  await pageB.getByRole('table', { name: 'Notebooks' }).getByRole('link', { name: 'Web1 intrusion' }).click();
  await pageB.getByRole('heading', { name: 'Web1 intrusion', level: 1 }).waitFor();

  // Presence: each sees the other.
  await pageA.locator('.avatar[data-name="ben"]').waitFor();
  await pageB.locator('.avatar[data-name="admin"]').waitFor();

  // A writes a note carrying hostile Markdown; Ctrl+Enter saves and closes.
  await pageA.getByRole('group', { name: 'Add a section' }).getByRole('button', { name: 'Notes' }).click();
  await section(pageA, 0).getByRole('button', { name: 'Edit' }).click();
  const hostile = [
    '# Findings',
    'Beacon from **web1** every `60s`.',
    '<script>window.__pwned = "script"</script>',
    '<img src=x onerror="window.__pwned = \'img\'">',
    '[click me](javascript:window.__pwned="link") and [the runbook](https://example.org/runbook)',
    '',
    '| host | verdict |',
    '| --- | --- |',
    '| web1 | compromised |',
  ].join('\n');
  await section(pageA, 0).getByLabel(/^Markdown of/).fill(hostile);
  await section(pageA, 0).getByRole('region', { name: /^Preview of/ }).getByRole('heading', { name: 'Findings' }).waitFor();
  await section(pageA, 0).getByLabel(/^Markdown of/).press('Control+Enter');
  await section(pageA, 0).getByRole('button', { name: 'Edit' }).waitFor();

  // B sees it rendered, inert: the script and the image are text, the javascript: link is not a link.
  const noteB = section(pageB, 0);
  await noteB.getByRole('heading', { name: 'Findings' }).waitFor();
  assert.equal(await noteB.locator('.md strong').innerText(), 'web1');
  assert.equal(await noteB.locator('.md table td').first().innerText(), 'web1');
  for (const page of [pageA, pageB]) {
    const md = page.locator('article[data-section] .md').first();
    assert.equal(await md.locator('script, img, iframe, [onerror]').count(), 0, 'no element from the note’s HTML');
    assert.match(await md.innerText(), /<script>window.__pwned = "script"<\/script>/);
    assert.equal(await md.getByRole('link', { name: 'click me' }).count(), 0);
    assert.equal(await md.getByRole('link', { name: 'the runbook' }).getAttribute('href'), 'https://example.org/runbook');
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined, 'nothing ran');
  }
  await screenshot(pageB, 'notebook-live-note.png', { fullPage: true });

  // A adds a query and runs it with Enter; B sees the stored rows.
  await pageA.getByRole('group', { name: 'Add a section' }).getByRole('button', { name: 'Query' }).click();
  const queryA = section(pageA, 1);
  await queryA.locator('.cm-content').click();
  await pageA.keyboard.insertText('status>=500 | table(host, msg)');
  await pageA.keyboard.press('Enter');
  await queryA.getByTestId('results-meta').filter({ hasText: '2 rows' }).waitFor();
  const gridB = section(pageB, 1).getByRole('grid');
  await gridB.waitFor();
  await pageB.waitForFunction(() => document.querySelectorAll('article[data-section] [role="grid"] [role="row"][data-i]').length === 2);
  assert.match(await section(pageB, 1).getByTestId('results-meta').innerText(), /2 rows · ran by admin/);

  // B drags the query above the note; A sees the new order.
  await section(pageB, 1).locator('.mover').dragTo(section(pageB, 0), { targetPosition: { x: 40, y: 5 } });
  await pageA.waitForFunction(() => document.querySelector('article[data-section]')?.getAttribute('data-type') === 'query');
  assert.equal(await section(pageB, 0).getAttribute('data-type'), 'query');

  // Alt+Down on A's grip moves it back; B follows.
  await section(pageA, 0).locator('.mover').focus();
  await pageA.keyboard.press('Alt+ArrowDown');
  await pageB.waitForFunction(() => document.querySelector('article[data-section]')?.getAttribute('data-type') === 'markdown');

  // B adds a variable; A sees it in its bar.
  await pageB.getByLabel('New variable name').fill('host');
  await pageB.getByLabel('New variable value').fill('web1');
  await pageB.getByRole('button', { name: 'Add variable' }).click();
  await pageA.getByLabel('Value of @host').waitFor();
  assert.equal(await pageA.getByLabel('Value of @host').inputValue(), 'web1');

  // Both edit the note: B saves first; A, still typing, is told and keeps its own text.
  await section(pageA, 0).getByRole('button', { name: 'Edit' }).click();
  await section(pageA, 0).getByLabel(/^Markdown of/).fill('# Findings\nA’s version');
  await section(pageB, 0).getByRole('button', { name: 'Edit' }).click();
  await section(pageB, 0).getByLabel(/^Markdown of/).fill('# Findings\nB’s version');
  await section(pageB, 0).getByRole('button', { name: 'Done' }).click();
  const banner = section(pageA, 0).getByRole('alert');
  await banner.filter({ hasText: 'ben saved this section while you were editing it.' }).waitFor();
  await screenshot(pageA, 'notebook-conflict.png', { fullPage: true });
  await banner.getByRole('button', { name: 'Keep mine' }).click();
  await section(pageA, 0).getByRole('button', { name: 'Done' }).click();
  await section(pageB, 0).locator('.md').filter({ hasText: 'A’s version' }).waitFor();

  // A chart result: its code is fetched when the section has one to draw, in both browsers.
  await pageA.getByRole('group', { name: 'Add a section' }).getByRole('button', { name: 'Query' }).click();
  const chartA = section(pageA, 2);
  await chartA.locator('.cm-content').click();
  await pageA.keyboard.insertText('groupBy(host) | barchart()');
  await pageA.keyboard.press('Enter');
  await chartA.locator('.chart canvas, .chart svg').first().waitFor();
  await section(pageB, 2).locator('.chart canvas, .chart svg').first().waitFor();

  assert.deepEqual(errors, []);
});

test('generate from comments with the ATT&CK breakdown; export, import; AI off is said; light theme', async () => {
  await pageA.getByRole('link', { name: 'Notebooks', exact: true }).first().click();
  const gen = pageA.getByRole('region', { name: 'Generate from comments' });
  await gen.getByLabel('Comments tagged').selectOption('lateral-movement');
  await gen.getByRole('button', { name: 'Generate notebook' }).click();
  await pageA.getByRole('heading', { name: 'Notebook: lateral-movement', level: 1 }).waitFor();
  const breakdown = section(pageA, 1);
  await breakdown.getByRole('heading', { name: 'Lateral Movement (TA0008)' }).waitFor();
  assert.match(await breakdown.locator('table').last().innerText(), /T1021\.002\s+Remote Services: SMB\/Windows Admin Shares/);
  // The comments with their logs are read as the section comes into view.
  await section(pageA, 2).scrollIntoViewIfNeeded();
  await section(pageA, 2).getByText('SMB admin share write from web1').waitFor();
  assert.match(await pageA.getByTestId('ai-off').innerText(), /AI is off/);
  assert.equal(await section(pageA, 0).getByRole('button', { name: 'Summarize' }).isDisabled(), true);
  await screenshot(pageA, 'notebook-generated.png', { fullPage: true });

  // Export downloads the document; importing it makes a copy next to it.
  const [download] = await Promise.all([pageA.waitForEvent('download'), pageA.getByRole('button', { name: 'Export' }).click()]);
  const file = await download.path();
  const doc = JSON.parse(readFileSync(file!, 'utf8'));
  assert.equal(doc.kind, 'notebook');
  await pageA.getByRole('link', { name: 'Notebooks', exact: true }).first().click();
  await pageA.getByLabel('Import a notebook (an exported .json file)').setInputFiles(file!);
  await pageA.getByRole('heading', { name: 'Notebook: lateral-movement (2)', level: 1 }).waitFor();
  assert.equal(await pageA.locator('article[data-section]').count(), 3);

  // The light theme, and the list with the keyboard: `/` filters.
  await pageA.getByRole('button', { name: /Switch to light/ }).click();
  await pageA.getByRole('link', { name: 'Notebooks', exact: true }).first().click();
  await pageA.getByRole('table', { name: 'Notebooks' }).waitFor();
  await pageA.keyboard.press('/');
  await pageA.keyboard.insertText('intrusion');
  await pageA.waitForFunction(() => document.querySelectorAll('table[aria-label="Notebooks"] tbody tr a').length === 1);
  await screenshot(pageA, 'notebooks-list-light.png', { fullPage: true });
  assert.deepEqual(errors, []);
});

test('a stored result far down a long notebook is read when it is scrolled to', async () => {
  const { fractalId } = defaultIngest(a);
  const notes = Array.from({ length: 30 }, (_, i) => ({ section_type: 'markdown', title: `Note ${i}`, content: `# Finding ${i}\n${'Narrative. '.repeat(40)}` }));
  const nb = expectOk(
    await admin.post('/api/v1/notebooks', { name: 'Long write-up', fractal_id: fractalId, sections: [...notes, { section_type: 'query', title: 'Far query', content: 'host=far' }] }),
    201,
  );
  const far = nb.sections[30];
  const rows = Array.from({ length: 300 }, (_, i) => ({ host: `far-host-${i}`, status: 200 + (i % 3) }));
  expectOk(await admin.put(`/api/v1/notebooks/${nb.id}/sections/${far.id}/results`, { results: { results: rows, query: 'host=far' } }));

  const reads: string[] = [];
  const onRequest = (r: { url(): string }) => {
    if (r.url().includes(`/sections/${far.id}/results`)) reads.push(r.url());
  };
  pageB.on('request', onRequest);
  await pageB.goto(`${a.url}/#/notebooks/${nb.id}`);
  await pageB.getByRole('heading', { name: 'Long write-up', level: 1 }).waitFor();
  const last = section(pageB, 30);
  // The summary is in the notebook: the count shows at once; the rows are not read yet.
  assert.match((await last.getByTestId('results-meta').textContent()) ?? '', /^300 rows · ran by admin/);
  await section(pageB, 0).locator('.md').filter({ hasText: 'Finding 0' }).waitFor();
  assert.deepEqual(reads, [], 'the rows of a section far below the view are not read on opening');
  assert.equal(await last.getByRole('row').count(), 0);

  await last.scrollIntoViewIfNeeded();
  await last.getByRole('grid', { name: 'Results of Far query' }).getByText('far-host-0', { exact: true }).waitFor();
  assert.equal(reads.length, 1);
  pageB.off('request', onRequest);
  assert.deepEqual(errors, []);
});

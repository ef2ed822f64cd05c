// Notebooks with AI on, in a real browser: the appliance is configured with SVC_AI_* pointing at a
// local stand-in speaking the OpenAI chat-completions API (tests/support/ai-standin.ts, the one
// thing outside the box). Two browser contexts, the administrator (A) and Ben, an analyst (B), have
// one notebook open: A presses Summarize on a query section and both see the summary added after it;
// a model server that refuses shows its sentence in the section and nothing is added; a notebook
// generated from comments without the ATT&CK breakdown shows the model at work, and its summary
// fills in on the page when the model answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN_PASSWORD, Client, defaultIngest, makeUser, passwordOf, signIn, type TestAppliance } from '../support/appliance.ts';
import { startAiStandIn, type AiStandIn } from '../support/ai-standin.ts';
import { expectOk, grant } from '../support/api.ts';
import { collectPageErrors, screenshot, startBrowserTest, stopBrowserTest } from '../support/browser.ts';
import { ingest, sampleEvents } from '../support/query.ts';

const NB = '/api/v1/notebooks';
let ai: AiStandIn;
let a: TestAppliance;
let browser: Browser;
let admin: Client;
let fractalId: string;
let ctxA: BrowserContext;
let ctxB: BrowserContext;
let pageA: Page;
let pageB: Page;
const errors: string[] = [];

async function signedIn(ctx: BrowserContext, username: string, password: string): Promise<Page> {
  const page = await ctx.newPage();
  collectPageErrors(page, errors);
  await page.goto(a.url + '/#/notebooks');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Notebooks', level: 1 }).waitFor();
  return page;
}

const sections = (page: Page) => page.locator('article[data-section]');
const types = (page: Page) => sections(page).evaluateAll((els) => els.map((e) => e.getAttribute('data-type')));

before(async () => {
  ai = await startAiStandIn();
  ({ a, browser } = await startBrowserTest({}, { SVC_AI_BASE_URL: ai.url, SVC_AI_API_KEY: 'sk-local-e2e', SVC_AI_MODEL: 'llama-test' }));
  const d = defaultIngest(a);
  fractalId = d.fractalId;
  await ingest(a, d.token, fractalId, sampleEvents());
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  await makeUser(admin, 'ben');
  await grant(admin, fractalId, { username: 'ben' }, 'analyst');
  ctxA = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  ctxB = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // The machine is shared: every wait is for a condition, with a deadline far above what it takes.
  for (const c of [ctxA, ctxB]) c.setDefaultTimeout(90_000);
  pageA = await signedIn(ctxA, 'admin', ADMIN_PASSWORD);
  pageB = await signedIn(ctxB, 'ben', passwordOf('ben'));
});
after(async () => {
  await ctxA?.close();
  await ctxB?.close();
  await stopBrowserTest(a, browser);
  await ai?.close();
});

test('Summarize on a section: the summary appears after it in both browsers; a refusing model is said in the section', async () => {
  await pageA.getByTestId('ai-status').filter({ hasText: 'AI summaries: on (llama-test).' }).waitFor();
  const nb = expectOk(
    await admin.post(NB, {
      name: 'Server errors',
      fractal_id: fractalId,
      sections: [
        { section_type: 'query', title: 'Errors', content: 'status>=500 | table(host, msg)' },
        { section_type: 'markdown', title: 'Next steps', content: 'Check the database on web2.' },
      ],
    }),
    201,
  );
  expectOk(await admin.post(`${NB}/${nb.id}/sections/${nb.sections[0].id}/execute`, {}));
  for (const page of [pageA, pageB]) {
    await page.evaluate((id) => (location.hash = `#/notebooks/${id}`), nb.id);
    await page.getByRole('heading', { name: 'Server errors', level: 1 }).waitFor();
  }
  assert.equal(await pageA.getByTestId('ai-off').count(), 0);

  await sections(pageA).nth(0).getByRole('button', { name: 'Summarize', exact: true }).click();
  for (const page of [pageA, pageB]) {
    await page.waitForFunction(() => document.querySelectorAll('article[data-section]').length === 3);
    assert.deepEqual(await types(page), ['query', 'ai_summary', 'markdown']);
    // The stand-in's answer is Markdown: rendered, its bold text bold.
    assert.equal(await sections(page).nth(1).locator('.md strong').innerText(), 'Stand-in summary');
  }
  const prompt = ai.requests.at(-1)!.body.messages.find((m) => m.role === 'user')!.content;
  assert.ok(prompt.includes('status>=500 | table(host, msg)'), 'the model was sent the query');
  assert.ok(prompt.includes('deadlock detected'), 'and its stored rows');
  await screenshot(pageB, 'notebook-ai-summary.png', { fullPage: true });

  // The model server refuses: A is told why in the section; nothing is added in either browser.
  ai.mode = 'error';
  try {
    const note = sections(pageA).nth(2);
    await note.getByRole('button', { name: 'Summarize', exact: true }).click();
    await note.getByRole('alert').filter({ hasText: 'refused the request (HTTP 500: model is loading)' }).waitFor();
  } finally {
    ai.mode = 'answer';
  }
  assert.deepEqual(await types(pageA), ['query', 'ai_summary', 'markdown']);
  assert.deepEqual(await types(pageB), ['query', 'ai_summary', 'markdown']);
  assert.equal(expectOk(await admin.get(`${NB}/${nb.id}`)).sections.length, 3, 'nothing stored');
  assert.deepEqual(errors, []);
});

test('generated from comments with AI on: the summary section says the model is writing, then fills in live', async () => {
  const logs = (await admin.post('/api/v1/query', { query: 'user=alice', fractal_id: fractalId })).body.results as any[];
  for (const l of logs) expectOk(await admin.post('/api/v1/comments', { log_id: l.log_id, fractal_id: fractalId, content: `alice signed in on ${l.host}`, tags: ['alice-case'] }), 201);
  await pageA.getByRole('link', { name: 'Notebooks', exact: true }).first().click();
  const gen = pageA.getByRole('region', { name: 'Generate from comments' });
  await gen.getByLabel('Comments tagged').selectOption('alice-case');
  await gen.getByLabel('ATT&CK tactic breakdown').uncheck();
  await gen.getByText('a summary written by llama-test.').waitFor();
  ai.mode = 'hang'; // the model answers only when the test says, so the page shows it at work first
  try {
    await gen.getByRole('button', { name: 'Generate notebook' }).click();
    await pageA.getByRole('heading', { name: 'Notebook: alice-case', level: 1 }).waitFor();
    assert.deepEqual(await types(pageA), ['markdown', 'ai_summary', 'comment_context']);
    const summary = sections(pageA).nth(1);
    await summary.getByText('The model llama-test is writing this summary…').waitFor();
    ai.release();
    await summary.locator('.md strong').filter({ hasText: 'Stand-in summary' }).waitFor();
  } finally {
    ai.release();
  }
  const prompt = ai.requests.at(-1)!.body.messages.find((m) => m.role === 'user')!.content;
  assert.equal((prompt.match(/alice signed in on web/g) ?? []).length, logs.length);
  assert.match(await sections(pageA).nth(2).innerText(), /alice signed in on web/);
  assert.deepEqual(errors, []);
});

// Notebooks with AI on: the appliance configured with SVC_AI_BASE_URL/_API_KEY/_MODEL pointing at a
// local stand-in that speaks the OpenAI chat-completions API (tests/support/ai-standin.ts). Status,
// summaries of a whole notebook and of one section (results capped in the prompt), what a failing,
// garbled or silent model server gives (clear 5xx sentences, the service keeps serving), a generated
// notebook whose summary fills in live, and that neither the key nor a prompt reaches the logs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, defaultIngest, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { expectError, expectOk, metadataFilesContain } from '../support/api.ts';
import { standInReply, startAiStandIn, type AiStandIn } from '../support/ai-standin.ts';
import { LiveReader } from '../support/live.ts';
import { ingest, sampleEvents } from '../support/query.ts';
import { startServiceProcess } from '../support/service-process.ts';

const KEY = 'sk-local-0123456789abcdef';
const NB = '/api/v1/notebooks';
let ai: AiStandIn;
let app: TestAppliance;
let admin: Client;
let fractalId: string;

before(async () => {
  ai = await startAiStandIn();
  app = await startTestAppliance({ SVC_AI_BASE_URL: ai.url, SVC_AI_API_KEY: KEY, SVC_AI_MODEL: 'llama-test' });
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const d = defaultIngest(app);
  fractalId = d.fractalId;
  await ingest(app, d.token, fractalId, sampleEvents());
});
after(async () => {
  await app?.dispose();
  await ai?.close();
});

async function notebookWith(name: string, sections: Array<Record<string, unknown>>): Promise<any> {
  return expectOk(await admin.post(NB, { name, fractal_id: fractalId, sections }), 201);
}

describe('AI on', () => {
  test('ai-status says on, with the model and the endpoint, never the key', async () => {
    const s = expectOk(await admin.get(`${NB}/ai-status`));
    assert.deepEqual(s, { enabled: true, model: 'llama-test', endpoint: `${ai.url}/chat/completions` });
    assert.ok(!JSON.stringify(s).includes(KEY));
  });

  test('an ai_summary section is written from the notebook’s other sections; results are capped in the prompt', async () => {
    const nb = await notebookWith('Summarize me', [
      { section_type: 'markdown', title: 'Scope', content: 'Beaconing seen from web1 to 203.0.113.9' },
      { section_type: 'query', title: 'Many rows', content: 'host=web1' },
      { section_type: 'ai_summary', title: 'Summary', content: '' },
    ]);
    const [, q, summary] = nb.sections;
    const rows = Array.from({ length: 1000 }, (_, i) => ({ host: 'web1', seq: i, msg: `connection ${i} to 203.0.113.9:443` }));
    expectOk(await admin.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: { results: rows } }));
    const before = ai.requests.length;
    const r = expectOk(await admin.post(`${NB}/${nb.id}/sections/${summary.id}/summarize`, {}));
    assert.equal(ai.requests.length, before + 1);
    const sent = ai.requests.at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    assert.equal(sent.body.model, 'llama-test');
    assert.deepEqual(sent.body.messages.map((m) => m.role), ['system', 'user']);
    const prompt = sent.body.messages[1]!.content;
    assert.match(prompt, /^Notebook "Summarize me"/);
    assert.ok(prompt.includes('Beaconing seen from web1 to 203.0.113.9'), 'the markdown is sent');
    assert.ok(prompt.includes('"seq":49') && !prompt.includes('"seq":50,'), 'at most 50 rows of results');
    assert.ok(prompt.includes('(950 more rows not shown)'));
    assert.ok(prompt.length <= 32_000);
    assert.equal(r.model, 'llama-test');
    assert.equal(r.section.id, summary.id);
    assert.match(r.section.content, /^\*\*Stand-in summary\*\* of \d+ characters, starting: Notebook "Summarize me"/);
    assert.equal(r.section.version, 2);
  });

  test('summarizing another section adds an ai_summary section right after it, sent live', async () => {
    const nb = await notebookWith('One section', [
      { section_type: 'query', title: 'Errors', content: 'status>=500 | table(host, msg)' },
      { section_type: 'markdown', title: 'After', content: 'later' },
    ]);
    const [q] = nb.sections;
    expectOk(await admin.post(`${NB}/${nb.id}/sections/${q.id}/execute`, {}));
    const stream = await LiveReader.open(admin, `${NB}/${nb.id}/events`, { lastEventId: (await admin.get(`${NB}/${nb.id}`)).body.data.live_event_id });
    await stream.next('ready');
    const r = expectOk(await admin.post(`${NB}/${nb.id}/sections/${q.id}/summarize`, {}));
    assert.equal(r.section.section_type, 'ai_summary');
    assert.equal(r.section.title, 'Summary of "Errors"');
    const prompt = ai.requests.at(-1)!.body.messages[1]!.content;
    assert.ok(prompt.includes('Query: status>=500 | table(host, msg)'));
    assert.ok(prompt.includes('Internal Error') && prompt.includes('deadlock detected'), 'with its stored rows');
    const titles = expectOk(await admin.get(`${NB}/${nb.id}`)).sections.map((s: any) => s.title);
    assert.deepEqual(titles, ['Errors', 'Summary of "Errors"', 'After']);
    assert.equal((await stream.next('section_added')).body.data.section.id, r.section.id);
    stream.close();
  });

  test('a failing, garbled or silent model server: clear sentences, nothing stored, the service keeps serving', async () => {
    const nb = await notebookWith('Failures', [
      { section_type: 'markdown', content: 'something to summarize' },
      { section_type: 'ai_summary', content: 'old summary' },
    ]);
    const target = nb.sections[1];
    const url = `${NB}/${nb.id}/sections/${target.id}/summarize`;
    try {
      ai.mode = 'error';
      expectError(await admin.post(url, {}), 502, 'refused the request (HTTP 500: model is loading)');
      ai.mode = 'garbage';
      expectError(await admin.post(url, {}), 502, 'not JSON', 'SVC_AI_BASE_URL');
      ai.mode = 'hang';
      app.context.ai.timeoutMs = 300;
      expectError(await admin.post(url, {}), 504, 'did not answer within');
    } finally {
      app.context.ai.timeoutMs = 120_000;
      ai.release();
    }
    const after = expectOk(await admin.get(`${NB}/${nb.id}`));
    assert.equal(after.sections[1].content, 'old summary');
    assert.equal(after.sections[1].version, 1);
    expectOk(await admin.get(`${NB}/ai-status`));
  });

  test('generate-from-comments without attack_chain: an AI summary of the comments fills in live', async (t) => {
    const logs = (await admin.post('/api/v1/query', { query: 'user=alice', fractal_id: fractalId })).body.results as any[];
    for (const l of logs) expectOk(await admin.post('/api/v1/comments', { log_id: l.log_id, fractal_id: fractalId, content: `alice on ${l.host}`, tags: ['alice-case'] }), 201);
    ai.mode = 'hang'; // hold the model's answer until the page (the stream) is open
    t.after(() => ai.release());
    const g = expectOk(await admin.post(`${NB}/generate-from-comments`, { tag: 'alice-case', fractal_id: fractalId }), 201);
    assert.deepEqual(g.sections.map((s: any) => s.section_type), ['markdown', 'ai_summary', 'comment_context']);
    const pending = g.sections[1];
    assert.equal(pending.content, '_The model llama-test is writing this summary…_');
    const stream = await LiveReader.open(admin, `${NB}/${g.id}/events`, { lastEventId: g.live_event_id });
    await stream.next('ready');
    ai.release();
    const filled = await stream.next('section_updated');
    assert.equal(filled.body.data.section.id, pending.id);
    assert.match(filled.body.data.section.content, /^\*\*Stand-in summary\*\*/);
    const prompt = ai.requests.at(-1)!.body.messages[1]!.content;
    assert.match(prompt, /tagged these comments "alice-case"/);
    assert.equal((prompt.match(/alice on web/g) ?? []).length, 3);
    stream.close();
  });
});

describe('nothing secret in the logs', () => {
  test('at debug level the service log holds neither the API key nor a prompt or an answer', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-ai-log-'));
    const svc = await startServiceProcess({
      dataDir,
      env: { SVC_AI_BASE_URL: ai.url, SVC_AI_API_KEY: KEY, SVC_AI_MODEL: 'llama-test', SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'debug' },
      // A deadline, not a wait: a first start on a machine busy with other test files can take a while.
      timeoutMs: 120_000,
    });
    try {
      const c = await signIn(svc.base, 'admin', ADMIN_PASSWORD);
      const nb = expectOk(
        await c.post(NB, { name: 'Secret', sections: [{ section_type: 'markdown', content: 'CANARY-7731 internal finding' }, { section_type: 'ai_summary' }] }),
        201,
      );
      ai.reply = () => 'ANSWER-CANARY-5521';
      expectOk(await c.post(`${NB}/${nb.id}/sections/${nb.sections[1].id}/summarize`, {}));
      ai.mode = 'error';
      expectError(await c.post(`${NB}/${nb.id}/sections/${nb.sections[1].id}/summarize`, {}), 502);
      const out = svc.output();
      assert.ok(out.includes('/summarize'), 'the requests were logged at debug level');
      for (const secret of [KEY, 'CANARY-7731', 'ANSWER-CANARY-5521']) assert.ok(!out.includes(secret), `${secret} must not be logged`);
    } finally {
      ai.mode = 'answer';
      ai.reply = standInReply;
      await svc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    assert.ok(!metadataFilesContain(app, KEY), 'nor stored');
  });
});

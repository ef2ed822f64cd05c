// generate-from-comments with AI off (no SVC_AI_*): the comments tagged `lateral-movement` in a
// fractal (and across a prism's members) become "Notebook: lateral-movement"; with attack_chain the
// ATT&CK tactic breakdown names the techniques of the comments and their tags, in kill-chain order,
// from the bundled table; without it a plain timeline. Generating again replaces the notebook (same
// id, open pages told). AI off: ai-status says so and summarize answers a 400 sentence.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectError, expectOk, grant } from '../support/api.ts';
import { LiveReader } from '../support/live.ts';
import { ingest } from '../support/query.ts';
import { ATTACK, resolveTechnique, tacticBreakdown, techniqueIds } from '../../service/src/notebooks/attack.ts';

const NB = '/api/v1/notebooks';
let app: TestAppliance;
let admin: Client;
let ana: Client;
let vic: Client;
let fa: any;
let fb: any;
let prism: any;

const ago = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

async function comment(c: Client, fractalId: string, host: string, content: string, tags: string[]) {
  const logs = (await c.post('/api/v1/query', { query: `host=${host}`, fractal_id: fractalId })).body.results as any[];
  assert.equal(logs.length, 1, `one log of ${host}`);
  return expectOk(await c.post('/api/v1/comments', { log_id: logs[0].log_id, fractal_id: fractalId, content, tags }), 201);
}

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  fa = await createFractal(admin, 'dc-logs');
  fb = await createFractal(admin, 'edr-logs');
  prism = expectOk(await admin.post('/api/v1/prisms', { name: 'all-sites', fractal_ids: [fa.id, fb.id] }), 201);
  await ingest(app, fa.default_ingest_token, fa.id, [
    { timestamp: ago(30), host: 'ws07', user: 'svc-backup', msg: 'psexec service installed' },
    { timestamp: ago(20), host: 'dc01', user: 'svc-backup', msg: 'remote powershell session' },
    { timestamp: ago(10), host: 'fs02', user: 'svc-backup', msg: 'admin share write' },
  ]);
  await ingest(app, fb.default_ingest_token, fb.id, [{ timestamp: ago(5), host: 'edr9', user: 'svc-backup', msg: 'rdp logon' }]);
  [ana, vic] = await Promise.all(['ana', 'vic'].map((u) => makeUser(admin, u)));
  await grant(admin, fa.id, { username: 'ana' }, 'analyst');
  await grant(admin, fa.id, { username: 'vic' }, 'viewer');
  await comment(ana, fa.id, 'ws07', 'PsExec used to push a service (T1569.002) from ws07', ['lateral-movement', 'attack.t1021.002']);
  await comment(ana, fa.id, 'dc01', 'Remote PowerShell on the DC; old id T1086, and T9999 which is nothing', ['lateral-movement']);
  await comment(ana, fa.id, 'fs02', 'Admin share write, again T1021.002', ['lateral-movement', 'exfil?']);
  await comment(admin, fb.id, 'edr9', 'RDP into the EDR box: T1021.001', ['lateral-movement']);
  await comment(ana, fa.id, 'dc01', 'unrelated note', ['triage']);
});
after(async () => {
  await app?.dispose();
});

describe('AI off', () => {
  test('ai-status says off; summarize answers a 400 sentence saying AI is not configured', async () => {
    assert.deepEqual(expectOk(await ana.get(`${NB}/ai-status`)), { enabled: false, model: null, endpoint: null });
    const nb = expectOk(await ana.post(NB, { name: 'No AI', fractal_id: fa.id, sections: [{ section_type: 'markdown', content: 'x' }, { section_type: 'ai_summary' }] }), 201);
    expectError(await ana.post(`${NB}/${nb.id}/sections/${nb.sections[1].id}/summarize`, {}), 400, 'AI is not configured', 'SVC_AI_BASE_URL');
    assert.equal(expectOk(await ana.get(`${NB}/${nb.id}`)).sections[1].version, 1, 'nothing written');
  });
});

describe('generate-from-comments', () => {
  test('attack_chain: a tactic breakdown in kill-chain order with technique names, and the comments with their logs', async () => {
    const r = await ana.post(`${NB}/generate-from-comments`, { tag: 'lateral-movement', attack_chain: true, fractal_id: fa.id });
    const nb = expectOk(r, 201);
    assert.equal(r.body.message, 'Created "Notebook: lateral-movement".');
    assert.equal(nb.name, 'Notebook: lateral-movement');
    assert.equal(nb.fractal_id, fa.id);
    assert.deepEqual(nb.tags, ['lateral-movement']);
    assert.equal(nb.time_range, 'custom');
    assert.deepEqual(nb.sections.map((s: any) => [s.section_type, s.title]), [
      ['markdown', 'Overview'],
      ['markdown', 'ATT&CK tactic breakdown'],
      ['comment_context', 'Comments tagged “lateral-movement” with their logs'],
    ]);
    assert.match(nb.sections[0].content, /the 3 comments tagged “lateral-movement” in fractal “dc-logs”, on 3 logs/);
    const breakdown: string = nb.sections[1].content;
    // Execution (T1569.002, and the revoked T1086 followed to T1059.001) comes before Lateral Movement.
    const exec = breakdown.indexOf('### Execution (TA0002)');
    const lateral = breakdown.indexOf('### Lateral Movement (TA0008)');
    assert.ok(exec > 0 && lateral > exec, breakdown);
    assert.match(breakdown, /\| T1569\.002 \| System Services: Service Execution \| 1 \| 1 \|/);
    assert.match(breakdown, /\| T1059\.001 \| Command and Scripting Interpreter: PowerShell \| 1 \| 1 \|/);
    assert.match(breakdown, /\| T1021\.002 \| Remote Services: SMB\/Windows Admin Shares \| 2 \| 2 \|/, 'from a comment and from another’s tag');
    assert.ok(!breakdown.includes('T1021.001'), 'the other fractal’s comment is not in this fractal’s notebook');
    assert.match(breakdown, /Revoked ids counted as their replacements: T1086 → T1059\.001\./);
    assert.match(breakdown, new RegExp(`Not in ATT&CK Enterprise v${ATTACK.version.replace('.', '\\.')}: T9999\\.`));

    const ctxSection = nb.sections[2];
    assert.deepEqual(JSON.parse(ctxSection.content), { tag: 'lateral-movement' });
    assert.equal(ctxSection.results_summary.comment_count, 3);
    const gathered = expectOk(await ana.get(`${NB}/${nb.id}/sections/${ctxSection.id}/results`)).results;
    assert.deepEqual(gathered.comments.map((c: any) => c.content.slice(0, 12)), ['PsExec used ', 'Remote Power', 'Admin share '], 'oldest log first');
    assert.deepEqual(gathered.results.map((l: any) => l.host).sort(), ['dc01', 'fs02', 'ws07']);
  });

  test('without attack_chain and AI off: a plain timeline; generating again replaces it in place and tells open pages', async () => {
    const first = expectOk(await ana.post(`${NB}/generate-from-comments`, { tag: 'lateral-movement', fractal_id: fa.id }));
    assert.equal(first.replaced, true, 'the attack_chain notebook of the test before has that name');
    assert.deepEqual(first.sections.map((s: any) => s.title), ['Overview', 'Timeline', 'Comments tagged “lateral-movement” with their logs']);
    const lines = first.sections[1].content.split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0], /^- \*\*\d{4}-\d\d-\d\dT[\d:.]+Z\*\* · ana · log `[0-9a-f-]{36}` \(attack\.t1021\.002, lateral-movement\): PsExec used/);
    assert.match(lines[2], /Admin share write/);

    const stream = await LiveReader.open(vic, `${NB}/${first.id}/events`, { lastEventId: first.live_event_id });
    await stream.next('ready');
    const again = expectOk(await ana.post(`${NB}/generate-from-comments`, { tag: 'lateral-movement', fractal_id: fa.id, attack_chain: true }));
    assert.equal(again.id, first.id, 'the same notebook, replaced');
    assert.equal((await stream.next('notebook_replaced')).body.data.id, first.id);
    const list = expectOk(await ana.get(`${NB}?fractal_id=${fa.id}`));
    assert.equal(list.filter((n: any) => n.name === 'Notebook: lateral-movement').length, 1);
    stream.close();
  });

  test('in a prism: the comments of every member fractal', async () => {
    const nb = expectOk(await admin.post(`${NB}/generate-from-comments`, { tag: 'lateral-movement', attack_chain: true, prism_id: prism.id }), 201);
    assert.equal(nb.prism_id, prism.id);
    assert.match(nb.sections[1].content, /\| T1021\.001 \| Remote Services: Remote Desktop Protocol \| 1 \| 1 \|/);
    const gathered = expectOk(await admin.get(`${NB}/${nb.id}/sections/${nb.sections[2].id}/results`)).results;
    assert.equal(gathered.comments.length, 4);
    assert.deepEqual(gathered.results.map((l: any) => l.host).sort(), ['dc01', 'edr9', 'fs02', 'ws07']);
  });

  test('refusals: an unknown tag, a tag that cannot be one, a viewer', async () => {
    expectError(await ana.post(`${NB}/generate-from-comments`, { tag: 'nothing-here', fractal_id: fa.id }), 404, 'No comments tagged "nothing-here" in fractal "dc-logs"');
    expectError(await ana.post(`${NB}/generate-from-comments`, { tag: 'a,b', fractal_id: fa.id }), 400, 'commas');
    expectError(await ana.post(`${NB}/generate-from-comments`, { tag: '  ', fractal_id: fa.id }), 400, '"tag" must not be empty');
    expectError(await vic.post(`${NB}/generate-from-comments`, { tag: 'lateral-movement', fractal_id: fa.id }), 403, 'analyst role');
  });
});

describe('ATT&CK ids and the bundled table', () => {
  test('ids are found in text and tags, not inside longer words or numbers', () => {
    assert.deepEqual(techniqueIds('t1059.001 and T1021, attack.t1570; T10590 xT1059 T1059.0011 (T1003.001)'), ['T1059.001', 'T1021', 'T1570', 'T1003.001']);
  });

  test('the table is the generator’s output of the ATT&CK extract: tactics in kill-chain order, names, revocations', () => {
    assert.equal(ATTACK.tactics[0]!.name, 'Reconnaissance');
    assert.equal(ATTACK.tactics.at(-1)!.name, 'Impact');
    assert.ok(Object.keys(ATTACK.techniques).length > 600);
    assert.deepEqual(resolveTechnique('T1003.001'), { named: 'T1003.001', id: 'T1003.001', name: 'OS Credential Dumping: LSASS Memory', tactics: ['credential-access'] });
    assert.equal(resolveTechnique('T1086')!.id, 'T1059.001');
    assert.equal(resolveTechnique('T9999'), null);
    const md = tacticBreakdown([{ commentId: 'c', logId: 'l', text: 'nothing to see' }], 'Intro.');
    assert.match(md, /^Intro\.\n\nNo ATT&CK technique id/);
  });
});

// Notebooks over real HTTP against a real appliance (embedded engine, SQLite file): every endpoint
// of interface-spec "Notebooks" but the AI and generation ones (notebooks-ai.test.ts), roles and
// API-key permissions, versions (a stale write is a 409 and changes nothing), query sections run
// through the query engine with the notebook's range and variables, results kept as evidence after
// the logs age out, export/import round trips, bad input, and the live stream read by a real SSE
// client in a second session while another edits, resumed with Last-Event-ID.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createApiKey, createFractal, credentialClient, expectBadField, expectError, expectOk, grant, readMetadataTable, unknownId, UUID_RE } from '../support/api.ts';
import { LiveReader, waitForPresence } from '../support/live.ts';
import { ingest, sampleEvents } from '../support/query.ts';

let app: TestAppliance;
let admin: Client;
let ana: Client; // analyst on A
let ben: Client; // analyst on A (the second browser)
let vic: Client; // viewer on A
let oto: Client; // analyst on B only
let keyNotebook: Client; // A's key: query + notebook
let keyNoNotebook: Client; // A's key: query only
let keyNoQuery: Client; // A's key: notebook only
let fa: any;
let fb: any;

const NB = '/api/v1/notebooks';
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

async function notebook(c: Client, body: Record<string, unknown>): Promise<any> {
  return expectOk(await c.post(NB, { fractal_id: fa.id, ...body }), 201);
}
async function section(c: Client, nbId: string, body: Record<string, unknown>): Promise<any> {
  return expectOk(await c.post(`${NB}/${nbId}/sections`, body), 201);
}
const get = async (c: Client, id: string) => expectOk(await c.get(`${NB}/${id}`));

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  fa = await createFractal(admin, 'case-a');
  fb = await createFractal(admin, 'case-b');
  // Recent events, and two of five days ago that a one-day retention will remove.
  await ingest(app, fa.default_ingest_token, fa.id, [
    ...sampleEvents(),
    { timestamp: daysAgo(5), host: 'old1', user: 'mallory', msg: 'beacon' },
    { timestamp: daysAgo(5), host: 'old1', user: 'mallory', msg: 'beacon again' },
  ]);
  [ana, ben, vic, oto] = await Promise.all(['ana', 'ben', 'vic', 'oto'].map((u) => makeUser(admin, u)));
  await grant(admin, fa.id, { username: 'ana' }, 'analyst');
  await grant(admin, fa.id, { username: 'ben' }, 'analyst');
  await grant(admin, fa.id, { username: 'vic' }, 'viewer');
  await grant(admin, fb.id, { username: 'oto' }, 'analyst');
  const A = `/api/v1/fractals/${fa.id}`;
  keyNotebook = credentialClient(app.url, (await createApiKey(admin, A, { name: 'writer', permissions: { query: true, notebook: true } })).key);
  keyNoNotebook = credentialClient(app.url, (await createApiKey(admin, A, { name: 'reader', permissions: { query: true } })).key);
  keyNoQuery = credentialClient(app.url, (await createApiKey(admin, A, { name: 'nb-only', permissions: { query: false, notebook: true } })).key);
});
after(async () => {
  await app?.dispose();
});

describe('notebooks', () => {
  test('create, read, list with tag and text filters, update, delete', async () => {
    const nb = await notebook(ana, {
      name: 'Web1 compromise',
      description: 'What happened on web1',
      tags: ['ir-2026-01', 'web'],
      variables: [{ name: 'host', value: 'web1' }],
      time_range: '7d',
    });
    assert.match(nb.id, UUID_RE);
    assert.equal(nb.fractal_id, fa.id);
    assert.equal(nb.prism_id, null);
    assert.deepEqual(nb.tags, ['ir-2026-01', 'web']);
    assert.deepEqual(nb.variables, [{ name: 'host', value: 'web1' }]);
    assert.equal(nb.time_range, '7d');
    assert.equal(nb.version, 1);
    assert.equal(nb.created_by, 'ana');
    assert.equal(nb.can_edit, true);
    assert.deepEqual(nb.scope, { type: 'fractal', id: fa.id, name: 'case-a' });
    assert.deepEqual(nb.sections, []);
    assert.match(nb.live_event_id, /^[0-9a-f]+-\d+$/);

    await notebook(ana, { name: 'Phishing wave', tags: ['phishing'] });
    const byTag = await ana.get(`${NB}?fractal_id=${fa.id}&tag=web`);
    assert.deepEqual(expectOk(byTag).map((n: any) => n.name), ['Web1 compromise']);
    const byText = await ana.get(`${NB}?fractal_id=${fa.id}&q=PHISH`);
    assert.deepEqual(expectOk(byText).map((n: any) => n.name), ['Phishing wave']);
    const all = await vic.get(`${NB}?fractal_id=${fa.id}`);
    assert.equal(all.headers.get('x-total-count'), '2');
    assert.deepEqual(expectOk(all).map((n: any) => [n.name, n.section_count]), [['Phishing wave', 0], ['Web1 compromise', 0]], 'last edited first');

    const changed = expectOk(await ben.put(`${NB}/${nb.id}`, { name: 'Web1 compromise (confirmed)', time_range: 'custom', start: daysAgo(2), end: daysAgo(1), version: 1 }));
    assert.equal(changed.version, 2);
    assert.equal(changed.updated_by, 'ben');
    assert.equal(changed.time_range, 'custom');
    expectError(await ana.put(`${NB}/${nb.id}`, { name: 'Stale rename', version: 1 }), 409, 'changed by ben', 'version 2');
    assert.equal((await get(ana, nb.id)).name, 'Web1 compromise (confirmed)', 'the stale write changed nothing');
    expectError(await ana.put(`${NB}/${nb.id}`, { name: 'phishing WAVE' }), 409, 'already exists');

    expectOk(await ana.del(`${NB}/${nb.id}`));
    expectError(await ana.get(`${NB}/${nb.id}`), 404, `Notebook ${nb.id} not found.`);
  });

  test('roles: viewers read, analysts write, another tenant sees nothing; API keys need "notebook"', async () => {
    const nb = await notebook(ana, { name: 'Access check' });
    await section(ana, nb.id, { section_type: 'markdown', content: 'hello' });
    assert.equal((await get(vic, nb.id)).can_edit, false);
    expectError(await vic.post(`${NB}/${nb.id}/sections`, { section_type: 'markdown' }), 403, 'analyst role', 'you have viewer');
    expectError(await vic.put(`${NB}/${nb.id}`, { name: 'x' }), 403, 'analyst role');
    expectError(await vic.post(NB, { name: 'viewer nb', fractal_id: fa.id }), 403, 'Writing notebooks needs the analyst role');
    expectError(await oto.get(`${NB}/${nb.id}`), 404, `Notebook ${nb.id} not found.`);
    expectError(await oto.get(`${NB}/${nb.id}/events`), 404);
    expectError(await oto.get(`${NB}?fractal_id=${fa.id}`), 404, `Fractal ${fa.id} not found.`);
    assert.equal(expectOk(await oto.get(`${NB}?fractal_id=${fb.id}`)).length, 0, 'B has no notebooks');
    expectError(await new Client(app.url).get(`${NB}/${nb.id}`), 401);

    expectError(await keyNoNotebook.get(`${NB}/${nb.id}`), 403, 'lacks the "notebook" permission');
    assert.equal((await get(keyNotebook, nb.id)).name, 'Access check');
    const byKey = await section(keyNotebook, nb.id, { section_type: 'markdown', content: 'from a script' });
    assert.equal(byKey.created_by, 'writer (API key)');
  });

  test('sections: add at a position, update with the current version, a stale one is a 409, delete', async () => {
    const nb = await notebook(ana, { name: 'Sections' });
    const a = await section(ana, nb.id, { section_type: 'markdown', title: 'First', content: '# Findings' });
    const c = await section(ana, nb.id, { section_type: 'query', title: 'Errors', content: 'status>=500' });
    const b = await section(ana, nb.id, { section_type: 'markdown', title: 'Second', content: 'between', position: 1 });
    assert.deepEqual((await get(ana, nb.id)).sections.map((s: any) => [s.title, s.position]), [['First', 0], ['Second', 1], ['Errors', 2]]);
    assert.equal(a.version, 1);

    const edited = expectOk(await ben.put(`${NB}/${nb.id}/sections/${a.id}`, { version: 1, content: '# Findings\nweb1 beaconed', tags: ['key'] }));
    assert.equal(edited.version, 2);
    assert.equal(edited.updated_by, 'ben');
    assert.deepEqual(edited.tags, ['key']);
    // Ana edits from version 1 as well: refused, and Ben's text stays.
    expectError(await ana.put(`${NB}/${nb.id}/sections/${a.id}`, { version: 1, content: 'overwrite' }), 409, 'changed by ben', 'version 2');
    assert.equal((await get(ana, nb.id)).sections[0].content, '# Findings\nweb1 beaconed');
    expectBadField(await ana.put(`${NB}/${nb.id}/sections/${a.id}`, { content: 'no version' }), 'version');

    expectError(await ana.del(`${NB}/${nb.id}/sections/${b.id}?version=7`), 409, 'reload it before deleting it');
    expectOk(await ana.del(`${NB}/${nb.id}/sections/${b.id}?version=1`));
    const after = await get(ana, nb.id);
    assert.deepEqual(after.sections.map((s: any) => [s.id, s.position]), [[a.id, 0], [c.id, 1]]);
    assert.equal(after.version, 5, 'three sections added and one deleted');
    expectError(await ana.put(`${NB}/${nb.id}/sections/${b.id}`, { version: 1, content: 'x' }), 404, `Section ${b.id} not found`);

    const tags = expectOk(await vic.get(`${NB}/${nb.id}/tags`));
    assert.deepEqual(tags, [{ tag: 'key', count: 1 }]);
  });

  test('bad input: unknown section type, another notebook’s section, a reorder that is not the sections, variables that are not names', async () => {
    const nb = await notebook(ana, { name: 'Bad input' });
    const other = await notebook(ana, { name: 'Other notebook' });
    const s1 = await section(ana, nb.id, { section_type: 'markdown', content: 'one' });
    const s2 = await section(ana, nb.id, { section_type: 'markdown', content: 'two' });
    const foreign = await section(ana, other.id, { section_type: 'markdown', content: 'elsewhere' });
    const before = await get(ana, nb.id);

    expectError(await ana.post(`${NB}/${nb.id}/sections`, { section_type: 'spreadsheet' }), 400, '"spreadsheet" is not a section type', 'markdown, query, ai_summary, comment_context');
    expectError(await ana.post(`${NB}/${nb.id}/sections`, { section_type: 'comment_context', content: 'not json' }), 400, '{"tag": "lateral-movement"}');
    expectError(await ana.post(`${NB}/${nb.id}/sections`, { section_type: 'comment_context', content: '{"log_ids":["nope"]}' }), 400, '"nope", which is not a log id');
    expectError(await ana.put(`${NB}/${nb.id}/sections/${foreign.id}`, { version: 1, content: 'hijack' }), 400, 'belongs to another notebook');
    expectError(await ana.del(`${NB}/${nb.id}/sections/${foreign.id}`), 400, 'belongs to another notebook');
    expectError(await ana.post(`${NB}/${nb.id}/sections/reorder`, { section_order: [s2.id] }), 400, '"section_order"', 'lacks', s1.id);
    expectError(await ana.post(`${NB}/${nb.id}/sections/reorder`, { section_order: [s2.id, s1.id, foreign.id] }), 400, 'belongs to another notebook');
    expectError(await ana.post(`${NB}/${nb.id}/sections/reorder`, { section_order: [s2.id, s2.id] }), 400, 'twice');
    expectError(await ana.post(`${NB}/${nb.id}/sections/reorder`, { section_order: [s2.id, unknownId()] }), 400, 'not a section of notebook "Bad input"');
    expectBadField(await ana.post(`${NB}/${nb.id}/sections/reorder`, { section_order: 'a,b' }), 'section_order');
    expectError(await ana.put(`${NB}/${nb.id}/variables`, { variables: [{ name: '1host', value: 'x' }] }), 400, 'variable name "1host"', 'is not a name');
    expectError(await ana.put(`${NB}/${nb.id}/variables`, { variables: [{ name: 'host name', value: 'x' }] }), 400, 'is not a name');
    expectError(await ana.put(`${NB}/${nb.id}/variables`, { variables: [{ name: 'h', value: 'a' }, { name: 'h', value: 'b' }] }), 400, 'named twice');
    expectError(await ana.post(NB, { name: 'x', fractal_id: fa.id, variables: [{ name: '$x', value: '1' }] }), 400, 'is not a name');
    expectError(await ana.post(NB, { name: 'x', fractal_id: fa.id, time_range: 'forever' }), 400, '"time_range"');
    expectError(await ana.post(NB, { name: 'x', fractal_id: fa.id, time_range: 'custom', start: daysAgo(1) }), 400, 'needs both "start" and "end"');
    expectBadField(await ana.post(NB, { fractal_id: fa.id }), 'name');
    expectError(await ana.post(NB, { name: '   ', fractal_id: fa.id }), 400, '"name" must not be empty');

    // Nothing changed by any of it; a valid reorder works after all.
    assert.deepEqual(await get(ana, nb.id), before);
    const r = expectOk(await ana.post(`${NB}/${nb.id}/sections/reorder`, { section_order: [s2.id, s1.id], version: before.version }));
    assert.deepEqual(r.section_order, [s2.id, s1.id]);
    expectError(await ana.post(`${NB}/${nb.id}/sections/reorder`, { section_order: [s1.id, s2.id], version: before.version }), 409, 'reload it');
    assert.deepEqual((await get(ana, nb.id)).sections.map((s: any) => s.id), [s2.id, s1.id]);
  });

  test('a query section runs with the notebook’s variables and range, and keeps its results after the logs age out', async () => {
    const nb = await notebook(ana, { name: 'Evidence', time_range: '7d', variables: [{ name: 'who', value: 'mallory' }] });
    const q = await section(ana, nb.id, { section_type: 'query', title: 'Mallory', content: 'user=@who | table(host, msg)' });
    const ran = expectOk(await ana.post(`${NB}/${nb.id}/sections/${q.id}/execute`, {}));
    assert.equal(ran.result.count, 2);
    assert.equal(ran.result.query, 'user=mallory | table(host, msg)', 'the query as run, after @variables');
    assert.deepEqual(ran.result.results.map((r: any) => r.msg).sort(), ['beacon', 'beacon again']);
    assert.deepEqual(ran.result.field_order.slice(0, 2), ['host', 'msg']);
    assert.equal(ran.result.executed_by, 'ana');
    assert.equal(ran.section.results_version, 1);
    assert.equal(ran.section.version, 1, 'running is not an edit of the text');
    assert.ok(Date.parse(ran.result.end) - Date.parse(ran.result.start) > 6.9 * 86_400_000, 'the notebook’s 7 days');

    // A range given with the request wins; store=false leaves the evidence alone.
    const narrow = expectOk(await ana.post(`${NB}/${nb.id}/sections/${q.id}/execute`, { start: daysAgo(1), end: daysAgo(0), store: false }));
    assert.equal(narrow.result.count, 0);
    assert.equal((await get(ana, nb.id)).sections[0].results_summary.count, 2);

    // Variables change through PUT …/variables and the next run uses them.
    expectOk(await ana.put(`${NB}/${nb.id}/variables`, { variables: [{ name: 'who', value: 'alice' }] }));
    const alice = expectOk(await ana.post(`${NB}/${nb.id}/sections/${q.id}/execute`, {}));
    assert.equal(alice.result.count, 3);
    expectOk(await ana.put(`${NB}/${nb.id}/variables`, { variables: [{ name: 'who', value: 'mallory' }] }));
    expectOk(await ana.post(`${NB}/${nb.id}/sections/${q.id}/execute`, {}));

    // Retention of one day removes mallory's logs; the stored results stay.
    expectOk(await admin.put(`/api/v1/fractals/${fa.id}/retention`, { retention_days: 1 }));
    assert.equal((await get(vic, nb.id)).sections[0].results_summary.count, 2);
    const kept = expectOk(await vic.get(`${NB}/${nb.id}/sections/${q.id}/results`)).results;
    assert.deepEqual(kept.results.map((r: any) => r.host), ['old1', 'old1']);
    const rerun = expectOk(await ana.post(`${NB}/${nb.id}/sections/${q.id}/execute`, { store: false }));
    assert.equal(rerun.result.count, 0, 'the logs themselves are gone');
    expectOk(await admin.put(`/api/v1/fractals/${fa.id}/retention`, { retention_days: null }));
  });

  test('execute: a query error answers 400 with its position; other section types do not run; keys need "query"', async () => {
    const nb = await notebook(ana, { name: 'Run errors' });
    const bad = await section(ana, nb.id, { section_type: 'query', content: 'status>=500 | groupBy(' });
    const r = await ana.post(`${NB}/${nb.id}/sections/${bad.id}/execute`, {});
    // The query language's own error fields (query-language.md §5), in the error envelope.
    assert.equal(r.status, 400);
    assert.equal(r.body.success, false);
    assert.match(r.body.error, /^Parse error: /);
    assert.equal(r.body.error_type, 'parse');
    assert.ok(r.body.error_pos && typeof r.body.error_pos.start === 'number');
    const md = await section(ana, nb.id, { section_type: 'markdown', content: 'text' });
    expectError(await ana.post(`${NB}/${nb.id}/sections/${md.id}/execute`, {}), 400, 'Only query and comment_context sections run');
    const empty = await section(ana, nb.id, { section_type: 'query', content: '' });
    expectError(await ana.post(`${NB}/${nb.id}/sections/${empty.id}/execute`, {}), 400, 'has no query yet');
    expectError(await vic.post(`${NB}/${nb.id}/sections/${bad.id}/execute`, {}), 403, 'analyst role');
    const good = await section(ana, nb.id, { section_type: 'query', content: 'status=500 | count()' });
    expectError(await keyNoQuery.post(`${NB}/${nb.id}/sections/${good.id}/execute`, {}), 403, 'lacks the "query" permission');
    const byKey = expectOk(await keyNotebook.post(`${NB}/${nb.id}/sections/${good.id}/execute`, {}));
    assert.equal(Number(byKey.result.results[0]._count), 2);
  });

  test('PUT …/results stores a snapshot a client made, checks its results_version and shape, and clears it with null', async () => {
    const nb = await notebook(ana, { name: 'Snapshots' });
    const q = await section(ana, nb.id, { section_type: 'query', content: 'host=web1' });
    const rows = [{ host: 'web1', n: 1 }, { host: 'web1', n: 2 }];
    const stored = expectOk(await ana.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: { results: rows, chart_type: 'piechart' }, results_version: 0 }));
    assert.equal(stored.results_version, 1);
    assert.equal(stored.results_summary.count, 2);
    assert.deepEqual(stored.results_summary.field_order, ['host', 'n']);
    assert.equal(stored.results_summary.chart_type, 'piechart');
    assert.equal(stored.results_summary.executed_by, 'ana');
    const read = async () => expectOk(await ana.get(`${NB}/${nb.id}/sections/${q.id}/results`));
    assert.deepEqual((await read()).results.results, rows, 'GET …/results answers what PUT took');
    expectError(await ben.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: { results: [] }, results_version: 0 }), 409, 'stored again by ana');
    expectBadField(await ana.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: { rows: [] } }), 'results.results');
    expectError(await ana.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: { results: [1, 2] } }), 400, '"results.results[0]" must be an object');
    expectError(await ana.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: { results: [], field_order: 'host' } }), 400, '"results.field_order"');
    expectError(
      await ana.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: { results: Array.from({ length: 10_001 }, (_, n) => ({ n })) } }),
      400,
      'at most 10000 rows',
    );
    assert.deepEqual((await read()).results.results, rows, 'refused writes changed nothing');
    const cleared = expectOk(await ana.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: null }));
    assert.equal(cleared.results_summary, null);
    assert.equal(cleared.results_version, 2);
    assert.deepEqual(await read(), { section_id: q.id, results_version: 2, results: null });
  });

  test('the notebook carries results summaries; GET …/results reads the rows, whole or paged, for its readers only', async () => {
    const nb = await notebook(ana, { name: 'Lazy rows' });
    const q = await section(ana, nb.id, { section_type: 'query', title: 'Rows', content: 'host=web1' });
    const empty = await section(ana, nb.id, { section_type: 'query', content: 'host=web2' });
    const rows = Array.from({ length: 5 }, (_, n) => ({ host: 'web1', n }));
    expectOk(await ana.put(`${NB}/${nb.id}/sections/${q.id}/results`, { results: { results: rows, query: 'host=web1', truncated: false } }));

    // The notebook's answer: each section's summary, no rows.
    const [withRows, none] = (await get(vic, nb.id)).sections;
    assert.equal('results' in withRows, false, 'no rows in the notebook');
    assert.deepEqual(
      [withRows.results_summary.count, withRows.results_summary.field_order, withRows.results_summary.query, withRows.results_summary.executed_by, withRows.results_summary.results],
      [5, ['host', 'n'], 'host=web1', 'ana', undefined],
    );
    assert.equal(none.results_summary, null);

    // A viewer reads the rows; a page of them keeps the count of all.
    const R = `${NB}/${nb.id}/sections/${q.id}/results`;
    const whole = expectOk(await vic.get(R));
    assert.deepEqual([whole.section_id, whole.results_version, whole.results.count], [q.id, 1, 5]);
    assert.deepEqual(whole.results.results, rows);
    const page = expectOk(await vic.get(`${R}?offset=3&limit=10`));
    assert.deepEqual([page.offset, page.results.count, page.results.results], [3, 5, rows.slice(3)]);
    assert.deepEqual(expectOk(await vic.get(`${R}?limit=2`)).results.results, rows.slice(0, 2));
    assert.deepEqual(expectOk(await vic.get(`${NB}/${nb.id}/sections/${empty.id}/results`)), { section_id: empty.id, results_version: 0, results: null });
    assert.deepEqual(expectOk(await keyNotebook.get(R)).results.results, rows);
    expectError(await vic.get(`${R}?limit=0`), 400, '"limit" must be a whole number from 1 to 10000');
    expectError(await vic.get(`${R}?offset=-1`), 400, '"offset"');

    // Nobody else: another tenant, a key without "notebook", no session, another notebook's section.
    expectError(await oto.get(R), 404, `Notebook ${nb.id} not found.`);
    expectError(await keyNoNotebook.get(R), 403, 'lacks the "notebook" permission');
    expectError(await new Client(app.url).get(R), 401);
    const other = await notebook(ana, { name: 'Lazy rows elsewhere' });
    expectError(await vic.get(`${NB}/${other.id}/sections/${q.id}/results`), 400, 'belongs to another notebook');
    expectError(await vic.get(`${NB}/${nb.id}/sections/${unknownId()}/results`), 404, 'not found in notebook "Lazy rows"');
  });

  test('comment_context sections gather the comments of a tag, or of chosen logs, with their logs', async () => {
    const q = await ana.post('/api/v1/query', { query: 'host=web2', fractal_id: fa.id });
    const web2 = q.body.results as any[];
    assert.equal(web2.length, 2);
    for (const [i, l] of web2.entries()) {
      expectOk(await ana.post('/api/v1/comments', { log_id: l.log_id, fractal_id: fa.id, content: `web2 finding ${i}`, tags: ['web2-case'] }), 201);
    }
    const nb = await notebook(ana, { name: 'Context' });
    const byTag = await section(ana, nb.id, { section_type: 'comment_context', title: 'web2', content: JSON.stringify({ tag: 'web2-case' }) });
    const ran = expectOk(await ana.post(`${NB}/${nb.id}/sections/${byTag.id}/execute`, {}));
    assert.deepEqual(ran.result.comments.map((c: any) => c.content).sort(), ['web2 finding 0', 'web2 finding 1']);
    assert.deepEqual(ran.result.results.map((r: any) => r.log_id).sort(), web2.map((l) => l.log_id).sort());
    assert.equal(ran.result.query, 'comment(tags="web2-case")');
    const byLog = await section(ana, nb.id, { section_type: 'comment_context', content: JSON.stringify({ log_ids: [web2[0].log_id] }) });
    const one = expectOk(await ana.post(`${NB}/${nb.id}/sections/${byLog.id}/execute`, {}));
    assert.equal(one.result.comments.length, 1);
    assert.deepEqual(one.result.results.map((r: any) => r.log_id), [web2[0].log_id]);
  });

  test('export and import: a round trip gives an equal notebook, in the same or another fractal; wrong documents store nothing', async () => {
    const nb = await notebook(ana, {
      name: 'Round trip',
      description: 'all kinds',
      tags: ['rt'],
      variables: [{ name: 'h', value: 'web1' }],
      time_range: 'custom',
      start: daysAgo(3),
      end: daysAgo(1),
      sections: [
        { section_type: 'markdown', title: 'Notes', content: '**bold** <script>alert(1)</script>', tags: ['n'] },
        { section_type: 'query', title: 'Q', content: 'host=@h | count()' },
        { section_type: 'ai_summary', title: 'S', content: 'A summary written by hand' },
        { section_type: 'comment_context', title: 'C', content: '{"tag":"web2-case"}' },
      ],
    });
    const q = nb.sections[1];
    expectOk(await ana.post(`${NB}/${nb.id}/sections/${q.id}/execute`, { start: daysAgo(1), end: daysAgo(0) }));
    const exp = await vic.get(`${NB}/${nb.id}/export`);
    const doc = expectOk(exp);
    assert.match(exp.headers.get('content-disposition')!, /attachment; filename="notebook-Round-trip\.json"/);
    assert.equal(doc.kind, 'notebook');
    assert.equal(doc.format, 1);
    assert.equal(doc.sections.length, 4);
    assert.equal(Number(doc.sections[1].results.results[0]._count), 4);

    const strip = (d: any) => ({ ...d, exported_at: undefined });
    // Into another fractal (the admin may write there), the document as exported.
    const copy = expectOk(await admin.post(`${NB}/import?fractal_id=${fb.id}`, doc), 201);
    assert.equal(copy.name, 'Round trip');
    assert.equal(copy.fractal_id, fb.id);
    assert.deepEqual(strip(expectOk(await admin.get(`${NB}/${copy.id}/export`))), strip(doc));
    // Into the same fractal, the whole envelope as GET …/export answered it: a free name.
    const again = expectOk(await ana.post(`${NB}/import?fractal_id=${fa.id}`, exp.body), 201);
    assert.equal(again.name, 'Round trip (2)');
    assert.deepEqual({ ...strip(expectOk(await ana.get(`${NB}/${again.id}/export`))), notebook: { ...doc.notebook, name: 'Round trip' } }, strip(doc));

    const count = () => readMetadataTable(app, 'notebooks').length;
    const sections = () => readMetadataTable(app, 'notebook_sections').length;
    const [n0, s0] = [count(), sections()];
    expectError(await ana.post(`${NB}/import?fractal_id=${fa.id}`, { kind: 'dashboard', format: 1 }), 400, 'must be a notebook export', '"kind" is "dashboard"');
    expectError(await ana.post(`${NB}/import?fractal_id=${fa.id}`, [1, 2]), 400, 'must be a notebook export');
    expectError(await ana.post(`${NB}/import?fractal_id=${fa.id}`, { ...doc, format: 9 }), 400, 'format 9');
    const badLast = { ...doc, sections: [...doc.sections, { section_type: 'video', content: '' }] };
    expectError(await ana.post(`${NB}/import?fractal_id=${fa.id}`, badLast), 400, '"video" is not a section type');
    const badResults = { ...doc, sections: [{ section_type: 'query', content: 'x', results: { results: 'rows' } }] };
    expectError(await ana.post(`${NB}/import?fractal_id=${fa.id}`, badResults), 400, '"sections[0].results.results"');
    const badVar = { ...doc, notebook: { ...doc.notebook, variables: [{ name: 'a-b', value: '' }] } };
    expectError(await ana.post(`${NB}/import?fractal_id=${fa.id}`, badVar), 400, 'is not a name');
    const huge = JSON.stringify({ ...doc, padding: 'x'.repeat(20 * 1024 * 1024) });
    expectError(await ana.post(`${NB}/import?fractal_id=${fa.id}`, huge), 400, 'larger than 20 MB');
    expectError(await vic.post(`${NB}/import?fractal_id=${fa.id}`, doc), 403, 'analyst role');
    assert.deepEqual([count(), sections()], [n0, s0], 'nothing half-written');
  });
});

describe('live editing', () => {
  test('a second session reads every change as it happens, resumes with Last-Event-ID, and sees the end', async () => {
    const nb = await notebook(ana, { name: 'Live' });
    // Ben opens the notebook: the document, then its events from the id that came with it.
    const opened = await get(ben, nb.id);
    const stream = await LiveReader.open(ben, `${NB}/${nb.id}/events`, { lastEventId: opened.live_event_id });
    assert.equal(stream.status, 200);
    await stream.next('ready');

    const md = expectOk(await ana.req('POST', `${NB}/${nb.id}/sections`, { section_type: 'markdown', content: 'first words' }, { 'x-live-client': 'ana-tab' }), 201);
    const added = await stream.next('section_added');
    assert.equal(added.body.origin, 'ana-tab');
    assert.equal(added.body.data.section.id, md.id);
    assert.deepEqual(added.body.data.order, [md.id]);

    expectOk(await ana.put(`${NB}/${nb.id}/sections/${md.id}`, { version: 1, content: 'first words, edited' }));
    const edited = await stream.next('section_updated');
    assert.equal(edited.body.data.section.content, 'first words, edited');
    assert.equal(edited.body.data.section.version, 2);

    const q = expectOk(await ana.post(`${NB}/${nb.id}/sections`, { section_type: 'query', content: 'host=web1 | count()', position: 0 }), 201);
    await stream.next('section_added');
    expectOk(await ana.post(`${NB}/${nb.id}/sections/${q.id}/execute`, {}));
    const stored = await stream.next('results_stored');
    assert.equal(stored.body.data.section_id, q.id);
    assert.equal(Number(stored.body.data.results.results[0]._count), 4, 'rows up to 1 MB come inline');
    assert.equal(stored.body.data.results_summary.count, 1);
    assert.equal(stored.body.data.results_summary.results, undefined);
    expectOk(await ana.post(`${NB}/${nb.id}/sections/reorder`, { section_order: [md.id, q.id] }));
    assert.deepEqual((await stream.next('sections_reordered')).body.data.order, [md.id, q.id]);
    expectOk(await ana.put(`${NB}/${nb.id}/variables`, { variables: [{ name: 'h', value: 'web2' }] }));
    assert.deepEqual((await stream.next('variables_updated')).body.data.variables, [{ name: 'h', value: 'web2' }]);
    expectOk(await ana.put(`${NB}/${nb.id}`, { description: 'now described' }));
    assert.equal((await stream.next('notebook_updated')).body.data.description, 'now described');

    // Ben's connection drops; two changes happen; he comes back with the last id he saw.
    const seen = stream.lastId()!;
    stream.close();
    expectOk(await ana.put(`${NB}/${nb.id}/sections/${md.id}`, { version: 2, content: 'while Ben was away' }));
    expectOk(await ana.del(`${NB}/${nb.id}/sections/${q.id}`));
    const back = await LiveReader.open(ben, `${NB}/${nb.id}/events`, { lastEventId: seen });
    await back.next('ready');
    assert.equal((await back.next('section_updated')).body.data.section.content, 'while Ben was away');
    assert.deepEqual((await back.next('section_deleted')).body.data, { id: q.id, order: [md.id], version: (await get(ana, nb.id)).version });
    const ids = [...stream.frames, ...back.frames].filter((f) => f.event !== 'ready' && f.event !== 'presence').map((f) => Number(f.id!.split('-')[1]));
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'ids only grow');
    assert.equal(new Set(ids).size, ids.length, 'no event twice');

    // A viewer may follow too; the notebook's deletion ends every stream.
    const viewer = await LiveReader.open(vic, `${NB}/${nb.id}/events`);
    await viewer.next('ready');
    expectOk(await ana.del(`${NB}/${nb.id}`));
    assert.equal((await back.next('notebook_deleted')).body.data.id, nb.id);
    await back.waitEnd();
    await viewer.waitEnd();
  });

  test('presence lists who has the notebook open; a stream hears who comes and goes', async () => {
    const nb = await notebook(ana, { name: 'Presence' });
    const stream = await LiveReader.open(ana, `${NB}/${nb.id}/events`);
    await stream.next('ready');
    expectOk(await ana.post(`${NB}/${nb.id}/presence`, { client_id: 'tab1' }));
    expectOk(await ben.post(`${NB}/${nb.id}/presence`, { client_id: 'tab1' }));
    expectOk(await vic.post(`${NB}/${nb.id}/presence`, { client_id: 'tab9' }));
    const list = expectOk(await ana.get(`${NB}/${nb.id}/presence`));
    assert.deepEqual(list.map((e: any) => [e.name, e.kind]), [['ana', 'user'], ['ben', 'user'], ['vic', 'user']]);
    await waitForPresence(stream, ['ana', 'ben', 'vic']);
    expectOk(await ben.post(`${NB}/${nb.id}/presence`, { client_id: 'tab1', leaving: true }));
    await waitForPresence(stream, ['ana', 'vic']);
    expectError(await oto.post(`${NB}/${nb.id}/presence`, {}), 404);
    stream.close();
  });
});

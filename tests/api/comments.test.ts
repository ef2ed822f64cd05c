// Comments over real HTTP against a real appliance: logs arrive through the ingest endpoint, then
// analysts annotate them. Every route of interface-spec "Comments", the envelope, roles, API-key
// permissions, tenancy (another tenant's fractal, log or comment is never revealed), tags, bulk
// routes and the cascade when a fractal is deleted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { storedLogs } from '../support/logs.ts';
import { ingest, sampleEvents } from '../support/query.ts';
import { createApiKey, createFractal, credentialClient, expectBadField, expectError, expectOk, grant, unknownId, UUID_RE } from '../support/api.ts';

let app: TestAppliance;
let admin: Client;
let anon: Client;
let ana: Client; // analyst on A (author of most comments)
let ben: Client; // another analyst on A
let vic: Client; // viewer on A
let fay: Client; // admin of A (not a global admin)
let oto: Client; // analyst on B only: the other tenant
let keyComment: Client; // A's API key with query + comment
let keyQueryOnly: Client; // A's API key without comment
let keyCommentOnly: Client; // A's API key with comment, without query
let fa: any;
let fb: any;
let logsA: Array<{ log_id: string; timestamp: string }>;
let logsB: Array<{ log_id: string; timestamp: string }>;

/** RFC 3339 (milliseconds) of a ClickHouse DateTime64 text. */
const iso = (t: string) => new Date(`${t.slice(0, 23).replace(' ', 'T')}Z`).toISOString();

async function comment(c: Client, body: Record<string, unknown>): Promise<any> {
  return expectOk(await c.post('/api/v1/comments', body), 201);
}

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  fa = await createFractal(admin, 'soc-a');
  fb = await createFractal(admin, 'soc-b');
  await ingest(app, fa.default_ingest_token, fa.id, sampleEvents());
  await ingest(app, fb.default_ingest_token, fb.id, sampleEvents().slice(0, 3));
  logsA = await storedLogs(app, fa.id);
  logsB = await storedLogs(app, fb.id);
  [ana, ben, vic, fay, oto] = await Promise.all(['ana', 'ben', 'vic', 'fay', 'oto'].map((u) => makeUser(admin, u)));
  await grant(admin, fa.id, { username: 'ana' }, 'analyst');
  await grant(admin, fa.id, { username: 'ben' }, 'analyst');
  await grant(admin, fa.id, { username: 'vic' }, 'viewer');
  await grant(admin, fa.id, { username: 'fay' }, 'admin');
  await grant(admin, fb.id, { username: 'oto' }, 'analyst');
  const A = `/api/v1/fractals/${fa.id}`;
  keyComment = credentialClient(app.url, (await createApiKey(admin, A, { name: 'soar' })).key);
  keyQueryOnly = credentialClient(app.url, (await createApiKey(admin, A, { name: 'reader', permissions: { comment: false } })).key);
  keyCommentOnly = credentialClient(app.url, (await createApiKey(admin, A, { name: 'writer', permissions: { query: false } })).key);
});
after(async () => {
  await app?.dispose();
});

describe('authentication', () => {
  test('every comment route answers 401 without a session or key', async () => {
    const id = unknownId();
    const calls: Array<[string, string]> = [
      ['POST', '/api/v1/comments'],
      ['GET', `/api/v1/comments/${id}`],
      ['PUT', `/api/v1/comments/${id}`],
      ['DELETE', `/api/v1/comments/${id}`],
      ['GET', `/api/v1/logs/${id}/comments`],
      ['DELETE', `/api/v1/logs/${id}/comments`],
      ['GET', '/api/v1/logs/commented'],
      ['GET', '/api/v1/comments/flat'],
      ['GET', '/api/v1/comments/tags'],
      ['POST', '/api/v1/comments/bulk-add-tag'],
      ['POST', '/api/v1/comments/bulk-remove-tag'],
      ['POST', '/api/v1/comments/bulk-delete'],
    ];
    for (const [method, url] of calls) {
      expectError(await anon.req(method, url, method === 'POST' || method === 'PUT' ? {} : undefined), 401);
    }
  });
});

describe('create', () => {
  test('an analyst comments on a log: tags normalised, the log time looked up, author and times set', async () => {
    const log = logsA[0]!;
    const c = await comment(ana, {
      log_id: log.log_id,
      fractal_id: fa.id,
      content: '  Suspicious login from a new country  ',
      tags: [' incident ', 'incident', '', 'T1078', 'Incident'],
    });
    assert.match(c.id, UUID_RE);
    assert.equal(c.fractal_id, fa.id);
    assert.equal(c.log_id, log.log_id);
    assert.equal(c.timestamp, iso(log.timestamp));
    assert.equal(c.content, 'Suspicious login from a new country');
    assert.deepEqual(c.tags, ['Incident', 'T1078', 'incident']);
    assert.equal(c.author, 'ana');
    assert.equal(c.author_type, 'user');
    assert.equal(c.can_edit, true);
    assert.ok(!Number.isNaN(Date.parse(c.created_at)));
    assert.equal(c.created_at, c.updated_at);
  });

  test('the row time the UI shows narrows the look-up; an off time still finds the log', async () => {
    const log = logsA[1]!;
    const shown = log.timestamp.slice(0, 23); // "YYYY-MM-DD hh:mm:ss.mmm"
    const c1 = await comment(ana, { log_id: log.log_id, fractal_id: fa.id, content: 'seen in the table', timestamp: shown });
    assert.equal(c1.timestamp, iso(log.timestamp));
    const c2 = await comment(ana, { log_id: log.log_id, fractal_id: fa.id, content: 'time off by a year', timestamp: '2001-01-01T00:00:00Z' });
    assert.equal(c2.timestamp, iso(log.timestamp));
  });

  test('fractal_id defaults to the selected fractal', async () => {
    expectOk(await ana.post(`/api/v1/fractals/${fa.id}/select`));
    const c = await comment(ana, { log_id: logsA[2]!.log_id, content: 'no fractal named' });
    assert.equal(c.fractal_id, fa.id);
  });

  test('bad input is a 400 naming the field', async () => {
    const log_id = logsA[0]!.log_id;
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id }), 'content');
    expectBadField(await ana.post('/api/v1/comments', { fractal_id: fa.id, content: 'x' }), 'log_id');
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id, content: '   ' }), 'content');
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id, content: 'x'.repeat(10_001) }), 'content');
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id, content: 42 }), 'content');
    expectBadField(await ana.post('/api/v1/comments', { log_id: 'not-a-uuid', fractal_id: fa.id, content: 'x' }), 'log_id');
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: 'nope', content: 'x' }), 'fractal_id');
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id, content: 'x', tags: 'incident' }), 'tags');
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id, content: 'x', tags: ['a,b'] }), 'tags');
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id, content: 'x', tags: ['t'.repeat(65)] }), 'tags');
    const many = Array.from({ length: 21 }, (_, i) => `t${i}`);
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id, content: 'x', tags: many }), 'tags');
    expectBadField(await ana.post('/api/v1/comments', { log_id, fractal_id: fa.id, content: 'x', timestamp: 'yesterday' }), 'timestamp');
    expectError(await ana.post('/api/v1/comments', 'not json'), 400);
  });

  test('a log that is not in the fractal is 404: unknown id, or another fractal\'s log', async () => {
    expectError(await ana.post('/api/v1/comments', { log_id: unknownId(), fractal_id: fa.id, content: 'x' }), 404, /Log .* not found/);
    expectError(await ana.post('/api/v1/comments', { log_id: logsB[0]!.log_id, fractal_id: fa.id, content: 'x' }), 404, /Log .* not found/);
  });

  test('another tenant\'s fractal (or an unknown one) is 404, never 403', async () => {
    expectError(await oto.post('/api/v1/comments', { log_id: logsA[0]!.log_id, fractal_id: fa.id, content: 'x' }), 404, `Fractal ${fa.id} not found`);
    expectError(await ana.post('/api/v1/comments', { log_id: logsB[0]!.log_id, fractal_id: fb.id, content: 'x' }), 404, `Fractal ${fb.id} not found`);
    expectError(await ana.post('/api/v1/comments', { log_id: logsA[0]!.log_id, fractal_id: unknownId(), content: 'x' }), 404);
  });

  test('a viewer cannot write (403)', async () => {
    expectError(await vic.post('/api/v1/comments', { log_id: logsA[0]!.log_id, fractal_id: fa.id, content: 'x' }), 403, /analyst/);
  });

  test('an API key writes with the comment permission and is refused without it', async () => {
    const c = await comment(keyComment, { log_id: logsA[3]!.log_id, fractal_id: fa.id, content: 'auto-triaged by SOAR', tags: ['auto'] });
    assert.equal(c.author, 'soar');
    assert.equal(c.author_type, 'api_key');
    expectError(await keyQueryOnly.post('/api/v1/comments', { log_id: logsA[3]!.log_id, fractal_id: fa.id, content: 'x' }), 403, /"comment" permission/);
    expectError(await keyComment.post('/api/v1/comments', { log_id: logsB[0]!.log_id, fractal_id: fb.id, content: 'x' }), 404);
  });
});

describe('read, edit and delete one comment', () => {
  let c: any;
  before(async () => {
    c = await comment(ana, { log_id: logsA[4]!.log_id, fractal_id: fa.id, content: 'first look', tags: ['triage'] });
  });

  test('GET: readers of the fractal see it; the author may edit it, a viewer not', async () => {
    const got = expectOk(await ana.get(`/api/v1/comments/${c.id}`));
    assert.deepEqual(got, c);
    const seen = expectOk(await vic.get(`/api/v1/comments/${c.id}`));
    assert.equal(seen.content, 'first look');
    assert.equal(seen.can_edit, false);
    assert.equal(expectOk(await keyQueryOnly.get(`/api/v1/comments/${c.id}`)).id, c.id);
  });

  test('GET: another tenant, an unknown id: 404; a key without query: 403; a bad id: 400', async () => {
    expectError(await oto.get(`/api/v1/comments/${c.id}`), 404, `Comment ${c.id} not found`);
    expectError(await ana.get(`/api/v1/comments/${unknownId()}`), 404);
    expectError(await keyCommentOnly.get(`/api/v1/comments/${c.id}`), 403, /"query" permission/);
    expectError(await ana.get('/api/v1/comments/not-a-uuid'), 400, /"id"/);
  });

  test('PUT: the author changes content and tags; updated_at moves', async () => {
    await new Promise((r) => setTimeout(r, 5));
    const u = expectOk(await ana.put(`/api/v1/comments/${c.id}`, { content: 'confirmed: credential stuffing', tags: ['incident', 'triage', 'incident'] }));
    assert.equal(u.content, 'confirmed: credential stuffing');
    assert.deepEqual(u.tags, ['incident', 'triage']);
    assert.equal(u.created_at, c.created_at);
    assert.ok(u.updated_at > c.updated_at);
    const onlyTags = expectOk(await ana.put(`/api/v1/comments/${c.id}`, { tags: [] }));
    assert.deepEqual(onlyTags.tags, []);
    assert.equal(onlyTags.content, 'confirmed: credential stuffing');
  });

  test('PUT: another analyst may not edit (403); a fractal admin may; a viewer 403; another tenant 404', async () => {
    expectError(await ben.put(`/api/v1/comments/${c.id}`, { content: 'hijacked' }), 403, /author \(ana\)/);
    expectError(await vic.put(`/api/v1/comments/${c.id}`, { content: 'hijacked' }), 403);
    expectError(await oto.put(`/api/v1/comments/${c.id}`, { content: 'hijacked' }), 404);
    expectError(await keyComment.put(`/api/v1/comments/${c.id}`, { content: 'hijacked' }), 403, /author/);
    const byAdmin = expectOk(await fay.put(`/api/v1/comments/${c.id}`, { tags: ['reviewed'] }));
    assert.deepEqual(byAdmin.tags, ['reviewed']);
    assert.equal(byAdmin.author, 'ana');
    assert.equal(expectOk(await ana.get(`/api/v1/comments/${c.id}`)).content, 'confirmed: credential stuffing');
  });

  test('PUT: bad input is 400; an API key edits its own comment', async () => {
    expectError(await ana.put(`/api/v1/comments/${c.id}`, {}), 400, /"content"/);
    expectBadField(await ana.put(`/api/v1/comments/${c.id}`, { content: '' }), 'content');
    expectBadField(await ana.put(`/api/v1/comments/${c.id}`, { tags: [1] }), 'tags.0');
    const own = await comment(keyComment, { log_id: logsA[4]!.log_id, fractal_id: fa.id, content: 'bot note' });
    assert.equal(expectOk(await keyComment.put(`/api/v1/comments/${own.id}`, { content: 'bot note v2' })).content, 'bot note v2');
    expectError(await keyQueryOnly.put(`/api/v1/comments/${own.id}`, { content: 'x' }), 403, /"comment" permission/);
    expectError(await ana.put(`/api/v1/comments/${own.id}`, { content: 'x' }), 403);
  });

  test('DELETE: only the author or a fractal admin; afterwards 404', async () => {
    const mine = await comment(ben, { log_id: logsA[4]!.log_id, fractal_id: fa.id, content: 'to delete' });
    expectError(await ana.del(`/api/v1/comments/${mine.id}`), 403);
    expectError(await vic.del(`/api/v1/comments/${mine.id}`), 403);
    expectError(await oto.del(`/api/v1/comments/${mine.id}`), 404);
    assert.deepEqual(expectOk(await ben.del(`/api/v1/comments/${mine.id}`)), { deleted: true });
    expectError(await ben.get(`/api/v1/comments/${mine.id}`), 404);
    expectError(await ben.del(`/api/v1/comments/${mine.id}`), 404);
    const other = await comment(ben, { log_id: logsA[4]!.log_id, fractal_id: fa.id, content: 'admin removes it' });
    expectOk(await fay.del(`/api/v1/comments/${other.id}`));
  });
});

describe('a log\'s comments', () => {
  const log = () => logsA[5]!;
  before(async () => {
    await comment(ana, { log_id: log().log_id, fractal_id: fa.id, content: 'one', tags: ['x'] });
    await comment(ben, { log_id: log().log_id, fractal_id: fa.id, content: 'two' });
  });

  test('GET lists them oldest first, for readers of the fractal', async () => {
    const list = expectOk(await vic.get(`/api/v1/logs/${log().log_id}/comments?fractal_id=${fa.id}`));
    assert.deepEqual(list.map((c: any) => c.content), ['one', 'two']);
    assert.ok(list.every((c: any) => c.timestamp === iso(log().timestamp)));
    assert.deepEqual(expectOk(await ana.get(`/api/v1/logs/${unknownId()}/comments?fractal_id=${fa.id}`)), []);
  });

  test('GET: another tenant gets 404 for the fractal and nothing in its own selection', async () => {
    expectError(await oto.get(`/api/v1/logs/${log().log_id}/comments?fractal_id=${fa.id}`), 404);
    assert.deepEqual(expectOk(await oto.get(`/api/v1/logs/${log().log_id}/comments`)), []);
    expectError(await ana.get(`/api/v1/logs/nope/comments`), 400, /"log_id"/);
  });

  test('DELETE: all or nothing; an analyst cannot remove a colleague\'s comment, a fractal admin can', async () => {
    expectError(await ana.del(`/api/v1/logs/${log().log_id}/comments?fractal_id=${fa.id}`), 403);
    expectError(await vic.del(`/api/v1/logs/${log().log_id}/comments?fractal_id=${fa.id}`), 403);
    expectError(await oto.del(`/api/v1/logs/${log().log_id}/comments?fractal_id=${fa.id}`), 404);
    assert.equal(expectOk(await ana.get(`/api/v1/logs/${log().log_id}/comments?fractal_id=${fa.id}`)).length, 2);
    assert.deepEqual(expectOk(await fay.del(`/api/v1/logs/${log().log_id}/comments?fractal_id=${fa.id}`)), { deleted: 2 });
    assert.deepEqual(expectOk(await ana.get(`/api/v1/logs/${log().log_id}/comments?fractal_id=${fa.id}`)), []);
  });
});

describe('lists: commented logs, flat comments, tags', () => {
  let other: any;
  before(async () => {
    other = await comment(oto, { log_id: logsB[0]!.log_id, fractal_id: fb.id, content: 'tenant B secret', tags: ['incident', 'b-only'] });
  });

  test('logs/commented: one entry per log with timestamp, comment count and all its tags, newest log first', async () => {
    const res = await ana.get(`/api/v1/logs/commented?fractal_id=${fa.id}`);
    const list = expectOk(res);
    const ids = list.map((l: any) => l.log_id);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(res.headers.get('x-total-count'), String(list.length));
    const first = list.find((l: any) => l.log_id === logsA[0]!.log_id);
    assert.deepEqual(
      { fractal_id: first.fractal_id, timestamp: first.timestamp, comment_count: first.comment_count, tags: first.tags },
      { fractal_id: fa.id, timestamp: iso(logsA[0]!.timestamp), comment_count: 1, tags: ['Incident', 'T1078', 'incident'] },
    );
    assert.equal(list.find((l: any) => l.log_id === logsA[1]!.log_id).comment_count, 2);
    const times = list.map((l: any) => l.timestamp);
    assert.deepEqual(times, [...times].sort().reverse());
    assert.ok(!ids.includes(logsB[0]!.log_id), 'tenant B never appears in A');
  });

  test('logs/commented: tag filter and paging', async () => {
    const tagged = expectOk(await ana.get(`/api/v1/logs/commented?fractal_id=${fa.id}&tag=incident`));
    assert.deepEqual(tagged.map((l: any) => l.log_id), [logsA[0]!.log_id]);
    const all = expectOk(await ana.get(`/api/v1/logs/commented?fractal_id=${fa.id}`));
    const p1 = await ana.get(`/api/v1/logs/commented?fractal_id=${fa.id}&limit=2`);
    const p2 = expectOk(await ana.get(`/api/v1/logs/commented?fractal_id=${fa.id}&limit=2&offset=2`));
    assert.deepEqual([...expectOk(p1), ...p2].map((l: any) => l.log_id), all.slice(0, 4).map((l: any) => l.log_id));
    assert.equal(p1.headers.get('x-total-count'), String(all.length));
    expectError(await ana.get(`/api/v1/logs/commented?limit=0`), 400, /"limit"/);
    expectError(await ana.get(`/api/v1/logs/commented?limit=abc`), 400, /"limit"/);
    expectError(await ana.get(`/api/v1/logs/commented?offset=-1`), 400, /"offset"/);
  });

  test('comments/flat: every comment with its log time; tag and keyword filters; the selection by default', async () => {
    const flat = expectOk(await vic.get(`/api/v1/comments/flat?fractal_id=${fa.id}`));
    assert.ok(flat.length >= 6);
    for (const c of flat) {
      assert.equal(c.fractal_id, fa.id);
      assert.equal(c.timestamp, iso(logsA.find((l) => l.log_id === c.log_id)!.timestamp));
    }
    const kw = expectOk(await ana.get(`/api/v1/comments/flat?fractal_id=${fa.id}&keyword=SUSPICIOUS%20login`));
    assert.deepEqual(kw.map((c: any) => c.content), ['Suspicious login from a new country']);
    const auto = expectOk(await ana.get(`/api/v1/comments/flat?fractal_id=${fa.id}&tag=auto`));
    assert.deepEqual(auto.map((c: any) => c.author), ['soar']);
    const mineB = expectOk(await oto.get('/api/v1/comments/flat'));
    assert.deepEqual(mineB.map((c: any) => c.id), [other.id]);
    expectError(await oto.get(`/api/v1/comments/flat?fractal_id=${fa.id}`), 404);
    expectError(await keyCommentOnly.get('/api/v1/comments/flat'), 403, /"query" permission/);
    assert.ok(expectOk(await keyQueryOnly.get('/api/v1/comments/flat')).length >= 6);
  });

  test('comments/tags: each tag with its count, per scope', async () => {
    const tags = expectOk(await ana.get(`/api/v1/comments/tags?fractal_id=${fa.id}`));
    const count = (t: string) => tags.find((x: any) => x.tag === t)?.count;
    assert.equal(count('incident'), 1);
    assert.equal(count('auto'), 1);
    assert.equal(count('b-only'), undefined);
    assert.deepEqual(expectOk(await oto.get('/api/v1/comments/tags')), [
      { tag: 'b-only', count: 1 },
      { tag: 'incident', count: 1 },
    ]);
  });

  test('a prism reads the comments of its member fractals', async () => {
    const prism = expectOk(await admin.post('/api/v1/prisms', { name: 'soc-all', fractal_ids: [fa.id, fb.id] }), 201);
    const flat = expectOk(await admin.get(`/api/v1/comments/flat?prism_id=${prism.id}&tag=incident`));
    assert.deepEqual(new Set(flat.map((c: any) => c.fractal_id)), new Set([fa.id, fb.id]));
    expectError(await ana.get(`/api/v1/comments/flat?prism_id=${prism.id}`), 404);
  });
});

describe('bulk routes', () => {
  let a1: any;
  let a2: any;
  let b1: any;
  let foreign: any;
  before(async () => {
    a1 = await comment(ana, { log_id: logsA[6]!.log_id, fractal_id: fa.id, content: 'bulk one', tags: ['keep'] });
    a2 = await comment(ana, { log_id: logsA[7]!.log_id, fractal_id: fa.id, content: 'bulk two' });
    b1 = await comment(ben, { log_id: logsA[7]!.log_id, fractal_id: fa.id, content: 'ben note' });
    foreign = await comment(oto, { log_id: logsB[1]!.log_id, fractal_id: fb.id, content: 'b note' });
  });

  test('bulk-add-tag tags the author\'s comments and reports how many changed', async () => {
    const r = expectOk(await ana.post('/api/v1/comments/bulk-add-tag', { comment_ids: [a1.id, a2.id, a1.id], tag: ' case-42 ' }));
    assert.equal(r.updated, 2);
    assert.deepEqual(r.comments.map((c: any) => c.tags), [['case-42', 'keep'], ['case-42']]);
    const again = expectOk(await ana.post('/api/v1/comments/bulk-add-tag', { comment_ids: [a1.id, a2.id], tag: 'case-42' }));
    assert.equal(again.updated, 0);
  });

  test('bulk routes are all or nothing: a colleague\'s comment 403, another tenant\'s 404, nothing changed', async () => {
    expectError(await ana.post('/api/v1/comments/bulk-add-tag', { comment_ids: [a1.id, b1.id], tag: 'x' }), 403);
    expectError(await ana.post('/api/v1/comments/bulk-add-tag', { comment_ids: [a1.id, foreign.id], tag: 'x' }), 404, `Comment ${foreign.id} not found`);
    expectError(await ana.post('/api/v1/comments/bulk-delete', { comment_ids: [a1.id, foreign.id] }), 404);
    expectError(await vic.post('/api/v1/comments/bulk-delete', { comment_ids: [a1.id] }), 403);
    expectError(await keyQueryOnly.post('/api/v1/comments/bulk-remove-tag', { comment_ids: [a1.id], tag: 'keep' }), 403);
    assert.deepEqual(expectOk(await ana.get(`/api/v1/comments/${a1.id}`)).tags, ['case-42', 'keep']);
    assert.equal(expectOk(await oto.get(`/api/v1/comments/${foreign.id}`)).content, 'b note');
  });

  test('bulk input errors are 400', async () => {
    expectBadField(await ana.post('/api/v1/comments/bulk-add-tag', { comment_ids: [a1.id] }), 'tag');
    expectBadField(await ana.post('/api/v1/comments/bulk-add-tag', { comment_ids: [a1.id], tag: '  ' }), 'tag');
    expectBadField(await ana.post('/api/v1/comments/bulk-add-tag', { comment_ids: [a1.id], tag: 'a,b' }), 'tag');
    expectBadField(await ana.post('/api/v1/comments/bulk-add-tag', { comment_ids: [], tag: 'x' }), 'comment_ids');
    expectBadField(await ana.post('/api/v1/comments/bulk-delete', { comment_ids: ['nope'] }), 'comment_ids.0');
    expectBadField(await ana.post('/api/v1/comments/bulk-delete', {}), 'comment_ids');
  });

  test('a fractal admin bulk-tags anyone\'s comments; bulk-remove-tag; bulk-delete', async () => {
    assert.equal(expectOk(await fay.post('/api/v1/comments/bulk-add-tag', { comment_ids: [a2.id, b1.id], tag: 'reviewed' })).updated, 2);
    const removed = expectOk(await ana.post('/api/v1/comments/bulk-remove-tag', { comment_ids: [a1.id, a2.id], tag: 'case-42' }));
    assert.equal(removed.updated, 2);
    assert.deepEqual(removed.comments.map((c: any) => c.tags), [['keep'], ['reviewed']]);
    assert.deepEqual(expectOk(await ana.post('/api/v1/comments/bulk-delete', { comment_ids: [a1.id, a2.id] })), { deleted: 2 });
    expectError(await ana.get(`/api/v1/comments/${a1.id}`), 404);
    assert.equal(expectOk(await ben.get(`/api/v1/comments/${b1.id}`)).content, 'ben note');
  });
});

describe('deleting a fractal', () => {
  test('removes its comments and their tags', async () => {
    const fc = await createFractal(admin, 'short-lived');
    await ingest(app, fc.default_ingest_token, fc.id, sampleEvents().slice(0, 2));
    const [log] = await storedLogs(app, fc.id);
    const c = await comment(admin, { log_id: log!.log_id, fractal_id: fc.id, content: 'gone soon', tags: ['ephemeral'] });
    const count = (sql: string) => (app.context.db.prepare(sql).get(fc.id) as { n: number }).n;
    assert.equal(count('SELECT count(*) AS n FROM comments WHERE fractal_id = ?'), 1);
    assert.equal(count('SELECT count(*) AS n FROM comment_tags WHERE fractal_id = ?'), 1);
    expectOk(await admin.del(`/api/v1/fractals/${fc.id}`));
    assert.equal(count('SELECT count(*) AS n FROM comments WHERE fractal_id = ?'), 0);
    assert.equal(count('SELECT count(*) AS n FROM comment_tags WHERE fractal_id = ?'), 0);
    expectError(await admin.get(`/api/v1/comments/${c.id}`), 404);
  });
});

// comment() / comments() (query-language.md §3.1) against real events and real comments: logs
// arrive through the ingest endpoint, analysts comment through the API, queries run through
// POST /api/v1/query. Tags exact and case-sensitive, keyword case-insensitive, both on the same
// comment, negation, and another fractal's comments never matching.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { storedLogs, type StoredLog } from '../support/logs.ts';
import { col, ingest, ok, query, sampleEvents } from '../support/query.ts';
import { chTime } from '../../service/src/storage/clickhouse.ts';

let a: TestAppliance;
let admin: Client;
let fa: string;
let fb: string;
let prism: string;
let logsA: StoredLog[];


/** The log of fractal A with these field values. */
const logOf = (user: string, msg: string) => logsA.find((l) => l.fields.user === user && l.fields.msg === msg)!.log_id;

async function commentOn(fractalId: string, logId: string, content: string, tags: string[] = []) {
  const r = await admin.post('/api/v1/comments', { fractal_id: fractalId, log_id: logId, content, tags });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  const A = (await admin.post('/api/v1/fractals', { name: 'alpha' })).body.data;
  const B = (await admin.post('/api/v1/fractals', { name: 'beta' })).body.data;
  [fa, fb] = [A.id, B.id];
  await ingest(a, A.default_ingest_token, fa, sampleEvents());
  await ingest(a, B.default_ingest_token, fb, sampleEvents().slice(0, 2));
  logsA = await storedLogs(a, fa);

  await commentOn(fa, logOf('alice', 'login ok'), 'Credential stuffing suspected', ['incident']);
  await commentOn(fa, logOf('alice', 'Internal Error'), 'Exploit attempt', ['incident', 'T1190']);
  await commentOn(fa, logOf('bob', 'not found /admin'), 'Scanning /admin', ['recon']);
  await commentOn(fa, logOf('carol', 'select ok'), 'Benign backup query, INCIDENT closed');
  await commentOn(fa, logOf('bob', 'deadlock detected'), 'db issue', ['incident']);
  await commentOn(fa, logOf('bob', 'deadlock detected'), 'Credential rotation broke the pool');

  // Tenant B: its own log, plus one row carrying the very log_id of an uncommented log of A.
  // Comments on them are B's; they must never make A's events match.
  const [bLog] = await storedLogs(a, fb);
  await commentOn(fb, bLog!.log_id, 'beta incident', ['incident', 'b-only']);
  const shared = logOf('erin', 'login ok');
  await a.context.ch.client.insert({
    table: a.context.ch.table('logs'),
    values: [{ fractal_id: fb, timestamp: chTime(new Date()), ingest_timestamp: chTime(new Date()), log_id: shared, raw: '{"user":"twin"}', fields: { user: 'twin' } }],
    format: 'JSONEachRow',
  });
  await commentOn(fb, shared, 'credential twin in beta', ['b-only', 'incident']);

  prism = (await admin.post('/api/v1/prisms', { name: 'both', fractal_ids: [fa, fb] })).body.data.id;
});
after(() => a.dispose());

const run = (q: string) => ok(admin, q, { fractal_id: fa });
const users = async (q: string) => col(await run(q), 'user').sort();

describe('comment()', () => {
  test('* | comment(tags=incident) | groupBy(src_ip)', async () => {
    const r = await run('* | comment(tags=incident) | groupBy(src_ip)');
    const counts = Object.fromEntries(r.results.map((row) => [row.src_ip, Number(row._count)]));
    assert.deepEqual(counts, { '10.0.0.5': 2, '192.168.1.8': 1 });
    assert.equal(r.is_aggregated, true);
  });

  test('no arguments: every commented event', async () => {
    assert.deepEqual(await users('comment()'), ['alice', 'alice', 'bob', 'bob', 'carol']);
  });

  test('tags are exact and case-sensitive; tag= and the comments alias; bare arguments are more tags', async () => {
    assert.equal((await run('comments(tag=Incident)')).count, 0);
    assert.equal((await run('comment(tags=incid)')).count, 0);
    assert.deepEqual(await users('comments(tag=recon)'), ['bob']);
    assert.deepEqual(await users('comment(tags=recon, T1190)'), ['alice', 'bob']);
    assert.deepEqual(await users('comment(tags=[recon, T1190])'), ['alice', 'bob']);
    assert.deepEqual(await users('comment(tags="recon,T1190")'), ['alice', 'bob']);
  });

  test('keyword: the comment text contains it, case-insensitively', async () => {
    assert.deepEqual(await users('comment(keyword="credential")'), ['alice', 'bob']);
    assert.deepEqual(await users('comment(keyword=INCIDENT)'), ['carol']);
    assert.deepEqual(await users('comment(keyword="scanning /ADMIN")'), ['bob']);
    assert.equal((await run('comment(keyword="%")')).count, 0);
  });

  test('tags and keyword together: one comment must match both', async () => {
    // bob's deadlock has a comment tagged incident and another mentioning credential: no match.
    assert.deepEqual(await users('comment(tags=incident, keyword="credential")'), ['alice']);
  });

  test('nothing matching is an empty result; negation keeps the rest', async () => {
    assert.equal((await run('comment(tags=nope)')).count, 0);
    assert.equal((await run('!comment(tags=nope)')).count, 8);
    assert.deepEqual(await users('!comment(tags=incident)'), ['alice', 'bob', 'carol', 'dave', 'erin']);
    assert.deepEqual(await users('NOT comment()'), ['alice', 'dave', 'erin']);
  });

  test('an operand like any other: OR, groups, later stages before an aggregation', async () => {
    assert.deepEqual(await users('comment(tags=recon) OR status=301'), ['bob', 'dave']);
    assert.deepEqual(await users('user=alice | comment(tags=incident) | !comment(tags=T1190)'), ['alice']);
    assert.deepEqual(col(await run('comment(tags=incident) | groupBy(user) | sort(user)'), 'user'), ['alice', 'bob']);
  });

  test('another fractal\'s comments never match; a prism reads both', async () => {
    assert.equal((await run('comment(tags=b-only)')).count, 0);
    assert.equal((await run('comment(keyword=twin)')).count, 0);
    const viaPrism = await ok(admin, 'comment(tags=b-only)', { prism_id: prism });
    assert.equal(viaPrism.count, 2);
    assert.deepEqual(new Set(col(viaPrism, 'fractal_id')), new Set([fb]));
    assert.equal((await ok(admin, 'comment(tags=incident)', { prism_id: prism })).count, 5);
  });

  test('log ids reach the engine only as a bound parameter', async () => {
    const r = await run('comment(tags=incident)');
    assert.match(String(r.sql), /log_id IN \{p\d+:Array\(UUID\)\}/);
    for (const l of logsA) assert.ok(!String(r.sql).includes(l.log_id));
  });

  test('errors: unknown argument, after an aggregation', async () => {
    const bad = await query(admin, 'comment(tagz=x)', { fractal_id: fa });
    assert.equal(bad.status, 400);
    assert.match(String(bad.body.error), /unknown argument "tagz"/);
    const late = await query(admin, 'groupBy(user) | comment()', { fractal_id: fa });
    assert.equal(late.status, 400);
    assert.match(String(late.body.error), /before the first aggregation/);
  });

  test('the reference lists comment with its alias', async () => {
    const ref = (await admin.get('/api/v1/query/reference')).body.data;
    const text = JSON.stringify(ref);
    assert.match(text, /comment\(tags=t1,t2, keyword=\\"text\\"\)/);
    assert.match(text, /"comments"/);
  });
});

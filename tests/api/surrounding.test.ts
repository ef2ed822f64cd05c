// POST /api/v1/logs/surrounding over real HTTP against a real appliance: logs arrive through the
// ingest endpoint, then the N events before and after one of them are asked for. The expected order
// is the table's own (timestamp, log_id), read from ClickHouse; rows must look like a query's event
// rows. Covers counts, `same=host`, the edges of the data (and events years away, found past the
// widest window), equal timestamps, another tenant's fractal, and refused input.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { ingest, ok } from '../support/query.ts';
import { createFractal, expectBadField, expectError, expectOk, grant, unknownId } from '../support/api.ts';

let app: TestAppliance;
let admin: Client;
let oto: Client; // analyst on B only
let fa: any;
let fb: any;

const DAY = 86_400_000;
const base = Date.UTC(2025, 5, 10, 12, 0, 0); // events are old evidence, not the last 24 h
const at = (ms: number) => new Date(ms).toISOString();

/** The table's order: what "before" and "after" mean. */
interface Ref {
  log_id: string;
  t: string; // YYYY-MM-DD hh:mm:ss.mmm
  seq: number;
  host: string;
}
let order: Ref[];

function events() {
  const out: Array<Record<string, unknown>> = [];
  const hosts = ['web1', 'web2', 'db1'];
  for (let i = 0; i < 30; i++) out.push({ timestamp: at(base + i * 10_000), seq: i, host: hosts[i % 3], msg: `event ${i}`, source: i < 15 ? 'nginx' : 'sshd' });
  // Two events in the same millisecond: the log id breaks the tie.
  out.push({ timestamp: at(base + 155_500), seq: 50, host: 'web2', msg: 'tie a' });
  out.push({ timestamp: at(base + 155_500), seq: 51, host: 'web2', msg: 'tie b' });
  // Far away: days, then more than a year (past the widest window), before and after.
  out.push({ timestamp: at(base - 3 * DAY), seq: -1, host: 'web1', msg: 'three days earlier' });
  out.push({ timestamp: at(base - 400 * DAY), seq: -2, host: 'web1', msg: 'more than a year earlier' });
  out.push({ timestamp: at(base + 5 * DAY), seq: 100, host: 'db1', msg: 'five days later' });
  return out;
}

async function tableOrder(fractalId: string): Promise<Ref[]> {
  const ch = app.context.ch;
  const rs = await ch.client.query({
    // Aliases differ from the columns: ORDER BY must sort by the UUID column, not its text.
    query: `SELECT toString(log_id) AS id_text, substring(toString(timestamp), 1, 23) AS t,
              toInt64(getSubcolumn(fields, 'seq')) AS seq, toString(getSubcolumn(fields, 'host')) AS host
            FROM ${ch.table('logs')} WHERE fractal_id = {id:UUID} ORDER BY timestamp, log_id`,
    query_params: { id: fractalId },
    format: 'JSONEachRow',
  });
  type Raw = { id_text: string; t: string; seq: string | number; host: string };
  return ((await rs.json()) as Raw[]).map((r) => ({ log_id: r.id_text, t: r.t, seq: Number(r.seq), host: r.host }));
}

const bySeq = (seq: number) => order.find((r) => r.seq === seq)!;
const ids = (rows: Array<Record<string, unknown>>) => rows.map((r) => r.log_id);

async function surrounding(c: Client, anchor: Ref, extra: Record<string, unknown> = {}, fractalId = fa.id) {
  return c.post('/api/v1/logs/surrounding', { fractal_id: fractalId, timestamp: anchor.t, log_id: anchor.log_id, ...extra });
}

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  fa = await createFractal(admin, 'soc-a');
  fb = await createFractal(admin, 'soc-b');
  await ingest(app, fa.default_ingest_token, fa.id, events());
  await ingest(app, fb.default_ingest_token, fb.id, events().slice(0, 5));
  order = await tableOrder(fa.id);
  assert.equal(order.length, 35);
  oto = await makeUser(admin, 'oto');
  await grant(admin, fb.id, { username: 'oto' }, 'analyst');
});
after(async () => {
  await app?.dispose();
});

describe('order and counts', () => {
  test('the 10 events just before and just after, oldest first on both sides', async () => {
    const anchor = bySeq(15);
    const i = order.indexOf(anchor);
    const d = expectOk(await surrounding(admin, anchor));
    assert.equal(d.anchor.log_id, anchor.log_id);
    assert.deepEqual(ids(d.before), ids(order.slice(i - 10, i) as never));
    assert.deepEqual(ids(d.after), ids(order.slice(i + 1, i + 11) as never));
    assert.equal('same' in d, false);
  });

  test('rows are shaped like the query endpoint’s event rows', async () => {
    const anchor = bySeq(5);
    const d = expectOk(await surrounding(admin, anchor, { before: 1, after: 1 }));
    const q = await ok(admin, 'seq=5', { fractal_id: fa.id, start: at(base - 500 * DAY), end: at(base + 10 * DAY) });
    assert.equal(q.results.length, 1);
    assert.deepEqual(d.anchor, q.results[0]);
    for (const r of [d.anchor, ...d.before, ...d.after]) {
      assert.match(r.timestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
      assert.equal(r.fractal_id, fa.id);
      assert.equal(typeof r.norm_log, 'string');
      assert.equal(typeof r.host, 'string');
    }
    assert.equal(d.before[0].seq, '4');
    assert.equal(d.after[0].seq, '6');
    assert.equal(d.anchor.timestamp, '2025-06-10 12:00:50.000');
  });

  test('before and after count independently; 0 is none; 200 is the cap', async () => {
    const anchor = bySeq(15);
    const i = order.indexOf(anchor);
    const d = expectOk(await surrounding(admin, anchor, { before: 3, after: 0 }));
    assert.deepEqual(ids(d.before), ids(order.slice(i - 3, i) as never));
    assert.deepEqual(d.after, []);
    const all = expectOk(await surrounding(admin, anchor, { before: 200, after: 200 }));
    assert.deepEqual(ids(all.before), ids(order.slice(0, i) as never), 'everything older, back past the widest window');
    assert.deepEqual(ids(all.after), ids(order.slice(i + 1) as never), 'everything newer, days later too');
  });

  test('events in the same millisecond are ordered by log id', async () => {
    const a = bySeq(50);
    const b = bySeq(51);
    const [first, second] = order.indexOf(a) < order.indexOf(b) ? [a, b] : [b, a];
    const d1 = expectOk(await surrounding(admin, first, { before: 1, after: 1 }));
    assert.deepEqual(ids(d1.after), [second.log_id]);
    const d2 = expectOk(await surrounding(admin, second, { before: 1, after: 1 }));
    assert.deepEqual(ids(d2.before), [first.log_id]);
    assert.equal(d2.anchor.log_id, second.log_id);
  });

  test('the anchor may be named by its RFC 3339 time too', async () => {
    const anchor = bySeq(15);
    const d = expectOk(await surrounding(admin, { ...anchor, t: at(base + 150_000) }, { before: 1, after: 1 }));
    assert.equal(d.anchor.log_id, anchor.log_id);
  });
});

describe('same field', () => {
  test('same=host: only events of the anchor’s host, the nearest ones', async () => {
    const anchor = bySeq(15); // host web1 (15 % 3 = 0)
    assert.equal(anchor.host, 'web1');
    const i = order.indexOf(anchor);
    const d = expectOk(await surrounding(admin, anchor, { same: 'host', before: 4, after: 4 }));
    const web1 = (rows: Ref[]) => rows.filter((r) => r.host === 'web1');
    assert.deepEqual(ids(d.before), ids(web1(order.slice(0, i)).slice(-4) as never));
    assert.deepEqual(ids(d.after), ids(web1(order.slice(i + 1)).slice(0, 4) as never));
    for (const r of [...d.before, ...d.after]) assert.equal(r.host, 'web1');
    assert.deepEqual(d.same, { field: 'host', value: 'web1' });
  });

  test('same=source reaches past the nearest windows for the rare value', async () => {
    const anchor = bySeq(3); // source nginx; nginx events before it: seq 0..2 only
    const d = expectOk(await surrounding(admin, anchor, { same: 'source', before: 10, after: 2 }));
    assert.deepEqual(d.before.map((r: any) => r.seq), ['0', '1', '2']);
    assert.deepEqual(d.after.map((r: any) => r.seq), ['4', '5']);
  });

  test('a field the anchor lacks, or a reserved column, is refused in words', async () => {
    expectError(await surrounding(admin, bySeq(15), { same: 'no_such_field' }), 400, /has no field "no_such_field"/);
    expectError(await surrounding(admin, bySeq(15), { same: 'timestamp' }), 400, /"same"/);
  });
});

describe('edges of the data', () => {
  test('the oldest event has nothing before it; the newest nothing after it', async () => {
    const oldest = order[0]!;
    assert.equal(oldest.seq, -2);
    const d = expectOk(await surrounding(admin, oldest, { before: 5, after: 3 }));
    assert.deepEqual(d.before, []);
    assert.deepEqual(ids(d.after), ids(order.slice(1, 4) as never));
    const newest = order[order.length - 1]!;
    assert.equal(newest.seq, 100);
    const e = expectOk(await surrounding(admin, newest, { before: 2, after: 5 }));
    assert.deepEqual(e.after, []);
    assert.deepEqual(ids(e.before), ids(order.slice(-3, -1) as never));
  });

  test('fewer than asked near an edge: what exists, in order', async () => {
    const first = bySeq(0);
    const d = expectOk(await surrounding(admin, first, { before: 10, after: 0 }));
    assert.deepEqual(d.before.map((r: any) => r.seq), ['-2', '-1'], 'three days and 400 days earlier');
  });
});

describe('scope and input', () => {
  test('another tenant’s fractal is not found; a log of another fractal is not found', async () => {
    expectError(await surrounding(oto, bySeq(15)), 404, /not found/);
    expectError(await surrounding(admin, bySeq(15), {}, fb.id), 404, /not found/);
    expectError(await surrounding(admin, bySeq(15), {}, unknownId()), 404, /not found/);
    expectError(await surrounding(admin, { ...bySeq(15), log_id: unknownId() }), 404, /not found/);
    expectError(await new Client(app.url).post('/api/v1/logs/surrounding', { fractal_id: fa.id, timestamp: bySeq(15).t, log_id: bySeq(15).log_id }), 401);
  });

  test('bad input is a 400 naming the field', async () => {
    const a = bySeq(15);
    expectBadField(await admin.post('/api/v1/logs/surrounding', { fractal_id: fa.id, timestamp: a.t }), 'log_id');
    expectBadField(await admin.post('/api/v1/logs/surrounding', { fractal_id: fa.id, log_id: a.log_id }), 'timestamp');
    expectBadField(await admin.post('/api/v1/logs/surrounding', { timestamp: a.t, log_id: a.log_id }), 'fractal_id');
    expectBadField(await surrounding(admin, { ...a, log_id: 'not-a-uuid' }), 'log_id');
    expectBadField(await surrounding(admin, { ...a, t: 'yesterday' }), 'timestamp');
    expectBadField(await surrounding(admin, a, { before: 201 }), 'before');
    expectBadField(await surrounding(admin, a, { after: -1 }), 'after');
    expectBadField(await surrounding(admin, a, { before: 2.5 }), 'before');
    expectBadField(await surrounding(admin, a, { same: '' }), 'same');
    expectError(await surrounding(admin, a, {}, 'not-a-uuid'), 400, /fractal_id/);
  });
});

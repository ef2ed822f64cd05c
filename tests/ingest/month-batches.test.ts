// Old logs spanning months (an import of evidence, a shipper catching up) are inserted a month at a
// time: the logs table is partitioned by month and the engine writes one part per month an insert
// touches, each costing it about as much as thousands of rows. Here one request of 15,000 logs,
// interleaving three months, is more rows than one insert takes (16 MB): cut as they came, the
// two inserts would each have touched all three months (six parts); a month at a time, three.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal, sendNdjson } from '../support/ingest.ts';
import { waitFor } from '../support/wait.ts';

let a: TestAppliance;
let admin: Client;
before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await a?.dispose();
});

async function rows<T>(query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await a.context.ch.client.query({ query, query_params: params, format: 'JSONEachRow' });
  return (await rs.json()) as T[];
}

test('logs of three months interleaved in one request are stored one month per insert, every log kept', async () => {
  const ch = a.context.ch;
  const [database, table] = ch.table('logs').split('.') as [string, string];
  // Parts stay as the inserts wrote them.
  await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table('logs')}` });
  const f = await ingestFractal(admin, 'old-logs');
  const months = ['2024-01', '2024-02', '2024-03'];
  const pad = 'x'.repeat(1100);
  const records = Array.from({ length: 15_000 }, (_, i) => ({
    timestamp: `${months[i % 3]}-${String(1 + (Math.floor(i / 3) % 28)).padStart(2, '0')}T10:00:00.000Z`,
    message: `event ${i} ${pad}`,
    n: i,
  }));
  await sendNdjson(a.url, f.token, records);

  const perMonth = await waitFor('all 15,000 logs stored', async () => {
    const r = await rows<{ m: number; c: string }>(
      `SELECT toYYYYMM(timestamp) AS m, count() AS c FROM ${ch.table('logs')} WHERE fractal_id = {f:UUID} GROUP BY m ORDER BY m`,
      { f: f.id },
    );
    return r.reduce((n, x) => n + Number(x.c), 0) === 15_000 && r;
  });
  assert.deepEqual(
    perMonth.map((x) => [x.m, Number(x.c)]),
    [
      [202401, 5000],
      [202402, 5000],
      [202403, 5000],
    ],
  );
  const parts = await rows<{ partition: string; parts: string }>(
    `SELECT partition, count() AS parts FROM system.parts WHERE database = {d:String} AND table = {t:String} AND active GROUP BY partition ORDER BY partition`,
    { d: database, t: table },
  );
  assert.deepEqual(
    parts.map((p) => [p.partition, Number(p.parts)]),
    [
      ['202401', 1],
      ['202402', 1],
      ['202403', 1],
    ],
    'one part per month: no insert touched more than one month',
  );
});

test('one request of logs spanning ten years (120 months) is stored whole', async () => {
  // The engine refuses an insert touching more than 100 partitions (max_partitions_per_insert_block)
  // unless told otherwise: this request's one insert was refused on every try, never stored, and
  // held back everything queued behind it. Now inserts go a month at a time, and carry no such
  // bound for batches from an older spool (either change alone passes this test).
  const f = await ingestFractal(admin, 'ten-years');
  const records = Array.from({ length: 1200 }, (_, i) => {
    const month = i % 120;
    return { timestamp: `${2010 + Math.floor(month / 12)}-${String(1 + (month % 12)).padStart(2, '0')}-15T10:00:00.000Z`, message: `event ${i}` };
  });
  await sendNdjson(a.url, f.token, records);
  const ch = a.context.ch;
  const months = await waitFor('all 1,200 logs stored', async () => {
    const r = await rows<{ months: string; logs: string }>(
      `SELECT uniqExact(toYYYYMM(timestamp)) AS months, count() AS logs FROM ${ch.table('logs')} WHERE fractal_id = {f:UUID}`,
      { f: f.id },
    );
    return Number(r[0]?.logs) === 1200 && Number(r[0]!.months);
  }, 60_000);
  assert.equal(months, 120);
  const r = await admin.post('/api/v1/query', { query: 'count()', fractal_id: f.id, start: '2010-01-01T00:00:00Z', end: '2020-01-01T00:00:00Z' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(Number(r.body.results[0]._count), 1200, 'every log is found by a search over the ten years');
});

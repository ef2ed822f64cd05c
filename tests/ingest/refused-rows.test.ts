// A row the engine refuses for its data (a parse or type error) used to be retried for ever, and
// every log coalesced into the same insert with it was never stored, nor anything queued behind it
// on that worker (the 1e999999 line found by the fuzz test was one). Now the insert is split until
// the row at fault is found; it is stored with its text as `message` and the engine's reason as
// `ingest_error`, and the rest are stored as they are. Here the rows are put on the real queue of a
// real appliance as accept() writes them, one of them made unreadable for the engine.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { batchBytes } from '../../service/src/ingest/queue.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal, sendNdjson } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';

let a: TestAppliance;
let admin: Client;
before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await a?.dispose();
});

const T = '2026-11-26 09:00:00.000';
/** An ingest row as accept() writes it; `fields` given when the pipeline changed the record. */
const row = (fractalId: string, raw: string, fields?: string) =>
  JSON.stringify({ fractal_id: fractalId, timestamp: T, ingest_timestamp: T, log_id: randomUUID(), raw, ...(fields === undefined ? {} : { fields }) });

function queueRows(fractalId: string, rows: string[]): void {
  const q = a.ingest.queue;
  const buf = Buffer.from(rows.join('\n') + '\n');
  assert.ok(q.reserve(rows.length, batchBytes(buf)));
  q.push({ id: randomUUID(), fractalId, count: rows.length, table: 'logs_ingest', rows: buf });
}

async function search(fractalId: string, query: string): Promise<Array<Record<string, string>>> {
  const r = await admin.post('/api/v1/query', { query, fractal_id: fractalId, start: '2026-11-26T00:00:00Z', end: '2026-11-27T00:00:00Z' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.results;
}

test('a row the engine refuses is stored apart with the reason; the logs inserted with it and after it are stored', async () => {
  const f = await ingestFractal(admin, 'refused-rows');
  // Two batches that coalesce into one insert: the engine refuses it whole for the one bad row.
  queueRows(f.id, [row(f.id, '{"user":"alice"}'), row(f.id, 'not json at all', '[1,2]'), row(f.id, '{"user":"bob"}')]);
  queueRows(f.id, [row(f.id, '{"user":"carol"}')]);
  await sendNdjson(a.url, f.token, [{ user: 'dave' }]);

  const stored = await waitForLogs(a, f.id, 5);
  assert.equal(stored.length, 5);
  assert.deepEqual((await search(f.id, 'user=* | sort(user, order=asc)')).map((r) => r.user), ['alice', 'bob', 'carol', 'dave']);

  const [bad] = await search(f.id, 'ingest_error=*');
  assert.equal(bad!.message, 'not json at all', 'the record text is kept and searchable');
  assert.match(bad!.ingest_error!, /JSON/, bad!.ingest_error);
  assert.equal(Number((await search(f.id, '"not json at all" | count()'))[0]!._count), 1);

  const counted = await a.context.metrics.ingestRowsStoredApart.get();
  assert.equal(counted.values[0]!.value, 1, 'svc_ingest_rows_stored_apart_total counts it');
  const storage = (await admin.get('/api/v1/system/pressure')).body.data.layers.storage;
  assert.equal(storage.rows_stored_apart, 1, 'system/pressure says so too');
  assert.ok(Date.parse(storage.last_stored_apart_at) > Date.now() - 120_000);

  // The queue is empty again and holds nothing back: the bytes and logs it counted were released.
  assert.ok(await a.ingest.queue.drain(5_000));
  assert.equal(a.ingest.queue.queuedLogs, 0);
  assert.equal(a.ingest.queue.queuedBytes, 0);
});

// The ingest queue admits logs and bytes, not requests: one-log requests from many connections
// share its slots, and only a queue that really holds SVC_INGEST_QUEUE_SIZE × 5,000 logs (or
// SVC_INGEST_QUEUE_BYTES) refuses, /_bulk item by item inside a 200, the other routes whole. Storage
// is a real ClickHouse HTTP interface (the bridge over the embedded engine) that stops taking
// inserts while a test holds them, as a busy server would.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import type { ClickHouseHttpBridge } from '../support/clickhouse-http-bridge.ts';
import { startRemoteTestAppliance, type RemoteTestAppliance } from '../support/remote-appliance.ts';
import { ADMIN_PASSWORD, signIn, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { storedLogs, waitForLogs } from '../support/logs.ts';
import { WAIT_MS } from '../support/wait.ts';

let remote: RemoteTestAppliance;
let bridge: ClickHouseHttpBridge;
let a: TestAppliance;
let admin: Client;
let fractal: { id: string; token: string };

before(async () => {
  ({ a, bridge } = remote = await startRemoteTestAppliance({
    SVC_CLICKHOUSE_DATABASE: 'queue_test',
    // One slot: 5,000 logs; 4 MiB of rows.
    SVC_INGEST_QUEUE_SIZE: '1',
    SVC_INGEST_QUEUE_BYTES: String(4 * 1024 * 1024),
  }));
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  fractal = await ingestFractal(admin, 'queue');
});
after(() => remote?.dispose());

const auth = () => ({ authorization: `Bearer ${fractal.token}` });
const bulkBody = (docs: object[]) => docs.map((d) => `{"index":{}}\n${JSON.stringify(d)}\n`).join('');
const bulk = async (docs: object[]) => {
  const r = await fetch(`${a.url}/_bulk`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/x-ndjson' }, body: bulkBody(docs) });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as any };
};
const ingest = async (lines: object[]) => {
  const r = await fetch(`${a.url}/api/v1/ingest`, { method: 'POST', headers: auth(), body: lines.map((l) => JSON.stringify(l)).join('\n') });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as any };
};
const docs = (from: number, n: number, extra: object = {}) => Array.from({ length: n }, (_, i) => ({ seq: from + i, ...extra }));
const queueLayer = async () => (await admin.get('/api/v1/system/pressure')).body.data.layers.queue;
const itemStatuses = (body: any) => body.items.map((i: any) => (Object.values(i)[0] as { status: number }).status);

test('admission counts logs and bytes: one-log requests share slots, a full queue refuses per item on /_bulk and whole elsewhere, and nothing accepted is lost', async () => {
  const release = bridge.holdInserts();
  let released = false;
  try {
    // 1,000 one-document /_bulk requests over 50 connections while storage takes nothing: each used
    // to take a whole slot of the queue (429 from the second one on); together they fill a fifth of one.
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        for (let i = next++; i < 1000; i = next++) {
          const r = await bulk([{ seq: i, kind: 'single' }]);
          statuses.push(r.status, ...itemStatuses(r.body));
        }
      }),
    );
    assert.equal(statuses.length, 2000);
    assert.ok(statuses.every((s) => s === 200 || s === 201), `every request and item accepted: ${[...new Set(statuses)]}`);
    let q = await queueLayer();
    assert.equal(q.logs_queued, 1000);
    assert.equal(q.slots_used, 1);
    assert.equal(q.logs_capacity, 5000);
    assert.equal(q.active, false, 'one-log requests are nowhere near full');

    // Bytes: 30 logs of 100 KB (3 MB of rows) would pass the 4 MiB bound with what is queued.
    const big = await bulk(docs(5000, 30, { kind: 'big', pad: 'x'.repeat(100_000) }));
    assert.equal(big.status, 200);
    assert.equal(big.body.errors, true);
    assert.deepEqual([...new Set(itemStatuses(big.body))], [429]);
    q = await queueLayer();
    assert.equal(q.active, true);
    assert.match(q.detail, /30 more logs .* would pass SVC_INGEST_QUEUE_BYTES/);

    // Logs: 4,500 more would pass 5,000. /_bulk answers a 200 whose items are all 429s (with
    // Retry-After), the type Elasticsearch clients retry item by item; /api/v1/ingest a 429.
    const refused = await bulk(docs(10_000, 4500, { kind: 'refused' }));
    assert.equal(refused.status, 200);
    assert.equal(refused.retryAfter, '1');
    assert.equal(refused.body.errors, true);
    assert.equal(refused.body.items.length, 4500);
    const item = refused.body.items[0].index;
    assert.equal(item.status, 429);
    assert.equal(item.error.type, 'es_rejected_execution_exception');
    assert.equal(item.error.reason, 'The ingest queue is full; retry with backoff.');
    const whole = await ingest(docs(10_000, 4500, { kind: 'refused' }));
    assert.equal(whole.status, 429);
    assert.equal(whole.retryAfter, '1');
    assert.match((await queueLayer()).detail, /4,500 more logs .* would pass SVC_INGEST_QUEUE_SIZE: the queue holds 1,000 of 5,000 logs/);

    // Exactly full: 4,000 more fit.
    const fill = await ingest(docs(20_000, 4000, { kind: 'fill' }));
    assert.equal(fill.status, 200, JSON.stringify(fill.body));
    q = await queueLayer();
    assert.equal(q.logs_queued, 5000);
    // Now not one more log: /api/v1/ingest is refused before its body is read, /_bulk per item.
    assert.equal((await ingest([{ seq: 30_000, kind: 'late' }])).status, 429);
    const late = await bulk([{ seq: 30_001, kind: 'late' }]);
    assert.equal(late.status, 200);
    assert.deepEqual(itemStatuses(late.body), [429]);
    const otlp = await fetch(`${a.url}/v1/logs`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"resourceLogs":[]}' });
    assert.equal(otlp.status, 429);
    assert.equal(otlp.headers.get('retry-after'), '1');

    release();
    released = true;
    const rows = await waitForLogs(a, fractal.id, 5000, 60_000);
    const seqs = rows.map((r) => Number(r.fields.seq));
    assert.equal(new Set(seqs).size, seqs.length, 'no log stored twice');
    assert.deepEqual(
      Object.fromEntries(['single', 'fill', 'big', 'refused', 'late'].map((k) => [k, rows.filter((r) => r.fields.kind === k).length])),
      { single: 1000, fill: 4000, big: 0, refused: 0, late: 0 },
    );

    // Once storage takes them again, the refused requests go through when retried.
    assert.equal((await bulk(docs(10_000, 4500, { kind: 'refused' }))).body.errors, false);
    const after = await waitForLogs(a, fractal.id, 9500, 60_000);
    assert.equal(after.length, 9500);
    assert.equal((await queueLayer()).logs_capacity, 5000);
  } finally {
    if (!released) release();
  }
});

test('the queue is empty again once storage has everything', async () => {
  const deadline = Date.now() + WAIT_MS;
  while ((await queueLayer()).logs_queued > 0) {
    assert.ok(Date.now() < deadline, 'queue drained');
    await new Promise((r) => setTimeout(r, 50));
  }
  const q = await queueLayer();
  assert.equal(q.bytes_queued, 0);
  assert.equal(q.slots_used, 0);
  assert.equal((await storedLogs(a, fractal.id)).length, 9500);
});

test('a mix of large and small records is pushed back by bytes: the queue never holds more than SVC_INGEST_QUEUE_BYTES, and every record answered 200 is stored once', async () => {
  const mixed = await ingestFractal(admin, 'queue-mix');
  const send = async (records: object[]) => {
    const r = await fetch(`${a.url}/api/v1/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${mixed.token}` },
      body: records.map((l) => JSON.stringify(l)).join('\n'),
    });
    return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as any };
  };
  // Requests of 20 records each: every third one holds records of 60 fields of 1.5 KB (about 90 KB
  // each, 1.8 MB a request), the others small web logs. Far fewer logs than a slot holds, so only
  // the byte bound (4 MiB) can refuse them.
  const request = (n: number) =>
    Array.from({ length: 20 }, (_, i) =>
      n % 3 === 0
        ? { seq: n * 100 + i, kind: 'large', ...Object.fromEntries(Array.from({ length: 60 }, (_, f) => [`attr_${f}`, `${f % 10}`.repeat(1500)])) }
        : { seq: n * 100 + i, kind: 'small', host: `web-${i}`, status: 200, nested: { path: '/x', ms: i } },
    );
  const release = bridge.holdInserts();
  let released = false;
  try {
    const accepted: number[] = [];
    const refused: number[] = [];
    let bytesPeak = 0;
    for (let n = 0; n < 12; n++) {
      const r = await send(request(n));
      const q = await queueLayer();
      bytesPeak = Math.max(bytesPeak, q.bytes_queued);
      if (r.status === 200) accepted.push(n);
      else {
        assert.equal(r.status, 429, JSON.stringify(r.body));
        assert.equal(r.retryAfter, '1');
        refused.push(n);
      }
    }
    const q = await queueLayer();
    assert.ok(refused.length > 0, 'the byte bound refused some requests');
    assert.ok(refused.some((n) => n % 3 === 0), 'a large request was refused');
    assert.ok(bytesPeak <= q.bytes_capacity, `queued ${bytesPeak} bytes, bound ${q.bytes_capacity}`);
    assert.ok(q.logs_queued < q.logs_capacity / 10, 'the log bound was nowhere near');
    assert.match(q.detail, /would pass SVC_INGEST_QUEUE_BYTES/);

    release();
    released = true;
    // Retried once storage takes work again, the refused requests are accepted too.
    for (const n of refused) {
      for (;;) {
        const r = await send(request(n));
        if (r.status === 200) break;
        assert.equal(r.status, 429);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    const rows = await waitForLogs(a, mixed.id, 240, 120_000);
    const seqs = rows.map((r) => Number(r.fields.seq));
    assert.equal(rows.length, 240);
    assert.equal(new Set(seqs).size, 240, 'no log stored twice');
    const large = rows.find((r) => r.fields.kind === 'large')!;
    assert.equal(large.fields.attr_59, '9'.repeat(1500));
    assert.equal(rows.find((r) => r.fields.kind === 'small')!.fields['nested.path'], '/x');
  } finally {
    if (!released) release();
  }
});

test('a body whose Content-Length cannot fit in the queue is refused with 429 before it is read (the rest of it is never awaited)', async () => {
  const release = bridge.holdInserts();
  let released = false;
  try {
    // 1,000 logs held: the queue is not empty, so it takes no body larger than the room left.
    assert.equal((await ingest(docs(40_000, 1000, { kind: 'held' }))).status, 200);
    const declared = 4 * 1024 * 1024; // more than the 4 MiB bound minus what is queued
    const answer = await new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
      const req = http.request(`${a.url}/api/v1/ingest`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/x-ndjson', 'content-length': String(declared) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body });
        });
      });
      req.on('error', reject);
      // Only the first 64 KB is ever sent: the answer must come without the rest.
      req.write(docs(50_000, 1000, { kind: 'never' }).map((d) => JSON.stringify(d)).join('\n').slice(0, 64 * 1024));
    });
    assert.equal(answer.status, 429, answer.body);
    assert.equal(answer.retryAfter, '1');
    assert.match((await queueLayer()).detail, /Content-Length\) would pass SVC_INGEST_QUEUE_BYTES, refused before its body was read/);
    // A body that fits is still taken.
    assert.equal((await ingest(docs(41_000, 10, { kind: 'held' }))).status, 200);
    release();
    released = true;
    const rows = await waitForLogs(a, fractal.id, 9500 + 1010, 60_000);
    assert.equal(rows.filter((r) => r.fields.kind === 'held').length, 1010);
    assert.equal(rows.filter((r) => r.fields.kind === 'never').length, 0);
  } finally {
    if (!released) release();
  }
});

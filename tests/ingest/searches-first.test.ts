// Searches first (issue 18): while a search streams from the engine and storage is already behind,
// /api/v1/ingest is turned away with a 429 before its body is read (the shipper retries), /_bulk
// still answers per item; once no search runs, ingest is accepted again and nothing accepted is
// lost. Storage is a real ClickHouse HTTP interface (the bridge over the embedded engine) that
// holds inserts while the test fills the queue, as a busy server would.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClickHouseHttpBridge } from '../support/clickhouse-http-bridge.ts';
import { startRemoteTestAppliance, type RemoteTestAppliance } from '../support/remote-appliance.ts';
import { ADMIN_PASSWORD, signIn, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';

let remote: RemoteTestAppliance;
let bridge: ClickHouseHttpBridge;
let a: TestAppliance;
let admin: Client;
let fractal: { id: string; token: string };

before(async () => {
  ({ a, bridge } = remote = await startRemoteTestAppliance({ SVC_CLICKHOUSE_DATABASE: 'searches_first' }));
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  fractal = await ingestFractal(admin, 'searches-first');
});
after(() => remote?.dispose());

const logs = (from: number, n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ seq: from + i, host: `h${i % 7}`, level: 'info' })).join('\n');
const ingest = async (from: number, n: number) => {
  const r = await fetch(`${a.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${fractal.token}` }, body: logs(from, n) });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as any };
};
const bulk = async (from: number, n: number) => {
  const body = Array.from({ length: n }, (_, i) => `{"index":{}}\n${JSON.stringify({ seq: from + i, kind: 'bulk' })}\n`).join('');
  const r = await fetch(`${a.url}/_bulk`, { method: 'POST', headers: { authorization: `Bearer ${fractal.token}`, 'content-type': 'application/x-ndjson' }, body });
  return { status: r.status, body: (await r.json()) as any };
};

test('a search that ended leaves no search counted (ingest never waits for a finished one)', async () => {
  assert.equal((await ingest(0, 10)).status, 200);
  await waitForLogs(a, fractal.id, 10);
  const r = await admin.post('/api/v1/query', { query: 'level=info | groupBy(host)', fractal_id: fractal.id, start: '2000-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const events = await admin.post('/api/v1/query', { query: 'level=info', fractal_id: fractal.id, start: '2000-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z' });
  assert.equal(events.status, 200);
  assert.equal(events.body.results.length, 10);
  assert.equal(a.context.ch.searches.active, 0);
});

test('while a search runs and storage is behind, /api/v1/ingest is refused with Retry-After and /_bulk answers per item; afterwards everything is accepted and stored once', async () => {
  const release = bridge.holdInserts();
  let released = false;
  try {
    // Storage takes nothing: 30,000 logs are held, more than one insert's worth.
    for (let k = 0; k < 6; k++) assert.equal((await ingest(1000 + k * 5000, 5000)).status, 200);
    // With no search running, a backlog alone refuses nothing.
    assert.equal((await ingest(40_000, 100)).status, 200);

    const ended = a.context.ch.searches.begin(); // a search streaming now
    try {
      const refused = await ingest(50_000, 100);
      assert.equal(refused.status, 429);
      assert.equal(refused.retryAfter, '1');
      assert.match(JSON.stringify(refused.body), /retry with backoff/);
      const pressure = (await admin.get('/api/v1/system/pressure')).body.data.layers.queue;
      assert.match(pressure.detail, /searches are running/);
      // /_bulk refuses item by item only when the queue is full; it is not, so its items go in.
      const b = await bulk(60_000, 50);
      assert.equal(b.status, 200);
      assert.equal(b.body.errors, false);
    } finally {
      ended();
    }
    assert.equal((await ingest(50_000, 100)).status, 200, 'accepted once no search runs');

    release();
    released = true;
    const rows = await waitForLogs(a, fractal.id, 10 + 30_000 + 100 + 50 + 100, 120_000);
    const seqs = rows.map((r) => Number(r.fields.seq));
    assert.equal(new Set(seqs).size, seqs.length, 'no log stored twice');
    assert.equal(rows.length, 30_260);
  } finally {
    if (!released) release();
  }
});

test('a statement no analyst waits on (alert engine, dashboard widgets, case exports) does not make ingest give way', async () => {
  const release = bridge.holdInserts();
  let released = false;
  const ch = a.context.ch;
  const open = async (background: boolean) => {
    const it = ch.streamRows('SELECT number FROM numbers(3)', {}, { background })[Symbol.asyncIterator]();
    assert.equal((await it.next()).done, false); // streaming: the statement is running
    return it;
  };
  try {
    // Storage takes nothing: more than one insert's worth is held, so storage is behind.
    for (let k = 0; k < 6; k++) assert.equal((await ingest(100_000 + k * 5000, 5000)).status, 200);
    const background = await open(true);
    try {
      assert.equal(ch.searches.active, 0);
      assert.equal((await ingest(200_000, 100)).status, 200, 'a background statement refuses no ingest');
      const search = await open(false);
      try {
        assert.equal(ch.searches.active, 1);
        assert.equal((await ingest(200_100, 100)).status, 429, 'a search does');
      } finally {
        await search.return?.();
      }
    } finally {
      await background.return?.();
    }
    assert.equal(ch.searches.active, 0);
    release();
    released = true;
    await waitForLogs(a, fractal.id, 30_260 + 30_100, 120_000);
  } finally {
    if (!released) release();
  }
});

// The real waitForHealth against real loopback HTTP servers.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { HealthTimeoutError, waitForHealth } from '../../main/src/health.ts';
import { freePort } from '../support/service-process.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function serve(t: { after(fn: () => unknown): void }, handler: Handler, port = 0) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/**
 * One request before a wait that must see an answer before its deadline: the first fetch of a
 * process loads its HTTP client, which on a busy machine can take longer than a short deadline.
 */
const warmUp = (url: string) => fetch(url).then((r) => r.text(), () => '');
/** Long enough for a loopback answer on a busy machine; the tests that wait it out take this long. */
const DEADLINE_MS = 2000;

test('resolves once the service turns healthy, polling the health path', async (t) => {
  const paths: string[] = [];
  const url = await serve(t, (req, res) => {
    paths.push(req.url ?? '');
    if (paths.length < 4) json(res, 503, { status: 'unhealthy' });
    else json(res, 200, { status: 'healthy' });
  });
  await waitForHealth(`${url}/`, { timeoutMs: 60_000, intervalMs: 10 }); // trailing slash tolerated
  assert.equal(paths.length, 4);
  assert.ok(paths.every((p) => p === '/api/v1/health'));
});

test('times out naming the last answer when the service stays unhealthy', async (t) => {
  const url = await serve(t, (_req, res) => json(res, 503, { status: 'unhealthy' }));
  await warmUp(url);
  const began = Date.now();
  await assert.rejects(waitForHealth(url, { timeoutMs: DEADLINE_MS, intervalMs: 20 }), (e: Error) => {
    assert.ok(e instanceof HealthTimeoutError);
    assert.match(e.message, new RegExp(`within ${DEADLINE_MS} ms \\(last: HTTP 503\\)`));
    return true;
  });
  const took = Date.now() - began;
  assert.ok(took >= DEADLINE_MS - 20, `gave up after ${took} ms, before its deadline`);
});

test('a 200 without status "healthy" is not healthy', async (t) => {
  const url = await serve(t, (_req, res) => json(res, 200, { status: 'degraded' }));
  await warmUp(url);
  await assert.rejects(waitForHealth(url, { timeoutMs: DEADLINE_MS, intervalMs: 20 }), /HTTP 200 with status "degraded"/);
  const url2 = await serve(t, (_req, res) => res.end('OK'));
  await assert.rejects(waitForHealth(url2, { timeoutMs: DEADLINE_MS, intervalMs: 20 }), /HTTP 200 with status null/);
});

test('keeps polling through "connection refused" until the listener appears', async (t) => {
  const port = await freePort();
  // The listener appears once an attempt was refused (the real fetch, counted on its way).
  let refused = 0;
  const countingFetch: typeof fetch = async (...args) => {
    try {
      return await fetch(...args);
    } catch (e) {
      if (++refused === 1) await serve(t, (_req, res) => json(res, 200, { status: 'healthy' }), port);
      throw e;
    }
  };
  await waitForHealth(`http://127.0.0.1:${port}`, { timeoutMs: 60_000, intervalMs: 20, fetch: countingFetch });
  assert.equal(refused, 1);
});

test('reports the connection error when nothing ever listens', async () => {
  const port = await freePort();
  await warmUp(`http://127.0.0.1:${port}`);
  await assert.rejects(waitForHealth(`http://127.0.0.1:${port}`, { timeoutMs: DEADLINE_MS, intervalMs: 20 }), /ECONNREFUSED/);
});

test('an abort ends the wait promptly instead of after the timeout', async (t) => {
  const url = await serve(t, (_req, res) => json(res, 503, {}));
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('user quit')), 50);
  const began = Date.now();
  await assert.rejects(waitForHealth(url, { timeoutMs: 600_000, intervalMs: 20, signal: ac.signal }), /user quit/);
  assert.ok(Date.now() - began < 300_000, 'ended long before its deadline');
});

test('a hung request does not outlast the overall timeout', async (t) => {
  const url = await serve(t, () => {}); // accepts, never answers
  await assert.rejects(waitForHealth(url, { timeoutMs: 1000, intervalMs: 20 }), (e: Error) => {
    // The request was cut at what was left of the wait, not at the 5 s each request may take.
    const cut = Number(/\(last: no answer within (\d+) ms\)/.exec(e.message)?.[1]);
    assert.ok(cut > 0 && cut <= 1000, e.message);
    return true;
  });
});

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

test('resolves once the service turns healthy, polling the health path', async (t) => {
  const paths: string[] = [];
  const url = await serve(t, (req, res) => {
    paths.push(req.url ?? '');
    if (paths.length < 4) json(res, 503, { status: 'unhealthy' });
    else json(res, 200, { status: 'healthy' });
  });
  await waitForHealth(`${url}/`, { timeoutMs: 3000, intervalMs: 10 }); // trailing slash tolerated
  assert.equal(paths.length, 4);
  assert.ok(paths.every((p) => p === '/api/v1/health'));
});

test('times out naming the last answer when the service stays unhealthy', async (t) => {
  const url = await serve(t, (_req, res) => json(res, 503, { status: 'unhealthy' }));
  const began = Date.now();
  await assert.rejects(waitForHealth(url, { timeoutMs: 200, intervalMs: 20 }), (e: Error) => {
    assert.ok(e instanceof HealthTimeoutError);
    assert.match(e.message, /within 200 ms \(last: HTTP 503\)/);
    return true;
  });
  const took = Date.now() - began;
  assert.ok(took >= 180 && took < 1500, `took ${took} ms`);
});

test('a 200 without status "healthy" is not healthy', async (t) => {
  const url = await serve(t, (_req, res) => json(res, 200, { status: 'degraded' }));
  await assert.rejects(waitForHealth(url, { timeoutMs: 150, intervalMs: 20 }), /HTTP 200 with status "degraded"/);
  const url2 = await serve(t, (_req, res) => res.end('OK'));
  await assert.rejects(waitForHealth(url2, { timeoutMs: 150, intervalMs: 20 }), /HTTP 200 with status null/);
});

test('keeps polling through "connection refused" until the listener appears', async (t) => {
  const port = await freePort();
  setTimeout(() => void serve(t, (_req, res) => json(res, 200, { status: 'healthy' }), port), 150);
  await waitForHealth(`http://127.0.0.1:${port}`, { timeoutMs: 3000, intervalMs: 20 });
});

test('reports the connection error when nothing ever listens', async () => {
  const port = await freePort();
  await assert.rejects(waitForHealth(`http://127.0.0.1:${port}`, { timeoutMs: 150, intervalMs: 20 }), /ECONNREFUSED/);
});

test('an abort ends the wait promptly instead of after the timeout', async (t) => {
  const url = await serve(t, (_req, res) => json(res, 503, {}));
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('user quit')), 50);
  const began = Date.now();
  await assert.rejects(waitForHealth(url, { timeoutMs: 10_000, intervalMs: 20, signal: ac.signal }), /user quit/);
  assert.ok(Date.now() - began < 2000);
});

test('a hung request does not outlast the overall timeout', async (t) => {
  const url = await serve(t, () => {}); // accepts, never answers
  const began = Date.now();
  await assert.rejects(waitForHealth(url, { timeoutMs: 300, intervalMs: 20 }), /\(last: no answer within \d+ ms\)/);
  assert.ok(Date.now() - began < 2000);
});

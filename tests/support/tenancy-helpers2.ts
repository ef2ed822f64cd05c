// Helpers for the API integration tests of prisms, groups, users, auth, health and settings.
// Everything here talks to a real appliance over real HTTP; nothing is mocked.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { Client, Res } from './appliance.ts';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The password makeUser() gives a user. */
export const passwordOf = (username: string) => `${username}-password-1`;

/** A random UUID that names nothing. */
export const unknownId = () => randomUUID();

/** Asserts a success envelope with the given status and returns its data. */
export function expectOk<T = any>(r: Res, status = 200): T {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body?.success, true, `expected success:true, got ${JSON.stringify(r.body)}`);
  assert.ok('data' in r.body, `expected a data field, got ${JSON.stringify(r.body)}`);
  return r.body.data as T;
}

/**
 * Asserts the error envelope {success:false, error:"<sentence>"} with the given status; `mentions`
 * (a string or pattern) must appear in the sentence, e.g. the field a 400 is about.
 */
export function expectError(r: Res, status: number, ...mentions: Array<string | RegExp>): string {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  assert.equal(typeof r.body, 'object', `expected a JSON body, got ${JSON.stringify(r.body)}`);
  assert.equal(r.body.success, false, `expected success:false, got ${JSON.stringify(r.body)}`);
  const error = r.body.error;
  assert.equal(typeof error, 'string', `expected an error sentence, got ${JSON.stringify(r.body)}`);
  assert.match(error, /^\S.{8,}[.!?]$/s, `the error should be a sentence: ${JSON.stringify(error)}`);
  for (const m of mentions) {
    if (typeof m === 'string') assert.ok(error.includes(m), `error ${JSON.stringify(error)} should mention ${JSON.stringify(m)}`);
    else assert.match(error, m);
  }
  return error;
}

/** A loopback TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', resolve);
  });
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** True when something accepts TCP connections on host:port. */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** True when this machine can use `address` as a local address (Linux routes all of 127/8). */
export async function canBind(address: string): Promise<boolean> {
  const srv = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(0, address, resolve);
    });
    return true;
  } catch {
    return false;
  } finally {
    if (srv.listening) await new Promise((r) => srv.close(r));
  }
}

/**
 * One HTTP request sent from a chosen loopback source address (e.g. 127.0.0.7), so a test can act
 * as a different client machine. Returns status, headers and the parsed JSON body.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  opts: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(
      url,
      {
        method: opts.method ?? 'GET',
        localAddress,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.once('error', reject);
    req.end(payload);
  });
}

/** Creates a fractal as a global admin and returns it. */
export async function createFractal(admin: Client, name: string): Promise<{ id: string; name: string }> {
  return expectOk(await admin.post('/api/v1/fractals', { name, description: `${name} for tests` }), 201);
}

/** Grants a user (by name) or a group a role on a fractal or prism and returns the permission. */
export async function grant(
  by: Client,
  scope: 'fractal' | 'prism',
  scopeId: string,
  to: { username: string } | { group_id: string },
  role: 'viewer' | 'analyst' | 'admin',
): Promise<{ id: string; role: string }> {
  return expectOk(await by.post(`/api/v1/${scope}s/${scopeId}/permissions`, { ...to, role }), 201);
}

/** Ids of the items of a list response. */
export function idsOf(r: Res): string[] {
  return expectOk<Array<{ id: string }>>(r).map((x) => x.id);
}

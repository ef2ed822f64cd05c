// The browser side, locked down for every route: a page of another origin (another port of the
// same host included, which SameSite=Lax treats as the same site and sends the cookie to) cannot
// change anything with a signed-in user's cookie; every response carries the security headers; the
// session cookie is Secure when the request came over https (SVC_TRUST_PROXY, SVC_SECURE_COOKIE).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sessionCookieOptions } from '../../service/src/auth/sessions.ts';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createApiKey, createFractal, expectError, expectOk } from '../support/api.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

let a: TestAppliance;
let admin: Client;
let dict: { id: string };
let fractal: { id: string };

before(async () => {
  // Behind a proxy: X-Forwarded-* are believed (the default-configured service below ignores them).
  a = await startTestAppliance({ SVC_TRUST_PROXY: 'true', SVC_BASE_URL: 'https://logs.example.org' });
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  fractal = await createFractal(admin, 'csrf');
  dict = expectOk(await admin.post('/api/v1/dictionaries', { name: 'blocklist', columns: ['ip', 'note'], fractal_id: fractal.id }), 201);
  expectOk(await admin.post(`/api/v1/dictionaries/${dict.id}/import`, 'ip,note\n10.0.0.1,keep me\n', { 'content-type': 'text/csv' }));
});
after(() => a?.dispose());

const rows = async () => expectOk<Array<Record<string, string>>>(await admin.get(`/api/v1/dictionaries/${dict.id}/rows`));
/** A page on another port of the same host: what Chromium sends with a cross-origin, same-site fetch. */
const otherPort = () => ({ origin: `http://127.0.0.1:${a.port + 1}`, 'sec-fetch-site': 'same-site' });

describe('cross-site requests with the session cookie', () => {
  test("a text/plain POST from another port cannot replace a dictionary's rows", async () => {
    const attack = 'ip,note\n6.6.6.6,planted\n';
    expectError(await admin.post(`/api/v1/dictionaries/${dict.id}/import?replace=true`, attack, { 'content-type': 'text/plain', ...otherPort() }), 403, /another site/);
    // Older browsers send only Origin, or neither header.
    expectError(await admin.post(`/api/v1/dictionaries/${dict.id}/import?replace=true`, attack, { 'content-type': 'text/plain', origin: 'http://evil.example' }), 403, /origin http:\/\/evil\.example/);
    expectError(await admin.post(`/api/v1/dictionaries/${dict.id}/import?replace=true`, attack, { 'content-type': 'text/plain', origin: 'null' }), 403);
    expectError(await admin.post(`/api/v1/dictionaries/${dict.id}/import?replace=true`, attack, { 'content-type': 'text/plain' }), 415, /application\/json/);
    expectError(await admin.post(`/api/v1/dictionaries/${dict.id}/import?replace=true`, 'ip=6.6.6.6', { 'content-type': 'application/x-www-form-urlencoded' }), 415);
    assert.deepEqual((await rows()).map((r) => r.ip), ['10.0.0.1'], 'the rows are untouched');
  });

  test('every unsafe method is refused from another origin, whatever the route', async () => {
    for (const [method, url] of [
      ['POST', `/api/v1/fractals/${fractal.id}/select`],
      ['PUT', `/api/v1/fractals/${fractal.id}`],
      ['DELETE', `/api/v1/dictionaries/${dict.id}`],
      ['POST', '/api/v1/users'],
      ['POST', '/api/v1/auth/logout'],
    ] as const) {
      const r = await admin.req(method, url, method === 'DELETE' ? undefined : { name: 'x' }, otherPort());
      assert.equal(r.status, 403, `${method} ${url}: ${JSON.stringify(r.body)}`);
    }
    expectOk(await admin.get(`/api/v1/dictionaries/${dict.id}`));
    expectOk(await admin.get('/api/v1/auth/me'), 200);
  });

  test('signing in from another origin is refused too (no session planted by another site)', async () => {
    const c = new Client(a.url);
    expectError(await c.post('/api/v1/auth/login', { username: 'admin', password: ADMIN_PASSWORD }, { origin: 'http://evil.example' }), 403);
    assert.equal(c.cookie, '');
  });

  test("the appliance's own pages pass: same origin, the public address, a trusted proxy's host", async () => {
    const own = { 'content-type': 'text/csv', origin: a.url, 'sec-fetch-site': 'same-origin' };
    expectOk(await admin.post(`/api/v1/dictionaries/${dict.id}/import`, 'ip,note\n10.0.0.2,own page\n', own));
    expectOk(await admin.post(`/api/v1/dictionaries/${dict.id}/import`, 'ip,note\n10.0.0.3,public address\n', { 'content-type': 'text/csv', origin: 'https://logs.example.org' }));
    // A proxy that rewrites Host but says which host the browser asked for.
    const proxied = { 'content-type': 'text/csv', origin: 'https://siem.corp:8443', 'x-forwarded-host': 'siem.corp:8443', 'x-forwarded-proto': 'https' };
    expectOk(await admin.post(`/api/v1/dictionaries/${dict.id}/import`, 'ip,note\n10.0.0.4,proxied\n', proxied));
    expectError(await admin.post(`/api/v1/dictionaries/${dict.id}/import`, 'ip,note\n10.0.0.5,no\n', { ...proxied, 'x-forwarded-host': 'other.corp' }), 403);
    assert.deepEqual((await rows()).map((r) => r.ip).sort(), ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']);
  });

  test('a credential of its own (API key, ingest token) is no ambient authority: any origin may send it', async () => {
    const key = (await createApiKey(admin, `/api/v1/fractals/${fractal.id}`, { name: 'script' })).key as string;
    const r = await fetch(`${a.url}/api/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...otherPort() },
      body: JSON.stringify({ query: 'count()', fractal_id: fractal.id }),
    });
    assert.equal(r.status, 200);
    const token = expectOk<Array<{ token: string }>>(await admin.get(`/api/v1/fractals/${fractal.id}/ingest-tokens`))[0]!.token;
    const ing = await fetch(`${a.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', ...otherPort() }, body: '{"m":1}' });
    assert.equal(ing.status, 200);
  });
});

describe('security headers', () => {
  test('the UI, JSON answers, errors and the query stream all carry them', async () => {
    const answers = [
      await fetch(`${a.url}/`, { headers: { accept: 'text/html' } }),
      await fetch(`${a.url}/api/v1/health`),
      await fetch(`${a.url}/api/v1/no-such-route`),
      await fetch(`${a.url}/api/v1/query/stream`, {
        method: 'POST',
        headers: { cookie: admin.cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '*', fractal_id: fractal.id }),
      }),
    ];
    for (const r of answers) {
      await r.arrayBuffer();
      const csp = r.headers.get('content-security-policy') ?? '';
      assert.match(csp, /frame-ancestors 'none'/, r.url);
      assert.match(csp, /script-src 'self'(;|$)/, r.url);
      assert.match(csp, /object-src 'none'/, r.url);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff', r.url);
      assert.equal(r.headers.get('x-frame-options'), 'DENY', r.url);
      assert.equal(r.headers.get('referrer-policy'), 'same-origin', r.url);
    }
    assert.match(answers[3]!.headers.get('content-type') ?? '', /text\/event-stream/);
  });
});

describe('the session cookie', () => {
  const setCookie = async (headers: Record<string, string> = {}) => {
    const r = await new Client(a.url).post('/api/v1/auth/login', { username: 'admin', password: ADMIN_PASSWORD }, headers);
    assert.equal(r.status, 200);
    return r.headers.get('set-cookie') ?? '';
  };

  test('HttpOnly and SameSite=Lax; Secure when a trusted proxy says the request came over https', async () => {
    const plain = await setCookie();
    assert.match(plain, /HttpOnly/i);
    assert.match(plain, /SameSite=Lax/i);
    assert.doesNotMatch(plain, /Secure/i);
    assert.match(await setCookie({ 'x-forwarded-proto': 'https' }), /;\s*Secure/i);
  });

  test('SVC_SECURE_COOKIE: true always, false never, auto by the scheme', () => {
    assert.equal(sessionCookieOptions({ secureCookie: 'always' }, { protocol: 'http' }).secure, true);
    assert.equal(sessionCookieOptions({ secureCookie: 'never' }, { protocol: 'https' }).secure, false);
    assert.equal(sessionCookieOptions({ secureCookie: 'auto' }, { protocol: 'https' }).secure, true);
    assert.equal(sessionCookieOptions({ secureCookie: 'auto' }, { protocol: 'http' }).secure, false);
  });

  test('without SVC_TRUST_PROXY a forged X-Forwarded-Host is ignored; SVC_SECURE_COOKIE=true sets Secure on plain http', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-cookie-'));
    let svc: ServiceProcess | undefined;
    try {
      svc = await startServiceProcess({ dataDir: dir, env: { SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_SECURE_COOKIE: 'true' } });
      const c = new Client(svc.base);
      const login = await c.post('/api/v1/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
      assert.match(login.headers.get('set-cookie') ?? '', /;\s*Secure/i);
      // The forged host does not make another origin the appliance's own.
      const forged = await c.post('/api/v1/auth/logout', {}, { origin: 'http://evil.example', 'x-forwarded-host': 'evil.example' });
      assert.equal(forged.status, 403);
    } finally {
      await svc?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

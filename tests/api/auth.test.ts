// Sign-in, sessions and the credential requirement, over real HTTP against a real appliance.
// The login rate limit is per client address: those tests send from their own loopback
// addresses (127.0.0.x) so they neither disturb nor depend on the other tests.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, passwordOf, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { expectError, expectOk, requestFrom } from '../support/api.ts';

let app: TestAppliance;
let admin: Client;
let anon: Client;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  await makeUser(admin, 'paula');
});
after(async () => {
  await app?.dispose();
});

async function rawLogin(body: unknown) {
  const r = await fetch(`${app.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: r.status, cookies: r.headers.getSetCookie(), headers: r.headers, body: (await r.json()) as any };
}
const cookieOf = (setCookie: string) => setCookie.split(';')[0]!;
const withCookie = (cookie: string) => {
  const c = new Client(app.url);
  c.cookie = cookie;
  return c;
};

describe('signing in', () => {
  test('a correct login answers with the user and sets an HttpOnly, SameSite=Lax session cookie', async () => {
    const r = await rawLogin({ username: 'admin', password: ADMIN_PASSWORD });
    assert.equal(r.status, 200);
    assert.equal(r.body.success, true);
    assert.equal(r.body.data.username, 'admin');
    assert.equal(r.body.data.is_admin, true);
    assert.deepEqual([r.body.data.selected?.type, r.body.data.selected?.name], ['fractal', 'default'], 'new sessions work in the default fractal');
    assert.ok(!/password|scrypt/.test(JSON.stringify(r.body)), 'no password material in the answer');

    assert.equal(r.cookies.length, 1);
    const cookie = r.cookies[0]!;
    const attrs = cookie.split(';').map((s) => s.trim().toLowerCase());
    assert.match(cookie, /^svc_session=[^;]{20,}/, 'a long random session id');
    assert.ok(attrs.includes('httponly'), `HttpOnly missing: ${cookie}`);
    assert.ok(attrs.includes('samesite=lax'), `SameSite=Lax missing: ${cookie}`);
    assert.ok(attrs.includes('path=/'), `Path=/ missing: ${cookie}`);
    assert.ok(!attrs.includes('secure'), 'over plain http the cookie must not be Secure, or browsers would drop it');
    assert.ok(!cookie.includes(ADMIN_PASSWORD));

    // The cookie works on its own.
    expectOk(await withCookie(cookieOf(cookie)).get('/api/v1/fractals'));
  });

  test('each sign-in gets its own session id', async () => {
    const a = await rawLogin({ username: 'paula', password: passwordOf('paula') });
    const b = await rawLogin({ username: 'paula', password: passwordOf('paula') });
    assert.notEqual(cookieOf(a.cookies[0]!), cookieOf(b.cookies[0]!));
  });

  test('a wrong password is a 401 with a sentence and no cookie', async () => {
    const r = await rawLogin({ username: 'admin', password: 'not-the-password' });
    assert.equal(r.status, 401);
    assert.equal(r.body.success, false);
    assert.match(r.body.error, /^[A-Z].{8,}\.$/);
    assert.deepEqual(r.cookies, []);
  });

  test('an unknown user is a 401 with the same sentence as a wrong password', async () => {
    const wrong = await rawLogin({ username: 'paula', password: 'not-her-password' });
    const unknown = await rawLogin({ username: 'nobody-by-that-name', password: 'whatever-password' });
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.success, false);
    assert.equal(unknown.body.error, wrong.body.error, 'the answer does not reveal which user names exist');
    assert.deepEqual(unknown.cookies, []);
  });

  test('a missing or mistyped field is a 400 that names it', async () => {
    const c = new Client(app.url);
    expectError(await c.post('/api/v1/auth/login', { password: ADMIN_PASSWORD }), 400, '"username"');
    expectError(await c.post('/api/v1/auth/login', { username: 'admin' }), 400, '"password"');
    expectError(await c.post('/api/v1/auth/login', { username: 'admin', password: '' }), 400, '"password"');
    expectError(await c.post('/api/v1/auth/login', { username: '', password: ADMIN_PASSWORD }), 400, '"username"');
    expectError(await c.post('/api/v1/auth/login', { username: 'admin', password: 123 }), 400, '"password"');
    expectError(await c.post('/api/v1/auth/login', { username: ['admin'], password: ADMIN_PASSWORD }), 400, '"username"');
    expectError(await c.post('/api/v1/auth/login', '{"username":'), 400, 'JSON');
    assert.equal(c.cookie, '', 'none of these signed in');
  });
});

describe('sessions', () => {
  test('/auth/me answers 401 without a session and the user with one', async () => {
    expectError(await anon.get('/api/v1/auth/me'), 401);
    expectError(await withCookie('svc_session=made-up-session-id').get('/api/v1/auth/me'), 401);

    const paula = await signIn(app.url, 'paula', passwordOf('paula'));
    const me = expectOk<{ username: string; is_admin: boolean; enabled: boolean; selected: unknown }>(await paula.get('/api/v1/auth/me'));
    assert.equal(me.username, 'paula');
    assert.equal(me.is_admin, false);
    assert.ok('selected' in me);
    assert.ok(!/password|scrypt/.test(JSON.stringify(me)));

    const adminMe = expectOk<{ username: string; is_admin: boolean; selected: { type: string; name: string } }>(await admin.get('/api/v1/auth/me'));
    assert.equal(adminMe.username, 'admin');
    assert.equal(adminMe.is_admin, true);
    assert.deepEqual([adminMe.selected.type, adminMe.selected.name], ['fractal', 'default']);
  });

  test('logout ends the session on the server: the old cookie is refused afterwards', async () => {
    const c = await signIn(app.url, 'paula', passwordOf('paula'));
    const other = await signIn(app.url, 'paula', passwordOf('paula'));
    const oldCookie = c.cookie;
    expectOk(await c.get('/api/v1/auth/me'));

    const out = await c.post('/api/v1/auth/logout');
    expectOk(out);
    const cleared = out.headers.get('set-cookie') ?? '';
    assert.match(cleared, /^svc_session=;/, 'the browser is told to drop the cookie');

    // Replaying the old cookie, as a client that ignored the clearing would, gets 401.
    const replay = withCookie(oldCookie);
    expectError(await replay.get('/api/v1/auth/me'), 401);
    expectError(await replay.get('/api/v1/fractals'), 401);
    expectError(await replay.post('/api/v1/auth/logout'), 401);
    // Only that session ended; the same user's other session lives on.
    expectOk(await other.get('/api/v1/auth/me'));
  });

  test('logout without a session is a 401', async () => {
    expectError(await anon.post('/api/v1/auth/logout'), 401);
  });
});

describe('what needs credentials', () => {
  test('health and login need none', async () => {
    const h = await anon.get('/api/v1/health');
    assert.equal(h.status, 200);
    assert.equal(h.body.status, 'healthy');
    expectOk(await new Client(app.url).post('/api/v1/auth/login', { username: 'paula', password: passwordOf('paula') }));
  });

  test('every other API route answers 401 without a session, in the envelope', async () => {
    const { id: defaultId } = expectOk<Array<{ id: string; name: string }>>(await admin.get('/api/v1/fractals')).find((f) => f.name === 'default')!;
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/fractals'],
      ['POST', '/api/v1/fractals', { name: 'anon-fractal' }],
      ['GET', `/api/v1/fractals/${defaultId}`],
      ['GET', `/api/v1/fractals/${defaultId}/ingest-tokens`],
      ['GET', '/api/v1/status'],
      ['GET', '/api/v1/version'],
      ['GET', '/api/v1/health/clickhouse'],
      ['GET', '/api/v1/system/pressure'],
      ['GET', '/api/v1/settings'],
      ['PUT', '/api/v1/settings', { shared_links_enabled: true }],
      ['GET', '/api/v1/auth/me'],
      ['GET', '/api/v1/users'],
      ['GET', '/api/v1/groups'],
      ['GET', '/api/v1/prisms'],
    ];
    for (const [method, url, body] of calls) {
      const r = await anon.req(method, url, body);
      assert.equal(r.status, 401, `${method} ${url} answered ${r.status}`);
      expectError(r, 401);
    }
    // Nothing happened.
    assert.ok(!expectOk<Array<{ name: string }>>(await admin.get('/api/v1/fractals')).some((f) => f.name === 'anon-fractal'));
    assert.equal(expectOk<{ shared_links_enabled: boolean }>(await admin.get('/api/v1/settings')).shared_links_enabled, false);
  });

  test('a made-up API key or an ingest token is no way in (401)', async () => {
    const fake = 'svc_' + '0123456789abcdef'.repeat(2);
    for (const headers of [{ authorization: `Bearer ${fake}` }, { 'x-api-key': fake }] as Array<Record<string, string>>) {
      expectError(await anon.get('/api/v1/fractals', headers), 401);
      expectError(await anon.get('/api/v1/status', headers), 401);
    }
    const tokens = expectOk<Array<{ token: string }>>(await admin.get(
      `/api/v1/fractals/${expectOk<Array<{ id: string; name: string }>>(await admin.get('/api/v1/fractals')).find((f) => f.name === 'default')!.id}/ingest-tokens`,
    ));
    const ingest = tokens[0]!.token;
    assert.match(ingest, /^svc_ingest_[0-9a-f]{32}$/);
    expectError(await anon.get('/api/v1/fractals', { authorization: `Bearer ${ingest}` }), 401, 'ingest');
  });
});

// Linux answers on all of 127.0.0.0/8, so each test signs in from an address of its own.
describe('login rate limit', () => {
  const loginFrom = (address: string, password: string, headers?: Record<string, string>) =>
    requestFrom(address, `${app.url}/api/v1/auth/login`, { method: 'POST', body: { username: 'paula', password }, headers });

  test('after 10 failures a client gets 429 with Retry-After, even with the right password; other clients are unaffected', async () => {
    const client = '127.0.0.21';
    for (let i = 1; i <= 10; i++) {
      const r = await loginFrom(client, `wrong-password-${i}`);
      assert.equal(r.status, 401, `failure ${i} is a plain 401`);
    }
    const limited = await loginFrom(client, 'wrong-password-11');
    assert.equal(limited.status, 429);
    assert.equal(limited.body.success, false);
    assert.match(limited.body.error, /^[A-Z].{8,}\.$/);
    const retry = Number(limited.headers['retry-after']);
    assert.ok(Number.isInteger(retry) && retry > 0 && retry <= 300, `Retry-After in seconds, got ${limited.headers['retry-after']}`);
    assert.ok(limited.body.error.includes(String(retry)), 'the sentence says how long to wait');

    const right = await loginFrom(client, passwordOf('paula'));
    assert.equal(right.status, 429, 'a locked-out client cannot sign in, not even with the right password');
    assert.equal(right.headers['set-cookie'], undefined);
    // A forwarded-for header from the same address does not get round the limit.
    const spoofed = await loginFrom(client, passwordOf('paula'), { 'x-forwarded-for': '10.9.8.7' });
    assert.equal(spoofed.status, 429);

    // Another client address signs in normally.
    const elsewhere = await loginFrom('127.0.0.22', passwordOf('paula'));
    assert.equal(elsewhere.status, 200);
    assert.match(String(elsewhere.headers['set-cookie']), /svc_session=/);
  });

  test('a successful sign-in clears the failure count', async () => {
    const client = '127.0.0.23';
    for (let i = 1; i <= 9; i++) assert.equal((await loginFrom(client, `wrong-${i}-password`)).status, 401);
    assert.equal((await loginFrom(client, passwordOf('paula'))).status, 200);
    // Were the earlier nine still counted, the second of these would already be refused.
    for (let i = 1; i <= 10; i++) assert.equal((await loginFrom(client, `wrong-again-${i}`)).status, 401, `failure ${i} after success`);
    assert.equal((await loginFrom(client, 'one-too-many')).status, 429);
  });

  test('parallel guesses are counted before the password is checked: no more than 10 are tried', async () => {
    const client = '127.0.0.25';
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => loginFrom(client, `parallel-wrong-${i}`)));
    const tried = answers.filter((r) => r.status === 401).length;
    const refused = answers.filter((r) => r.status === 429).length;
    assert.equal(tried + refused, 25);
    assert.ok(tried <= 10, `${tried} passwords were checked`);
    assert.ok(refused >= 15);
  });

  test("the count is per user name: another account's success neither clears it nor is blocked by it", async () => {
    const client = '127.0.0.26';
    for (let i = 1; i <= 10; i++) assert.equal((await loginFrom(client, `guess-${i}`)).status, 401);
    assert.equal((await loginFrom(client, passwordOf('paula'))).status, 429, 'paula is locked out at this address');
    const other = await requestFrom(client, `${app.url}/api/v1/auth/login`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(other.status, 200, "another person at the same address signs in");
    assert.equal((await loginFrom(client, passwordOf('paula'))).status, 429, "the admin's success did not clear paula's count");
  });

  test('many user names guessed from one address hit the address limit', async () => {
    const client = '127.0.0.27';
    const spray = (name: string) => requestFrom(client, `${app.url}/api/v1/auth/login`, { method: 'POST', body: { username: name, password: 'Winter2024!' } });
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => spray(`sprayed-${i}`)));
    assert.equal(answers.filter((r) => r.status === 401).length, 50);
    assert.equal((await spray('sprayed-last')).status, 429);
  });

  test('signed-in sessions are not affected by a locked-out address', async () => {
    const client = '127.0.0.24';
    const session = await requestFrom(client, `${app.url}/api/v1/auth/login`, {
      method: 'POST',
      body: { username: 'admin', password: ADMIN_PASSWORD },
    });
    assert.equal(session.status, 200);
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    for (let i = 0; i < 11; i++) await loginFrom(client, `bad-${i}-password`);
    assert.equal((await loginFrom(client, 'bad-final-password')).status, 429);
    const me = await requestFrom(client, `${app.url}/api/v1/auth/me`, { headers: { cookie } });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.username, 'admin');
  });
});

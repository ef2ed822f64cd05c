// User administration over real HTTP against a real appliance, with the stored password hashes
// read back from the real SQLite file.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { ADMIN_PASSWORD, Client, makeUser, passwordOf, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { expectError, expectOk, UUID_RE } from '../support/api.ts';

interface User {
  id: string;
  username: string;
  is_admin: boolean;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

let app: TestAppliance;
let admin: Client;
let anon: Client;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
});
after(async () => {
  await app?.dispose();
});

async function login(username: string, password: string) {
  const c = new Client(app.url);
  const r = await c.post('/api/v1/auth/login', { username, password });
  return { c, r };
}
const usernames = async () => expectOk<User[]>(await admin.get('/api/v1/users')).map((u) => u.username);

/** Reads the stored password hash straight from the appliance's SQLite file. */
function storedHash(username: string): string {
  const db = new Database(path.join(app.dataDir, 'metadata.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT password_hash FROM users WHERE username = ?').get(username) as { password_hash: string } | undefined;
    assert.ok(row, `user ${username} is stored`);
    return row.password_hash;
  } finally {
    db.close();
  }
}

describe('creating and reading users', () => {
  test('an admin creates a user who can then sign in', async () => {
    const r = await admin.post('/api/v1/users', { username: 'dave', password: 'dave-secret-pw' });
    const u = expectOk<User>(r, 201);
    assert.match(u.id, UUID_RE);
    assert.equal(u.username, 'dave');
    assert.equal(u.is_admin, false);
    assert.equal(u.enabled, true);
    assert.ok(!Number.isNaN(Date.parse(u.created_at)) && u.created_at.endsWith('Z'));
    assert.ok(!JSON.stringify(r.body).includes('dave-secret-pw'), 'the password is never echoed');
    assert.ok(!JSON.stringify(r.body).includes('scrypt'), 'nor its hash');

    const { r: signin } = await login('dave', 'dave-secret-pw');
    assert.equal(signin.status, 200);
    assert.equal(signin.body.data.username, 'dave');
    assert.equal(signin.body.data.is_admin, false);
  });

  test('GET lists every user and GET one returns a single user, never with a password hash', async () => {
    await makeUser(admin, 'ivy');
    const list = await admin.get('/api/v1/users');
    const users = expectOk<User[]>(list);
    assert.ok(users.some((u) => u.username === 'admin' && u.is_admin && u.enabled));
    const ivy = users.find((u) => u.username === 'ivy');
    assert.ok(ivy && !ivy.is_admin && ivy.enabled);
    assert.ok(!/password|scrypt/.test(JSON.stringify(list.body)), 'no password material in the list');

    const one = await admin.get('/api/v1/users/ivy');
    assert.deepEqual(expectOk(one), ivy);
    assert.ok(!/password|scrypt/.test(JSON.stringify(one.body)));
    expectError(await admin.get('/api/v1/users/no-such-user'), 404, 'no-such-user');
  });

  test('is_admin and enabled are honoured at creation', async () => {
    const boss = expectOk<User>(await admin.post('/api/v1/users', { username: 'boss', password: 'boss-password', is_admin: true }), 201);
    assert.equal(boss.is_admin, true);
    const bossClient = await signIn(app.url, 'boss', 'boss-password');
    expectOk(await bossClient.get('/api/v1/users'));

    const dormant = expectOk<User>(await admin.post('/api/v1/users', { username: 'dormant', password: 'dormant-password', enabled: false }), 201);
    assert.equal(dormant.enabled, false);
    const { r } = await login('dormant', 'dormant-password');
    expectError(r, 401);
    assert.equal(r.headers.get('set-cookie'), null, 'no session for a disabled account');
  });

  test('a password shorter than 8 characters is a 400 naming "password", and no user is created', async () => {
    expectError(await admin.post('/api/v1/users', { username: 'shorty', password: '1234567' }), 400, '"password"', '8');
    expectError(await admin.post('/api/v1/users', { username: 'shorty' }), 400, '"password"');
    expectError(await admin.post('/api/v1/users', { username: 'shorty', password: '' }), 400, '"password"');
    expectError(await admin.post('/api/v1/users', { username: 'shorty', password: 12345678 }), 400, '"password"');
    assert.ok(!(await usernames()).includes('shorty'));
    expectError(await admin.get('/api/v1/users/shorty'), 404);
    // Exactly 8 is enough.
    expectOk(await admin.post('/api/v1/users', { username: 'shorty', password: '12345678' }), 201);
    await signIn(app.url, 'shorty', '12345678');
  });

  test('other bad fields are a 400 naming the field', async () => {
    expectError(await admin.post('/api/v1/users', { password: 'long-enough' }), 400, '"username"');
    expectError(await admin.post('/api/v1/users', { username: '', password: 'long-enough' }), 400, '"username"');
    expectError(await admin.post('/api/v1/users', { username: 'has space', password: 'long-enough' }), 400, '"username"');
    expectError(await admin.post('/api/v1/users', { username: 'x'.repeat(65), password: 'long-enough' }), 400, '"username"');
    expectError(await admin.post('/api/v1/users', { username: 'typed', password: 'long-enough', is_admin: 'yes' }), 400, '"is_admin"');
    expectError(await admin.post('/api/v1/users', { username: 'typed', password: 'long-enough', enabled: 1 }), 400, '"enabled"');
    expectError(await admin.post('/api/v1/users', '[1,2]'), 400);
    const names = await usernames();
    assert.ok(!names.includes('typed') && !names.includes('has space'));
  });

  test('a duplicate user name is a 409, whatever its case, and the first user keeps their password', async () => {
    await makeUser(admin, 'erik');
    expectError(await admin.post('/api/v1/users', { username: 'erik', password: 'another-password' }), 409, 'erik');
    expectError(await admin.post('/api/v1/users', { username: 'ERIK', password: 'another-password' }), 409, 'ERIK');
    expectError(await admin.post('/api/v1/users', { username: 'Erik', password: 'another-password', is_admin: true }), 409);
    assert.equal((await usernames()).filter((n) => n.toLowerCase() === 'erik').length, 1);
    await signIn(app.url, 'erik', passwordOf('erik'));
    expectError((await login('erik', 'another-password')).r, 401);
    assert.equal(expectOk<User>(await admin.get('/api/v1/users/erik')).is_admin, false);
  });
});

describe('changing users', () => {
  test('PUT grants and removes the admin flag, effective on the running session', async () => {
    const fay = await makeUser(admin, 'fay');
    expectError(await fay.get('/api/v1/users'), 403);
    const up = expectOk<User>(await admin.put('/api/v1/users/fay', { is_admin: true }));
    assert.equal(up.is_admin, true);
    assert.equal(up.enabled, true, 'enabled kept');
    expectOk(await fay.get('/api/v1/users'));
    expectOk(await admin.put('/api/v1/users/fay', { is_admin: false }));
    expectError(await fay.get('/api/v1/users'), 403);
  });

  test('PUT with bad fields is a 400 naming the field and changes nothing', async () => {
    const gil = await makeUser(admin, 'gil');
    expectError(await admin.put('/api/v1/users/gil', { password: 'short' }), 400, '"password"');
    expectError(await admin.put('/api/v1/users/gil', { is_admin: 'true' }), 400, '"is_admin"');
    expectError(await admin.put('/api/v1/users/gil', { enabled: 'no' }), 400, '"enabled"');
    expectError(await admin.put('/api/v1/users/gil', { password: 99999999 }), 400, '"password"');
    const u = expectOk<User>(await admin.get('/api/v1/users/gil'));
    assert.deepEqual([u.is_admin, u.enabled], [false, true]);
    expectOk(await gil.get('/api/v1/auth/me')); // the session is still alive
    await signIn(app.url, 'gil', passwordOf('gil'));
    expectError(await admin.put('/api/v1/users/nobody-here', { enabled: false }), 404, 'nobody-here');
  });

  test('disabling a user ends their sessions at once and they cannot sign in until re-enabled', async () => {
    const hal = await makeUser(admin, 'hal');
    const halPhone = await signIn(app.url, 'hal', passwordOf('hal'));
    expectOk(await hal.get('/api/v1/auth/me'));

    const off = expectOk<User>(await admin.put('/api/v1/users/hal', { enabled: false }));
    assert.equal(off.enabled, false);
    expectError(await hal.get('/api/v1/auth/me'), 401);
    expectError(await halPhone.get('/api/v1/fractals'), 401);
    const { r } = await login('hal', passwordOf('hal'));
    expectError(r, 401, 'disabled');

    expectOk(await admin.put('/api/v1/users/hal', { enabled: true }));
    expectError(await hal.get('/api/v1/auth/me'), 401); // the old session stays ended
    const fresh = await signIn(app.url, 'hal', passwordOf('hal'));
    expectOk(await fresh.get('/api/v1/auth/me'));
  });

  test('changing a password ends the user\'s sessions; only the new password signs in', async () => {
    const ida = await makeUser(admin, 'ida');
    const before = storedHash('ida');
    expectOk(await admin.put('/api/v1/users/ida', { password: 'brand-new-password' }));
    expectError(await ida.get('/api/v1/auth/me'), 401);
    expectError((await login('ida', passwordOf('ida'))).r, 401, 'Wrong');
    const fresh = await signIn(app.url, 'ida', 'brand-new-password');
    expectOk(await fresh.get('/api/v1/auth/me'));
    assert.notEqual(storedHash('ida'), before);
  });

  test('changing only the admin flag does not end the user\'s sessions', async () => {
    const jo = await makeUser(admin, 'jo');
    expectOk(await admin.put('/api/v1/users/jo', { is_admin: true }));
    expectOk(await jo.get('/api/v1/auth/me'));
    expectOk(await admin.put('/api/v1/users/jo', { is_admin: false }));
    expectOk(await jo.get('/api/v1/auth/me'));
  });

  test('the last enabled administrator cannot be demoted or disabled (400)', async () => {
    // Every other administrator is demoted first, so "admin" is the only one left.
    for (const u of expectOk<User[]>(await admin.get('/api/v1/users'))) {
      if (u.is_admin && u.username !== 'admin') expectOk(await admin.put(`/api/v1/users/${u.username}`, { is_admin: false }));
    }
    expectError(await admin.put('/api/v1/users/admin', { is_admin: false }), 400, 'last');
    expectError(await admin.put('/api/v1/users/admin', { enabled: false }), 400, 'last');
    const me = expectOk<User>(await admin.get('/api/v1/users/admin'));
    assert.deepEqual([me.is_admin, me.enabled], [true, true]);
    expectOk(await admin.get('/api/v1/users')); // still an admin with a live session

    // With a second administrator the first may step down.
    await makeUser(admin, 'deputy', { isAdmin: true });
    const deputy = await signIn(app.url, 'deputy', passwordOf('deputy'));
    expectOk(await deputy.put('/api/v1/users/deputy', { is_admin: false }));
    expectError(await deputy.get('/api/v1/users'), 403);
  });
});

describe('deleting users', () => {
  test('DELETE removes the user, ends their sessions and frees the name', async () => {
    const kim = await makeUser(admin, 'kim');
    assert.deepEqual(expectOk(await admin.del('/api/v1/users/kim')), { deleted: true });
    expectError(await admin.get('/api/v1/users/kim'), 404);
    assert.ok(!(await usernames()).includes('kim'));
    expectError(await kim.get('/api/v1/auth/me'), 401);
    expectError((await login('kim', passwordOf('kim'))).r, 401);
    expectError(await admin.del('/api/v1/users/kim'), 404, 'kim');
    // The name can be used again, by a new account.
    expectOk(await admin.post('/api/v1/users', { username: 'kim', password: 'second-kim-pw' }), 201);
    await signIn(app.url, 'kim', 'second-kim-pw');
  });

  test('nobody can delete their own account, so the last administrator stays (400)', async () => {
    expectError(await admin.del('/api/v1/users/admin'), 400, 'own');
    expectOk(await admin.get('/api/v1/users/admin'));
    expectOk(await admin.get('/api/v1/auth/me'));

    const lead = await makeUser(admin, 'lead', { isAdmin: true });
    expectError(await lead.del('/api/v1/users/lead'), 400);
    expectOk(await lead.get('/api/v1/users/lead'));
    // Another administrator can remove one that is not the last.
    await makeUser(admin, 'temp-admin', { isAdmin: true });
    expectOk(await lead.del('/api/v1/users/temp-admin'));
    expectError(await admin.get('/api/v1/users/temp-admin'), 404);
  });
});

describe('who may manage users', () => {
  test('a user without the admin flag gets 403 on every user route and changes nothing', async () => {
    const mo = await makeUser(admin, 'mo');
    await makeUser(admin, 'target');
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/users'],
      ['POST', '/api/v1/users', { username: 'mo-made', password: 'mo-made-password' }],
      ['GET', '/api/v1/users/target'],
      ['PUT', '/api/v1/users/target', { enabled: false }],
      ['PUT', '/api/v1/users/mo', { is_admin: true }],
      ['PUT', '/api/v1/users/mo', { password: 'mo-changes-own' }],
      ['DELETE', '/api/v1/users/target'],
    ];
    for (const [method, url, body] of calls) {
      const r = await mo.req(method, url, body);
      assert.equal(r.status, 403, `${method} ${url}`);
      expectError(r, 403, 'administrator');
    }
    const target = expectOk<User>(await admin.get('/api/v1/users/target'));
    assert.equal(target.enabled, true);
    assert.equal(expectOk<User>(await admin.get('/api/v1/users/mo')).is_admin, false);
    assert.ok(!(await usernames()).includes('mo-made'));
    await signIn(app.url, 'mo', passwordOf('mo'));
  });

  test('signed-out callers get 401 on every user route', async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/users'],
      ['POST', '/api/v1/users', { username: 'anon-made', password: 'anon-made-password', is_admin: true }],
      ['GET', '/api/v1/users/admin'],
      ['PUT', '/api/v1/users/admin', { password: 'taken-over-pw' }],
      ['DELETE', '/api/v1/users/admin'],
    ];
    for (const [method, url, body] of calls) {
      const r = await anon.req(method, url, body);
      assert.equal(r.status, 401, `${method} ${url}`);
      expectError(r, 401);
    }
    assert.ok(!(await usernames()).includes('anon-made'));
    await signIn(app.url, 'admin', ADMIN_PASSWORD);
  });
});

describe('stored passwords', () => {
  test('the hash in SQLite is scrypt, salted, and never the password', async () => {
    const secret = 'Tr0ub4dor&3-unique-marker';
    expectOk(await admin.post('/api/v1/users', { username: 'nia', password: secret }), 201);
    expectOk(await admin.post('/api/v1/users', { username: 'ola', password: secret }), 201);
    const nia = storedHash('nia');
    const ola = storedHash('ola');
    for (const h of [nia, ola, storedHash('admin')]) {
      assert.ok(h.startsWith('scrypt$'), `scrypt hash expected, got ${h.slice(0, 12)}…`);
      assert.ok(!h.includes(secret) && !h.includes(ADMIN_PASSWORD));
    }
    assert.notEqual(nia, ola, 'the same password gives different hashes (salted)');

    // Neither the SQLite file nor its write-ahead log holds the password in clear.
    for (const file of ['metadata.sqlite', 'metadata.sqlite-wal']) {
      const p = path.join(app.dataDir, file);
      if (!existsSync(p)) continue;
      const bytes = readFileSync(p);
      assert.equal(bytes.indexOf(secret), -1, `${file} holds the password in clear`);
      assert.equal(bytes.indexOf(ADMIN_PASSWORD), -1, `${file} holds the admin password in clear`);
    }

    // A changed password is stored as a new scrypt hash, too.
    expectOk(await admin.put('/api/v1/users/nia', { password: 'nia-second-password' }));
    const changed = storedHash('nia');
    assert.ok(changed.startsWith('scrypt$') && changed !== nia && !changed.includes('nia-second-password'));
  });
});

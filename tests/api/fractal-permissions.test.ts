// Roles on a fractal over real HTTP: the permission routes themselves, and what each role
// (none, viewer, analyst, fractal admin; directly or through a group) may do.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type Res, type TestAppliance } from '../support/appliance.ts';
import {
  createApiKey,
  createFractal,
  expectBadField,
  expectError,
  expectOk,
  grant,
  unknownId,
  UUID_RE,
} from '../support/api.ts';

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

async function makeGroup(name: string): Promise<any> {
  return expectOk(await admin.post('/api/v1/groups', { name }), 201);
}
const listedIds = async (c: Client) => expectOk<any[]>(await c.get('/api/v1/fractals')).map((f) => f.id);

describe('permission routes', () => {
  let f: any;
  let other: any;
  before(async () => {
    f = await createFractal(admin, 'perm-crud');
    other = await createFractal(admin, 'perm-crud-other');
    await makeUser(admin, 'crud-alice');
    await makeUser(admin, 'crud-bob');
  });

  test('a new fractal has no grants', async () => {
    assert.deepEqual(expectOk(await admin.get(`/api/v1/fractals/${f.id}/permissions`)), []);
  });

  test('grant to a user and to a group, list, change the role, revoke', async () => {
    const group = await makeGroup('crud-group');
    const u = expectOk(await admin.post(`/api/v1/fractals/${f.id}/permissions`, { username: 'crud-alice', role: 'viewer' }), [200, 201]);
    assert.match(u.id, UUID_RE);
    assert.equal(u.username, 'crud-alice');
    assert.equal(u.role, 'viewer');
    assert.equal(u.group_id, null);
    const g = expectOk(await admin.post(`/api/v1/fractals/${f.id}/permissions`, { group_id: group.id, role: 'analyst' }), [200, 201]);
    assert.equal(g.group_id, group.id);
    assert.equal(g.group_name, 'crud-group');
    assert.equal(g.role, 'analyst');
    assert.equal(g.user_id, null);

    const list = expectOk<any[]>(await admin.get(`/api/v1/fractals/${f.id}/permissions`));
    assert.equal(list.length, 2);
    assert.deepEqual(
      list.map((p) => [p.username ?? p.group_name, p.role]).sort(),
      [['crud-alice', 'viewer'], ['crud-group', 'analyst']],
    );
    // Another fractal's list is separate.
    assert.deepEqual(expectOk(await admin.get(`/api/v1/fractals/${other.id}/permissions`)), []);

    const changed = expectOk(await admin.put(`/api/v1/fractals/${f.id}/permissions/${u.id}`, { role: 'admin' }));
    assert.equal(changed.role, 'admin');
    assert.equal(changed.username, 'crud-alice');
    const after1 = expectOk<any[]>(await admin.get(`/api/v1/fractals/${f.id}/permissions`));
    assert.equal(after1.find((p) => p.id === u.id).role, 'admin');

    expectOk(await admin.del(`/api/v1/fractals/${f.id}/permissions/${u.id}`));
    expectOk(await admin.del(`/api/v1/fractals/${f.id}/permissions/${g.id}`));
    assert.deepEqual(expectOk(await admin.get(`/api/v1/fractals/${f.id}/permissions`)), []);
    expectError(await admin.del(`/api/v1/fractals/${f.id}/permissions/${u.id}`), 404);
    expectError(await admin.put(`/api/v1/fractals/${f.id}/permissions/${u.id}`, { role: 'viewer' }), 404);
  });

  test('a second grant to the same user or group is a conflict (409)', async () => {
    const group = await makeGroup('dup-group');
    const p = await grant(admin, f.id, { username: 'crud-bob' }, 'viewer');
    expectError(await admin.post(`/api/v1/fractals/${f.id}/permissions`, { username: 'crud-bob', role: 'admin' }), 409);
    expectError(await admin.post(`/api/v1/fractals/${f.id}/permissions`, { username: 'CRUD-BOB', role: 'admin' }), 409);
    const gp = await grant(admin, f.id, { group_id: group.id }, 'viewer');
    expectError(await admin.post(`/api/v1/fractals/${f.id}/permissions`, { group_id: group.id, role: 'analyst' }), 409);
    const list = expectOk<any[]>(await admin.get(`/api/v1/fractals/${f.id}/permissions`));
    assert.equal(list.find((x) => x.id === p.id).role, 'viewer', 'the conflict did not change the grant');
    assert.equal(list.filter((x) => x.username === 'crud-bob').length, 1);
    // The same user may hold a role on another fractal.
    await grant(admin, other.id, { username: 'crud-bob' }, 'admin');
    expectOk(await admin.del(`/api/v1/fractals/${f.id}/permissions/${p.id}`));
    expectOk(await admin.del(`/api/v1/fractals/${f.id}/permissions/${gp.id}`));
  });

  test('bad bodies and ids are refused with a sentence naming the field (400)', async () => {
    const base = `/api/v1/fractals/${f.id}/permissions`;
    expectBadField(await admin.post(base, { username: 'crud-alice' }), 'role');
    expectBadField(await admin.post(base, { username: 'crud-alice', role: 'owner' }), 'role');
    expectBadField(await admin.post(base, { username: 'crud-alice', role: 3 }), 'role');
    expectBadField(await admin.post(base, { username: 12, role: 'viewer' }), 'username');
    expectBadField(await admin.post(base, { group_id: 'not-a-uuid', role: 'viewer' }), 'group_id');
    expectError(await admin.post(base, { role: 'viewer' }), 400, /username.*group_id|group_id.*username/);
    expectError(await admin.post(base, { username: 'crud-alice', group_id: unknownId(), role: 'viewer' }), 400, /username.*group_id|group_id.*username/);
    expectBadField(await admin.post('/api/v1/fractals/bad-id/permissions', { username: 'crud-alice', role: 'viewer' }), 'id');
    expectBadField(await admin.get('/api/v1/fractals/bad-id/permissions'), 'id');

    const p = await grant(admin, f.id, { username: 'crud-alice' }, 'viewer');
    expectBadField(await admin.put(`${base}/${p.id}`, { role: 'superuser' }), 'role');
    expectBadField(await admin.put(`${base}/${p.id}`, {}), 'role');
    expectBadField(await admin.put(`${base}/not-a-uuid`, { role: 'viewer' }), 'permId');
    expectBadField(await admin.del(`${base}/not-a-uuid`), 'permId');
    assert.equal(expectOk<any[]>(await admin.get(base)).find((x) => x.id === p.id).role, 'viewer');
    expectOk(await admin.del(`${base}/${p.id}`));
    assert.deepEqual(expectOk(await admin.get(base)), [], 'no refused request created a grant');
  });

  test('unknown user, group, fractal or permission is 404; a permission of another fractal is 404 here', async () => {
    const base = `/api/v1/fractals/${f.id}/permissions`;
    expectError(await admin.post(base, { username: 'nobody-by-that-name', role: 'viewer' }), 404, /nobody-by-that-name/);
    expectError(await admin.post(base, { group_id: unknownId(), role: 'viewer' }), 404);
    expectError(await admin.get(`/api/v1/fractals/${unknownId()}/permissions`), 404);
    expectError(await admin.post(`/api/v1/fractals/${unknownId()}/permissions`, { username: 'crud-alice', role: 'viewer' }), 404);
    expectError(await admin.put(`${base}/${unknownId()}`, { role: 'viewer' }), 404);
    expectError(await admin.del(`${base}/${unknownId()}`), 404);

    const elsewhere = await grant(admin, other.id, { username: 'crud-alice' }, 'viewer');
    expectError(await admin.put(`${base}/${elsewhere.id}`, { role: 'admin' }), 404);
    expectError(await admin.del(`${base}/${elsewhere.id}`), 404);
    const still = expectOk<any[]>(await admin.get(`/api/v1/fractals/${other.id}/permissions`)).find((x) => x.id === elsewhere.id);
    assert.equal(still.role, 'viewer', 'the other fractal’s grant is untouched');
  });

  test('no credentials is 401 on every permission route', async () => {
    const p = await grant(admin, f.id, { username: 'crud-bob' }, 'viewer');
    const base = `/api/v1/fractals/${f.id}/permissions`;
    expectError(await anon.get(base), 401);
    expectError(await anon.post(base, { username: 'crud-alice', role: 'viewer' }), 401);
    expectError(await anon.put(`${base}/${p.id}`, { role: 'admin' }), 401);
    expectError(await anon.del(`${base}/${p.id}`), 401);
    const list = expectOk<any[]>(await admin.get(base));
    assert.deepEqual(list.map((x) => [x.username, x.role]), [['crud-bob', 'viewer']], 'nothing changed');
    expectOk(await admin.del(`${base}/${p.id}`));
  });
});

/** Every admin-only route of one fractal, as a request a role lacking admin must be refused. */
function adminRoutes(id: string): Array<[string, (c: Client) => Promise<Res>]> {
  return [
    ['PUT fractal', (c) => c.put(`/api/v1/fractals/${id}`, { name: 'hijacked' })],
    ['DELETE fractal', (c) => c.del(`/api/v1/fractals/${id}`)],
    ['PUT retention', (c) => c.put(`/api/v1/fractals/${id}/retention`, { retention_days: 1 })],
    ['PUT archive-retention', (c) => c.put(`/api/v1/fractals/${id}/archive-retention`, { archive_retention_days: 1 })],
    ['PUT disk-quota', (c) => c.put(`/api/v1/fractals/${id}/disk-quota`, { quota_bytes: 1, action: 'rollover' })],
    ['GET permissions', (c) => c.get(`/api/v1/fractals/${id}/permissions`)],
    ['POST permissions', (c) => c.post(`/api/v1/fractals/${id}/permissions`, { username: 'admin', role: 'viewer' })],
    ['PUT permission', (c) => c.put(`/api/v1/fractals/${id}/permissions/${unknownId()}`, { role: 'admin' })],
    ['DELETE permission', (c) => c.del(`/api/v1/fractals/${id}/permissions/${unknownId()}`)],
    ['GET api-keys', (c) => c.get(`/api/v1/fractals/${id}/api-keys`)],
    ['POST api-keys', (c) => c.post(`/api/v1/fractals/${id}/api-keys`, { name: 'sneaky' })],
    ['GET ingest-tokens', (c) => c.get(`/api/v1/fractals/${id}/ingest-tokens`)],
    ['POST ingest-tokens', (c) => c.post(`/api/v1/fractals/${id}/ingest-tokens`, { name: 'sneaky' })],
  ];
}

/** Reads the fractal's state as the global admin, to show refused requests changed nothing. */
async function snapshot(id: string) {
  const f = expectOk(await admin.get(`/api/v1/fractals/${id}`));
  return {
    fractal: { name: f.name, retention_days: f.retention_days, archive_retention_days: f.archive_retention_days, quota_bytes: f.quota_bytes },
    permissions: expectOk<any[]>(await admin.get(`/api/v1/fractals/${id}/permissions`)).length,
    keys: expectOk<any[]>(await admin.get(`/api/v1/fractals/${id}/api-keys`)).length,
    tokens: expectOk<any[]>(await admin.get(`/api/v1/fractals/${id}/ingest-tokens`)).length,
  };
}

describe('role enforcement', () => {
  let f: any;
  let hidden: any;
  let nobody: Client;
  let viewer: Client;
  let analyst: Client;
  let fadmin: Client;
  before(async () => {
    f = await createFractal(admin, 'roles-main');
    hidden = await createFractal(admin, 'roles-hidden');
    nobody = await makeUser(admin, 'role-nobody');
    viewer = await makeUser(admin, 'role-viewer');
    analyst = await makeUser(admin, 'role-analyst');
    fadmin = await makeUser(admin, 'role-fadmin');
    await grant(admin, f.id, { username: 'role-viewer' }, 'viewer');
    await grant(admin, f.id, { username: 'role-analyst' }, 'analyst');
    await grant(admin, f.id, { username: 'role-fadmin' }, 'admin');
  });

  test('a user with no role gets 404 on every route of the fractal and does not see it listed', async () => {
    const before = await snapshot(f.id);
    const routes: Array<[string, (c: Client) => Promise<Res>]> = [
      ['GET fractal', (c) => c.get(`/api/v1/fractals/${f.id}`)],
      ['GET stats', (c) => c.get(`/api/v1/fractals/${f.id}/stats`)],
      ['POST select', (c) => c.post(`/api/v1/fractals/${f.id}/select`)],
      ...adminRoutes(f.id),
    ];
    for (const [what, call] of routes) {
      const r = await call(nobody);
      assert.equal(r.status, 404, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
      expectError(r, 404);
      assert.ok(!JSON.stringify(r.body).includes('roles-main'), `${what} must not reveal the fractal's name`);
    }
    const ids = await listedIds(nobody);
    assert.ok(!ids.includes(f.id));
    assert.ok(!ids.includes(hidden.id));
    assert.deepEqual(await snapshot(f.id), before);
  });

  for (const role of ['viewer', 'analyst'] as const) {
    test(`${role}: reads the fractal, its stats and selects it`, async () => {
      const c = role === 'viewer' ? viewer : analyst;
      assert.equal(expectOk(await c.get(`/api/v1/fractals/${f.id}`)).name, 'roles-main');
      assert.equal(expectOk(await c.get(`/api/v1/fractals/${f.id}/stats`)).log_count, 0);
      assert.equal(expectOk(await c.post(`/api/v1/fractals/${f.id}/select`)).selected.id, f.id);
      assert.equal(expectOk(await c.get('/api/v1/auth/me')).selected.id, f.id);
      const ids = await listedIds(c);
      assert.ok(ids.includes(f.id), 'the fractal is listed');
      assert.ok(!ids.includes(hidden.id), 'a fractal without a role is not listed');
      expectError(await c.get(`/api/v1/fractals/${hidden.id}`), 404);
    });

    test(`${role}: 403 on every admin route, which change nothing`, async () => {
      const c = role === 'viewer' ? viewer : analyst;
      const before = await snapshot(f.id);
      for (const [what, call] of adminRoutes(f.id)) {
        const r = await call(c);
        assert.equal(r.status, 403, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
        expectError(r, 403, /admin/);
      }
      expectError(await c.post('/api/v1/fractals', { name: `${role}-made` }), 403);
      expectError(await c.post('/api/v1/fractals/stats/refresh'), 403);
      assert.deepEqual(await snapshot(f.id), before);
      assert.ok(!expectOk<any[]>(await admin.get('/api/v1/fractals')).some((x) => x.name === `${role}-made`));
    });
  }

  test('fractal admin: manages the fractal, its retention, quota, grants, keys and tokens', async () => {
    const r = expectOk(await fadmin.put(`/api/v1/fractals/${f.id}`, { description: 'run by a fractal admin' }));
    assert.equal(r.description, 'run by a fractal admin');
    assert.equal(expectOk(await fadmin.put(`/api/v1/fractals/${f.id}/retention`, { retention_days: 14 })).retention_days, 14);
    assert.equal(
      expectOk(await fadmin.put(`/api/v1/fractals/${f.id}/archive-retention`, { archive_retention_days: 365 })).archive_retention_days,
      365,
    );
    const q = expectOk(await fadmin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 1 << 30, action: 'rollover' }));
    assert.equal(q.quota_bytes, 1 << 30);
    assert.equal(q.quota_action, 'rollover');

    const perms = expectOk<any[]>(await fadmin.get(`/api/v1/fractals/${f.id}/permissions`));
    assert.ok(perms.some((p) => p.username === 'role-fadmin' && p.role === 'admin'));
    await makeUser(admin, 'role-invitee');
    const invited = expectOk(await fadmin.post(`/api/v1/fractals/${f.id}/permissions`, { username: 'role-invitee', role: 'viewer' }), [200, 201]);
    assert.equal(expectOk(await fadmin.put(`/api/v1/fractals/${f.id}/permissions/${invited.id}`, { role: 'analyst' })).role, 'analyst');
    expectOk(await fadmin.del(`/api/v1/fractals/${f.id}/permissions/${invited.id}`));

    const key = await createApiKey(fadmin, `/api/v1/fractals/${f.id}`, { name: 'fadmin-key' });
    assert.match(key.key, /^svc_[0-9a-f]{32,}$/);
    assert.ok(expectOk<any[]>(await fadmin.get(`/api/v1/fractals/${f.id}/api-keys`)).some((k) => k.id === key.id));

    const tok = expectOk(await fadmin.post(`/api/v1/fractals/${f.id}/ingest-tokens`, { name: 'fadmin-token' }), [200, 201]);
    const toks = expectOk<any[]>(await fadmin.get(`/api/v1/fractals/${f.id}/ingest-tokens`));
    assert.equal(toks.find((t) => t.id === tok.id).token, tok.token, 'a fractal admin sees token values in full');

    // The global admin sees what the fractal admin did.
    const seen = expectOk(await admin.get(`/api/v1/fractals/${f.id}`));
    assert.equal(seen.retention_days, 14);
    assert.equal(seen.description, 'run by a fractal admin');
  });

  test('fractal admin: can delete a fractal they administer', async () => {
    const mine = await createFractal(admin, 'roles-deletable');
    await grant(admin, mine.id, { username: 'role-fadmin' }, 'admin');
    expectOk(await fadmin.del(`/api/v1/fractals/${mine.id}`));
    expectError(await admin.get(`/api/v1/fractals/${mine.id}`), 404);
  });

  test('fractal admin: 403 on POST /fractals and stats/refresh (global admin only), 404 on other fractals', async () => {
    expectError(await fadmin.post('/api/v1/fractals', { name: 'fadmin-made' }), 403);
    expectError(await fadmin.post('/api/v1/fractals/stats/refresh'), 403);
    assert.ok(!expectOk<any[]>(await admin.get('/api/v1/fractals')).some((x) => x.name === 'fadmin-made'));
    expectError(await fadmin.get(`/api/v1/fractals/${hidden.id}`), 404);
    expectError(await fadmin.put(`/api/v1/fractals/${hidden.id}`, { name: 'taken-over' }), 404);
    expectError(await fadmin.get(`/api/v1/fractals/${hidden.id}/permissions`), 404);
    expectError(await fadmin.post(`/api/v1/fractals/${hidden.id}/permissions`, { username: 'role-fadmin', role: 'admin' }), 404);
    const ids = await listedIds(fadmin);
    assert.ok(ids.includes(f.id));
    assert.ok(!ids.includes(hidden.id));
    // Group and user administration stay with global admins.
    expectError(await fadmin.get('/api/v1/users'), 403);
    expectError(await fadmin.post('/api/v1/groups', { name: 'fadmin-group' }), 403);
  });

  test('changing a grant takes effect on the next request', async () => {
    const g = await createFractal(admin, 'roles-change');
    const c = await makeUser(admin, 'role-changer');
    const p = await grant(admin, g.id, { username: 'role-changer' }, 'viewer');
    expectError(await c.put(`/api/v1/fractals/${g.id}/retention`, { retention_days: 3 }), 403);
    expectOk(await admin.put(`/api/v1/fractals/${g.id}/permissions/${p.id}`, { role: 'admin' }));
    assert.equal(expectOk(await c.put(`/api/v1/fractals/${g.id}/retention`, { retention_days: 3 })).retention_days, 3);
    expectOk(await admin.put(`/api/v1/fractals/${g.id}/permissions/${p.id}`, { role: 'analyst' }));
    expectError(await c.put(`/api/v1/fractals/${g.id}/retention`, { retention_days: 4 }), 403);
    expectOk(await admin.del(`/api/v1/fractals/${g.id}/permissions/${p.id}`));
    expectError(await c.get(`/api/v1/fractals/${g.id}`), 404);
    assert.ok(!(await listedIds(c)).includes(g.id));
  });
});

describe('roles through groups', () => {
  test('a role granted to a group works for its members and disappears when a member is removed', async () => {
    const f = await createFractal(admin, 'group-scope');
    const member = await makeUser(admin, 'group-member');
    const group = await makeGroup('readers');
    expectOk(await admin.post(`/api/v1/groups/${group.id}/members`, { username: 'group-member' }), [200, 201]);
    await grant(admin, f.id, { group_id: group.id }, 'viewer');

    expectOk(await member.get(`/api/v1/fractals/${f.id}`));
    expectOk(await member.get(`/api/v1/fractals/${f.id}/stats`));
    assert.ok((await listedIds(member)).includes(f.id));
    expectError(await member.put(`/api/v1/fractals/${f.id}`, { name: 'x' }), 403);

    expectOk(await admin.del(`/api/v1/groups/${group.id}/members/group-member`));
    expectError(await member.get(`/api/v1/fractals/${f.id}`), 404);
    expectError(await member.get(`/api/v1/fractals/${f.id}/stats`), 404);
    assert.ok(!(await listedIds(member)).includes(f.id));
  });

  test('a group admin grant lets members administer; revoking the group grant removes it', async () => {
    const f = await createFractal(admin, 'group-admin-scope');
    const member = await makeUser(admin, 'group-admin-member');
    const group = await makeGroup('operators');
    expectOk(await admin.post(`/api/v1/groups/${group.id}/members`, { username: 'group-admin-member' }), [200, 201]);
    const p = await grant(admin, f.id, { group_id: group.id }, 'admin');
    assert.equal(expectOk(await member.put(`/api/v1/fractals/${f.id}/retention`, { retention_days: 5 })).retention_days, 5);
    expectOk(await member.get(`/api/v1/fractals/${f.id}/ingest-tokens`));
    expectOk(await admin.del(`/api/v1/fractals/${f.id}/permissions/${p.id}`));
    expectError(await member.get(`/api/v1/fractals/${f.id}`), 404);
    expectError(await member.get(`/api/v1/fractals/${f.id}/ingest-tokens`), 404);
  });

  test('deleting a group removes the roles it gave', async () => {
    const f = await createFractal(admin, 'group-deleted-scope');
    const member = await makeUser(admin, 'group-deleted-member');
    const group = await makeGroup('temporary');
    expectOk(await admin.post(`/api/v1/groups/${group.id}/members`, { username: 'group-deleted-member' }), [200, 201]);
    await grant(admin, f.id, { group_id: group.id }, 'analyst');
    expectOk(await member.get(`/api/v1/fractals/${f.id}`));
    expectOk(await admin.del(`/api/v1/groups/${group.id}`));
    expectError(await member.get(`/api/v1/fractals/${f.id}`), 404);
    assert.deepEqual(expectOk(await admin.get(`/api/v1/fractals/${f.id}/permissions`)), []);
  });

  test('the highest role wins, whether it comes directly or through a group', async () => {
    const f = await createFractal(admin, 'highest-wins');
    const u = await makeUser(admin, 'highest-user');
    const g1 = await makeGroup('highest-admins');
    const g2 = await makeGroup('highest-viewers');
    for (const g of [g1, g2]) expectOk(await admin.post(`/api/v1/groups/${g.id}/members`, { username: 'highest-user' }), [200, 201]);

    // Direct viewer + group admin: admin.
    const direct = await grant(admin, f.id, { username: 'highest-user' }, 'viewer');
    const viaGroup = await grant(admin, f.id, { group_id: g1.id }, 'admin');
    assert.equal(expectOk(await u.put(`/api/v1/fractals/${f.id}/retention`, { retention_days: 2 })).retention_days, 2);

    // Direct admin + group viewer: admin.
    expectOk(await admin.put(`/api/v1/fractals/${f.id}/permissions/${direct.id}`, { role: 'admin' }));
    expectOk(await admin.put(`/api/v1/fractals/${f.id}/permissions/${viaGroup.id}`, { role: 'viewer' }));
    assert.equal(expectOk(await u.put(`/api/v1/fractals/${f.id}/retention`, { retention_days: 3 })).retention_days, 3);

    // Direct viewer + two groups (analyst and viewer): analyst, not admin.
    expectOk(await admin.put(`/api/v1/fractals/${f.id}/permissions/${direct.id}`, { role: 'viewer' }));
    expectOk(await admin.put(`/api/v1/fractals/${f.id}/permissions/${viaGroup.id}`, { role: 'analyst' }));
    await grant(admin, f.id, { group_id: g2.id }, 'viewer');
    expectError(await u.put(`/api/v1/fractals/${f.id}/retention`, { retention_days: 4 }), 403, /analyst/);

    // Removing the direct grant leaves the group roles.
    expectOk(await admin.del(`/api/v1/fractals/${f.id}/permissions/${direct.id}`));
    expectOk(await u.get(`/api/v1/fractals/${f.id}`));
    assert.equal(expectOk(await admin.get(`/api/v1/fractals/${f.id}`)).retention_days, 3);
  });
});

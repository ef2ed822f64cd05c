// Groups and their members over real HTTP against a real appliance: global admins only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectError, expectOk, grant, idsOf, unknownId, UUID_RE } from '../support/api.ts';

interface Group {
  id: string;
  name: string;
  description: string;
  members: string[];
  created_at: string;
  updated_at: string;
}
interface Member {
  user_id: string;
  username: string;
  added_at: string;
}

let app: TestAppliance;
let admin: Client;
let anon: Client;
/** A signed-in user without the admin flag. */
let carol: Client;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  carol = await makeUser(admin, 'carol');
  await makeUser(admin, 'dan');
  await makeUser(admin, 'erin');
});
after(async () => {
  await app?.dispose();
});

async function newGroup(name: string, description?: string): Promise<Group> {
  return expectOk<Group>(await admin.post('/api/v1/groups', description === undefined ? { name } : { name, description }), 201);
}
const groupNames = async () => expectOk<Group[]>(await admin.get('/api/v1/groups')).map((g) => g.name);

describe('groups', () => {
  test('an admin creates, lists, reads, renames and deletes a group', async () => {
    const g = await newGroup('  SOC team  ', 'Security operations');
    assert.match(g.id, UUID_RE);
    assert.equal(g.name, 'SOC team', 'the name is trimmed');
    assert.equal(g.description, 'Security operations');
    assert.deepEqual(g.members, []);

    const listed = expectOk<Group[]>(await admin.get('/api/v1/groups')).find((x) => x.id === g.id);
    assert.deepEqual(listed, g);
    assert.deepEqual(expectOk(await admin.get(`/api/v1/groups/${g.id}`)), g);

    const renamed = expectOk<Group>(await admin.put(`/api/v1/groups/${g.id}`, { name: 'SOC' }));
    assert.equal(renamed.name, 'SOC');
    assert.equal(renamed.description, 'Security operations', 'description kept');
    const described = expectOk<Group>(await admin.put(`/api/v1/groups/${g.id}`, { description: 'Tier 1' }));
    assert.equal(described.name, 'SOC', 'name kept');
    assert.equal(described.description, 'Tier 1');
    assert.deepEqual(expectOk(await admin.get(`/api/v1/groups/${g.id}`)), described);

    assert.deepEqual(expectOk(await admin.del(`/api/v1/groups/${g.id}`)), { deleted: true });
    expectError(await admin.get(`/api/v1/groups/${g.id}`), 404, g.id);
    assert.ok(!idsOf(await admin.get('/api/v1/groups')).includes(g.id));
    expectError(await admin.del(`/api/v1/groups/${g.id}`), 404);
  });

  test('a group may be created without a description', async () => {
    const g = await newGroup('No words');
    assert.equal(g.description, '');
  });

  test('a bad body is a 400 naming the field, and creates or changes nothing', async () => {
    expectError(await admin.post('/api/v1/groups', {}), 400, '"name"');
    expectError(await admin.post('/api/v1/groups', { name: '' }), 400, '"name"');
    expectError(await admin.post('/api/v1/groups', { name: '   ' }), 400, '"name"');
    expectError(await admin.post('/api/v1/groups', { name: 12 }), 400, '"name"');
    expectError(await admin.post('/api/v1/groups', { name: 'Bad group', description: ['x'] }), 400, '"description"');
    expectError(await admin.post('/api/v1/groups', { name: 'x'.repeat(201) }), 400, '"name"');
    expectError(await admin.post('/api/v1/groups', 'not json'), 400);
    assert.ok(!(await groupNames()).includes('Bad group'));

    const g = await newGroup('Stable group', 'unchanged');
    expectError(await admin.put(`/api/v1/groups/${g.id}`, { name: '' }), 400, '"name"');
    expectError(await admin.put(`/api/v1/groups/${g.id}`, { name: false }), 400, '"name"');
    expectError(await admin.put(`/api/v1/groups/${g.id}`, { description: 3 }), 400, '"description"');
    const now = expectOk<Group>(await admin.get(`/api/v1/groups/${g.id}`));
    assert.equal(now.name, 'Stable group');
    assert.equal(now.description, 'unchanged');
  });

  test('a duplicate group name is a 409, whatever its case, on create and on rename', async () => {
    const first = await newGroup('Network ops');
    expectError(await admin.post('/api/v1/groups', { name: 'network OPS' }), 409, 'network OPS');
    expectError(await admin.post('/api/v1/groups', { name: ' Network ops ' }), 409);
    assert.equal((await groupNames()).filter((n) => n.toLowerCase() === 'network ops').length, 1);

    const second = await newGroup('Database ops');
    expectError(await admin.put(`/api/v1/groups/${second.id}`, { name: 'NETWORK OPS' }), 409);
    assert.equal(expectOk<Group>(await admin.get(`/api/v1/groups/${second.id}`)).name, 'Database ops');
    // A group may take its own name in another case.
    assert.equal(expectOk<Group>(await admin.put(`/api/v1/groups/${first.id}`, { name: 'NETWORK ops' })).name, 'NETWORK ops');
  });

  test('an unknown group is a 404 and a malformed id a 400 on every group route', async () => {
    const id = unknownId();
    expectError(await admin.get(`/api/v1/groups/${id}`), 404, id);
    expectError(await admin.put(`/api/v1/groups/${id}`, { name: 'Ghost' }), 404);
    expectError(await admin.del(`/api/v1/groups/${id}`), 404);
    expectError(await admin.get(`/api/v1/groups/${id}/members`), 404);
    expectError(await admin.post(`/api/v1/groups/${id}/members`, { username: 'dan' }), 404);
    expectError(await admin.del(`/api/v1/groups/${id}/members/dan`), 404);
    expectError(await admin.get('/api/v1/groups/not-a-uuid'), 400, '"id"');
    expectError(await admin.put('/api/v1/groups/not-a-uuid', { name: 'x' }), 400, '"id"');
    expectError(await admin.del('/api/v1/groups/not-a-uuid'), 400, '"id"');
    expectError(await admin.get('/api/v1/groups/not-a-uuid/members'), 400, '"id"');
    assert.ok(!(await groupNames()).includes('Ghost'));
  });
});

describe('group members', () => {
  test('add, list and remove members', async () => {
    const g = await newGroup('Responders');
    const base = `/api/v1/groups/${g.id}/members`;
    assert.deepEqual(expectOk(await admin.get(base)), []);

    const afterDan = expectOk<Member[]>(await admin.post(base, { username: 'dan' }), 201);
    assert.deepEqual(afterDan.map((m) => m.username), ['dan']);
    assert.match(afterDan[0]!.user_id, UUID_RE);
    const afterErin = expectOk<Member[]>(await admin.post(base, { username: 'erin' }), 201);
    assert.deepEqual(afterErin.map((m) => m.username), ['dan', 'erin']);

    assert.deepEqual(expectOk<Member[]>(await admin.get(base)).map((m) => m.username), ['dan', 'erin']);
    assert.deepEqual(expectOk<Group>(await admin.get(`/api/v1/groups/${g.id}`)).members, ['dan', 'erin']);
    assert.deepEqual(expectOk<Group[]>(await admin.get('/api/v1/groups')).find((x) => x.id === g.id)!.members, ['dan', 'erin']);

    const afterRemove = expectOk<Member[]>(await admin.del(`${base}/dan`));
    assert.deepEqual(afterRemove.map((m) => m.username), ['erin']);
    assert.deepEqual(expectOk<Member[]>(await admin.get(base)).map((m) => m.username), ['erin']);
    expectError(await admin.del(`${base}/dan`), 404, 'dan');
    expectError(await admin.del(`${base}/nobody-at-all`), 404, 'nobody-at-all');
  });

  test('adding an unknown user is a 404, adding a member twice a 409, a bad body a 400', async () => {
    const g = await newGroup('Twice');
    const base = `/api/v1/groups/${g.id}/members`;
    expectError(await admin.post(base, { username: 'ghost-user' }), 404, 'ghost-user');
    expectOk(await admin.post(base, { username: 'dan' }), 201);
    expectError(await admin.post(base, { username: 'dan' }), 409, 'dan');
    expectError(await admin.post(base, { username: 'DAN' }), 409); // user names are not case-sensitive
    expectError(await admin.post(base, {}), 400, '"username"');
    expectError(await admin.post(base, { username: '' }), 400, '"username"');
    expectError(await admin.post(base, { username: 7 }), 400, '"username"');
    assert.deepEqual(expectOk<Member[]>(await admin.get(base)).map((m) => m.username), ['dan']);
  });

  test('a role granted to a group applies to its members until they leave or the group is deleted', async () => {
    const fenn = await makeUser(admin, 'fenn');
    const f = await createFractal(admin, 'grp-fractal');
    const g = await newGroup('Fractal readers');
    await grant(admin, f.id, { group_id: g.id }, 'viewer');
    expectError(await fenn.get(`/api/v1/fractals/${f.id}`), 404);

    expectOk(await admin.post(`/api/v1/groups/${g.id}/members`, { username: 'fenn' }), 201);
    expectOk(await fenn.get(`/api/v1/fractals/${f.id}`));
    assert.ok(idsOf(await fenn.get('/api/v1/fractals')).includes(f.id));

    expectOk(await admin.del(`/api/v1/groups/${g.id}/members/fenn`));
    expectError(await fenn.get(`/api/v1/fractals/${f.id}`), 404);

    expectOk(await admin.post(`/api/v1/groups/${g.id}/members`, { username: 'fenn' }), 201);
    expectOk(await fenn.get(`/api/v1/fractals/${f.id}`));
    expectOk(await admin.del(`/api/v1/groups/${g.id}`));
    expectError(await fenn.get(`/api/v1/fractals/${f.id}`), 404);
    const perms = expectOk<Array<{ group_id: string | null }>>(await admin.get(`/api/v1/fractals/${f.id}/permissions`));
    assert.ok(!perms.some((p) => p.group_id === g.id), 'the deleted group holds no role any more');
  });

  test('a deleted user disappears from the groups they were in', async () => {
    await makeUser(admin, 'gus');
    const g = await newGroup('Short stay');
    expectOk(await admin.post(`/api/v1/groups/${g.id}/members`, { username: 'gus' }), 201);
    expectOk(await admin.del('/api/v1/users/gus'));
    assert.deepEqual(expectOk<Member[]>(await admin.get(`/api/v1/groups/${g.id}/members`)), []);
    assert.deepEqual(expectOk<Group>(await admin.get(`/api/v1/groups/${g.id}`)).members, []);
  });
});

describe('who may manage groups', () => {
  const routes = (gid: string): Array<[string, string, unknown?]> => [
    ['GET', '/api/v1/groups'],
    ['POST', '/api/v1/groups', { name: 'Intruders' }],
    ['GET', `/api/v1/groups/${gid}`],
    ['PUT', `/api/v1/groups/${gid}`, { name: 'Hijacked' }],
    ['DELETE', `/api/v1/groups/${gid}`],
    ['GET', `/api/v1/groups/${gid}/members`],
    ['POST', `/api/v1/groups/${gid}/members`, { username: 'carol' }],
    ['DELETE', `/api/v1/groups/${gid}/members/dan`],
  ];

  async function unchanged(g: Group) {
    const now = expectOk<Group>(await admin.get(`/api/v1/groups/${g.id}`));
    assert.equal(now.name, g.name);
    assert.deepEqual(now.members, ['dan']);
    const names = await groupNames();
    assert.ok(!names.includes('Intruders') && !names.includes('Hijacked'));
  }

  test('a signed-in user without the admin flag gets 403 on every group route', async () => {
    const g = await newGroup('Admins only');
    expectOk(await admin.post(`/api/v1/groups/${g.id}/members`, { username: 'dan' }), 201);
    for (const [method, url, body] of routes(g.id)) {
      const r = await carol.req(method, url, body);
      assert.equal(r.status, 403, `${method} ${url}`);
      expectError(r, 403, 'administrator');
    }
    // Even for a group that does not exist, the answer is 403, not 404.
    expectError(await carol.get(`/api/v1/groups/${unknownId()}`), 403);
    await unchanged({ ...g, members: ['dan'] });
  });

  test('a fractal or prism admin is still not a group admin', async () => {
    const f = await createFractal(admin, 'grp-admin-fractal');
    await grant(admin, f.id, { username: 'carol' }, 'admin');
    expectError(await carol.get('/api/v1/groups'), 403);
    expectError(await carol.post('/api/v1/groups', { name: 'Carol group' }), 403);
    assert.ok(!(await groupNames()).includes('Carol group'));
  });

  test('signed-out callers get 401 on every group route', async () => {
    const g = await newGroup('Signed in only');
    expectOk(await admin.post(`/api/v1/groups/${g.id}/members`, { username: 'dan' }), 201);
    for (const [method, url, body] of routes(g.id)) {
      const r = await anon.req(method, url, body);
      assert.equal(r.status, 401, `${method} ${url}`);
      expectError(r, 401);
    }
    await unchanged({ ...g, members: ['dan'] });
  });

  test('a user made admin can manage groups at once, and loses it when demoted', async () => {
    const hana = await makeUser(admin, 'hana');
    expectError(await hana.get('/api/v1/groups'), 403);
    expectOk(await admin.put('/api/v1/users/hana', { is_admin: true }));
    expectOk(await hana.get('/api/v1/groups'));
    const g = expectOk<Group>(await hana.post('/api/v1/groups', { name: 'Hana group' }), 201);
    expectOk(await admin.put('/api/v1/users/hana', { is_admin: false }));
    expectError(await hana.del(`/api/v1/groups/${g.id}`), 403);
    expectOk(await admin.get(`/api/v1/groups/${g.id}`));
  });
});

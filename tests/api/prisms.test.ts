// Prisms over real HTTP against a real appliance (embedded ClickHouse, SQLite file): CRUD,
// selection, members, permissions and the role each route needs, and that a prism shows each reader
// only the fractals they may read now (a revoked role hides a member from every path).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, passwordOf, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createApiKey, createFractal, expectError, expectOk, grant, idsOf, unknownId, UUID_RE } from '../support/api.ts';
import { fractalWith, ok, query } from '../support/query.ts';

interface Prism {
  id: string;
  name: string;
  description: string;
  fractal_ids: string[];
  fractals: Array<{ id: string; name: string }>;
  created_at: string;
  updated_at: string;
}
type Ref = { id: string; name: string };

let app: TestAppliance;
let admin: Client;
let anon: Client;
/** Admin of alpha and beta, viewer of gamma, nothing on hidden. */
let alice: Client;
/** No role anywhere. */
let bob: Client;
let vera: Client;
let ana: Client;
let alpha: Ref, beta: Ref, gamma: Ref, hidden: Ref;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  alpha = await createFractal(admin, 'pr-alpha');
  beta = await createFractal(admin, 'pr-beta');
  gamma = await createFractal(admin, 'pr-gamma');
  hidden = await createFractal(admin, 'pr-hidden');
  alice = await makeUser(admin, 'alice');
  bob = await makeUser(admin, 'bob');
  vera = await makeUser(admin, 'vera');
  ana = await makeUser(admin, 'ana');
  await grant(admin, alpha.id, { username: 'alice' }, 'admin');
  await grant(admin, beta.id, { username: 'alice' }, 'admin');
  await grant(admin, gamma.id, { username: 'alice' }, 'viewer');
});
after(async () => {
  await app?.dispose();
});

async function newPrism(by: Client, name: string, fractalIds: string[] = []): Promise<Prism> {
  return expectOk<Prism>(await by.post('/api/v1/prisms', { name, description: `${name} view`, fractal_ids: fractalIds }), 201);
}
const sorted = (a: string[]) => [...a].sort();
async function prismNames(by: Client): Promise<string[]> {
  return expectOk<Prism[]>(await by.get('/api/v1/prisms')).map((p) => p.name);
}

describe('prism CRUD', () => {
  test('a global admin creates a prism over several fractals and reads it back', async () => {
    const r = await admin.post('/api/v1/prisms', {
      name: '  Edge traffic  ',
      description: 'All edge logs',
      fractal_ids: [alpha.id, beta.id, alpha.id],
    });
    const p = expectOk<Prism>(r, 201);
    assert.match(p.id, UUID_RE);
    assert.equal(p.name, 'Edge traffic', 'the name is trimmed');
    assert.equal(p.description, 'All edge logs');
    assert.deepEqual(sorted(p.fractal_ids), sorted([alpha.id, beta.id]), 'a repeated fractal is a member once');
    assert.deepEqual(
      p.fractals.map((f) => f.name).sort(),
      ['pr-alpha', 'pr-beta'],
      'members are shown with their names',
    );
    for (const t of [p.created_at, p.updated_at]) {
      assert.ok(!Number.isNaN(Date.parse(t)) && t.endsWith('Z'), `RFC 3339 UTC time: ${t}`);
    }

    const listed = expectOk<Prism[]>(await admin.get('/api/v1/prisms')).find((x) => x.id === p.id);
    assert.ok(listed, 'the new prism is listed');
    assert.deepEqual(sorted(listed.fractal_ids), sorted(p.fractal_ids));

    assert.deepEqual(expectOk(await admin.get(`/api/v1/prisms/${p.id}`)), p);
  });

  test('a prism may start empty and without a description', async () => {
    const p = expectOk<Prism>(await admin.post('/api/v1/prisms', { name: 'Bare prism' }), 201);
    assert.deepEqual(p.fractal_ids, []);
    assert.equal(p.description, '');
    expectOk(await admin.get(`/api/v1/prisms/${p.id}`));
  });

  test('creating a prism with a bad body is a 400 that names the field, and creates nothing', async () => {
    expectError(await admin.post('/api/v1/prisms', {}), 400, '"name"');
    expectError(await admin.post('/api/v1/prisms', { name: 42 }), 400, '"name"');
    expectError(await admin.post('/api/v1/prisms', { name: '   ' }), 400, '"name"');
    expectError(await admin.post('/api/v1/prisms', { name: 'Bad body', description: 5 }), 400, '"description"');
    expectError(await admin.post('/api/v1/prisms', { name: 'Bad body', fractal_ids: alpha.id }), 400, 'fractal_ids');
    expectError(await admin.post('/api/v1/prisms', { name: 'Bad body', fractal_ids: ['not-a-uuid'] }), 400, 'fractal_ids');
    expectError(await admin.post('/api/v1/prisms', '{"name": "Bad body"'), 400);
    assert.ok(!(await prismNames(admin)).includes('Bad body'));
  });

  test('a fractal that does not exist cannot be part of a new prism (404)', async () => {
    const missing = unknownId();
    expectError(await admin.post('/api/v1/prisms', { name: 'Ghost members', fractal_ids: [alpha.id, missing] }), 404, missing);
    assert.ok(!(await prismNames(admin)).includes('Ghost members'), 'nothing is created half-way');
  });

  test('a duplicate prism name is a 409, whatever its case', async () => {
    const first = await newPrism(admin, 'Dup Prism', [alpha.id]);
    const other = await newPrism(admin, 'Other Prism');
    expectError(await admin.post('/api/v1/prisms', { name: 'dup prism' }), 409, 'dup prism');
    expectError(await alice.post('/api/v1/prisms', { name: ' DUP PRISM ' }), 409);
    assert.equal((await prismNames(admin)).filter((n) => n.toLowerCase() === 'dup prism').length, 1);

    expectError(await admin.put(`/api/v1/prisms/${other.id}`, { name: 'DUP PRISM' }), 409);
    assert.equal(expectOk<Prism>(await admin.get(`/api/v1/prisms/${other.id}`)).name, 'Other Prism', 'the rename did not happen');
    // Renaming a prism to its own name in another case is no clash.
    assert.equal(expectOk<Prism>(await admin.put(`/api/v1/prisms/${first.id}`, { name: 'DUP prism' })).name, 'DUP prism');
  });

  test('PUT changes only what it is given and replaces the member list', async () => {
    const p = await newPrism(admin, 'Put view', [alpha.id]);
    let got = expectOk<Prism>(await admin.put(`/api/v1/prisms/${p.id}`, { description: 'New words' }));
    assert.equal(got.name, 'Put view');
    assert.equal(got.description, 'New words');
    assert.deepEqual(got.fractal_ids, [alpha.id]);

    got = expectOk<Prism>(await admin.put(`/api/v1/prisms/${p.id}`, { name: 'Put view renamed' }));
    assert.equal(got.name, 'Put view renamed');
    assert.equal(got.description, 'New words', 'description kept');
    assert.deepEqual(got.fractal_ids, [alpha.id], 'members kept');

    got = expectOk<Prism>(await admin.put(`/api/v1/prisms/${p.id}`, { fractal_ids: [beta.id, gamma.id] }));
    assert.deepEqual(sorted(got.fractal_ids), sorted([beta.id, gamma.id]));
    got = expectOk<Prism>(await admin.put(`/api/v1/prisms/${p.id}`, { fractal_ids: [] }));
    assert.deepEqual(got.fractal_ids, []);

    const now = expectOk<Prism>(await admin.get(`/api/v1/prisms/${p.id}`));
    assert.equal(now.name, 'Put view renamed');
    assert.deepEqual(now.fractal_ids, []);
    assert.ok(now.updated_at >= p.updated_at);
  });

  test('PUT with a bad body is a 400 naming the field and changes nothing', async () => {
    const p = await newPrism(admin, 'Put checks', [alpha.id]);
    expectError(await admin.put(`/api/v1/prisms/${p.id}`, { name: '' }), 400, '"name"');
    expectError(await admin.put(`/api/v1/prisms/${p.id}`, { name: 3 }), 400, '"name"');
    expectError(await admin.put(`/api/v1/prisms/${p.id}`, { description: 9 }), 400, '"description"');
    expectError(await admin.put(`/api/v1/prisms/${p.id}`, { fractal_ids: 'x' }), 400, 'fractal_ids');
    expectError(await admin.put(`/api/v1/prisms/${p.id}`, { fractal_ids: [unknownId()] }), 404);
    const now = expectOk<Prism>(await admin.get(`/api/v1/prisms/${p.id}`));
    assert.equal(now.name, 'Put checks');
    assert.equal(now.description, 'Put checks view');
    assert.deepEqual(now.fractal_ids, [alpha.id]);
  });

  test('an unknown prism is a 404 and a malformed id a 400 on every route', async () => {
    const id = unknownId();
    expectError(await admin.get(`/api/v1/prisms/${id}`), 404, id);
    expectError(await admin.put(`/api/v1/prisms/${id}`, { description: 'x' }), 404);
    expectError(await admin.del(`/api/v1/prisms/${id}`), 404);
    expectError(await admin.post(`/api/v1/prisms/${id}/select`), 404);
    expectError(await admin.post(`/api/v1/prisms/${id}/members`, { fractal_id: alpha.id }), 404);
    expectError(await admin.del(`/api/v1/prisms/${id}/members/${alpha.id}`), 404);
    expectError(await admin.get(`/api/v1/prisms/${id}/permissions`), 404);
    expectError(await admin.post(`/api/v1/prisms/${id}/permissions`, { username: 'bob', role: 'viewer' }), 404);
    expectError(await admin.get('/api/v1/prisms/not-a-uuid'), 400, '"id"');
    expectError(await admin.put('/api/v1/prisms/not-a-uuid', { description: 'x' }), 400, '"id"');
    expectError(await admin.del('/api/v1/prisms/not-a-uuid'), 400, '"id"');
  });

  test('DELETE removes the prism, and whoever could see it no longer can', async () => {
    const p = await newPrism(admin, 'Doomed view', [alpha.id]);
    await grant(admin, p.id, { username: 'vera' }, 'viewer', 'prism');
    expectOk(await vera.get(`/api/v1/prisms/${p.id}`));

    assert.deepEqual(expectOk(await admin.del(`/api/v1/prisms/${p.id}`)), { deleted: true });
    expectError(await admin.get(`/api/v1/prisms/${p.id}`), 404);
    assert.ok(!idsOf(await admin.get('/api/v1/prisms')).includes(p.id));
    assert.ok(!idsOf(await vera.get('/api/v1/prisms')).includes(p.id));
    expectError(await vera.get(`/api/v1/prisms/${p.id}`), 404);
    expectError(await admin.del(`/api/v1/prisms/${p.id}`), 404); // deleting twice
    // The member fractals are untouched.
    expectOk(await admin.get(`/api/v1/fractals/${alpha.id}`));
    // The name is free again.
    await newPrism(admin, 'Doomed view');
  });
});

type Call = [method: string, url: string, body?: unknown];
/**
 * The routes only an admin of the prism at `base` may call, each with a body that would change
 * something (a rename, a new member gamma, bob made admin); `permId` is a grant on the prism.
 */
const adminCalls = (base: string, permId: string): Call[] => [
  ['PUT', base, { name: 'Renamed view', description: 'edited' }],
  ['DELETE', base],
  ['POST', `${base}/members`, { fractal_id: gamma.id }],
  ['DELETE', `${base}/members/${alpha.id}`],
  ['GET', `${base}/permissions`],
  ['POST', `${base}/permissions`, { username: 'bob', role: 'admin' }],
  ['PUT', `${base}/permissions/${permId}`, { role: 'admin' }],
  ['DELETE', `${base}/permissions/${permId}`],
];

describe('who may do what on a prism', () => {
  test('signed-out callers get 401 on every prism route and change nothing', async () => {
    const p = await newPrism(admin, 'Locked view', [alpha.id]);
    const perm = await grant(admin, p.id, { username: 'vera' }, 'viewer', 'prism');
    const base = `/api/v1/prisms/${p.id}`;
    const calls: Call[] = [
      ['GET', '/api/v1/prisms'],
      ['POST', '/api/v1/prisms', { name: 'Anon prism' }],
      ['GET', base],
      ['POST', `${base}/select`, {}],
      ...adminCalls(base, perm.id),
    ];
    for (const [method, url, body] of calls) {
      const r = await anon.req(method, url, body);
      assert.equal(r.status, 401, `${method} ${url}`);
      expectError(r, 401);
    }
    const now = expectOk<Prism>(await admin.get(base));
    assert.equal(now.name, 'Locked view');
    assert.deepEqual(now.fractal_ids, [alpha.id]);
    assert.deepEqual(
      expectOk<Array<{ username: string; role: string }>>(await admin.get(`${base}/permissions`)).map((x) => [x.username, x.role]),
      [['vera', 'viewer']],
    );
    assert.ok(!(await prismNames(admin)).includes('Anon prism'));
  });

  test('a user with no role on a prism neither sees it nor learns it exists (404)', async () => {
    const p = await newPrism(admin, 'Secret view', [alpha.id]);
    const base = `/api/v1/prisms/${p.id}`;
    assert.ok(!idsOf(await bob.get('/api/v1/prisms')).includes(p.id), 'not listed');
    const calls: Call[] = [
      ['GET', base],
      ['PUT', base, { name: 'Bob was here' }],
      ['DELETE', base],
      ['POST', `${base}/select`, {}],
      ['POST', `${base}/members`, { fractal_id: beta.id }],
      ['DELETE', `${base}/members/${alpha.id}`],
      ['GET', `${base}/permissions`],
      ['POST', `${base}/permissions`, { username: 'bob', role: 'admin' }],
    ];
    for (const [method, url, body] of calls) {
      const r = await bob.req(method, url, body);
      assert.equal(r.status, 404, `${method} ${url}`);
      const error = expectError(r, 404);
      assert.ok(!error.includes('Secret view'), `the 404 must not reveal the name: ${error}`);
    }
    // Exactly what a prism that does not exist answers.
    expectError(await bob.get(`/api/v1/prisms/${unknownId()}`), 404);

    const now = expectOk<Prism>(await admin.get(base));
    assert.equal(now.name, 'Secret view', 'the PUT did not happen');
    assert.deepEqual(now.fractal_ids, [alpha.id]);
    assert.equal(expectOk<unknown[]>(await admin.get(`${base}/permissions`)).length, 0, 'bob did not grant himself anything');
  });

  test('a prism viewer lists, reads and selects it, but gets 403 on every admin route', async () => {
    const p = await newPrism(admin, 'Viewer view', [alpha.id, beta.id]);
    const perm = await grant(admin, p.id, { username: 'vera' }, 'viewer', 'prism');
    const base = `/api/v1/prisms/${p.id}`;

    assert.ok(idsOf(await vera.get('/api/v1/prisms')).includes(p.id), 'listed for a viewer');
    // A prism is a view: it shows vera no member she holds no role on herself.
    assert.deepEqual(expectOk<Prism>(await vera.get(base)).fractal_ids, []);
    expectOk(await vera.post(`${base}/select`));

    for (const [method, url, body] of adminCalls(base, perm.id)) {
      const r = await vera.req(method, url, body);
      assert.equal(r.status, 403, `${method} ${url}`);
      expectError(r, 403, 'admin');
    }
    const now = expectOk<Prism>(await admin.get(base));
    assert.equal(now.description, 'Viewer view view');
    assert.deepEqual(sorted(now.fractal_ids), sorted([alpha.id, beta.id]));
    assert.deepEqual(
      expectOk<Array<{ username: string; role: string }>>(await admin.get(`${base}/permissions`)).map((x) => [x.username, x.role]),
      [['vera', 'viewer']],
      'vera could not raise her own role or grant bob',
    );
  });

  test('an analyst of a prism is not its admin either', async () => {
    const p = await newPrism(admin, 'Analyst view', [alpha.id]);
    await grant(admin, p.id, { username: 'ana' }, 'analyst', 'prism');
    expectOk(await ana.get(`/api/v1/prisms/${p.id}`));
    expectError(await ana.put(`/api/v1/prisms/${p.id}`, { description: 'ana edit' }), 403, 'admin');
    expectError(await ana.del(`/api/v1/prisms/${p.id}`), 403);
    expectError(await ana.get(`/api/v1/prisms/${p.id}/permissions`), 403);
  });

  test('a prism admin who is not a global admin manages the prism', async () => {
    const p = await newPrism(admin, 'Delegated view', [alpha.id]);
    await grant(admin, p.id, { username: 'alice' }, 'admin', 'prism');
    const base = `/api/v1/prisms/${p.id}`;
    assert.equal(expectOk<Prism>(await alice.put(base, { description: 'by alice' })).description, 'by alice');
    expectOk(await alice.post(`${base}/members`, { fractal_id: beta.id }), 201);
    expectOk(await alice.del(`${base}/members/${alpha.id}`));
    const perm = await grant(alice, p.id, { username: 'bob' }, 'viewer', 'prism');
    expectOk(await bob.get(base));
    expectOk(await alice.put(`${base}/permissions/${perm.id}`, { role: 'analyst' }));
    expectOk(await alice.del(`${base}/permissions/${perm.id}`));
    expectError(await bob.get(base), 404);
    expectOk(await alice.del(base));
    expectError(await admin.get(base), 404);
  });

  test('the creator of a prism becomes its admin', async () => {
    const p = await newPrism(alice, 'Alice view', [alpha.id]);
    const perms = expectOk<Array<{ username: string; role: string }>>(await admin.get(`/api/v1/prisms/${p.id}/permissions`));
    assert.deepEqual(perms.map((x) => [x.username, x.role]), [['alice', 'admin']]);

    assert.ok(idsOf(await alice.get('/api/v1/prisms')).includes(p.id));
    expectOk(await alice.get(`/api/v1/prisms/${p.id}/permissions`));
    assert.equal(expectOk<Prism>(await alice.put(`/api/v1/prisms/${p.id}`, { description: 'mine' })).description, 'mine');
    // Another non-admin still cannot see it.
    expectError(await bob.get(`/api/v1/prisms/${p.id}`), 404);
    assert.ok(!idsOf(await bob.get('/api/v1/prisms')).includes(p.id));
  });

  test('a role given to a group on a prism applies to each member of the group', async () => {
    const gina = await makeUser(admin, 'gina');
    const p = await newPrism(admin, 'Group view', [alpha.id]);
    const g = expectOk<{ id: string }>(await admin.post('/api/v1/groups', { name: 'prism-readers' }), 201);
    expectOk(await admin.post(`/api/v1/groups/${g.id}/members`, { username: 'gina' }), 201);
    const perm = await grant(admin, p.id, { group_id: g.id }, 'viewer', 'prism');
    assert.equal((perm as { group_name?: string }).group_name, 'prism-readers');

    assert.ok(idsOf(await gina.get('/api/v1/prisms')).includes(p.id));
    expectOk(await gina.get(`/api/v1/prisms/${p.id}`));
    expectError(await gina.put(`/api/v1/prisms/${p.id}`, { description: 'x' }), 403);

    expectOk(await admin.del(`/api/v1/groups/${g.id}/members/gina`));
    expectError(await gina.get(`/api/v1/prisms/${p.id}`), 404); // leaving the group removes the role
  });
});

describe('adding fractals to a prism', () => {
  test('needs the admin role on the fractal: 403 for a viewer of it, 404 for one the user cannot see', async () => {
    const viewerOnly = await alice.post('/api/v1/prisms', { name: 'Alice wants gamma', fractal_ids: [alpha.id, gamma.id] });
    expectError(viewerOnly, 403, 'pr-gamma', 'admin');
    const unseen = await alice.post('/api/v1/prisms', { name: 'Alice wants hidden', fractal_ids: [hidden.id] });
    const error = expectError(unseen, 404);
    assert.ok(!error.includes('pr-hidden'), `the 404 must not reveal the fractal's name: ${error}`);
    expectError(await alice.post('/api/v1/prisms', { name: 'Alice wants ghost', fractal_ids: [unknownId()] }), 404);
    const names = await prismNames(admin);
    for (const n of ['Alice wants gamma', 'Alice wants hidden', 'Alice wants ghost']) assert.ok(!names.includes(n), `${n} was not created`);
  });

  test('the same rule holds for POST members and for PUT with fractal_ids', async () => {
    const p = await newPrism(alice, 'Alice members', [alpha.id]);
    const base = `/api/v1/prisms/${p.id}`;
    expectError(await alice.post(`${base}/members`, { fractal_id: gamma.id }), 403, 'pr-gamma');
    expectError(await alice.post(`${base}/members`, { fractal_id: hidden.id }), 404);
    expectError(await alice.post(`${base}/members`, { fractal_id: unknownId() }), 404);
    expectError(await alice.put(base, { fractal_ids: [alpha.id, gamma.id] }), 403, 'pr-gamma');
    expectError(await alice.put(base, { fractal_ids: [alpha.id, hidden.id] }), 404);
    assert.deepEqual(expectOk<Prism>(await alice.get(base)).fractal_ids, [alpha.id], 'membership unchanged');

    const added = expectOk<Prism>(await alice.post(`${base}/members`, { fractal_id: beta.id }), 201);
    assert.deepEqual(sorted(added.fractal_ids), sorted([alpha.id, beta.id]));
    // The global admin is admin of every fractal.
    expectOk(await admin.post(`${base}/members`, { fractal_id: hidden.id }), 201);
    assert.ok(expectOk<Prism>(await admin.get(base)).fractal_ids.includes(hidden.id));
    assert.ok(!expectOk<Prism>(await alice.get(base)).fractal_ids.includes(hidden.id), 'alice holds no role on it: the prism does not show it her');
  });

  test('members are added once and removed once', async () => {
    const p = await newPrism(admin, 'Member ops', [alpha.id]);
    const base = `/api/v1/prisms/${p.id}`;
    const added = expectOk<Prism>(await admin.post(`${base}/members`, { fractal_id: beta.id }), 201);
    assert.deepEqual(added.fractal_ids, [alpha.id, beta.id]);
    assert.deepEqual(added.fractals.map((f) => f.name), ['pr-alpha', 'pr-beta']);
    expectError(await admin.post(`${base}/members`, { fractal_id: beta.id }), 409);

    expectError(await admin.post(`${base}/members`, {}), 400, '"fractal_id"');
    expectError(await admin.post(`${base}/members`, { fractal_id: 'nope' }), 400, '"fractal_id"');
    expectError(await admin.post(`${base}/members`, { fractal_id: 7 }), 400, '"fractal_id"');

    const removed = expectOk<Prism>(await admin.del(`${base}/members/${beta.id}`));
    assert.deepEqual(removed.fractal_ids, [alpha.id]);
    assert.deepEqual(expectOk<Prism>(await admin.get(base)).fractal_ids, [alpha.id]);
    expectError(await admin.del(`${base}/members/${beta.id}`), 404);
    expectError(await admin.del(`${base}/members/${unknownId()}`), 404);
    expectError(await admin.del(`${base}/members/not-a-uuid`), 400, 'fractalID');
    // The fractal itself is untouched by leaving the prism.
    expectOk(await admin.get(`/api/v1/fractals/${beta.id}`));
  });

  test('deleting a member fractal removes the membership', async () => {
    const temp = await createFractal(admin, 'pr-temp');
    const p = await newPrism(admin, 'Shrinking view', [alpha.id, temp.id]);
    const only = await newPrism(admin, 'Only temp', [temp.id]);
    expectOk(await admin.del(`/api/v1/fractals/${temp.id}`));

    const now = expectOk<Prism>(await admin.get(`/api/v1/prisms/${p.id}`));
    assert.deepEqual(now.fractal_ids, [alpha.id]);
    assert.ok(!now.fractals.some((f) => f.name === 'pr-temp'));
    const listed = expectOk<Prism[]>(await admin.get('/api/v1/prisms')).find((x) => x.id === p.id)!;
    assert.deepEqual(listed.fractal_ids, [alpha.id]);
    // A prism whose only member went away still exists, empty.
    assert.deepEqual(expectOk<Prism>(await admin.get(`/api/v1/prisms/${only.id}`)).fractal_ids, []);
  });
});

describe('selecting a prism', () => {
  test('select makes the prism the current selection, shown by /auth/me and kept across sign-ins', async () => {
    const selma = await makeUser(admin, 'selma');
    await grant(admin, alpha.id, { username: 'selma' }, 'viewer');
    const p = await newPrism(admin, 'Selected view', [alpha.id]);
    const perm = await grant(admin, p.id, { username: 'selma' }, 'viewer', 'prism');

    const before = expectOk<{ selected: { type: string; id: string } | null }>(await selma.get('/api/v1/auth/me'));
    assert.deepEqual(before.selected, { type: 'fractal', id: alpha.id, name: 'pr-alpha' });

    const sel = expectOk<{ selected: unknown }>(await selma.post(`/api/v1/prisms/${p.id}/select`));
    const want = { type: 'prism', id: p.id, name: 'Selected view' };
    assert.deepEqual(sel.selected, want);
    assert.deepEqual(expectOk<{ selected: unknown; username: string }>(await selma.get('/api/v1/auth/me')).selected, want);

    // A fresh sign-in finds the same selection.
    const again = new Client(app.url);
    const login = expectOk<{ selected: unknown }>(await again.post('/api/v1/auth/login', { username: 'selma', password: passwordOf('selma') }));
    assert.deepEqual(login.selected, want);

    // Selecting something unknown changes nothing.
    expectError(await selma.post(`/api/v1/prisms/${unknownId()}/select`), 404);
    assert.deepEqual(expectOk<{ selected: unknown }>(await selma.get('/api/v1/auth/me')).selected, want);

    // Once the role is gone the prism is no longer shown as selected.
    expectOk(await admin.del(`/api/v1/prisms/${p.id}/permissions/${perm.id}`));
    const after = expectOk<{ selected: { type: string; id: string } }>(await selma.get('/api/v1/auth/me')).selected;
    assert.deepEqual(after, { type: 'fractal', id: alpha.id, name: 'pr-alpha' });
  });

  test('deleting the selected prism moves the selection back to the default fractal', async () => {
    const p = await newPrism(admin, 'Short-lived selection', [alpha.id]);
    expectOk(await admin.post(`/api/v1/prisms/${p.id}/select`));
    assert.equal(expectOk<{ selected: { id: string } }>(await admin.get('/api/v1/auth/me')).selected.id, p.id);
    expectOk(await admin.del(`/api/v1/prisms/${p.id}`));
    const sel = expectOk<{ selected: { type: string; name: string } }>(await admin.get('/api/v1/auth/me')).selected;
    assert.deepEqual([sel.type, sel.name], ['fractal', 'default']);
  });
});

describe('prism permissions', () => {
  test('grant, list, change and revoke a user role, each taking effect at once', async () => {
    const p = await newPrism(admin, 'Permission view', [alpha.id]);
    const base = `/api/v1/prisms/${p.id}/permissions`;
    expectError(await vera.get(`/api/v1/prisms/${p.id}`), 404);

    const perm = expectOk<{ id: string; username: string; role: string; scope_id: string }>(
      await admin.post(base, { username: 'vera', role: 'viewer' }),
      201,
    );
    assert.match(perm.id, UUID_RE);
    assert.equal(perm.username, 'vera');
    assert.equal(perm.role, 'viewer');
    assert.equal(perm.scope_id, p.id);
    expectOk(await vera.get(`/api/v1/prisms/${p.id}`));
    assert.deepEqual(
      expectOk<Array<{ id: string; role: string }>>(await admin.get(base)).map((x) => [x.id, x.role]),
      [[perm.id, 'viewer']],
    );

    const changed = expectOk<{ role: string }>(await admin.put(`${base}/${perm.id}`, { role: 'admin' }));
    assert.equal(changed.role, 'admin');
    assert.equal(expectOk<Prism>(await vera.put(`/api/v1/prisms/${p.id}`, { description: 'vera is admin now' })).description, 'vera is admin now');

    expectOk(await admin.put(`${base}/${perm.id}`, { role: 'viewer' }));
    expectError(await vera.put(`/api/v1/prisms/${p.id}`, { description: 'not any more' }), 403);

    assert.deepEqual(expectOk(await admin.del(`${base}/${perm.id}`)), { deleted: true });
    expectError(await vera.get(`/api/v1/prisms/${p.id}`), 404);
    assert.deepEqual(expectOk(await admin.get(base)), []);
    expectError(await admin.del(`${base}/${perm.id}`), 404);
    expectError(await admin.put(`${base}/${perm.id}`, { role: 'admin' }), 404);
  });

  test('bad grants are refused: 400 naming the field, 404 for unknown users and groups, 409 for a second grant', async () => {
    const p = await newPrism(admin, 'Grant checks');
    const base = `/api/v1/prisms/${p.id}/permissions`;
    await grant(admin, p.id, { username: 'bob' }, 'viewer', 'prism');
    expectError(await admin.post(base, { username: 'bob', role: 'admin' }), 409, 'PUT');
    expectError(await admin.post(base, { username: 'BOB', role: 'admin' }), 409);
    expectError(await admin.post(base, { username: 'nobody-here', role: 'viewer' }), 404, 'nobody-here');
    const g = unknownId();
    expectError(await admin.post(base, { group_id: g, role: 'viewer' }), 404, g);
    expectError(await admin.post(base, { role: 'viewer' }), 400, 'username', 'group_id');
    const group = expectOk<{ id: string }>(await admin.post('/api/v1/groups', { name: 'grant-check-group' }), 201);
    expectError(await admin.post(base, { username: 'vera', group_id: group.id, role: 'viewer' }), 400, 'username', 'group_id');
    expectError(await admin.post(base, { username: 'vera', role: 'owner' }), 400, '"role"');
    expectError(await admin.post(base, { username: 'vera' }), 400, '"role"');
    expectError(await admin.post(base, { group_id: 'nope', role: 'viewer' }), 400, '"group_id"');
    expectError(await admin.post(base, { username: 5, role: 'viewer' }), 400, '"username"');

    const perms = expectOk<Array<{ username: string | null; role: string }>>(await admin.get(base));
    assert.deepEqual(perms.map((x) => [x.username, x.role]), [['bob', 'viewer']], 'only the first grant exists');
    expectError(await vera.get(`/api/v1/prisms/${p.id}`), 404);
  });

  test('PUT checks the role and that the permission belongs to this prism', async () => {
    const p1 = await newPrism(admin, 'Perm home');
    const p2 = await newPrism(admin, 'Perm elsewhere');
    const perm = await grant(admin, p1.id, { username: 'ana' }, 'viewer', 'prism');
    expectError(await admin.put(`/api/v1/prisms/${p1.id}/permissions/${perm.id}`, { role: 'superuser' }), 400, '"role"');
    expectError(await admin.put(`/api/v1/prisms/${p1.id}/permissions/${perm.id}`, {}), 400, '"role"');
    expectError(await admin.put(`/api/v1/prisms/${p1.id}/permissions/not-a-uuid`, { role: 'admin' }), 400, 'permId');
    expectError(await admin.put(`/api/v1/prisms/${p2.id}/permissions/${perm.id}`, { role: 'admin' }), 404);
    expectError(await admin.del(`/api/v1/prisms/${p2.id}/permissions/${perm.id}`), 404);
    // Nothing changed on the first prism.
    const perms = expectOk<Array<{ id: string; role: string }>>(await admin.get(`/api/v1/prisms/${p1.id}/permissions`));
    assert.deepEqual(perms.map((x) => [x.id, x.role]), [[perm.id, 'viewer']]);
    expectOk(await ana.get(`/api/v1/prisms/${p1.id}`));
  });

  test('a prism admin of one prism cannot manage another prism', async () => {
    const mine = await newPrism(alice, 'Alice own');
    const theirs = await newPrism(admin, 'Not alice');
    expectOk(await alice.get(`/api/v1/prisms/${mine.id}/permissions`));
    expectError(await alice.get(`/api/v1/prisms/${theirs.id}/permissions`), 404);
    expectError(await alice.post(`/api/v1/prisms/${theirs.id}/permissions`, { username: 'alice', role: 'admin' }), 404);
  });
});

describe('a prism is a view, never a grant', () => {
  // pia administers fractals mine and theirs and makes a prism of both; the global admin later takes
  // theirs from her. bea administers theirs (no global admin); victor holds only a role on the prism.
  let mine: string, theirs: string;
  let pia: Client, bea: Client, victor: Client;
  let prism: Prism;
  let piaKey: Client;
  let permOnTheirs: { id: string };
  const users = (r: { results: Array<Record<string, unknown>> }) => r.results.map((x) => x.user).sort();

  before(async () => {
    mine = await fractalWith(app, admin, 'view-mine', [{ user: 'mine-1' }, { user: 'mine-2' }]);
    theirs = await fractalWith(app, admin, 'view-theirs', [{ user: 'secret-1' }]);
    pia = await makeUser(admin, 'pia');
    bea = await makeUser(admin, 'bea');
    victor = await makeUser(admin, 'victor');
    await grant(admin, mine, { username: 'pia' }, 'admin');
    permOnTheirs = await grant(admin, theirs, { username: 'pia' }, 'admin');
    await grant(admin, theirs, { username: 'bea' }, 'admin');
    prism = await newPrism(pia, 'Pia view', [mine, theirs]);
    await grant(pia, prism.id, { username: 'victor' }, 'viewer', 'prism');
    const key = (await createApiKey(pia, `/api/v1/prisms/${prism.id}`, { name: 'pia-script' })).key as string;
    piaKey = new Client(app.url, { authorization: `Bearer ${key}` });
  });

  test('each reader sees only the members they may read themselves', async () => {
    assert.deepEqual(users(await ok(pia, '*', { prism_id: prism.id })), ['mine-1', 'mine-2', 'secret-1']);
    assert.deepEqual(users(await ok(piaKey, '*', { prism_id: prism.id })), ['mine-1', 'mine-2', 'secret-1']);
    // A role on the prism alone shows no member's logs, nor their names.
    assert.deepEqual((await ok(victor, '*', { prism_id: prism.id })).results, []);
    assert.deepEqual(expectOk<Prism>(await victor.get(`/api/v1/prisms/${prism.id}`)).fractal_ids, []);
  });

  test("after losing the role on a member, neither the session nor the prism's API key reads it, by any route", async () => {
    expectOk(await admin.del(`/api/v1/fractals/${theirs}/permissions/${permOnTheirs.id}`));
    for (const who of [pia, piaKey]) {
      assert.deepEqual(users(await ok(who, '*', { prism_id: prism.id })), ['mine-1', 'mine-2']);
      assert.deepEqual((await ok(who, 'groupBy(fractal_id)', { prism_id: prism.id })).results.map((r) => r.fractal_id), [mine]);
      expectError(await who.get(`/api/v1/logs/recent?fractal_id=${theirs}`), 404);
      const recent = expectOk<Array<Record<string, unknown>>>(await who.get(`/api/v1/logs/recent?prism_id=${prism.id}`));
      assert.ok(!recent.some((r) => r.fractal_id === theirs), 'logs/recent through the prism');
      const fields = await who.get(`/api/v1/query/fields?prism_id=${prism.id}`);
      assert.equal(fields.status, 200);
    }
    assert.equal((await query(piaKey, '*', { fractal_id: theirs })).status, 404, 'the key reads the member directly no more');
    assert.deepEqual(expectOk<Prism>(await pia.get(`/api/v1/prisms/${prism.id}`)).fractal_ids, [mine]);
    // Comments of the lost fractal are out of reach through the prism too.
    const log = (await ok(admin, '*', { fractal_id: theirs })).results[0]!;
    expectOk(await admin.post('/api/v1/comments', { log_id: log.log_id, fractal_id: theirs, timestamp: log.timestamp, content: 'seen', tags: ['ir'] }), 201);
    assert.deepEqual(expectOk<unknown[]>(await pia.get(`/api/v1/comments/flat?prism_id=${prism.id}`)), []);
  });

  test("the prism's admin editing its members keeps a member the prism no longer shows them", async () => {
    const edited = expectOk<Prism>(await pia.put(`/api/v1/prisms/${prism.id}`, { name: 'Pia view 2', fractal_ids: [mine] }));
    assert.deepEqual(edited.fractal_ids, [mine]);
    assert.deepEqual(sorted(expectOk<Prism>(await admin.get(`/api/v1/prisms/${prism.id}`)).fractal_ids), sorted([mine, theirs]));
  });

  test("the member fractal's admins see the membership and remove it", async () => {
    const listed = expectOk<Array<{ id: string; name: string }>>(await bea.get(`/api/v1/fractals/${theirs}/prisms`));
    assert.deepEqual(listed, [{ id: prism.id, name: 'Pia view 2' }]);
    expectError(await pia.get(`/api/v1/fractals/${theirs}/prisms`), 404, 'not found');
    expectError(await victor.del(`/api/v1/fractals/${theirs}/prisms/${prism.id}`), 404);
    assert.deepEqual(expectOk(await bea.del(`/api/v1/fractals/${theirs}/prisms/${prism.id}`)), { removed: true });
    expectError(await bea.del(`/api/v1/fractals/${theirs}/prisms/${prism.id}`), 404, 'not a member');
    assert.deepEqual(expectOk(await bea.get(`/api/v1/fractals/${theirs}/prisms`)), []);
    assert.deepEqual(expectOk<Prism>(await admin.get(`/api/v1/prisms/${prism.id}`)).fractal_ids, [mine]);
  });

  test("a prism API key reads nothing once the user who made it is disabled", async () => {
    expectOk(await admin.put('/api/v1/users/pia', { enabled: false }));
    try {
      assert.deepEqual((await ok(piaKey, '*', { prism_id: prism.id })).results, []);
    } finally {
      expectOk(await admin.put('/api/v1/users/pia', { enabled: true }));
    }
    assert.deepEqual(users(await ok(piaKey, '*', { prism_id: prism.id })), ['mine-1', 'mine-2']);
  });
});

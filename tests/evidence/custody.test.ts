// The custody log over real HTTP and the real SQLite file: entries appended through the store
// chain to each other; the route shows them with the verify verdict to the fractal's readers only;
// SQLite itself refuses changing or removing an entry; and an edit made behind the appliance's
// back (triggers dropped, rows changed or removed through SQLite) is found by verify, which names
// the entry.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectError, expectOk, grant, unknownId } from '../support/api.ts';
import { entryHash, GENESIS_HASH, verifyEntries } from '../../service/src/evidence/custody/index.ts';

let app: TestAppliance;
let admin: Client;
let viewer: Client;
let stranger: Client;
let fractal: any;
let sqlite: Database.Database;

const appendImport = (fractalId: string, file: string) =>
  app.context.custody.append(fractalId, {
    kind: 'import',
    actor: 'admin',
    details: { import_id: unknownId(), file_name: file, size_bytes: 1234, sha256: 'ab'.repeat(32), accepted: 10, rejected: 1 },
  });

/** An attacker with the SQLite file: drops the triggers, then runs `sql`. */
function behindTheBack(sql: string, ...params: unknown[]): void {
  sqlite.exec('DROP TRIGGER IF EXISTS custody_entries_no_update; DROP TRIGGER IF EXISTS custody_entries_no_delete; DROP TRIGGER IF EXISTS custody_heads_no_delete; DROP TRIGGER IF EXISTS custody_heads_forward_only;');
  sqlite.prepare(sql).run(...params);
}

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  viewer = await makeUser(admin, 'custody-viewer');
  stranger = await makeUser(admin, 'custody-stranger');
  sqlite = new Database(path.join(app.dataDir, 'metadata.sqlite'));
  sqlite.pragma('busy_timeout = 5000');
});
after(async () => {
  sqlite.close();
  await app.dispose();
});

describe('the chain', () => {
  beforeEach(async () => {
    fractal = await createFractal(admin, `custody-${unknownId().slice(0, 8)}`);
    await grant(admin, fractal.id, { username: 'custody-viewer' }, 'viewer');
  });

  test('entries chain to each other and the route shows them with an ok verdict to a viewer', async () => {
    const first = appendImport(fractal.id, 'Security.evtx');
    const second = app.context.custody.append(fractal.id, { kind: 'export', actor: 'admin', details: { archive: 'case.tar', sha256: 'cd'.repeat(32) } });
    const third = app.context.custody.append(fractal.id, { kind: 'case-import', actor: 'admin', details: { source: 'other box' } });
    assert.equal(first.prev_hash, GENESIS_HASH);
    assert.equal(second.prev_hash, first.hash);
    assert.equal(third.prev_hash, second.hash);
    assert.deepEqual([first.seq, second.seq, third.seq], [1, 2, 3]);
    // The hash is SHA-256 over the previous hash and the canonical entry: recomputable by anyone.
    assert.equal(entryHash(first.hash, second), second.hash);

    const data = expectOk(await viewer.get(`/api/v1/fractals/${fractal.id}/custody`));
    assert.equal(data.total, 3);
    assert.deepEqual(data.entries.map((e: any) => e.kind), ['import', 'export', 'case-import']);
    assert.equal(data.entries[0].details.file_name, 'Security.evtx');
    assert.deepEqual(data.verify, { ok: true, entries: 3, head_hash: third.hash });
    assert.deepEqual(verifyEntries(data.entries), data.verify, 'a chain read through the API verifies on its own');

    const page = expectOk(await viewer.get(`/api/v1/fractals/${fractal.id}/custody?limit=1&offset=1`));
    assert.deepEqual(page.entries.map((e: any) => e.seq), [2]);
    assert.equal(page.verify.ok, true, 'the verdict covers the whole chain, not the page');
  });

  test('an empty log verifies', async () => {
    assert.deepEqual(expectOk(await viewer.get(`/api/v1/fractals/${fractal.id}/custody`)).verify, { ok: true, entries: 0, head_hash: GENESIS_HASH });
  });

  test('SQLite refuses changing or removing an entry, and moving the head back', () => {
    const e = appendImport(fractal.id, 'a.json');
    appendImport(fractal.id, 'b.json');
    assert.throws(() => sqlite.prepare('UPDATE custody_entries SET actor = ? WHERE id = ?').run('mallory', e.id), /custody log entries cannot be changed/);
    assert.throws(() => sqlite.prepare('DELETE FROM custody_entries WHERE id = ?').run(e.id), /custody log entries cannot be removed/);
    assert.throws(() => sqlite.prepare('UPDATE custody_heads SET seq = 1, hash = ? WHERE fractal_id = ?').run(e.hash, fractal.id), /only moves one entry forward/);
    assert.throws(() => sqlite.prepare('DELETE FROM custody_heads WHERE fractal_id = ?').run(fractal.id), /cannot be removed/);
    assert.equal(app.context.custody.verify(fractal.id).ok, true);
  });
});

describe('tampering through SQLite is found and the entry named', () => {
  beforeEach(async () => {
    fractal = await createFractal(admin, `tamper-${unknownId().slice(0, 8)}`);
    for (const f of ['one.evtx', 'two.evtx', 'three.evtx', 'four.evtx']) appendImport(fractal.id, f);
  });

  const verdict = async () => expectOk(await admin.get(`/api/v1/fractals/${fractal.id}/custody`)).verify;

  test('a changed detail', async () => {
    const second = app.context.custody.list(fractal.id)[1]!;
    behindTheBack('UPDATE custody_entries SET details = ? WHERE id = ?', JSON.stringify({ ...second.details, sha256: 'ef'.repeat(32) }), second.id);
    const v = await verdict();
    assert.equal(v.ok, false);
    assert.deepEqual(v.bad_entry, { id: second.id, seq: 2 });
    assert.match(v.reason, /entry 2 was changed after it was recorded/);
  });

  test('a changed importer', async () => {
    const third = app.context.custody.list(fractal.id)[2]!;
    behindTheBack('UPDATE custody_entries SET actor = ? WHERE id = ?', 'someone-else', third.id);
    const v = await verdict();
    assert.deepEqual([v.ok, v.bad_entry.seq], [false, 3]);
  });

  test('a changed entry whose hash was recomputed breaks the next link', async () => {
    const [, second, third] = app.context.custody.list(fractal.id);
    const changed = { ...second!, details: { ...second!.details, rejected: 0 } };
    behindTheBack('UPDATE custody_entries SET details = ?, hash = ? WHERE id = ?', JSON.stringify(changed.details), entryHash(second!.prev_hash, changed), second!.id);
    const v = await verdict();
    assert.deepEqual(v.bad_entry, { id: third!.id, seq: 3 });
    assert.match(v.reason, /entry 3 does not chain to the entry before it/);
  });

  test('an entry removed from the middle', async () => {
    const [, second, third] = app.context.custody.list(fractal.id);
    behindTheBack('DELETE FROM custody_entries WHERE id = ?', second!.id);
    const v = await verdict();
    assert.equal(v.ok, false);
    assert.deepEqual(v.bad_entry, { id: third!.id, seq: 3 });
    assert.match(v.reason, /entry 2 is missing/);
  });

  test('the last entry removed', async () => {
    const last = app.context.custody.list(fractal.id)[3]!;
    behindTheBack('DELETE FROM custody_entries WHERE id = ?', last.id);
    const v = await verdict();
    assert.equal(v.ok, false);
    assert.equal(v.bad_entry.seq, 4);
    assert.match(v.reason, /ends at entry 3 but 4 entries were recorded/);
  });

  test('the last entry removed and the head moved back to match', async () => {
    const entries = app.context.custody.list(fractal.id);
    behindTheBack('DELETE FROM custody_entries WHERE id = ?', entries[3]!.id);
    behindTheBack('UPDATE custody_heads SET seq = 3, hash = ? WHERE fractal_id = ?', entries[2]!.hash, fractal.id);
    const v = await verdict();
    assert.equal(v.ok, false);
    assert.match(v.reason, /not written by this appliance/);
  });

  test('the whole log removed', async () => {
    behindTheBack('DELETE FROM custody_entries WHERE fractal_id = ?', fractal.id);
    const v = await verdict();
    assert.equal(v.ok, false);
    assert.match(v.reason, /ends at entry 0 but 4 entries were recorded/);
  });
});

describe('who reads it', () => {
  before(async () => {
    fractal = await createFractal(admin, 'custody-authz');
    await grant(admin, fractal.id, { username: 'custody-viewer' }, 'viewer');
    appendImport(fractal.id, 'x.ndjson');
  });

  test('someone without a role on the fractal gets 404, as for an unknown fractal', async () => {
    expectError(await stranger.get(`/api/v1/fractals/${fractal.id}/custody`), 404, fractal.id);
    expectError(await viewer.get(`/api/v1/fractals/${unknownId()}/custody`), 404);
    expectError(await new Client(app.url).get(`/api/v1/fractals/${fractal.id}/custody`), 401);
  });

  test('there is no way to change or remove entries over HTTP', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await admin.req(method, `/api/v1/fractals/${fractal.id}/custody`, method === 'DELETE' ? undefined : {});
      assert.equal(r.status, 404, `${method} answered ${r.status}`);
    }
    assert.equal(app.context.custody.count(fractal.id), 1);
  });

  test('a bad page parameter is a 400 naming it', async () => {
    expectError(await admin.get(`/api/v1/fractals/${fractal.id}/custody?limit=0`), 400, '"limit"');
  });
});

// Imports over real HTTP into the real pipeline, spool and embedded ClickHouse: every format sniffed
// from its content (evtx from the shared samples, JSON, NDJSON, CSV, syslog, gzip of them), as a raw
// body or multipart parts; the events searchable by their import id over their own (old) times;
// bad input named in the import's errors with what was readable imported; the custody entry of
// each import with the file's SHA-256; and who may import or read.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync, createGzip } from 'node:zlib';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type Res, type TestAppliance } from '../support/appliance.ts';
import { createApiKey, createFractal, credentialClient, expectError, expectOk, grant, unknownId, UUID_RE } from '../support/api.ts';
import { unpackEvtxSamples, type EvtxSamples } from '../support/evtx-samples.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
let analyst: Client;
let viewer: Client;
let stranger: Client;
let fractal: any;
let other: any;
let samples: EvtxSamples;
const FOREVER = { start: '1990-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z' };
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const sample = (name: string) => samples.files.find((f) => path.basename(f) === name)!;

async function postFile(client: Client, fractalId: string, name: string, body: Buffer | string, query = ''): Promise<Res> {
  const r = await fetch(`${client.base}/api/v1/fractals/${fractalId}/imports?name=${encodeURIComponent(name)}${query}`, {
    method: 'POST',
    headers: { ...client.headers, cookie: client.cookie, 'content-type': 'application/octet-stream' },
    body: body as unknown as BodyInit,
  });
  return { status: r.status, headers: r.headers, body: await r.json() };
}

async function finished(client: Client, fractalId: string, id: string): Promise<any> {
  return waitFor(`import ${id} to finish`, async () => {
    const d = expectOk((await client.get(`/api/v1/fractals/${fractalId}/imports/${id}`)));
    return d.status !== 'running' && d;
  });
}

/** Imports one file as a raw body and waits for its end. */
async function importFile(name: string, body: Buffer | string, query = ''): Promise<any> {
  const started = expectOk(await postFile(analyst, fractal.id, name, body, query), 201);
  assert.match(started.id, UUID_RE);
  assert.equal(started.status, 'running');
  assert.equal(started.sha256, sha256(body), 'the answer carries the SHA-256 of what was stored');
  return finished(analyst, fractal.id, started.id);
}

async function search(q: string): Promise<any[]> {
  const r = await analyst.post('/api/v1/query', { query: q, fractal_id: fractal.id, ...FOREVER });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.results;
}

const ndjson = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ timestamp: `2019-03-${String(((from + i) % 28) + 1).padStart(2, '0')}T10:00:00Z`, user: `user${from + i}`, seq: from + i })).join('\n') + '\n';

before(async () => {
  samples = unpackEvtxSamples();
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  fractal = await createFractal(admin, 'evidence');
  other = await createFractal(admin, 'elsewhere');
  analyst = await makeUser(admin, 'imp-analyst');
  viewer = await makeUser(admin, 'imp-viewer');
  stranger = await makeUser(admin, 'imp-stranger');
  await grant(admin, fractal.id, { username: 'imp-analyst' }, 'analyst');
  await grant(admin, fractal.id, { username: 'imp-viewer' }, 'viewer');
});
after(async () => {
  await app.dispose();
  samples.remove();
});

describe('each format', () => {
  test('NDJSON: events stored at their own (2019) times, tagged with the import id, counted, in the custody log', async () => {
    const body = ndjson(40) + 'not json at all\n';
    const d = await importFile('users.ndjson', body);
    assert.equal(d.status, 'done');
    assert.equal(d.format, 'ndjson');
    assert.equal(d.compression, null);
    assert.deepEqual([d.events_accepted, d.events_rejected], [40, 1]);
    assert.equal(d.size_bytes, Buffer.byteLength(body));
    assert.equal(d.bytes_read, d.size_bytes);
    assert.match(d.errors[0], /^record 41: .*JSON/);
    assert.equal(d.created_by, 'imp-analyst');
    assert.equal(d.oldest_event, '2019-03-01T10:00:00.000000000Z');
    assert.equal(d.newest_event, '2019-03-28T10:00:00.000000000Z');

    const rows = await search(`import_id="${d.id}" | sort(seq) | table(seq, user, import_id)`);
    assert.equal(rows.length, 40);
    assert.deepEqual(rows.slice(0, 2).map((r) => [Number(r.seq), r.user]), [[0, 'user0'], [1, 'user1']]);
    assert.equal(rows[0].import_id, d.id);

    const custody = expectOk(await viewer.get(`/api/v1/fractals/${fractal.id}/custody`));
    const entry = custody.entries.find((e: any) => e.details.import_id === d.id);
    assert.equal(entry.kind, 'import');
    assert.equal(entry.actor, 'imp-analyst');
    assert.deepEqual(
      [entry.details.file_name, entry.details.size_bytes, entry.details.sha256, entry.details.events_accepted, entry.details.events_rejected, entry.details.status],
      ['users.ndjson', Buffer.byteLength(body), sha256(body), 40, 1, 'done'],
    );
    assert.ok(entry.details.started_at <= entry.details.ended_at);
    assert.equal(custody.verify.ok, true);
  });

  test('a JSON array, and concatenated pretty-printed objects as evtx_dump writes them', async () => {
    const arr = await importFile('array.json', JSON.stringify([{ timestamp: '2018-05-01T00:00:00Z', kind: 'array', n: 1 }, { timestamp: '2018-05-02T00:00:00Z', kind: 'array', n: 2 }], null, 2));
    assert.deepEqual([arr.status, arr.format, arr.events_accepted, arr.events_rejected], ['done', 'json', 2, 0]);
    const dump = 'Record 1\n{\n  "Event": {\n    "System": {"EventID": 4624, "Computer": "ws1"}\n  }\n}\nRecord 2\n{\n  "Event": {\n    "System": {"EventID": 4625, "Computer": "ws1"}\n  }\n}\n';
    const d = await importFile('dump.json', dump);
    assert.deepEqual([d.status, d.format, d.events_accepted], ['done', 'json', 2]);
    const rows = await search(`import_id="${d.id}" | sort(Event.System.EventID) | table(Event.System.EventID)`);
    assert.deepEqual(rows.map((r) => Number(r['Event.System.EventID'])), [4624, 4625]);
  });

  test('CSV with a header row: a ragged row is refused naming its line, the others imported', async () => {
    const csv = 'time,user,action\r\n2017-01-01T00:00:00Z,alice,login\r\n2017-01-01T00:01:00Z,bob\r\n2017-01-01T00:02:00Z,"carol, jr","log\r\nout"\r\n';
    const d = await importFile('actions.csv', csv);
    assert.deepEqual([d.status, d.format, d.events_accepted, d.events_rejected], ['done', 'csv', 2, 1]);
    assert.deepEqual(d.errors, ['CSV line 3: 2 fields where the header row has 3']);
    const rows = await search(`import_id="${d.id}" | sort(user) | table(user, action)`);
    assert.deepEqual(rows.map((r) => [r.user, r.action]), [['alice', 'login'], ['carol, jr', 'log\r\nout']]);
    assert.equal(d.oldest_event, '2017-01-01T00:00:00.000000000Z');
  });

  test('syslog lines (RFC 5424 and RFC 3164) through the syslog parser', async () => {
    const d = await importFile('auth.log', '<34>1 2016-10-11T22:14:15.003Z mymachine su - ID47 - su root failed on /dev/pts/8\n\n<13>Oct 11 22:14:15 host1 sshd[12]: Accepted password for bob\n');
    assert.deepEqual([d.status, d.format, d.events_accepted, d.events_rejected], ['done', 'syslog', 2, 0]);
    const rows = await search(`import_id="${d.id}" | sort(hostname) | table(hostname, app_name)`);
    assert.deepEqual(rows.map((r) => [r.hostname, r.app_name]), [['host1', 'sshd'], ['mymachine', 'su']]);
  });

  test('gzip of NDJSON and of an .evtx file: sniffed inside the compression', async () => {
    const body = gzipSync(ndjson(25, 100));
    const d = await importFile('users.ndjson.gz', body);
    assert.deepEqual([d.status, d.format, d.compression, d.events_accepted], ['done', 'ndjson', 'gzip', 25]);
    assert.equal(d.bytes_read, body.length, 'progress counts bytes of the stored (compressed) file');
    const evtx = await importFile('bits.evtx.gz', gzipSync(readFileSync(sample('bits_openvpn.evtx'))));
    assert.deepEqual([evtx.status, evtx.format, evtx.compression], ['done', 'evtx', 'gzip']);
    assert.ok(evtx.events_accepted > 1000, `${evtx.events_accepted}`);
  });

  test('.evtx files in one multipart body: one import each, events in evtx_dump shape at their recorded times', async () => {
    const a = readFileSync(sample('DE_1102_security_log_cleared.evtx'));
    const b = readFileSync(sample('bits_openvpn.evtx'));
    const form = new FormData();
    form.append('note', 'ignored field');
    form.append('file', new Blob([a]), 'DE_1102_security_log_cleared.evtx');
    form.append('file', new Blob([b]), 'sub/dir/bits_openvpn.evtx');
    // As the import page sends it: a browser attests the request comes from the appliance's own page.
    const r = await fetch(`${app.url}/api/v1/fractals/${fractal.id}/imports`, { method: 'POST', headers: { cookie: analyst.cookie, 'sec-fetch-site': 'same-origin' }, body: form });
    const started = expectOk({ status: r.status, headers: r.headers, body: await r.json() }, 201);
    assert.equal(started.length, 2);
    assert.deepEqual(started.map((s: any) => s.name), ['DE_1102_security_log_cleared.evtx', 'bits_openvpn.evtx']);
    assert.deepEqual(started.map((s: any) => s.sha256), [sha256(a), sha256(b)]);
    const [da, db] = await Promise.all(started.map((s: any) => finished(analyst, fractal.id, s.id)));
    assert.deepEqual([da.status, da.format, db.status, db.format], ['done', 'evtx', 'done', 'evtx']);
    assert.deepEqual(da.errors, []);
    // 1102 "The audit log was cleared" is in the file, at its own time.
    const cleared = await search(`import_id="${da.id}" Event.System.EventID=1102 | table(Event.System.Computer, timestamp)`);
    assert.ok(cleared.length >= 1);
    assert.match(String(cleared[0].timestamp), /^2019-/);
    const count = await search(`import_id="${db.id}" | count()`);
    assert.equal(Number(count[0]._count), db.events_accepted);
  });

  test('a dropped folder of many small files in one multipart body: each file its own import, events, errors and custody entry', async () => {
    // Small files share the pipeline's batches (one spool write for many files): what each file
    // is credited with must still be its own, whatever format, order or damage.
    const files: Array<{ name: string; body: Buffer; format: string; accepted: number; rejected: number }> = [];
    for (let k = 0; k < 24; k++) {
      const n = 1 + (k % 5);
      const body = Buffer.from(ndjson(n, 1000 + k * 10) + (k % 6 === 3 ? 'broken line\n' : ''));
      files.push({ name: `host-${k}.ndjson`, body, format: 'ndjson', accepted: n, rejected: k % 6 === 3 ? 1 : 0 });
      if (k === 8) files.push({ name: 'auth.log', body: Buffer.from('<13>Oct 11 22:14:15 host1 sshd[12]: Accepted password for bob\n'), format: 'syslog', accepted: 1, rejected: 0 });
      if (k === 12) files.push({ name: 'notes.bin', body: Buffer.from([0, 1, 2, 3]), format: '', accepted: 0, rejected: 0 });
      if (k === 16) files.push({ name: 'DE_1102_security_log_cleared.evtx', body: readFileSync(sample('DE_1102_security_log_cleared.evtx')), format: 'evtx', accepted: -1, rejected: 0 });
      if (k === 20) files.push({ name: 'ragged.csv', body: Buffer.from('time,user\n2017-01-01T00:00:00Z,alice\n2017-01-01T00:01:00Z\n'), format: 'csv', accepted: 1, rejected: 1 });
    }
    const form = new FormData();
    for (const f of files) form.append('file', new Blob([f.body as unknown as BlobPart]), `folder/${f.name}`);
    const r = await fetch(`${app.url}/api/v1/fractals/${fractal.id}/imports`, { method: 'POST', headers: { cookie: analyst.cookie, 'sec-fetch-site': 'same-origin' }, body: form });
    const started = expectOk({ status: r.status, headers: r.headers, body: await r.json() }, 201);
    assert.deepEqual(started.map((s: any) => s.name), files.map((f) => f.name));
    const done = await Promise.all(started.map((s: any) => finished(analyst, fractal.id, s.id)));
    const custody = expectOk(await viewer.get(`/api/v1/fractals/${fractal.id}/custody?limit=1000`));
    assert.equal(custody.verify.ok, true);
    for (const [k, f] of files.entries()) {
      const d = done[k];
      if (f.format === '') {
        assert.equal(d.status, 'failed', f.name);
        assert.match(d.errors[0], /^notes\.bin was not imported: .*binary/);
        continue;
      }
      assert.equal(d.status, 'done', f.name);
      assert.equal(d.format, f.format, f.name);
      if (f.accepted >= 0) assert.deepEqual([d.events_accepted, d.events_rejected], [f.accepted, f.rejected], f.name);
      assert.equal(d.errors.length, f.rejected, `${f.name}: ${JSON.stringify(d.errors)}`);
      assert.equal(d.bytes_read, f.body.length, f.name);
      const count = await search(`import_id="${d.id}" | count()`);
      assert.equal(Number(count[0]._count), d.events_accepted, `${f.name}: its events and only its events carry its id`);
      const entries = custody.entries.filter((e: any) => e.details.import_id === d.id);
      assert.equal(entries.length, 1, f.name);
      assert.deepEqual([entries[0].details.file_name, entries[0].details.sha256, entries[0].details.events_accepted], [f.name, sha256(f.body), d.events_accepted]);
    }
    const host3 = done[files.findIndex((f) => f.name === 'host-3.ndjson')];
    assert.match(host3.errors[0], /^record 5: .*JSON/, 'an error names the record of its own file');
    const seqs = await search(`import_id="${done[0].id}" | table(seq)`);
    assert.deepEqual(seqs.map((x) => Number(x.seq)), [1000]);
    const host4 = done[files.findIndex((f) => f.name === 'host-4.ndjson')];
    assert.deepEqual([host4.oldest_event, host4.newest_event], ['2019-03-05T10:00:00.000000000Z', '2019-03-09T10:00:00.000000000Z'], 'its own events\' times');
  });

  test('the chosen normalizer and timestamp fields apply', async () => {
    const n = expectOk(
      await admin.post('/api/v1/normalizers', { name: 'imp-renamer', transforms: [], field_mappings: [{ sources: ['who'], target: 'user' }], value_mappings: [], timestamp_fields: [] }),
      201,
    );
    const d = await importFile('who.ndjson', '{"who":"zed","when":"2015-06-01T12:00:00Z"}\n', `&normalizer_id=${n.id}&timestamp_fields=when`);
    assert.equal(d.normalizer_id, n.id);
    assert.deepEqual(d.timestamp_fields, ['when']);
    const rows = await search(`import_id="${d.id}" | table(user, timestamp)`);
    assert.equal(rows[0].user, 'zed');
    assert.equal(d.oldest_event, '2015-06-01T12:00:00.000000000Z');
  });
});

describe('bad input', () => {
  test('an .evtx file cut in half: what was readable is imported, the cut chunk named', async () => {
    const whole = readFileSync(sample('bits_openvpn.evtx'));
    const cut = whole.subarray(0, 4096 + 65536 * 5 + 30_000);
    const d = await importFile('cut.evtx', cut);
    assert.equal(d.status, 'done');
    assert.ok(d.events_accepted > 100, `${d.events_accepted}`);
    assert.ok(d.errors.some((e: string) => /^evtx: .*(cut|end|truncat)/i.test(e)), JSON.stringify(d.errors));
    const custody = expectOk(await viewer.get(`/api/v1/fractals/${fractal.id}/custody`)).entries.find((e: any) => e.details.import_id === d.id);
    assert.equal(custody.details.events_accepted, d.events_accepted);
    assert.ok(custody.details.errors.length > 0, 'the custody log records what went wrong');
  });

  test('a chunk with a bad checksum is named, the other chunks imported', async () => {
    const whole = Buffer.from(readFileSync(sample('bits_openvpn.evtx')));
    const clean = await importFile('clean.evtx', whole);
    whole[4096 + 65536 * 2 + 2000] ^= 0xff; // inside the third chunk's records
    const d = await importFile('flipped.evtx', whole);
    assert.equal(d.status, 'done');
    assert.ok(d.errors.some((e: string) => /^evtx: .*checksum/i.test(e)), JSON.stringify(d.errors));
    assert.ok(d.events_accepted > 0 && d.events_accepted <= clean.events_accepted);
  });

  test('bad magic, a file of unknown format, an empty file: failed with a sentence, recorded in the custody log', async () => {
    const evtx = Buffer.from(readFileSync(sample('DE_1102_security_log_cleared.evtx')));
    evtx.write('NotAFile', 0, 'latin1');
    evtx.write('NotAChnk', 4096, 'latin1');
    const bad = await importFile('badmagic.evtx', evtx);
    assert.equal(bad.status, 'failed');
    assert.match(bad.errors[0], /badmagic\.evtx was not imported: .*not an \.evtx event log/);
    const text = await importFile('notes.txt', 'just some words\nand more words\n');
    assert.equal(text.status, 'failed');
    assert.match(text.errors[0], /none of the formats imports read.*"just some words"/);
    assert.equal(text.events_accepted, 0);
    const custody = expectOk(await viewer.get(`/api/v1/fractals/${fractal.id}/custody`)).entries.find((e: any) => e.details.import_id === text.id);
    assert.equal(custody.details.status, 'failed');
    assert.equal(custody.details.sha256, sha256('just some words\nand more words\n'));
  });

  test('a gzip bomb is stopped and named; the lines before it are imported', async () => {
    const gz = createGzip();
    const parts: Buffer[] = [];
    gz.on('data', (b) => parts.push(b));
    const done = new Promise((r) => gz.on('end', r));
    gz.write(ndjson(3, 500));
    const spaces = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i < 300; i++) gz.write(spaces);
    gz.end('{"timestamp":"2019-01-01T00:00:00Z","after":"bomb"}\n');
    await done;
    const bomb = Buffer.concat(parts);
    assert.ok(bomb.length < 1024 * 1024, 'a small file that inflates to 300 MiB');
    const d = await importFile('bomb.ndjson.gz', bomb);
    assert.equal(d.events_accepted, 3);
    assert.match(d.errors.join(' '), /decompression bomb/);
    assert.equal(d.status, 'done');
  });

  test('a gzip stream cut off', async () => {
    const gz = gzipSync(ndjson(20_000, 1000));
    const d = await importFile('cut.ndjson.gz', gz.subarray(0, Math.floor(gz.length / 2)));
    assert.match(d.errors.join(' '), /gzip data is corrupt or cut off/);
    assert.ok(d.events_accepted > 0 && d.events_accepted < 20_000, `${d.events_accepted}`);
  });

  test('refused with a 400 sentence: no name, an empty body, an unknown normalizer, a multipart body without files', async () => {
    const base = `${app.url}/api/v1/fractals/${fractal.id}/imports`;
    const send = async (url: string, init: RequestInit) => {
      const r = await fetch(url, { method: 'POST', ...init, headers: { cookie: analyst.cookie, 'sec-fetch-site': 'same-origin', 'content-type': 'application/octet-stream', ...(init.headers as object) } });
      return { status: r.status, headers: r.headers, body: await r.json() };
    };
    expectError(await send(base, { body: 'x' }), 400, '"name"');
    expectError(await send(`${base}?name=a.json`, { body: '' }), 400, 'empty');
    expectError(await send(`${base}?name=a.json&normalizer_id=${unknownId()}`, { body: '{}' }), 400, '"normalizer_id"');
    const form = new FormData();
    form.append('other', 'x');
    const multipart = new Response(form);
    expectError(await send(base, { body: await multipart.arrayBuffer(), headers: { 'content-type': multipart.headers.get('content-type')! } }), 400, '"file"');
    expectError(await send(base, { body: '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc', headers: { 'content-type': 'multipart/form-data; boundary=x' } }), 400, 'cut off');
  });
});

describe('who may import and read', () => {
  test('a viewer reads imports but cannot import; a stranger and another fractal get 404; API keys cannot import', async () => {
    expectError(await postFile(viewer, fractal.id, 'v.json', '{}'), 403, 'analyst');
    expectError(await postFile(stranger, fractal.id, 's.json', '{}'), 404);
    const key = await createApiKey(admin, `/api/v1/fractals/${fractal.id}`, { name: 'imp-key' });
    expectError(await postFile(credentialClient(app.url, key.key), fractal.id, 'k.json', '{}'), 403);
    const list = await viewer.get(`/api/v1/fractals/${fractal.id}/imports?limit=5`);
    const items = expectOk(list);
    assert.ok(items.length === 5 && Number(list.headers.get('x-total-count')) > 5);
    assert.ok(items[0].created_at >= items[4].created_at, 'newest first');
    expectError(await stranger.get(`/api/v1/fractals/${fractal.id}/imports`), 404);
    // An import read through another fractal's path is not found.
    await grant(admin, other.id, { username: 'imp-viewer' }, 'viewer');
    expectError(await viewer.get(`/api/v1/fractals/${other.id}/imports/${items[0].id}`), 404, items[0].id);
    assert.equal(expectOk(await viewer.get(`/api/v1/fractals/${other.id}/imports`)).length, 0);
  });
});

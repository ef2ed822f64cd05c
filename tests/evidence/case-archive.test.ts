// The case archive between two appliances: A (in this process) exports a fractal with events over
// several days, comments, notebooks with stored results, dashboards with widget results, and an
// alert that fired; B (a second service process with its own data directory) imports it over real
// HTTP. Everything arrives equal: B's own export of the imported fractal has byte-identical event
// files (every stored column: log ids, times to the nanosecond, raw text, fields). Tampered
// archives are refused naming the file and create nothing; viewers cannot export, non-admins
// cannot import.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { TarWriter, readTar } from '../../service/src/cases/tar.ts';
import { verifyEntries } from '../../service/src/evidence/custody/index.ts';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { expectError, expectOk, grant } from '../support/api.ts';
import { ingestFractal } from '../support/ingest.ts';
import { storedLogs } from '../support/logs.ts';
import { ingest, ok as queryOk } from '../support/query.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

let a: TestAppliance;
let b: ServiceProcess;
let bDir: string;
let adminA: Client;
let adminB: Client;
let source: { id: string; token: string };
let archive: Buffer;

const daysAgo = (d: number, h = 0) => new Date(Date.now() - d * 86_400_000 - h * 3_600_000).toISOString();
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The members of a .tar.gz as name → content. */
async function members(targz: Buffer): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const tar = gunzipSync(targz);
  for await (const m of readTar((async function* () {
    yield tar;
  })())) {
    const parts: Buffer[] = [];
    for await (const p of m.content()) parts.push(p);
    out.set(m.name, Buffer.concat(parts));
  }
  return out;
}

/** A tar (uncompressed: the importer reads both) of these members in this order. */
async function tarOf(files: Array<[string, Buffer]>): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const w = new TarWriter(out);
  for (const [name, content] of files) await w.add(name, content);
  await w.finish();
  out.end();
  return Buffer.concat(chunks);
}

async function runExport(c: Client, fractalId: string): Promise<{ job: any; archive: Buffer }> {
  const started = expectOk(await c.post(`/api/v1/fractals/${fractalId}/case-export`, {}), 202);
  assert.equal(started.status, 'running');
  const job = await waitFor('the export to finish', async () => {
    const j = expectOk(await c.get(`/api/v1/fractals/${fractalId}/case-exports/${started.id}`));
    return j.status !== 'running' && j;
  });
  assert.equal(job.status, 'done', JSON.stringify(job.errors));
  assert.equal(job.progress, 1);
  const r = await fetch(`${c.base}/api/v1/fractals/${fractalId}/case-exports/${job.id}/archive`, { headers: { cookie: c.cookie } });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-disposition') ?? '', /^attachment; filename="case-.*\.tar\.gz"$/);
  const body = Buffer.from(await r.arrayBuffer());
  assert.equal(sha256(body), job.archive.sha256, 'the download is the archive the job describes');
  return { job, archive: body };
}

async function postArchive(c: Client, body: Buffer, query = ''): Promise<{ status: number; body: any }> {
  const r = await fetch(`${c.base}/api/v1/case-import${query}`, { method: 'POST', headers: { cookie: c.cookie, 'content-type': 'application/gzip' }, body: new Uint8Array(body) });
  return { status: r.status, body: await r.json() };
}

/** The case import job once it ended, done or failed. */
function importEnded(c: Client, jobId: string): Promise<any> {
  return waitFor('the import to end', async () => {
    const j = expectOk(await c.get(`/api/v1/case-imports/${jobId}`));
    return j.status !== 'running' && j;
  });
}

async function waitImported(c: Client, jobId: string): Promise<any> {
  const job = await importEnded(c, jobId);
  assert.equal(job.status, 'done', JSON.stringify(job.errors));
  return job;
}

const fractalNames = async (c: Client) => expectOk<any[]>(await c.get('/api/v1/fractals')).map((f) => f.name).sort();

/** Posts a tampered archive to B: refused (400) with a sentence naming each of `mentions`, and no fractal created. */
async function refused(tar: Buffer, ...mentions: string[]): Promise<void> {
  const names = await fractalNames(adminB);
  const r = await postArchive(adminB, tar);
  assert.equal(r.status, 400, JSON.stringify(r.body));
  for (const m of mentions) assert.ok(r.body.error.includes(m), `"${r.body.error}" names ${m}`);
  assert.deepEqual(await fractalNames(adminB), names, 'no fractal was created');
}

/** The archive's members changed by `change` (a member mapped to null is left out), under a manifest made consistent with them: what a hand-made archive looks like. */
async function rebuilt(targz: Buffer, change: (name: string, content: Buffer) => Buffer | null): Promise<Buffer> {
  const files = await members(targz);
  const kept: Array<[string, Buffer]> = [];
  for (const [n, c] of files) {
    if (n.startsWith('manifest.')) continue;
    const next = change(n, c);
    if (next) kept.push([n, next]);
  }
  const manifest = { ...JSON.parse(files.get('manifest.json')!.toString()), files: kept.map(([n, c]) => ({ path: n, size: c.length, sha256: sha256(c) })) };
  const text = Buffer.from(JSON.stringify(manifest));
  return tarOf([...kept, ['manifest.json', text], ['manifest.sha256', Buffer.from(`${sha256(text)}  manifest.json\n`)]]);
}

before(async () => {
  bDir = mkdtempSync(path.join(tmpdir(), 'svc-case-b-'));
  [a, b] = await Promise.all([
    startTestAppliance({ SVC_ALERT_INTERVAL_S: '1' }),
    startServiceProcess({ dataDir: bDir, env: { SVC_ADMIN_PASSWORD: ADMIN_PASSWORD } }),
  ]);
  adminA = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  adminB = await signIn(b.base, 'admin', ADMIN_PASSWORD);
  source = await ingestFractal(adminA, 'intrusion-2024');

  await ingest(a, source.token, source.id, [
    { timestamp: daysAgo(3), host: 'dc1', event_id: 4625, user: 'alice', status: 500, msg: 'logon failure' },
    { timestamp: daysAgo(3, 1), host: 'dc1', event_id: 4624, user: 'bob', nested: { a: { b: 1.5 } }, list: [1, 'two', null] },
    { timestamp: '2024-02-29T23:59:59.123456789Z', host: 'web1', big: 18446744073709551615, when: '2024-01-01T00:00:00Z', msg: 'leap day, nanoseconds' },
    { timestamp: daysAgo(0), host: 'web1', status: 500, msg: 'Zoë ✓ unicode' },
    { timestamp: daysAgo(0), host: 'web2', status: 200, msg: 'ok' },
    '{"timestamp":"2024-03-01T00:00:00.5Z","host":"web2","n":1.0,"exact":123456789012345678901234567890}',
  ]);
  const logs = await storedLogs(a, source.id);
  // What an evidence import records (its endpoint is another part of the work): one custody entry.
  a.context.custody.append(source.id, { kind: 'import', actor: 'admin', details: { file_name: 'Security.evtx', size: 69632, sha256: 'ab'.repeat(32), events_accepted: 6, events_rejected: 0 } });

  // Comments on two logs, with tags.
  const [first, second] = logs;
  for (const [log, content, tags] of [[first!, 'first sign of the intrusion', ['ioc', 'timeline']], [second!, 'lateral movement', ['timeline']]] as const) {
    expectOk(await adminA.post('/api/v1/comments', { log_id: log.log_id, fractal_id: source.id, content, tags, timestamp: new Date(`${log.timestamp.replace(' ', 'T').slice(0, 23)}Z`).toISOString() }), 201);
  }
  // A notebook whose query section holds stored results.
  const nb = expectOk(await adminA.post('/api/v1/notebooks', { fractal_id: source.id, name: 'Timeline', description: 'what happened', time_range: 'custom', start: '2024-01-01T00:00:00Z', end: daysAgo(-1) }), 201);
  expectOk(await adminA.post(`/api/v1/notebooks/${nb.id}/sections`, { section_type: 'markdown', title: 'Summary', content: '# Intrusion\nFound on **dc1**.' }), 201);
  const q = expectOk(await adminA.post(`/api/v1/notebooks/${nb.id}/sections`, { section_type: 'query', title: 'Errors', content: 'status=500' }), 201);
  expectOk(await adminA.post(`/api/v1/notebooks/${nb.id}/sections/${q.id}/execute`, {}));
  // A dashboard with a widget that ran.
  const d = expectOk(await adminA.post('/api/v1/dashboards', { fractal_id: source.id, name: 'Overview', time_range: '7d' }), 201);
  expectOk(await adminA.post(`/api/v1/dashboards/${d.id}/widgets`, { title: 'By host', query_content: 'groupBy(host)', chart_type: 'barchart' }), 201);
  expectOk(await adminA.post(`/api/v1/dashboards/${d.id}/execute`, {}));
  // An alert that fires on the events just ingested.
  const alert = expectOk(await adminA.post('/api/v1/alerts', { fractal_id: source.id, name: 'Server errors', query_string: 'status=500', severity: 'high', labels: ['web'] }), 201);
  await waitFor('the alert to fire', async () => expectOk<any[]>(await adminA.get(`/api/v1/alerts/${alert.id}/executions`)).length > 0);
});

after(async () => {
  await a?.dispose();
  await b?.stop();
  if (bDir) rmSync(bDir, { recursive: true, force: true });
});

describe('case archive', () => {
  test('export on A: a job with progress, then one archive whose manifest lists every file with its SHA-256', async () => {
    const exported = await runExport(adminA, source.id);
    archive = exported.archive;
    assert.equal(exported.job.events_done, 6);
    assert.equal(exported.job.events_total, 6);
    const files = await members(archive);
    const manifest = JSON.parse(files.get('manifest.json')!.toString());
    assert.equal(manifest.format, 'svc-case/1');
    assert.equal(manifest.event_count, 6);
    assert.equal(files.get('manifest.sha256')!.toString(), `${sha256(files.get('manifest.json')!)}  manifest.json\n`);
    assert.equal(exported.job.archive.manifest_sha256, sha256(files.get('manifest.json')!));
    const listed = manifest.files.map((f: any) => f.path).sort();
    assert.deepEqual(listed, [...files.keys()].filter((n) => !n.startsWith('manifest.')).sort(), 'every file is listed, and only those');
    for (const f of manifest.files) {
      assert.equal(sha256(files.get(f.path)!), f.sha256, f.path);
      assert.equal(files.get(f.path)!.length, f.size, f.path);
    }
    // Events by day: the leap day, three days ago and today, each its own part.
    const parts = listed.filter((p: string) => p.startsWith('events/'));
    assert.ok(parts.includes('events/2024-02-29/0001.ndjson'), parts.join(', '));
    assert.equal(parts.length, new Set(parts.map((p: string) => p.split('/')[1])).size);
    assert.ok(parts.length >= 3);
    const leap = JSON.parse(files.get('events/2024-02-29/0001.ndjson')!.toString().trim());
    assert.equal(leap.timestamp, '2024-02-29 23:59:59.123456789', 'the stored time to the nanosecond');
    // The archive carries the custody log as it stood; the export itself is the log's next entry.
    const carried = files.get('custody.ndjson')!.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(carried.map((e) => e.kind), ['import']);
    const custody = expectOk(await adminA.get(`/api/v1/fractals/${source.id}/custody`));
    assert.deepEqual(custody.entries.map((e: any) => e.kind), ['import', 'export']);
    assert.deepEqual(custody.entries[0], carried[0]);
    assert.equal(custody.entries[1].details.archive_sha256, sha256(archive));
    assert.equal(custody.entries[1].details.manifest_sha256, exported.job.archive.manifest_sha256);
    assert.equal(custody.entries[1].actor, 'admin');
    assert.equal(custody.verify.ok, true);
  });

  test('import on B: a new fractal whose events, comments, notebooks, dashboards, alerts and firings equal A\'s', async () => {
    const r = await postArchive(adminB, archive);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const job = await waitImported(adminB, r.body.data.id);
    assert.equal(job.fractal_name, 'intrusion-2024');
    assert.equal(job.events_done, 6);
    assert.equal(job.archive.sha256, sha256(archive));
    const id = job.fractal_id as string;
    assert.notEqual(id, source.id);

    // Custody: the new fractal's log starts with the case import, which carries A's log unchanged
    // (still a chain that verifies) and the hash of the archive received.
    const custody = expectOk(await adminB.get(`/api/v1/fractals/${id}/custody`));
    assert.equal(custody.verify.ok, true);
    assert.deepEqual(custody.entries.map((e: any) => e.kind), ['case-import']);
    const entry = custody.entries[0];
    assert.equal(entry.details.archive_sha256, sha256(archive));
    assert.equal(entry.details.source_fractal.id, source.id);
    const sourceLog = expectOk(await adminA.get(`/api/v1/fractals/${source.id}/custody`)).entries;
    assert.deepEqual(entry.details.carried_custody.entries, sourceLog.slice(0, 1), 'the entries before the export, unchanged');
    const verdict = verifyEntries(entry.details.carried_custody.entries);
    assert.equal(verdict.ok, true);
    assert.equal(entry.details.carried_custody.head_hash, sourceLog[0].hash);

    // Events: B's own archive of the fractal carries the same event files, byte for byte.
    const again = await members((await runExport(adminB, id)).archive);
    const original = await members(archive);
    const events = (m: Map<string, Buffer>) => [...m].filter(([n]) => n.startsWith('events/')).map(([n, c]) => [n, c.toString()]);
    assert.deepEqual(events(again), events(original));
    // And they are searched as they were, numbers as numbers.
    const count = async (c: Client, fid: string, q: string) =>
      (await c.post('/api/v1/query', { query: q, fractal_id: fid, start: '2020-01-01T00:00:00Z', end: daysAgo(-1) })).body.count;
    for (const q of ['*', 'status>=500', 'host=dc1', 'Zoë']) assert.equal(await count(adminB, id, q), await count(adminA, source.id, q), q);

    const strip = (o: any, keys: string[]) => JSON.parse(JSON.stringify(o, (k, v) => (keys.includes(k) ? undefined : v)));
    const ids = ['id', 'fractal_id', 'notebook_id', 'dashboard_id', 'widget_id', 'alert_id', 'execution_id', 'live_event_id', 'scope', 'can_edit', 'author_user_id', 'author_key_id'];
    const comments = async (c: Client, fid: string) => strip(expectOk(await c.get(`/api/v1/comments/flat?fractal_id=${fid}`)), ids);
    assert.equal((await comments(adminB, id)).length, 2);
    assert.deepEqual(await comments(adminB, id), await comments(adminA, source.id));

    const notebooks = async (c: Client, fid: string) => {
      const list = expectOk<any[]>(await c.get(`/api/v1/notebooks?fractal_id=${fid}`));
      return Promise.all(list.map(async (n) => strip(expectOk(await c.get(`/api/v1/notebooks/${n.id}`)), ids)));
    };
    const [nbB] = await notebooks(adminB, id);
    assert.notEqual(nbB.sections.find((x: any) => x.section_type === 'query').results, null, 'the query section\'s stored results came along');
    assert.deepEqual(await notebooks(adminB, id), await notebooks(adminA, source.id));

    const dashboards = async (c: Client, fid: string) => {
      const list = expectOk<any[]>(await c.get(`/api/v1/dashboards?fractal_id=${fid}`));
      return Promise.all(list.map(async (d) => strip(expectOk(await c.get(`/api/v1/dashboards/${d.id}`)), ids)));
    };
    assert.deepEqual(await dashboards(adminB, id), await dashboards(adminA, source.id));

    const alerts = async (c: Client, fid: string) => {
      const list = expectOk<any[]>(await c.get(`/api/v1/alerts?fractal_id=${fid}`));
      return Promise.all(
        list.map(async (x) => ({
          // The engine goes on evaluating on both sides: when and how long it last looked moves on.
          alert: strip(expectOk(await c.get(`/api/v1/alerts/${x.id}`)), [...ids, 'sparkline', 'feed_id', 'last_evaluated_at', 'last_execution_ms', 'cursor']),
          executions: strip(expectOk(await c.get(`/api/v1/alerts/${x.id}/executions`)), ids),
        })),
      );
    };
    const alertsB = await alerts(adminB, id);
    assert.equal(alertsB.length, 1);
    assert.ok(alertsB[0]!.executions.length >= 1, 'the firings came along');
    assert.deepEqual(alertsB, await alerts(adminA, source.id));
  });

  test('a second import of the same archive gets a name of its own; a name asked for that is taken is a 409', async () => {
    const r = await postArchive(adminB, archive);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const job = await waitImported(adminB, r.body.data.id);
    assert.match(job.fractal_name, /^intrusion-2024 \(imported \d{4}-\d{2}-\d{2}\)$/);
    assert.equal(job.events_done, 6);
    const taken = await postArchive(adminB, archive, '?name=intrusion-2024');
    assert.equal(taken.status, 409);
    assert.match(taken.body.error, /"intrusion-2024" already exists/);
    const named = await postArchive(adminB, archive, '?name=Case%2042');
    assert.equal((await waitImported(adminB, named.body.data.id)).fractal_name, 'Case 42');
  });

  test('the archive as the "file" part of multipart/form-data, from a signed-in browser on the same origin', async () => {
    const form = new FormData();
    form.append('note', 'from the laptop');
    form.append('file', new Blob([new Uint8Array(archive)]), 'case-from-laptop.tar.gz');
    const r = await fetch(`${b.base}/api/v1/case-import?name=From%20multipart`, { method: 'POST', headers: { cookie: adminB.cookie, 'sec-fetch-site': 'same-origin' }, body: form });
    const body = (await r.json()) as any;
    assert.equal(r.status, 202, JSON.stringify(body));
    const job = await waitImported(adminB, body.data.id);
    assert.equal(job.events_done, 6);
    assert.equal(job.archive.sha256, sha256(archive), 'the part, not the whole body, is the archive');
    const custody = expectOk(await adminB.get(`/api/v1/fractals/${job.fractal_id}/custody`));
    assert.equal(custody.entries[0].details.archive_file, 'case-from-laptop.tar.gz');
    const none = new FormData();
    none.append('note', 'no file');
    const refused = await fetch(`${b.base}/api/v1/case-import`, { method: 'POST', headers: { cookie: adminB.cookie, 'sec-fetch-site': 'same-origin' }, body: none });
    assert.equal(refused.status, 400);
    assert.match(((await refused.json()) as any).error, /no part named "file"/);
  });

  describe('a tampered archive is refused naming the file, and nothing is created', () => {
    let files: Array<[string, Buffer]>;
    let eventsPart: string;
    before(async () => {
      files = [...(await members(archive))];
      eventsPart = files.find(([n]) => n.startsWith('events/'))![0];
    });
    const manifestOf = () => JSON.parse(files.find(([n]) => n === 'manifest.json')![1].toString());
    const withManifest = (m: unknown): Array<[string, Buffer]> => {
      const text = Buffer.from(JSON.stringify(m));
      return files.map(([n, c]) => [n, n === 'manifest.json' ? text : n === 'manifest.sha256' ? Buffer.from(`${sha256(text)}  manifest.json\n`) : c]);
    };

    test('an event file changed', async () => {
      const changed = files.map(([n, c]): [string, Buffer] => [n, n === eventsPart ? Buffer.from(c.toString().replace('dc1', 'dc9').replace('web1', 'web9')) : c]);
      await refused(await tarOf(changed), eventsPart, 'was changed');
    });

    test('an event file\'s manifest entry removed (the manifest and its hash made consistent)', async () => {
      const m = manifestOf();
      m.files = m.files.filter((f: any) => f.path !== eventsPart);
      await refused(await tarOf(withManifest(m)), eventsPart, 'does not list');
    });

    test('the manifest changed to match a changed event file, its hash left alone', async () => {
      const m = manifestOf();
      const changed = Buffer.from('{"forged":true}\n');
      m.files.find((f: any) => f.path === eventsPart).sha256 = sha256(changed);
      const text = Buffer.from(JSON.stringify(m));
      await refused(await tarOf(files.map(([n, c]) => [n, n === 'manifest.json' ? text : n === eventsPart ? changed : c])), 'manifest.json was changed');
    });

    test('an event file removed, and an extra file added', async () => {
      await refused(await tarOf(files.filter(([n]) => n !== eventsPart)), eventsPart, 'missing');
      await refused(await tarOf([...files, ['events/2030-01-01/0001.ndjson', Buffer.from('{}\n')]]), 'events/2030-01-01/0001.ndjson', 'does not list');
    });

    test('the custody log changed (the manifest made consistent): its chain no longer verifies', async () => {
      const forged = files
        .filter(([n]) => !n.startsWith('manifest.'))
        .map(([n, c]): [string, Buffer] => [n, n === 'custody.ndjson' ? Buffer.from(c.toString().replace('"actor":"admin"', '"actor":"mallory"')) : c]);
      assert.notDeepEqual(forged, files.filter(([n]) => !n.startsWith('manifest.')));
      const m = { ...manifestOf(), files: forged.map(([n, c]) => ({ path: n, size: c.length, sha256: sha256(c) })) };
      const text = Buffer.from(JSON.stringify(m));
      await refused(await tarOf([...forged, ['manifest.json', text], ['manifest.sha256', Buffer.from(`${sha256(text)}  manifest.json\n`)]]), 'custody.ndjson', 'entry 1 was changed');
    });

    test('not an archive at all', async () => {
      await refused(Buffer.from('just some text, not a tar'), 'not a case archive');
      await refused(archive.subarray(0, Math.floor(archive.length / 2)), 'cut short');
    });
  });

  test('an archive whose hashes hold but whose records cannot be restored fails as a job and keeps nothing, its events included', async () => {
    // Made by hand: the manifest is consistent, but an alert carries a column no appliance has.
    const files = [...(await members(archive))].filter(([n]) => !n.startsWith('manifest.'));
    const forged = files.map(([n, c]): [string, Buffer] => [n, n === 'alerts.ndjson' ? Buffer.from(`${JSON.stringify({ ...JSON.parse(c.toString()), bogus: 1 })}\n`) : c]);
    const manifest = { ...JSON.parse((await members(archive)).get('manifest.json')!.toString()), files: forged.map(([n, c]) => ({ path: n, size: c.length, sha256: sha256(c) })) };
    const text = Buffer.from(JSON.stringify(manifest));
    const tar = await tarOf([...forged, ['manifest.json', text], ['manifest.sha256', Buffer.from(`${sha256(text)}  manifest.json\n`)]]);
    const allLogs = async () => {
      const rs = await a.context.ch.client.query({ query: `SELECT count() AS n FROM ${a.context.ch.table('logs')}`, format: 'JSONEachRow' });
      return Number(((await rs.json()) as Array<{ n: string }>)[0]!.n);
    };
    const [logsBefore, names] = [await allLogs(), await fractalNames(adminA)];
    const r = await postArchive(adminA, tar);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const job = await importEnded(adminA, r.body.data.id);
    assert.equal(job.status, 'failed');
    assert.match(job.errors.join(' '), /nothing of it was kept: "bogus" is not a column of alerts/);
    assert.equal(job.fractal_id, null);
    assert.deepEqual(await fractalNames(adminA), names, 'no fractal');
    assert.equal(await allLogs(), logsBefore, 'the events stored before the failure were removed');
  });

  test('who may: a viewer cannot export, a fractal admin who is no global admin cannot import', async () => {
    const vic = await makeUser(adminA, 'vic');
    await grant(adminA, source.id, { username: 'vic' }, 'viewer');
    expectError(await vic.post(`/api/v1/fractals/${source.id}/case-export`, {}), 403, 'analyst role');
    expectError(await vic.get(`/api/v1/fractals/${source.id}/case-exports`), 403, 'analyst role');

    const names = await fractalNames(adminB);
    const fred = await makeUser(adminB, 'fred');
    const own = (await fractalNamesWithIds(adminB))[0]!;
    await grant(adminB, own.id, { username: 'fred' }, 'admin');
    const r = await postArchive(fred, archive);
    assert.equal(r.status, 403);
    assert.match(r.body.error, /administrator/i);
    expectError(await fred.get('/api/v1/case-imports'), 403);
    assert.deepEqual(await fractalNames(adminB), names);
  });
});

const fractalNamesWithIds = async (c: Client) => expectOk<any[]>(await c.get('/api/v1/fractals'));

// The dictionaries the case's queries read travel with it: the fractal's own ("Hosts") and a
// global one a query names ("ioc", 12,002 rows: more than one line holds, values with characters
// of several bytes). B already has a different global "IOC"; the imported fractal's queries must
// read the carried copies, and B's own dictionary stays as it was.
describe('dictionaries the case\'s queries read travel with it', () => {
  const NOTEBOOK_QUERY = 'src_ip=* | match(dict="ioc", field=src_ip, column=ip, include=[category], strict=true) | match(dict=HOSTS, field=host, column=host, include=[owner], strict=true)';
  const WIDGET_QUERY = 'match(dict=Hosts, field=host, column=host, include=[owner]) | groupBy(owner)';
  const ALERT_QUERY = 'match(dict=IOC, field=src_ip, column=ip, include=[category], strict=true)';
  const range = { start: '2020-01-01T00:00:00Z', end: daysAgo(-1) };
  const filler = (i: number) => ({ ip: `203.0.${Math.floor(i / 256)}.${i % 256}`, category: `filler Zoë ✓ ${i}` });
  let ioc: { fractal: { id: string; token: string }; archive: Buffer; globalA: any; globalB: any; hostsA: any };

  before(async () => {
    const fractal = await ingestFractal(adminA, 'ioc-hunt');
    await ingest(a, fractal.token, fractal.id, [
      { timestamp: daysAgo(1), src_ip: '10.0.0.66', host: 'web1' },
      { timestamp: daysAgo(1, 1), src_ip: '10.0.0.77', host: 'dc1' },
      { timestamp: daysAgo(1, 2), src_ip: '192.0.2.1', host: 'web1' },
      { timestamp: daysAgo(1, 3), src_ip: '203.0.0.5', host: 'mail' },
    ]);
    const newDict = async (c: Client, body: object, rows: object[]) => {
      const d = expectOk(await c.post('/api/v1/dictionaries', body), 201);
      for (let i = 0; i < rows.length; i += 10_000) expectOk(await c.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: rows.slice(i, i + 10_000) }));
      return expectOk(await c.get(`/api/v1/dictionaries/${d.id}`));
    };
    const hostsA = await newDict(adminA, { name: 'Hosts', description: 'who runs what', fractal_id: fractal.id, columns: ['host', 'owner'] }, [
      { host: 'web1', owner: 'alice' },
      { host: 'dc1', owner: 'bob' },
    ]);
    const globalA = await newDict(adminA, { name: 'ioc', description: 'bad addresses', is_global: true, columns: ['ip', 'category'] }, [
      { ip: '10.0.0.66', category: 'c2' },
      { ip: '10.0.0.77', category: 'scanner' },
      ...Array.from({ length: 12_000 }, (_, i) => filler(i)),
    ]);
    // Global, but named by no query of the case: it stays behind.
    await newDict(adminA, { name: 'unused', is_global: true, columns: ['k'] }, [{ k: '1' }]);
    const globalB = await newDict(adminB, { name: 'IOC', description: 'B\'s own', is_global: true, columns: ['ip', 'category', 'extra'] }, [{ ip: '10.0.0.66', category: 'benign-on-B', extra: 'x' }]);

    const nb = expectOk(await adminA.post('/api/v1/notebooks', { fractal_id: fractal.id, name: 'Hunt', time_range: 'custom', start: range.start, end: range.end }), 201);
    expectOk(await adminA.post(`/api/v1/notebooks/${nb.id}/sections`, { section_type: 'query', title: 'Known bad', content: NOTEBOOK_QUERY }), 201);
    const d = expectOk(await adminA.post('/api/v1/dashboards', { fractal_id: fractal.id, name: 'Owners', time_range: '7d' }), 201);
    expectOk(await adminA.post(`/api/v1/dashboards/${d.id}/widgets`, { title: 'By owner', query_content: WIDGET_QUERY, chart_type: 'barchart' }), 201);
    expectOk(await adminA.post('/api/v1/alerts', { fractal_id: fractal.id, name: 'Known bad address', query_string: ALERT_QUERY, severity: 'high' }), 201);
    ioc = { fractal, archive: (await runExport(adminA, fractal.id)).archive, globalA, globalB, hostsA };
  });

  const dictionaryLines = async (targz: Buffer) => (await members(targz)).get('dictionaries.ndjson')?.toString().trim().split('\n').map((l) => JSON.parse(l));
  const queryRows = async (c: Client, fractalId: string, q: string) => (await queryOk(c, q, { fractal_id: fractalId, ...range })).results;
  const matched = (rows: any[]) => rows.map((r) => [r.src_ip, r.host, r.category, r.owner].filter((v) => v !== undefined).join(' ')).sort();

  test('the archive carries the fractal\'s dictionary and the global one its queries name, rows and all, listed in the manifest', async () => {
    const files = await members(ioc.archive);
    const manifest = JSON.parse(files.get('manifest.json')!.toString());
    const entry = manifest.files.find((f: any) => f.path === 'dictionaries.ndjson');
    assert.ok(entry, 'dictionaries.ndjson is listed');
    assert.equal(entry.sha256, sha256(files.get('dictionaries.ndjson')!));
    const lines = (await dictionaryLines(ioc.archive))!;
    assert.deepEqual(lines.map((l) => l.dictionary?.name ?? '(more rows)'), ['Hosts', 'ioc', '(more rows)'], 'the unused global stays behind; 12,002 rows take two lines');
    assert.deepEqual(lines[0].dictionary, { name: 'Hosts', description: 'who runs what', scope: 'fractal', columns: ['host', 'owner'], key_columns: ['host'], created_by: 'admin', created_at: ioc.hostsA.created_at, updated_at: ioc.hostsA.updated_at });
    assert.equal(lines[1].dictionary.scope, 'global');
    assert.deepEqual(lines[0].rows, [{ host: 'dc1', owner: 'bob' }, { host: 'web1', owner: 'alice' }]);
    assert.equal(lines[1].rows.length + lines[2].rows.length, 12_002);
  });

  test('on B the carried queries read the carried dictionaries, not B\'s global of the same name, which is left as it was', async () => {
    const r = await postArchive(adminB, ioc.archive);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const id = (await waitImported(adminB, r.body.data.id)).fractal_id as string;

    // The new fractal owns both, whatever they were on A, with their definitions and every row.
    const visible = expectOk<any[]>(await adminB.get(`/api/v1/dictionaries?fractal_id=${id}`));
    const own = visible.filter((d) => d.fractal_id === id);
    assert.deepEqual(own.map((d) => [d.name, d.description, d.columns, d.key_columns, d.row_count]), [
      ['Hosts', 'who runs what', ['host', 'owner'], ['host'], 2],
      ['ioc', 'bad addresses', ['ip', 'category'], ['ip'], 12_002],
    ]);
    const csv = async (c: Client, dictId: string) => (await fetch(`${c.base}/api/v1/dictionaries/${dictId}/export`, { headers: { cookie: c.cookie } })).text();
    assert.equal(await csv(adminB, own[1].id), await csv(adminA, ioc.globalA.id), 'every row of ioc, multi-byte characters whole');

    // The carried queries, as B holds them, give on B what they give on A.
    const nb = expectOk<any[]>(await adminB.get(`/api/v1/notebooks?fractal_id=${id}`))[0];
    const section = expectOk(await adminB.get(`/api/v1/notebooks/${nb.id}`)).sections[0];
    assert.equal(section.content, NOTEBOOK_QUERY);
    const onB = matched(await queryRows(adminB, id, section.content));
    assert.deepEqual(onB, ['10.0.0.66 web1 c2 alice', '10.0.0.77 dc1 scanner bob']);
    assert.deepEqual(onB, matched(await queryRows(adminA, ioc.fractal.id, NOTEBOOK_QUERY)));

    const dash = expectOk<any[]>(await adminB.get(`/api/v1/dashboards?fractal_id=${id}`))[0];
    const widget = expectOk(await adminB.get(`/api/v1/dashboards/${dash.id}`)).widgets[0];
    const owners = (rows: any[]) => rows.map((x) => `${x.owner}:${x._count}`).sort();
    assert.deepEqual(owners(await queryRows(adminB, id, widget.query_content)), [':1', 'alice:2', 'bob:1']);

    const alert = expectOk<any[]>(await adminB.get(`/api/v1/alerts?fractal_id=${id}`))[0];
    const alerted = (rows: any[]) => rows.map((x) => `${x.src_ip} ${x.category}`).sort();
    const alertOnB = alerted(await queryRows(adminB, id, alert.query_string));
    assert.deepEqual(alertOnB, ['10.0.0.66 c2', '10.0.0.77 scanner', '203.0.0.5 filler Zoë ✓ 5']);
    assert.deepEqual(alertOnB, alerted(await queryRows(adminA, ioc.fractal.id, ALERT_QUERY)));

    // B's global IOC: the same definition and its one row.
    assert.deepEqual(expectOk(await adminB.get(`/api/v1/dictionaries/${ioc.globalB.id}`)), ioc.globalB);
    assert.deepEqual(expectOk(await adminB.get(`/api/v1/dictionaries/${ioc.globalB.id}/rows`)), [{ ip: '10.0.0.66', category: 'benign-on-B', extra: 'x' }]);
    // And B's other fractals still read it.
    const other = await ingestFractal(adminB, 'b-own');
    assert.equal(visible.filter((d) => d.fractal_id === null && d.name === 'IOC').length, 1);
    assert.equal(expectOk<any[]>(await adminB.get(`/api/v1/dictionaries?fractal_id=${other.id}`)).find((d) => d.name.toLowerCase() === 'ioc').id, ioc.globalB.id);
  });

  test('a changed dictionaries.ndjson is refused naming it', async () => {
    const files = [...(await members(ioc.archive))];
    const changed = files.map(([n, c]): [string, Buffer] => [n, n === 'dictionaries.ndjson' ? Buffer.from(c.toString().replace('"alice"', '"mallory"')) : c]);
    await refused(await tarOf(changed), 'dictionaries.ndjson', 'was changed');
  });

  test('a dictionaries.ndjson line that is no dictionary fails the import naming the line, and the rows stored before it are removed', async () => {
    const bad = '{"dictionary":{"name":"no spaces allowed","columns":["k"],"key_columns":["k"]},"rows":[]}\n';
    const tar = await rebuilt(ioc.archive, (n, c) => (n === 'dictionaries.ndjson' ? Buffer.concat([c, Buffer.from(bad)]) : c));
    const count = async (sql: string) => {
      const rs = await a.context.ch.client.query({ query: sql, format: 'JSONEachRow' });
      return Number(((await rs.json()) as Array<{ n: string }>)[0]!.n);
    };
    const engineRows = () => count(`SELECT count() AS n FROM ${a.context.ch.table('dictionary_rows')}`);
    const definitions = () => a.context.dictionaries.visibleTo({ type: 'fractal', id: ioc.fractal.id }).length;
    const before = { rows: await engineRows(), definitions: definitions(), names: await fractalNames(adminA) };
    const r = await postArchive(adminA, tar);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const job = await importEnded(adminA, r.body.data.id);
    assert.equal(job.status, 'failed');
    assert.match(job.errors.join(' '), /nothing of it was kept: dictionaries\.ndjson line 4: The field "name" must be/);
    assert.deepEqual(await fractalNames(adminA), before.names);
    assert.equal(definitions(), before.definitions);
    assert.equal(await engineRows(), before.rows, 'the 12,004 rows stored before line 4 were removed');
  });

  test('an archive without dictionaries.ndjson (written before they were carried) still imports', async () => {
    assert.ok((await members(ioc.archive)).has('dictionaries.ndjson'));
    const older = await rebuilt(ioc.archive, (n, c) => (n === 'dictionaries.ndjson' ? null : c));
    const r = await postArchive(adminB, older, '?name=ioc-hunt-older');
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const job = await waitImported(adminB, r.body.data.id);
    assert.equal(job.events_done, 4);
    const id = job.fractal_id as string;
    assert.deepEqual(expectOk<any[]>(await adminB.get(`/api/v1/dictionaries?fractal_id=${id}`)).filter((d) => d.fractal_id === id), []);
    assert.equal(expectOk<any[]>(await adminB.get(`/api/v1/notebooks?fractal_id=${id}`)).length, 1);
    // As before this change: the queries name dictionaries B does not have for this fractal.
    const hosts = await adminB.post('/api/v1/query', { query: NOTEBOOK_QUERY, fractal_id: id, ...range });
    assert.equal(hosts.status, 400);
    assert.match(hosts.body.error, /dictionary "HOSTS" with key column "host" not found/);
  });
});

// Imports across a restart of the appliance (the same data directory, a real stop and start): an
// import stopped mid-file resumes from its file and ends with every record stored exactly once,
// even when the saved checkpoint lags behind what the spool already held (the log ids of an
// import are fixed by its id and the record's position); and an upload cut off by its sender
// fails, with the custody log recording how much arrived.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { waitFor } from '../support/wait.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-import-resume-'));
let app: TestAppliance | null = null;
after(async () => {
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const TOTAL = 300_000;
const lines = () => {
  const out: string[] = [];
  for (let i = 0; i < TOTAL; i++) out.push(`{"timestamp":"2020-02-${String((i % 28) + 1).padStart(2, '0')}T01:02:03Z","seq":${i},"host":"h${i % 17}"}`);
  return out.join('\n') + '\n';
};

async function stored(a: TestAppliance, importId: string): Promise<{ n: number; ids: number; seqs: number }> {
  const rs = await a.context.ch.client.query({
    query: `SELECT count() AS n, uniqExact(log_id) AS ids, uniqExact(toString(getSubcolumn(fields, 'seq'))) AS seqs FROM ${a.context.ch.table('logs')}
            WHERE toString(getSubcolumn(fields, 'import_id')) = {id:String}`,
    query_params: { id: importId },
    format: 'JSONEachRow',
  });
  const [r] = (await rs.json()) as Array<Record<string, string>>;
  return { n: Number(r!.n), ids: Number(r!.ids), seqs: Number(r!.seqs) };
}

test('an import stopped mid-file resumes after the restart and stores every record once', async () => {
  app = await startTestAppliance({}, dir);
  let admin: Client = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const fractalId = app.context.fractals.defaultFractal()!.id;
  const body = lines();
  const r = await fetch(`${app.url}/api/v1/fractals/${fractalId}/imports?name=big.ndjson`, {
    method: 'POST',
    headers: { cookie: admin.cookie, 'content-type': 'application/x-ndjson' },
    body,
  });
  const id = expectOk({ status: r.status, headers: r.headers, body: await r.json() }, 201).id;
  // Stop once some of the file is on the spool and most of it is not.
  const mid = await waitFor('the import to save a checkpoint', async () => {
    const d = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/imports/${id}`));
    assert.equal(d.status, 'running', 'the import must still be running when the appliance stops');
    return d.events_accepted > 0 && d;
  }, 300_000);
  assert.ok(mid.bytes_read <= mid.size_bytes);
  await app.stop();

  // The stop left it running, at a checkpoint inside the file. Move that checkpoint back, as if the
  // last saves were lost while their batches reached the spool: the restart must not store them twice.
  const db = new Database(path.join(dir, 'metadata.sqlite'));
  const row = db.prepare('SELECT status, phase, resume_records, accepted FROM imports WHERE id = ?').get(id) as any;
  assert.deepEqual([row.status, row.phase], ['running', 'processing']);
  assert.ok(row.resume_records > 0 && row.resume_records < TOTAL, `checkpoint ${row.resume_records}`);
  const rewound = Math.floor(row.resume_records / 2);
  db.prepare('UPDATE imports SET resume_records = ?, accepted = ? WHERE id = ?').run(rewound, rewound, id);
  db.close();

  app = await startTestAppliance({}, dir);
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const done = await waitFor('the resumed import to finish', async () => {
    const d = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/imports/${id}`));
    return d.status !== 'running' && d;
  }, 600_000);
  assert.equal(done.status, 'done');
  assert.deepEqual([done.events_accepted, done.events_rejected], [TOTAL, 0]);
  assert.deepEqual(await stored(app, id), { n: TOTAL, ids: TOTAL, seqs: TOTAL }, 'every record once');
  const custody = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/custody`));
  const entries = custody.entries.filter((e: any) => e.details.import_id === id);
  assert.equal(entries.length, 1, 'one custody entry for the import, written when it ended');
  assert.equal(entries[0].details.events_accepted, TOTAL);
  assert.equal(custody.verify.ok, true);
  assert.deepEqual(readdirSync(path.join(dir, 'imports')), [], 'the stored upload is removed once imported');
});

test('a dropped folder stopped part-way: its files, which share pipeline batches, resume and store each record once', async () => {
  app ??= await startTestAppliance({}, dir);
  let admin: Client = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const fractalId = app.context.fractals.defaultFractal()!.id;
  const FILES = 6;
  const PER_FILE = 40_000;
  const form = new FormData();
  for (let f = 0; f < FILES; f++) {
    const body = Array.from({ length: PER_FILE }, (_, i) => `{"timestamp":"2020-03-0${(i % 9) + 1}T01:02:03Z","seq":${i},"file":${f}}`).join('\n') + '\n';
    form.append('file', new Blob([body]), `part-${f}.ndjson`);
  }
  const r = await fetch(`${app.url}/api/v1/fractals/${fractalId}/imports`, { method: 'POST', headers: { cookie: admin.cookie, 'sec-fetch-site': 'same-origin' }, body: form });
  const ids: string[] = expectOk({ status: r.status, headers: r.headers, body: await r.json() }, 201).map((x: any) => x.id);
  // Stop while a file is part-way: a checkpoint inside it saved.
  await waitFor('a file to be part-way', async () => {
    const list = await Promise.all(ids.map(async (id) => expectOk(await admin.get(`/api/v1/fractals/${fractalId}/imports/${id}`))));
    assert.ok(list.some((d) => d.status === 'running'), 'the folder must still be importing when the appliance stops');
    return list.some((d) => d.phase === 'processing' && d.events_accepted > 0 && d.events_accepted < PER_FILE / 2);
  }, 300_000);
  await app.stop();
  // As in the test above: the files' checkpoints moved back, as if their last saves were lost while
  // their shared batches reached the spool; the restart must leave out what storage holds.
  const db = new Database(path.join(dir, 'metadata.sqlite'));
  const rewound = db.prepare(`UPDATE imports SET resume_records = resume_records / 2, accepted = resume_records / 2 WHERE id IN (${ids.map(() => '?').join(',')}) AND phase = 'processing' AND resume_records > 0`).run(...ids).changes;
  db.close();
  assert.ok(rewound > 0, 'a file was stopped at a checkpoint inside it');

  app = await startTestAppliance({}, dir);
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  for (const id of ids) {
    const done = await waitFor(`import ${id} to finish after the restart`, async () => {
      const d = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/imports/${id}`));
      return d.status !== 'running' && d;
    }, 600_000);
    assert.equal(done.status, 'done');
    assert.deepEqual([done.events_accepted, done.events_rejected], [PER_FILE, 0], done.name);
    assert.deepEqual(await stored(app, id), { n: PER_FILE, ids: PER_FILE, seqs: PER_FILE }, `${done.name}: every record once`);
  }
  const custody = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/custody?limit=1000`));
  for (const id of ids) assert.equal(custody.entries.filter((e: any) => e.details.import_id === id).length, 1);
  assert.equal(custody.verify.ok, true);
});

test('an upload its sender cuts off fails, and the custody log says how much arrived', async () => {
  app ??= await startTestAppliance({}, dir);
  const admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const fractalId = app.context.fractals.defaultFractal()!.id;
  const url = new URL(`${app.url}/api/v1/fractals/${fractalId}/imports?name=cut-off.ndjson`);
  const chunk = Buffer.from('{"a":1}\n'.repeat(8192));
  await new Promise<void>((resolve) => {
    const req = http.request(url, { method: 'POST', headers: { cookie: admin.cookie, 'content-type': 'application/x-ndjson', 'content-length': String(chunk.length * 100) } });
    req.on('error', () => resolve());
    req.write(chunk);
    req.write(chunk, () => setTimeout(() => req.destroy(), 200));
    req.on('close', () => resolve());
  });
  const failed = await waitFor('the cut-off import to fail', async () => {
    const list = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/imports`));
    const d = list.find((x: any) => x.name === 'cut-off.ndjson');
    return d && d.status === 'failed' && d;
  });
  assert.match(failed.errors[0], /upload stopped after \d+ bytes/);
  assert.equal(failed.events_accepted, 0);
  const entry = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/custody`)).entries.find((e: any) => e.details.import_id === failed.id);
  assert.equal(entry.details.status, 'failed');
  assert.ok(entry.details.size_bytes > 0 && entry.details.size_bytes < chunk.length * 100, `${entry.details.size_bytes}`);
});

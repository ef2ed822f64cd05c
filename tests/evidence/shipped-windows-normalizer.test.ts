// The Windows event log normalizer the appliance ships (SQLite migration 18): there on a fresh
// install, the very definition docs/normalizers-and-feeds.md documents, and an .evtx recording
// imported through it is searchable under the names Sigma rules use (Image, CommandLine, EventID,
// sigma_category) at the event's own time.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { WINDOWS_NORMALIZER_NAME } from '../../service/src/normalizers/windows-normalizer.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectOk } from '../support/api.ts';
import { unpackEvtxSamples, type EvtxSamples } from '../support/evtx-samples.ts';
import { waitFor } from '../support/wait.ts';
import { documentedWindowsNormalizer } from '../support/windows-normalizer.ts';

let app: TestAppliance;
let samples: EvtxSamples;
let admin: Client;
before(async () => {
  samples = unpackEvtxSamples();
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await app?.dispose();
  samples.remove();
});

const shipped = async () => expectOk<any[]>(await admin.get('/api/v1/normalizers')).find((n) => n.name === WINDOWS_NORMALIZER_NAME);

test('a fresh appliance ships the documented Windows event log normalizer, not as its default', async () => {
  const n = await shipped();
  assert.ok(n, `"${WINDOWS_NORMALIZER_NAME}" is listed`);
  assert.equal(n.is_default, false);
  const doc = documentedWindowsNormalizer();
  for (const k of ['transforms', 'field_mappings', 'value_mappings', 'timestamp_fields']) assert.deepEqual(n[k], doc[k], k);
});

test('a Sysmon .evtx recording imported through it is searchable under the Sigma names at its own time', async () => {
  const n = await shipped();
  const f = await createFractal(admin, 'sysmon-case');
  const file = samples.files.find((p) => path.basename(p) === 'panache_sysmon_vs_EDRTestingScript.evtx')!;
  assert.ok(file, 'the sample is in the set');
  const r = await fetch(`${app.url}/api/v1/fractals/${f.id}/imports?name=${encodeURIComponent(path.basename(file))}&normalizer_id=${n.id}`, {
    method: 'POST',
    headers: { cookie: admin.cookie, 'content-type': 'application/octet-stream' },
    body: readFileSync(file) as unknown as BodyInit,
  });
  const id = expectOk({ status: r.status, headers: r.headers, body: await r.json() }, 201).id;
  const done = await waitFor('the import', async () => {
    const d = expectOk(await admin.get(`/api/v1/fractals/${f.id}/imports/${id}`));
    return d.status !== 'running' && d;
  });
  assert.equal(done.status, 'done', JSON.stringify(done.errors));
  await waitFor('the events stored', async () => Number(expectOk<any>(await admin.get(`/api/v1/fractals/${f.id}/stats`)).log_count) === done.events_accepted);
  const q = await admin.post('/api/v1/query', {
    query: 'sigma_category=process_creation | table(timestamp, EventID, Image, CommandLine, Computer, SystemTime) | sort(timestamp) | limit(1)',
    fractal_id: f.id,
    start: '2015-01-01T00:00:00Z',
    end: '2030-01-01T00:00:00Z',
  });
  assert.equal(q.status, 200, JSON.stringify(q.body));
  const [row] = q.body.results;
  assert.ok(row, 'a process creation is found by its Sigma category');
  assert.equal(String(row.EventID), '1');
  assert.match(row.Image, /\.exe$/i);
  assert.ok(row.CommandLine.length > 0);
  // Its time is the event's own (SystemTime), not the import's.
  assert.equal(new Date(row.timestamp.replace(' ', 'T') + 'Z').getTime(), new Date(row.SystemTime).getTime());
});

// What the desktop tray shows, read from a real running service (the appliance in this process,
// logs sent over loopback HTTP, a real import): the ingest rate while logs are stored and "idle"
// after, an import in progress with its file, share read and events, then none once it ended.
// The Electron tray itself is not run here (its binary cannot be installed on these machines);
// shell.test.ts checks the shell hands these lines to the tray.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TrayStatus, trayView } from '../../main/src/tray-status.ts';
import { ADMIN_PASSWORD, defaultIngest, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
const ADDRESS = 'http://192.168.1.20:8080/api/v1/ingest';

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
});
after(() => app.dispose());

test('the ingest rate: measuring, then logs per second while logs are stored, then idle', async () => {
  const status = new TrayStatus(ADDRESS, () => app.activity());
  const first = await status.sample();
  assert.deepEqual(first.lines, ['Ingest rate: measuring…', 'No import running']);
  assert.equal(first.tooltip, `Log Appliance: ingest at ${ADDRESS}\nIngest rate: measuring…\nNo import running`);

  const { fractalId, token } = defaultIngest(app);
  const before = (await admin.get(`/api/v1/fractals/${fractalId}/stats`)).body.data.log_count;
  const body = Array.from({ length: 5_000 }, (_, i) => JSON.stringify({ n: i, msg: 'tray' })).join('\n');
  const r = await fetch(`${app.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body });
  assert.equal(r.status, 200);
  await waitFor('the logs to be stored', async () => (await admin.get(`/api/v1/fractals/${fractalId}/stats`)).body.data.log_count >= before + 5_000);
  const busy = await status.sample();
  const rate = Number(/^Ingesting ([\d,]+) logs\/s$/.exec(busy.lines[0]!)?.[1]?.replaceAll(',', ''));
  assert.ok(rate > 0, busy.lines[0]);
  assert.ok(busy.tooltip.includes(busy.lines[0]!));

  const idle = await waitFor('no more logs stored between two readings', async () => {
    const v = await status.sample();
    return v.lines[0] === 'Ingest idle' && v;
  });
  assert.equal(idle.lines[1], 'No import running');
});

test('an import in progress: its file, fractal, share read and events; none once it ended', async () => {
  const status = new TrayStatus(ADDRESS, () => app.activity());
  const fractal = (await admin.post('/api/v1/fractals', { name: 'tray-evidence' })).body.data;
  const body = Array.from({ length: 300_000 }, (_, i) => JSON.stringify({ timestamp: '2021-06-01T00:00:00Z', seq: i, host: `h${i % 7}` })).join('\n') + '\n';
  const r = await fetch(`${app.url}/api/v1/fractals/${fractal.id}/imports?name=big.ndjson`, { method: 'POST', headers: { cookie: admin.cookie, 'content-type': 'application/x-ndjson' }, body });
  assert.equal(r.status, 201);
  const id = (await r.json()).data.id;
  const seen = await waitFor('the tray to show the import part-way', async () => {
    const v = await status.sample();
    const m = /^Importing big\.ndjson into tray-evidence: (\d+)%, ([\d,]+) events?$/.exec(v.lines[1]!);
    assert.ok(m || v.lines[1] === 'No import running', v.lines[1]);
    return m && Number(m[2]!.replaceAll(',', '')) > 0 ? v : false;
  }, 300_000);
  assert.ok(seen.tooltip.endsWith(seen.lines[1]!));
  await waitFor('the import to end', async () => (await admin.get(`/api/v1/fractals/${fractal.id}/imports/${id}`)).body.data.status !== 'running', 300_000);
  assert.equal((await status.sample()).lines[1], 'No import running');
});

test('several imports at once are summed into one line', () => {
  const v = trayView(ADDRESS, 12.4, [
    { name: 'a.evtx', fractal: 'case', phase: 'processing', bytesRead: 50, sizeBytes: 100, eventsAccepted: 1 },
    { name: 'b.evtx', fractal: 'case', phase: 'receiving', bytesRead: 0, sizeBytes: 300, eventsAccepted: 1_200 },
  ]);
  assert.deepEqual(v.lines, ['Ingesting 12 logs/s', 'Importing 2 files: 12%, 1,201 events']);
});

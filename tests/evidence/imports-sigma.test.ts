// Sigma over imported evidence: a real SigmaHQ rule (Security Eventlog Cleared, EventID 1102) as a
// feed alert through the documented Windows normalizer, and a real .evtx recording of the log being
// cleared (EVTX-ATTACK-SAMPLES), imported through the import route. The events are from 2019; the
// alert engine reads windows of arrival, so the import's end runs the fractal's enabled alerts over
// them at once, the firing holds the 2019 event, and the import names the alert that fired.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectOk } from '../support/api.ts';
import { unpackEvtxSamples, type EvtxSamples } from '../support/evtx-samples.ts';
import { sharedData } from '../support/shared-data.ts';
import { waitFor } from '../support/wait.ts';
import { documentedWindowsNormalizer } from '../support/windows-normalizer.ts';

const RULE = 'rules/windows/builtin/security/win_security_audit_log_cleared.yml';
const work = mkdtempSync(path.join(tmpdir(), 'svc-import-sigma-'));
let app: TestAppliance;
let samples: EvtxSamples;
let admin: Client;

before(async () => {
  execFileSync('tar', ['xzf', sharedData('sigma-rules.tar.gz'), '-C', work]);
  samples = unpackEvtxSamples();
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await app?.dispose();
  samples.remove();
  rmSync(work, { recursive: true, force: true });
});

async function importSample(fractalId: string, file: string, normalizerId: string): Promise<any> {
  const r = await fetch(`${app.url}/api/v1/fractals/${fractalId}/imports?name=${encodeURIComponent(path.basename(file))}&normalizer_id=${normalizerId}`, {
    method: 'POST',
    headers: { cookie: admin.cookie, 'content-type': 'application/octet-stream' },
    body: readFileSync(file) as unknown as BodyInit,
  });
  const id = expectOk({ status: r.status, headers: r.headers, body: await r.json() }, 201).id;
  return waitFor(`import of ${path.basename(file)}`, async () => {
    const d = expectOk(await admin.get(`/api/v1/fractals/${fractalId}/imports/${id}`));
    return d.status !== 'running' && d;
  });
}

test('an enabled Sigma alert fires over an imported .evtx file of 2019 as soon as the import ends', async () => {
  const normalizer = expectOk(await admin.post('/api/v1/normalizers', documentedWindowsNormalizer()), 201);
  const f = await createFractal(admin, 'case-1102');
  const repo = path.join(work, 'rules-repo');
  mkdirSync(path.dirname(path.join(repo, RULE)), { recursive: true });
  cpSync(path.join(work, 'sigma', RULE), path.join(repo, RULE));
  const feed = expectOk(await admin.post('/api/v1/feeds', { fractal_id: f.id, name: 'sigmahq 1102', repo_url: repo, normalizer_id: normalizer.id, sync_schedule: 'never' }), 201);
  await waitFor('the feed to sync', async () => expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/alerts`)).length === 1);
  const [alert] = expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/alerts`));
  assert.equal(alert.name, 'Security Eventlog Cleared');
  if (!app.context.alerts.get(alert.id)!.enabled) expectOk(await admin.post(`/api/v1/alerts/${alert.id}/toggle-feed`, {}));
  assert.ok(app.context.alerts.get(alert.id)!.enabled, 'the feed alert is switched on');

  // A recording without the event first: the alert runs over it and does not fire.
  const quiet = await importSample(f.id, samples.files.find((x) => x.endsWith('bits_openvpn.evtx'))!, normalizer.id);
  assert.equal(quiet.status, 'done');
  assert.deepEqual(quiet.alerts, []);

  const cleared = await importSample(f.id, samples.files.find((x) => x.endsWith('DE_1102_security_log_cleared.evtx'))!, normalizer.id);
  assert.equal(cleared.status, 'done');
  assert.match(cleared.oldest_event, /^2019-/);
  assert.equal(cleared.alerts.length, 1, JSON.stringify(cleared.alerts));
  assert.equal(cleared.alerts[0].alert_id, alert.id);
  assert.equal(cleared.alerts[0].name, 'Security Eventlog Cleared');
  assert.ok(cleared.alerts[0].matches >= 1);

  // The firing holds the imported 2019 event, normalized as the rule expects.
  const executions = app.context.alertExecutions.recent([alert.id], new Date(0).toISOString(), 10);
  const results = executions.flatMap((e) => app.context.alertExecutions.payload(e.id)?.results ?? []);
  const event = results.find((r) => r.import_id === cleared.id)!;
  assert.ok(event, 'the firing holds an event of the import');
  assert.equal(String(event.EventID), '1102');
  assert.equal(event.Provider_Name, 'Microsoft-Windows-Eventlog');
  assert.match(String(event.timestamp), /^2019-/);
  assert.ok(results.every((r) => r.import_id !== quiet.id), 'nothing of the quiet recording fired');
});

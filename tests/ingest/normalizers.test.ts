// Normalizers applied by ingest, end to end against a real appliance: the same normalizer renames
// the names of JSON, kv and syslog records and of /_bulk documents; the shipped default brings
// syslog-ng's format-json and rsyslog's JSON template names onto the syslog parser's names and reads
// their time fields (syslog-ng's year-less DATE included); editing a normalizer changes the next
// request's names without a restart; a concatenated stream of pretty-printed JSON objects (what
// `evtx_dump -o json` writes, "Record N" lines and all) is one log per object.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { ingestFractal } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';

let a: TestAppliance;
let admin: Client;

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(() => a?.dispose());

async function send(token: string, body: string, path = '/api/v1/ingest', contentType = 'application/json') {
  const r = await fetch(`${a.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return JSON.parse(text);
}

const normalizer = async (body: Record<string, unknown>) => expectOk(await admin.post('/api/v1/normalizers', body), 201);

describe('one normalizer for every way in', () => {
  let id: string;
  before(async () => {
    id = (
      await normalizer({
        name: 'shared names',
        transforms: ['snake_case'],
        field_mappings: [{ sources: ['client_address', 'ClientAddr'], target: 'src_ip' }],
        value_mappings: [{ from_field: 'event_id', to_field: 'sigma_category', map: { '1': 'process_creation' } }],
      })
    ).id;
  });

  test('JSON records, nested and flat', async () => {
    const f = await ingestFractal(admin, 'n-json', { normalizer_id: id });
    await send(f.token, '{"EventID":1,"ClientAddr":"10.0.0.1","Process":{"CommandLine":"cmd /c whoami"}}');
    const [r] = await waitForLogs(a, f.id, 1);
    assert.equal(r!.fields.event_id, 1);
    assert.equal(r!.fields.src_ip, '10.0.0.1', 'a mapping matches the name as it arrived');
    assert.equal(r!.fields['process.command_line'], 'cmd /c whoami', 'each dotted level restyled on its own');
    assert.equal(r!.fields.sigma_category, 'process_creation');
    assert.equal(r!.fields.EventID, undefined);
  });

  test('kv and syslog records', async () => {
    const kv = await ingestFractal(admin, 'n-kv', { normalizer_id: id, parser_type: 'kv' });
    await send(kv.token, 'UserName=ann ClientAddr=10.0.0.2 EventID=1', '/api/v1/ingest', 'text/plain');
    const [k] = await waitForLogs(a, kv.id, 1);
    assert.deepEqual([k!.fields.user_name, k!.fields.src_ip, k!.fields.sigma_category], ['ann', '10.0.0.2', 'process_creation']);

    const sl = await ingestFractal(admin, 'n-syslog', { normalizer_id: id, parser_type: 'syslog' });
    await send(sl.token, '<165>1 2026-02-03T04:05:06Z fw01 sshd 42 - [origin@1 ClientAddr="10.0.0.3"] hi', '/api/v1/ingest', 'text/plain');
    const [s] = await waitForLogs(a, sl.id, 1);
    assert.equal(s!.fields.app_name, 'sshd');
    assert.equal(s!.fields['sd.origin@1.client_addr'], '10.0.0.3');
  });

  test('/_bulk documents', async () => {
    const f = await ingestFractal(admin, 'n-bulk', { normalizer_id: id });
    const body = [JSON.stringify({ index: { _index: 'x' } }), JSON.stringify({ EventID: 1, HostName: 'ws1' }), ''].join('\n');
    await send(f.token, body, '/_bulk', 'application/x-ndjson');
    const [r] = await waitForLogs(a, f.id, 1);
    assert.equal(r!.fields.host_name, 'ws1');
    assert.equal(r!.fields.sigma_category, 'process_creation');
  });
});

describe('the shipped default normalizer', () => {
  test("syslog-ng's format-json names land on the syslog parser's names, the time from ISODATE", async () => {
    const f = await ingestFractal(admin, 'n-syslog-ng');
    // What syslog-ng's http() destination sends with $(format-json --scope rfc5424 --key ISODATE).
    const line = {
      ISODATE: '2026-03-04T05:06:07+00:00',
      DATE: 'Mar  4 05:06:07',
      HOST: 'fw02',
      PROGRAM: 'sshd',
      PID: '4242',
      PRIORITY: 'notice',
      FACILITY: 'auth',
      LEVEL_NUM: '5',
      FACILITY_NUM: '4',
      PRI: '37',
      MESSAGE: 'Accepted publickey for ann',
      SOURCEIP: '10.9.9.9',
    };
    await send(f.token, JSON.stringify(line));
    const [r] = await waitForLogs(a, f.id, 1);
    assert.equal(r!.fields.hostname, 'fw02');
    assert.equal(r!.fields.app_name, 'sshd');
    assert.equal(r!.fields.proc_id, '4242');
    assert.equal(r!.fields.severity_name, 'notice');
    assert.equal(r!.fields.facility_name, 'auth');
    assert.deepEqual([r!.fields.severity, r!.fields.facility, r!.fields.priority], ['5', '4', '37'], 'numeric macros on the parser names');
    assert.equal(r!.fields.message, 'Accepted publickey for ann');
    assert.equal(r!.fields.src_ip, '10.9.9.9');
    assert.equal(r!.timestamp, '2026-03-04 05:06:07.000000000');
  });

  test("syslog-ng's year-less DATE is read in the current year, or the previous one when that is ahead", async () => {
    const f = await ingestFractal(admin, 'n-date');
    const now = new Date();
    const mon = now.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
    const day = String(now.getUTCDate()).padStart(2, ' ');
    const ahead = new Date(now.getTime() + 3 * 86_400_000);
    const aheadMon = ahead.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
    await send(f.token, [JSON.stringify({ DATE: `${mon} ${day} 00:00:01`, MESSAGE: 'today' }), JSON.stringify({ DATE: `${aheadMon} ${String(ahead.getUTCDate()).padStart(2, ' ')} 00:00:01`, MESSAGE: 'in three days' })].join('\n'));
    const rows = await waitForLogs(a, f.id, 2);
    const today = rows.find((r) => r.fields.message === 'today')!;
    const future = rows.find((r) => r.fields.message === 'in three days')!;
    assert.equal(today.timestamp.slice(0, 10), now.toISOString().slice(0, 10));
    assert.equal(future.timestamp.slice(0, 4), String(ahead.getUTCFullYear() - 1), 'a date ahead of now is last year');
  });

  test("rsyslog's JSON template names (and %jsonmesg% properties) land on the same names", async () => {
    const f = await ingestFractal(admin, 'n-rsyslog');
    const line = {
      timereported: '2026-03-04T05:06:07.5+00:00',
      sysloghost: 'fw03',
      programname: 'cron',
      procid: '77',
      'syslogseverity-text': 'info',
      'syslogfacility-text': 'cron',
      syslogseverity: 6,
      message: 'job done',
    };
    await send(f.token, JSON.stringify(line));
    const [r] = await waitForLogs(a, f.id, 1);
    assert.deepEqual(
      [r!.fields.hostname, r!.fields.app_name, r!.fields.proc_id, r!.fields.severity_name, r!.fields.facility_name, r!.fields.severity],
      ['fw03', 'cron', '77', 'info', 'cron', 6],
    );
    assert.equal(r!.timestamp, '2026-03-04 05:06:07.500000000');
  });
});

test('editing a normalizer changes the names of the next request, with no restart', async () => {
  const n = await normalizer({ name: 'changing', field_mappings: [{ sources: ['a'], target: 'first' }] });
  const f = await ingestFractal(admin, 'n-live', { normalizer_id: n.id });
  await send(f.token, '{"a":1,"tag":"before"}');
  await waitForLogs(a, f.id, 1);
  expectOk(await admin.put(`/api/v1/normalizers/${n.id}`, { field_mappings: [{ sources: ['a'], target: 'second' }] }));
  await send(f.token, '{"a":2,"tag":"after"}');
  const rows = await waitForLogs(a, f.id, 2);
  const before = rows.find((r) => r.fields.tag === 'before')!;
  const after = rows.find((r) => r.fields.tag === 'after')!;
  assert.equal(before.fields.first, 1);
  assert.equal(after.fields.second, 2);
  assert.equal(after.fields.first, undefined);
});

test('concatenated pretty-printed JSON objects (evtx_dump -o json) are one log per object', async () => {
  const f = await ingestFractal(admin, 'n-evtx');
  const rec = (id: number, image: string) => JSON.stringify({ Event: { System: { EventID: 1, EventRecordID: id }, EventData: { Image: image } } }, null, 2);
  const body = `Record 1\n${rec(1, 'C:\\Windows\\a.exe')}\nRecord 2\n${rec(2, 'C:\\Windows\\b.exe')}\n${rec(3, 'c.exe')}{"Event":{"System":{"EventRecordID":4}}}\n`;
  const r = await send(f.token, body);
  assert.equal(r.accepted, 4, JSON.stringify(r));
  assert.equal(r.rejected, 0);
  const rows = await waitForLogs(a, f.id, 4);
  assert.deepEqual(rows.map((x) => x.fields['Event.System.EventRecordID']).sort(), [1, 2, 3, 4]);
  assert.equal(rows.find((x) => x.fields['Event.System.EventRecordID'] === 1)!.fields['Event.EventData.Image'], 'C:\\Windows\\a.exe');
});

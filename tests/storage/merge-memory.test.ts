// Merges of the logs table are what held the embedded engine's memory on mixed logs (issue 18):
// the appliance runs them path by path (vertical) and starts no new merge while running ones hold
// a quarter of the engine's cap. Here: both are in force on a fresh appliance, and merging parts
// of logs of different shapes that way changes nothing a search shows.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal, sendNdjson } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';

let a: TestAppliance;
let admin: Client;
before(async () => {
  a = await startTestAppliance({ SVC_ENGINE_MAX_MEMORY_MB: '800' });
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await a?.dispose();
});

async function scalar(sql: string): Promise<string> {
  const rs = await a.context.ch.client.query({ query: sql, format: 'TabSeparatedRaw' });
  return (await rs.text()).trim();
}

/** Log i of five shapes: web, process, auth, firewall, DNS; nested objects, numbers, text. */
function shapedLog(i: number): Record<string, unknown> {
  const host = `host-${i % 7}`;
  switch (i % 5) {
    case 0:
      return { host, http: { method: i % 2 ? 'GET' : 'POST', status: 200 + (i % 4) * 100, path: `/p/${i}` }, bytes: i * 17 };
    case 1:
      return { host, event_type: 'process_creation', process: { image: `C:\\bin\\p${i % 9}.exe`, pid: 4000 + i, parent: { pid: 4 } } };
    case 2:
      return { host, user: `user${i % 13}`, auth: { result: i % 3 ? 'success' : 'failure', method: 'password' } };
    case 3:
      return { host, src_ip: `10.0.${i % 250}.${i % 200}`, dst_port: 443 + (i % 3), action: i % 4 ? 'allow' : 'deny' };
    default:
      return { host, dns: { query: `q${i}.example.org`, answers: i % 6, rcode: 'NOERROR' }, latency_ms: i / 8 };
  }
}

test('the engine merges logs path by path and holds back new merges past a quarter of its cap', async () => {
  assert.equal(Number(await scalar(`SELECT getServerSetting('merges_mutations_memory_usage_soft_limit')`)), 200 * 1024 * 1024);
  const create = await scalar(`SHOW CREATE TABLE ${a.context.ch.table('logs')}`);
  assert.match(create, /vertical_merge_algorithm_min_columns_to_activate = 1/);
  assert.match(create, /vertical_merge_algorithm_min_rows_to_activate = 1/);
});

test('merging parts of differently shaped logs changes no search result', async () => {
  const f = await ingestFractal(admin, 'merged');
  const logs = a.context.ch.table('logs');
  // Six requests far enough apart to be six inserts, so six parts, kept apart until the merge.
  await a.context.ch.client.command({ query: `SYSTEM STOP MERGES ${logs}` });
  for (let part = 0; part < 6; part++) {
    await sendNdjson(a.url, f.token, Array.from({ length: 400 }, (_, k) => shapedLog(part * 400 + k)));
    await waitForLogs(a, f.id, (part + 1) * 400);
  }
  const search = async () => {
    const r = await admin.post('/api/v1/query', { query: 'sort(log_id, order=asc) | head(3000)', fractal_id: f.id });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.results as Array<Record<string, string>>;
  };
  const grouped = async () => {
    const r = await admin.post('/api/v1/query', { query: 'groupBy([host, http.status, auth.result], function=multi(count(), sum(bytes)))', fractal_id: f.id });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.results as Array<Record<string, string>>;
  };
  const partsBefore = Number(await scalar(`SELECT count() FROM system.parts WHERE database = '${a.context.ch.database}' AND table = 'logs' AND active`));
  assert.ok(partsBefore >= 6, `${partsBefore} parts before the merge`);
  const before = { rows: await search(), groups: await grouped() };
  assert.equal(before.rows.length, 2400);
  assert.equal(before.rows.find((r) => r['process.parent.pid'] === '4')?.event_type, 'process_creation');

  await a.context.ch.client.command({ query: `SYSTEM START MERGES ${logs}` });
  await a.context.ch.client.command({ query: `OPTIMIZE TABLE ${logs} FINAL` });
  const partsAfter = Number(await scalar(`SELECT count() FROM system.parts WHERE database = '${a.context.ch.database}' AND table = 'logs' AND active`));
  assert.ok(partsAfter < partsBefore, `still ${partsAfter} parts after OPTIMIZE`);

  assert.deepEqual(await search(), before.rows);
  assert.deepEqual(await grouped(), before.groups);
});

// The ingest pipeline's inserts are written as Compact parts (one data file for every column and
// path), not Wide ones (files per column and per path of the `JSON` column: hundreds for mixed
// logs, created by each insert and deleted by the next merge, which cost the kernel as much CPU as
// the engine spent on the rows; ClickHouse migration 9). Merged parts past 100,000 rows are Wide,
// and a search reads the same logs from either.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal, sendNdjson } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';

let a: TestAppliance;
let admin: Client;
before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await a?.dispose();
});

/** Log i, a millisecond after log i - 1 from an hour ago: one of three shapes, with nested objects. */
const since = Date.now() - 3_600_000;
function shapedLog(i: number): Record<string, unknown> {
  const host = `host-${i % 11}`;
  const timestamp = new Date(since + i).toISOString();
  switch (i % 3) {
    case 0:
      return { timestamp, host, http: { method: i % 2 ? 'GET' : 'POST', status: 200 + (i % 4) * 100, path: `/p/${i % 50}` }, bytes: i % 9000 };
    case 1:
      return { timestamp, host, process: { image: `C:\\bin\\p${i % 9}.exe`, pid: 4000 + (i % 900), parent: { pid: 4 } }, user: `u${i % 13}` };
    default:
      return { timestamp, host, auth: { result: i % 3 ? 'success' : 'failure', method: 'password' }, geo: { country: ['DE', 'FR', 'US'][Math.floor(i / 3) % 3] } };
  }
}

interface Part {
  part_type: string;
  rows: string;
  path: string;
}

async function activeParts(): Promise<Part[]> {
  const { ch } = a.context;
  const rs = await ch.client.query({
    query: `SELECT part_type, toString(rows) AS rows, path FROM system.parts WHERE database = {db:String} AND table = 'logs' AND active ORDER BY name`,
    query_params: { db: ch.database },
    format: 'JSONEachRow',
  });
  return (await rs.json()) as Part[];
}

test('the largest insert of the pipeline is one Compact part; merged past 100,000 rows, a Wide one; searches read the same', async () => {
  const f = await ingestFractal(admin, 'parts');
  const logs = a.context.ch.table('logs');
  await a.context.ch.client.command({ query: `SYSTEM STOP MERGES ${logs}` });
  // Two requests of 55,000 logs: more than an insert takes (50,000 rows), so each becomes inserts
  // of the pipeline's largest size.
  const perRequest = 55_000;
  for (let r = 0; r < 2; r++) {
    await sendNdjson(a.url, f.token, Array.from({ length: perRequest }, (_, k) => shapedLog(r * perRequest + k)));
  }
  await waitForLogs(a, f.id, 2 * perRequest);

  const inserted = await activeParts();
  assert.ok(inserted.length >= 3, `${inserted.length} parts`);
  assert.ok(inserted.some((p) => Number(p.rows) >= 25_000), `no insert of the pipeline's size: ${inserted.map((p) => p.rows).join(', ')} rows`);
  for (const p of inserted) {
    assert.equal(p.part_type, 'Compact', `a part of ${p.rows} rows`);
    // A Wide part of these logs has a file per column and per path: well over a hundred.
    const files = readdirSync(p.path).length;
    assert.ok(files < 30, `a part of ${p.rows} rows is ${files} files`);
  }

  const search = async (query: string) => {
    const r = await admin.post('/api/v1/query', { query, fractal_id: f.id });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // Rows in a stable order: groupBy's ties come back in any order.
    return (r.body.results as Array<Record<string, string>>).map((row) => JSON.stringify(row)).sort();
  };
  const queries = [
    'groupBy([host, http.status, auth.result], function=multi(count(), sum(bytes)))',
    'process.parent.pid=4 user=u7 | count()',
    'geo.country=FR | sort(timestamp, order=desc) | head(20)',
  ];
  const before = await Promise.all(queries.map(search));
  let processesOfU7 = 0;
  for (let i = 0; i < 2 * perRequest; i++) if (i % 3 === 1 && i % 13 === 7) processesOfU7++;
  assert.equal(JSON.parse(before[1]![0]!)._count, processesOfU7);
  assert.equal(before[2]!.length, 20);

  await a.context.ch.client.command({ query: `SYSTEM START MERGES ${logs}` });
  await a.context.ch.client.command({ query: `OPTIMIZE TABLE ${logs} FINAL` });
  const merged = await activeParts();
  assert.deepEqual(
    merged.map((p) => [p.part_type, p.rows]),
    [['Wide', String(2 * perRequest)]],
  );
  assert.deepEqual(await Promise.all(queries.map(search)), before);
});

// The embedded engine under a memory cap (SVC_ENGINE_MAX_MEMORY_MB) still reads with every core:
// ClickHouse gives a query one thread per GiB left under the cap unless told otherwise, which ran
// every query of a capped appliance on one thread, about twice as slow.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestAppliance, type TestAppliance } from '../support/appliance.ts';

let a: TestAppliance;
before(async () => {
  a = await startTestAppliance({ SVC_ENGINE_MAX_MEMORY_MB: '896' });
});
after(async () => {
  await a?.dispose();
});

const PIPELINE = 'EXPLAIN PIPELINE SELECT sum(number) FROM numbers_mt(10000000)';
/** The widest step of a pipeline's text (`NumbersRange × 2` reads with 2 threads). */
const widest = (lines: string[]) => Math.max(1, ...lines.map((l) => Number(/× (\d+)/.exec(l)?.[1] ?? 1)));

test('a capped engine gives queries as many threads as max_threads, on the client and on streams', async () => {
  const ch = a.context.ch;
  const rs = await ch.client.query({ query: `SELECT toUInt32(replaceRegexpAll(getSetting('max_threads')::String, '[^0-9]', '')) AS n, getServerSetting('max_server_memory_usage') AS cap`, format: 'JSONEachRow' });
  const [{ n, cap }] = (await rs.json()) as Array<{ n: number; cap: string }>;
  assert.equal(Number(cap), 896 * 1024 * 1024, 'the cap is the one asked for');
  assert.ok(n >= 2, `this check needs a machine with at least 2 cores (max_threads ${n})`);

  const viaClient = await (await ch.client.query({ query: PIPELINE, format: 'TabSeparatedRaw' })).text();
  assert.equal(widest(viaClient.split('\n')), n, viaClient);

  const streamed: string[] = [];
  for await (const rows of ch.streamRows(`SELECT explain FROM (${PIPELINE})`, {}, {})) streamed.push(...rows.map((r) => String(r[0])));
  assert.equal(widest(streamed), n, streamed.join('\n'));
});

// Ingest gives way to searches on the cores too: the embedded engine's merge threads run at nice
// MERGE_NICE (storage/engine-threads.ts) and every insert's threads at LOW_PRIORITY_NICE, put back
// to 0 after it (storage/engine-threads.ts), searches at the normal priority. Read from the
// threads' own niceness in /proc while the engine merges and inserts (Linux, as the appliance).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../service/src/config.ts';
import { LOW_PRIORITY_NICE, openAnalytics } from '../../service/src/storage/clickhouse.ts';
import { migrateClickHouse } from '../../service/src/storage/clickhouse-migrations.ts';
import { MERGE_NICE } from '../../service/src/storage/engine-threads.ts';
import { waitFor } from '../support/wait.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-engine-threads-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every thread of this process: its name and niceness. */
function threads(): Array<{ name: string; nice: number }> {
  const out: Array<{ name: string; nice: number }> = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      out.push({ name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(f[16]) });
    } catch {
      /* ended */
    }
  }
  return out;
}

test('merge threads and insert threads run at a lower priority than the event loop; inserted logs are all stored', async () => {
  const ch = await openAnalytics(loadConfig({ SVC_DATA_DIR: dir }));
  try {
    await migrateClickHouse(ch);
    const fid = randomUUID();
    const rows = (from: number) =>
      Buffer.from(
        Array.from({ length: 20_000 }, (_, i) =>
          JSON.stringify({ fractal_id: fid, timestamp: '2026-01-01 00:00:00', ingest_timestamp: '2026-01-01 00:00:00', log_id: randomUUID(), raw: JSON.stringify({ seq: from + i, host: `h${i % 9}` }) }),
        ).join('\n'),
      );
    // While inserts run, sample the niceness of the threads working on them.
    const seen = new Set<string>();
    const sampler = setInterval(() => {
      for (const t of threads()) if (t.nice === LOW_PRIORITY_NICE) seen.add(t.name.replace(/[0-9]+$/, ''));
    }, 2);
    for (let k = 0; k < 4; k++) await ch.insertFormatted(ch.table('logs_ingest'), 'JSONEachRow', rows(k * 20_000));
    clearInterval(sampler);
    // The engine lowers a statement's threads only with CAP_SYS_NICE (bit 23 of the effective capabilities).
    const mayRenice = (BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]}`) >> 23n) & 1n;
    if (mayRenice) assert.ok(seen.size > 0, 'some thread ran an insert at the lower priority');
    assert.equal(threads().filter((t) => t.nice === LOW_PRIORITY_NICE).length, 0, 'no thread is left niced after the inserts');
    // A merge: its pool's threads are lowered by the sweep (within a second of appearing).
    await ch.client.command({ query: `OPTIMIZE TABLE ${ch.table('logs')} FINAL` });
    await waitFor('merge threads at the lower priority', () => {
      const merges = threads().filter((t) => t.name.startsWith('MergeMutate'));
      return merges.length > 0 && merges.every((t) => t.nice === MERGE_NICE);
    });
    assert.equal(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[16], '0', 'the event loop keeps the normal priority');
    const rs = await ch.client.query({ query: `SELECT count() AS n, uniqExact(JSONExtractInt(raw, 'seq')) AS seqs FROM ${ch.table('logs')}`, format: 'JSONEachRow' });
    const [c] = (await rs.json()) as Array<{ n: string | number; seqs: string | number }>;
    assert.deepEqual([Number(c!.n), Number(c!.seqs)], [80_000, 80_000]);
  } finally {
    await ch.close();
  }
});

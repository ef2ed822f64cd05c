// Low-priority statements (a shared link's background refresh): the embedded engine runs their
// threads at a lower OS priority than the service's requests, and once they end no engine thread is
// left at that priority to slow down the next analyst's search. Real embedded engine, real threads.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { LOW_PRIORITY_NICE } from '../../service/src/storage/clickhouse.ts';
import { startTestAppliance, type TestAppliance } from '../support/appliance.ts';

let a: TestAppliance;
const TABLE = 'default.low_priority_rows';
before(async () => {
  a = await startTestAppliance();
  // A MergeTree table of a few parts, read in parallel like the logs.
  await a.context.ch.client.command({ query: `CREATE TABLE ${TABLE} (k UInt64, s String) ENGINE = MergeTree ORDER BY k` });
  for (let i = 0; i < 3; i++) await a.context.ch.client.command({ query: `INSERT INTO ${TABLE} SELECT number, toString(number % 1013) FROM numbers(${i * 2_000_000}, 2000000)` });
});
after(async () => {
  await a?.dispose();
});

/** How many of this process's threads run at `nice`. */
function threadsAt(nice: number): number {
  let n = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === nice) n++;
    } catch {
      /* the thread ended */
    }
  }
  return n;
}

/** The engine lowers thread priorities only with CAP_SYS_NICE (bit 23 of the effective capabilities). */
const mayRenice = () => (BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]}`) >> 23n) & 1n;

test('a low-priority statement runs its engine threads niced, and none stays niced after it, for the next search', async () => {
  assert.equal(threadsAt(LOW_PRIORITY_NICE), 0, 'nothing niced before');
  let during = 0;
  // Sampled while the engine works (the event loop is free meanwhile): a parallel read and aggregation, as a widget's.
  const sampler = setInterval(() => (during = Math.max(during, threadsAt(LOW_PRIORITY_NICE))), 10);
  let rows = 0;
  try {
    for await (const chunk of a.context.ch.streamRows(`SELECT s, count() FROM ${TABLE} GROUP BY s`, {}, { background: true, lowPriority: true })) rows += chunk.length;
  } finally {
    clearInterval(sampler);
  }
  assert.equal(rows, 1013);
  if (mayRenice()) assert.ok(during >= 1, `the engine's threads ran at nice ${LOW_PRIORITY_NICE} during the statement`);
  assert.equal(threadsAt(LOW_PRIORITY_NICE), 0, 'no engine thread is left niced after it');
  // A search afterwards runs at the usual priority and answers.
  let after = 0;
  for await (const chunk of a.context.ch.streamRows('SELECT count() FROM numbers(1000)', {}, {})) after += chunk.length;
  assert.equal(after, 1);
  assert.equal(threadsAt(LOW_PRIORITY_NICE), 0);
});

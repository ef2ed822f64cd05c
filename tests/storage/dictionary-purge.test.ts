// Removing the rows no dictionary reads any more (dictionaries-store.ts purgeOrphanRows, run at
// start and after a delete or replace) must not take rows written while it runs: it reads the
// definitions, then a mutation deletes what they do not name, a while later. A dictionary created
// in between is not in that list, and its new rows were taken with the orphans. Rows written after
// the purge began (their version, a write-time stamp, is later) now stay.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { waitFor } from '../support/wait.ts';

let a: TestAppliance;
before(async () => {
  a = await startTestAppliance();
});
after(async () => {
  await a?.dispose();
});

test('the purge removes rows of dictionaries that are gone, and leaves rows written after it began', async () => {
  const ch = a.context.ch;
  const store = a.context.dictionaries;
  const kept = store.create({ name: 'kept', description: '', fractal_id: null, prism_id: null, columns: ['ip'], key_columns: ['ip'], created_by: 'test' });
  await store.write(kept, kept.generation, [{ ip: '10.0.0.1' }]);
  const gone = randomUUID();
  const lateNew = randomUUID();
  const nowUs = Date.now() * 1000;
  await ch.client.insert({
    table: ch.table('dictionary_rows'),
    values: [
      // A deleted dictionary's row, written long ago.
      { dictionary_id: gone, generation: 1, row_key: 'a', values: { ip: 'a' }, version: nowUs - 60_000_000, deleted: 0 },
      // A row of a dictionary the purge's list does not name, written after the purge began (its
      // version is later than any the purge stamps now).
      { dictionary_id: lateNew, generation: 1, row_key: 'b', values: { ip: 'b' }, version: nowUs + 3_600_000_000, deleted: 0 },
    ],
    format: 'JSONEachRow',
  });
  await store.purgeOrphanRows();
  const rowsOf = async () => {
    const rs = await ch.client.query({ query: `SELECT toString(dictionary_id) AS id FROM ${ch.table('dictionary_rows')} ORDER BY id`, format: 'JSONEachRow' });
    return ((await rs.json()) as Array<{ id: string }>).map((r) => r.id);
  };
  const left = await waitFor('the deleted dictionary’s row removed', async () => {
    const ids = await rowsOf();
    return !ids.includes(gone) && ids;
  });
  assert.deepEqual(left.sort(), [kept.id, lateNew].sort());
  assert.deepEqual((await store.rowsByKey(kept, ['10.0.0.1'])).map(([k]) => k), ['10.0.0.1']);
});

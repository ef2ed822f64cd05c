// The spool's second reader (the archive): segments it has not read stay on disk after the hot
// store confirmed them, across a restart, and go once it releases them; it never reads past the
// fsync'd end.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { readSpoolEntries, Spool, spooledBatch } from '../../service/src/ingest/spool.ts';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test('spool: a reader holds confirmed segments until it moves past them, and numbering keeps rising', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'spool-reader-'));
  dirs.push(dir);
  let needed = 0;
  const s1 = new Spool(dir);
  s1.attachReader({ firstNeededSegment: () => needed });
  s1.recover();
  await s1.append({ id: 'b1', fractalId: 'f', count: 1, table: 'logs_ingest', rows: Buffer.from('{"a":1}\n') });
  const end = s1.durableEnd();
  const entries = [...readSpoolEntries(readFileSync(s1.segmentFile(end.segment)).subarray(0, end.offset))];
  assert.deepEqual(entries.map((e) => spooledBatch(e.payload, end.segment)?.rows.toString()), ['{"a":1}\n']);
  assert.equal(entries[0]!.end, end.offset, 'the reader reads exactly up to the durable end');
  s1.confirm('b1');
  await s1.close();
  assert.deepEqual(s1.segments(), [end.segment], 'the hot store is done with it, the reader is not');

  const s2 = new Spool(dir);
  s2.attachReader({ firstNeededSegment: () => needed });
  assert.deepEqual(s2.recover({ nextSegmentAtLeast: end.segment + 5 }), []);
  assert.equal(s2.durableEnd().segment, end.segment + 5);
  needed = end.segment + 1;
  s2.release();
  assert.deepEqual(s2.segments(), [end.segment + 5], 'released once the reader moved on');
  needed = end.segment + 5;
  await s2.close();
  assert.deepEqual(s2.segments(), [end.segment + 5], 'the reader still needs the last one');
  const s3 = new Spool(dir);
  s3.recover();
  await s3.close();
  assert.deepEqual(s3.segments(), [], 'without a reader an empty spool is left at stop');
});

// POST /api/v1/query's histogram when the rows cannot stand in for it (query-language.md §5): a
// search that reached its row cap, or rows that are not the filtered events, needs the histogram's
// own scan, which /query waits for only when it is expected to finish shortly (run.ts
// HistogramScans). On small data it is: the histogram comes with the rows, counting every event
// the filters keep, not only the rows returned.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { queryDataset, sampleEvents, type QueryResponse } from '../support/query.ts';

const data = queryDataset('histogram', () => sampleEvents());
const total = (r: QueryResponse) => (r.histogram as Array<{ count: number }>).reduce((n, b) => n + b.count, 0);

describe('histogram when the rows cannot stand in for it', () => {
  before(async () => {
    const r = await data.admin.put('/api/v1/settings', { max_query_rows: 3 });
    assert.equal(r.status, 200);
  });

  test('a search cut at the row cap still returns the histogram of every matching event', async () => {
    // Several in a row: what earlier scans taught about the scan rate never drops it on small data.
    for (const [q, matching] of [['status=200', 4], ['*', 8], ['status=200', 4]] as const) {
      const r = await data.run(q);
      assert.equal(r.count, 3);
      assert.equal(r.limit_hit, 'search');
      assert.ok(Array.isArray(r.histogram), `${q}: histogram present`);
      assert.equal(total(r), matching);
      assert.equal(typeof r.bucket_seconds, 'number');
    }
  });

  test('rows that are not the filtered events (head) come with the filters’ histogram', async () => {
    const r = await data.run('action=get OR action=login | head(1)');
    assert.equal(r.count, 1);
    assert.ok(Array.isArray(r.histogram), 'histogram present');
    assert.equal(total(r), 5);
  });
});

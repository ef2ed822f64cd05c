// The archive across kill -9: logs answered 200 while the archive is on are all archived after a
// restart, none twice, even when the kill lands while rolls are being written.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { expectOk } from '../support/api.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance } from '../support/appliance.ts';
import { readIcebergTable, readParquetWithDuckDb } from '../support/archive-reader.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-archive-kill-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

test('SIGKILL while archiving, then a restart: every accepted log is archived exactly once', async () => {
  // Rolls are written while ingest is behind too (no deferral): the kill must land among them.
  const env = { SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_ARCHIVE_ROLL_S: '1', SVC_ARCHIVE_ROLL_MB: '1', SVC_ARCHIVE_MAX_DEFER_S: '0' };
  const service = await startServiceProcess({ dataDir, env });
  const admin = await signIn(service.base, 'admin', ADMIN_PASSWORD);
  const fractal = (await admin.get('/api/v1/fractals')).body.data[0];
  const token = (await admin.get(`/api/v1/fractals/${fractal.id}/ingest-tokens`)).body.data[0].token;
  expectOk(await admin.put('/api/v1/archive', { enabled: true }));

  // Senders keep going while rolls are committed; the kill comes once some are.
  let accepted = 0;
  let stop = false;
  const sender = async (w: number) => {
    for (let b = 0; !stop; b++) {
      const r = await fetch(`${service.base}/api/v1/ingest`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
        body: Array.from({ length: 2_000 }, (_, i) => JSON.stringify({ w, b, i, msg: 'y'.repeat(200) })).join('\n'),
      }).catch(() => null);
      if (r?.status === 200) accepted += (await r.json()).accepted;
    }
  };
  const senders = [0, 1, 2].map(sender);
  try {
    await waitFor('some rolls archived while ingest goes on', async () => {
      const s = (await admin.get(`/api/v1/fractals/${fractal.id}/archive`)).body.data;
      return s.logs >= 20_000 && s.lag_logs > 0;
    });
  } finally {
    await service.stop('SIGKILL');
    stop = true; // also when the wait failed: the senders must not outlive the test
    await Promise.all(senders);
  }
  assert.ok(accepted >= 20_000);

  const app = await startTestAppliance({ SVC_ARCHIVE_ROLL_S: '1' }, dataDir);
  try {
    const again = await signIn(app.url, 'admin', ADMIN_PASSWORD);
    const status = await waitFor('the archive to catch up', async () => {
      const s = (await again.get(`/api/v1/fractals/${fractal.id}/archive`)).body.data;
      return s.lag_logs === 0 && s.logs >= accepted ? s : undefined;
    }).catch(async () => (await again.get(`/api/v1/fractals/${fractal.id}/archive`)).body.data);
    // A request in flight at the kill may have been spooled without its 200 arriving: the archive
    // may hold those too, like the hot store, but never fewer than were answered, and none twice.
    assert.ok(status.logs >= accepted, `archived ${status.logs} of ${accepted} accepted`);
    const table = await readIcebergTable(app.context.ch, path.join(dataDir, 'archive', fractal.id));
    const rows = await readParquetWithDuckDb(table.files.map((f) => f.path));
    assert.equal(rows.length, status.logs);
    assert.equal(new Set(rows.map((r) => r.log_id)).size, rows.length, 'no log archived twice');
    const hot = await waitFor('the hot store to replay', async () => {
      const rs = await app.context.ch.client.query({
        query: `SELECT toString(log_id) AS id FROM ${app.context.ch.table('logs')} WHERE fractal_id = {f:UUID}`,
        query_params: { f: fractal.id },
        format: 'JSONEachRow',
      });
      const ids = ((await rs.json()) as Array<{ id: string }>).map((r) => r.id);
      return ids.length >= rows.length ? ids : undefined;
    });
    assert.deepEqual(rows.map((r) => r.log_id).sort(), [...hot].sort(), 'the archive and the hot store hold the same logs');
  } finally {
    await app.stop();
  }
});

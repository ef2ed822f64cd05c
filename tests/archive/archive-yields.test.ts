// The archive gives way to ingest: while storage is behind (the ingest queue holds more than an
// insert's worth), a due roll waits instead of taking the engine's CPU from the inserts; once
// ingest has room again the archive catches up, every log archived once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectOk } from '../support/api.ts';
import { ADMIN_PASSWORD, Client, defaultIngest, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { sendNdjson } from '../support/ingest.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
before(async () => {
  app = await startTestAppliance({ SVC_ARCHIVE_ROLL_S: '1', SVC_ARCHIVE_MAX_DEFER_S: '3600' });
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  expectOk(await admin.put('/api/v1/archive', { enabled: true }));
});
after(() => app.dispose());

test('while storage is behind ingest a due roll waits; once it catches up every log is archived', async () => {
  const { fractalId, token } = defaultIngest(app);
  const ch = app.context.ch;
  const archiver = app.context.archive.archiver;
  // Storage falls behind: the table inserts go to is gone for a while, so accepted logs queue up.
  await ch.client.command({ query: `DETACH TABLE ${ch.table('logs_ingest')}` });
  const logs = Array.from({ length: 30_000 }, (_, i) => ({ timestamp: new Date(Date.now() - i).toISOString(), msg: `queued ${i}`, n: i }));
  for (let i = 0; i < logs.length; i += 5_000) await sendNdjson(app.url, token, logs.slice(i, i + 5_000));

  await waitFor('a due roll to wait for ingest', () => archiver.deferring);
  assert.equal(archiver.archivedLogs, 0, 'nothing was archived while storage was behind');
  assert.equal(archiver.lagByFractal().get(fractalId), 30_000, 'the lag shows what waits');

  await ch.client.command({ query: `ATTACH TABLE ${ch.table('logs_ingest')}` });
  await waitFor('every log archived', () => app.context.archive.status(fractalId).logs === 30_000);
  assert.equal(archiver.deferring, false);
  assert.equal(archiver.lagLogs, 0);
});

// A feed whose git server accepts the connection and never answers: the sync gives up after
// SVC_FEED_GIT_TIMEOUT_S, fails with a sentence naming the wait, and changes no alert. (Its own
// file: the appliance here runs with a short git deadline.)
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectError, expectOk } from '../support/api.ts';

let app: TestAppliance;
let hung: Server;

before(async () => {
  hung = createServer(() => {}); // reads the request, never answers
  await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
  app = await startTestAppliance({ SVC_FEED_GIT_TIMEOUT_S: '2' });
});
after(async () => {
  await app?.dispose();
  hung.closeAllConnections();
  hung.close();
});

test('a git server that hangs: the sync fails naming the wait, and no alert changes', async () => {
  const admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const f = await createFractal(admin, 'hang');
  const port = (hung.address() as { port: number }).port;
  const feed = expectOk(
    await admin.post('/api/v1/feeds', { fractal_id: f.id, name: 'hanging', repo_url: `http://127.0.0.1:${port}/rules.git`, enabled: false, sync_schedule: 'never' }),
    201,
  );
  const t0 = Date.now();
  expectError(await admin.post(`/api/v1/feeds/${feed.id}/sync`), 400, 'did not finish within 2 s');
  assert.ok(Date.now() - t0 < 60_000, 'the wait is bounded');
  assert.equal(expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/alerts`)).length, 0);
  const shown = expectOk(await admin.get(`/api/v1/feeds/${feed.id}`));
  assert.equal(shown.last_sync_status, 'failed');
  assert.match(shown.last_sync_error, /hanging|unreachable/);
});

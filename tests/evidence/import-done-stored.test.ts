// An import says `done` only once its events are in storage, where a search finds them. It waited
// for "every log stamped before now" (settledBefore ≥ Date.now()), which leaves out a batch stamped
// in that same millisecond: a small file accepted and finished within one millisecond was reported
// done up to a queue linger before its events were stored (a CI run searched right after `done` and
// found nothing). Here the appliance's clock ticks once a second, so that millisecond is certain.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectOk } from '../support/api.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
const realNow = Date.now;
before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  Date.now = realNow;
  await app?.dispose();
});

test('an import reported done has its events searchable, even when accepted in the millisecond it finished', async () => {
  const f = await createFractal(admin, 'coarse-clock');
  Date.now = () => Math.floor(realNow() / 1000) * 1000;
  try {
    for (let i = 0; i < 4; i++) {
      const body = `{"timestamp":"2017-01-0${i + 1}T00:00:00Z","round":${i},"user":"alice"}\n{"timestamp":"2017-01-0${i + 1}T00:01:00Z","round":${i},"user":"bob"}\n`;
      const r = await fetch(`${app.url}/api/v1/fractals/${f.id}/imports?name=round-${i}.ndjson`, {
        method: 'POST',
        headers: { cookie: admin.cookie, 'content-type': 'application/x-ndjson' },
        body,
      });
      const id = expectOk({ status: r.status, headers: r.headers, body: await r.json() }, 201).id;
      const done = await waitFor(`import ${i}`, async () => {
        const d = expectOk(await admin.get(`/api/v1/fractals/${f.id}/imports/${id}`));
        return d.status !== 'running' && d;
      }, 60_000);
      assert.equal(done.status, 'done');
      const q = await admin.post('/api/v1/query', { query: `import_id="${id}" | sort(user) | table(user)`, fractal_id: f.id, start: '2016-01-01T00:00:00Z', end: '2018-01-01T00:00:00Z' });
      assert.equal(q.status, 200, JSON.stringify(q.body));
      assert.deepEqual(q.body.results.map((x: { user: string }) => x.user), ['alice', 'bob'], `import ${i}: its events, right when it says done`);
    }
  } finally {
    Date.now = realNow;
  }
});

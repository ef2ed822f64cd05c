// The alerts' housekeeping against a real appliance's SQLite: this appliance's own firings older
// than 30 days go, and a delivered firing's results are dropped unless it is its alert's newest;
// firings carried in by a case archive are that case's evidence and keep everything.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FiringPayload } from '../../service/src/alerts/executions-store.ts';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectOk } from '../support/api.ts';

let app: TestAppliance;
let admin: Client;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
});
after(() => app?.dispose());

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

type Execution = Parameters<TestAppliance['context']['alertExecutions']['recordExecution']>[0];

function firing(alertId: string, fractalId: string, at: string, user: string): Execution & { payload: FiringPayload } {
  const payload: FiringPayload = {
    alert_id: alertId, alert_name: 'Failed logins', description: '', severity: 'high', labels: [], query_string: 'status=500',
    fractal_id: fractalId, prism_id: null, triggered_at: at, match_count: 1, field_order: ['user'], results: [{ user }],
    events_start: at, events_end: at,
  };
  return { alert_id: alertId, triggered_at: at, window_start: at, window_end: at, match_count: 1, duration_ms: 3, throttled: false, limit_hit: false, payload };
}

test('pruning removes old own firings and their results, never a firing carried in by a case archive', async () => {
  const fractal = await createFractal(admin, 'prune');
  const own = expectOk(await admin.post('/api/v1/alerts', { fractal_id: fractal.id, name: 'Own', query_string: 'status=500' }), 201);
  const imported = expectOk(await admin.post('/api/v1/alerts', { fractal_id: fractal.id, name: 'From the case', query_string: 'status=500' }), 201);
  const store = app.context.alertExecutions;
  const db = app.context.db;

  // Three of this appliance's firings: 40 days old, 10 days old, and the newest.
  const ownIds = [40, 10, 1].map((d) => store.recordExecution(firing(own.id, fractal.id, daysAgo(d), `own-${d}`), []));
  // The same three ages restored from a case archive (as the case import writes them).
  for (const d of [40, 10, 1]) {
    const f = firing(imported.id, fractal.id, daysAgo(d), `case-${d}`);
    const execution = { id: `x-${d}`, ...f, throttled: 0, limit_hit: 0, payload: JSON.stringify(f.payload) };
    db.transaction(() => store.restoreCaseRecord(imported.id, fractal.id, { execution, deliveries: [] }))();
  }

  store.prune();

  const left = (alertId: string) =>
    db.prepare('SELECT json_extract(payload, \'$.results[0].user\') AS user FROM alert_executions WHERE alert_id = ? ORDER BY triggered_at').all(alertId) as Array<{ user: string | null }>;
  assert.deepEqual(left(own.id), [{ user: null }, { user: 'own-1' }], 'the 40-day firing is gone; the 10-day one lost its results; the newest keeps them');
  assert.deepEqual(left(imported.id), [{ user: 'case-40' }, { user: 'case-10' }, { user: 'case-1' }], 'the case\'s firings are all there, results included');
  assert.deepEqual(db.prepare('SELECT count(*) AS n FROM alert_executions WHERE id = ?').get(ownIds[0]!), { n: 0 });

  // And the executions API still lists the case's 40-day firing.
  const listed = expectOk<any[]>(await admin.get(`/api/v1/alerts/${imported.id}/executions`));
  assert.equal(listed.length, 3);
});

// Alerts over real HTTP against a real appliance: create with its defaults, every 400 of the
// issue's bad-input list (naming the field), who may do what (analysts create alerts, viewers
// read, API keys need alert_manage), update, duplicate, batch-toggle, YAML import (one or many,
// bad YAML with its line), and the functions the feeds domain stores its alerts through.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteFeedAlerts, feedAlerts, setFeedAlertsEnabled, syncFeedAlerts, checkDefinition } from '../../service/src/alerts/alerts-logic.ts';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createApiKey, createFractal, credentialClient, expectBadField, expectError, expectOk, grant, unknownId, UUID_RE } from '../support/api.ts';

let app: TestAppliance;
let admin: Client;
/** Analyst on alpha, viewer on beta. */
let anna: Client;
let alpha: { id: string };
let beta: { id: string };

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  alpha = await createFractal(admin, 'alerts-alpha');
  beta = await createFractal(admin, 'alerts-beta');
  anna = await makeUser(admin, 'anna');
  await grant(admin, alpha.id, { username: 'anna' }, 'analyst');
  await grant(admin, beta.id, { username: 'anna' }, 'viewer');
});
after(() => app?.dispose());

const base = (over: Record<string, unknown> = {}) => ({ name: 'Failed logins', query_string: 'action=login status=500', ...over });

describe('create and read', () => {
  test('an analyst creates an alert on her fractal; defaults are filled and the alert is listed there', async () => {
    const a = expectOk(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id })), 201);
    assert.match(a.id, UUID_RE);
    assert.equal(a.fractal_id, alpha.id);
    assert.equal(a.prism_id, null);
    assert.equal(a.alert_type, 'event');
    assert.equal(a.severity, 'medium');
    assert.equal(a.enabled, true);
    assert.equal(a.throttle_time_seconds, 0);
    assert.deepEqual([a.labels, a.references, a.webhook_action_ids], [[], [], []]);
    assert.equal(a.created_by, 'anna');
    const list = expectOk<any[]>(await anna.get(`/api/v1/alerts?fractal_id=${alpha.id}`));
    const listed = list.find((x) => x.id === a.id);
    assert.ok(listed);
    assert.equal(listed.sparkline.length, 24);
    assert.equal(expectOk(await anna.get(`/api/v1/alerts/${a.id}`)).name, 'Failed logins');
  });

  test('a viewer reads but cannot create or change; a fractal without a role is not found', async () => {
    expectError(await anna.post('/api/v1/alerts', base({ fractal_id: beta.id })), 403, 'analyst');
    const b = expectOk(await admin.post('/api/v1/alerts', base({ fractal_id: beta.id })), 201);
    expectOk(await anna.get(`/api/v1/alerts/${b.id}`));
    expectError(await anna.put(`/api/v1/alerts/${b.id}`, { severity: 'high' }), 403);
    expectError(await anna.del(`/api/v1/alerts/${b.id}`), 403);
    const gamma = await createFractal(admin, 'alerts-gamma');
    const g = expectOk(await admin.post('/api/v1/alerts', base({ fractal_id: gamma.id })), 201);
    expectError(await anna.get(`/api/v1/alerts/${g.id}`), 404);
    expectError(await anna.get(`/api/v1/alerts/${unknownId()}`), 404);
  });

  test('an API key needs alert_manage to create alerts', async () => {
    const plain = await createApiKey(admin, `/api/v1/fractals/${alpha.id}`, { name: 'reader' });
    expectError(await credentialClient(app.url, plain.key).post('/api/v1/alerts', base({ fractal_id: alpha.id })), 403, 'alert_manage');
    const manager = await createApiKey(admin, `/api/v1/fractals/${alpha.id}`, { name: 'manager', permissions: { query: true, alert_manage: true } });
    const a = expectOk(await credentialClient(app.url, manager.key).post('/api/v1/alerts', base({ fractal_id: alpha.id })), 201);
    assert.equal(a.created_by, 'api key manager');
  });
});

describe('bad input answers 400 naming the field', () => {
  test('a query that does not compile, with error_pos', async () => {
    const r = await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, query_string: 'user=alice | groupBy(' }));
    expectBadField(r, 'query_string');
    assert.ok(r.body.error_pos && typeof r.body.error_pos.start === 'number', JSON.stringify(r.body));
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, query_string: 'user=/(/' })), 'query_string');
  });

  test('an unknown action id, severity, type, throttle field or window', async () => {
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, webhook_action_ids: [unknownId()] })), 'webhook_action_ids');
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, email_action_ids: ['nope'] })), 'email_action_ids');
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, severity: 'urgent' })), 'severity');
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, alert_type: 'scheduled' })), 'alert_type');
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, throttle_field: 'src ip' })), 'throttle_field');
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, throttle_time_seconds: -5 })), 'throttle_time_seconds');
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, name: '  ' })), 'name');
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, labels: 'x' })), 'labels');
  });

  test('the type must fit the query: compound needs an aggregation, event must not aggregate', async () => {
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, alert_type: 'compound' })), 'alert_type');
    expectBadField(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, query_string: 'groupBy(user) | _count > 20' })), 'alert_type');
    const c = expectOk(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, alert_type: 'compound', query_string: 'groupBy(user) | _count > 20' })), 201);
    assert.equal(c.alert_type, 'compound');
  });
});

describe('change', () => {
  test('PUT changes only the fields given and re-checks the whole alert', async () => {
    const a = expectOk(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, labels: ['x'] })), 201);
    const u = expectOk(await anna.put(`/api/v1/alerts/${a.id}`, { severity: 'critical', throttle_time_seconds: 300, throttle_field: 'src_ip' }));
    assert.deepEqual([u.severity, u.throttle_time_seconds, u.throttle_field, u.labels, u.query_string], ['critical', 300, 'src_ip', ['x'], a.query_string]);
    expectBadField(await anna.put(`/api/v1/alerts/${a.id}`, { query_string: 'sort(' }), 'query_string');
    expectError(await anna.put(`/api/v1/alerts/${a.id}`, { fractal_id: beta.id }), 400, 'duplicate');
  });

  test('duplicate makes a switched-off copy; batch-toggle switches many and restarts the window a few minutes back', async () => {
    const a = expectOk(await anna.post('/api/v1/alerts', base({ fractal_id: alpha.id, name: 'dup me' })), 201);
    const copy = expectOk(await anna.post(`/api/v1/alerts/${a.id}/duplicate`), 201);
    assert.equal(copy.name, 'dup me (copy)');
    assert.equal(copy.enabled, false);
    assert.equal(copy.query_string, a.query_string);
    // An old cursor: re-enabling must not resume from it.
    app.context.db.prepare('UPDATE alerts SET cursor = ? WHERE id = ?').run('2020-01-01T00:00:00.000Z', copy.id);
    const asked = Date.now();
    assert.equal(expectOk(await anna.post('/api/v1/alerts/batch-toggle', { alert_ids: [a.id, copy.id], enabled: true })).changed, 1);
    const answered = Date.now();
    const cursor = app.context.alerts.get(copy.id)!.cursor!;
    // Five minutes before the switch, on a whole minute (however long the request took).
    const minuteFiveBefore = (t: number) => Math.floor((t - 5 * 60_000) / 60_000) * 60_000;
    assert.ok(Date.parse(cursor) >= minuteFiveBefore(asked) && Date.parse(cursor) <= minuteFiveBefore(answered), `cursor ${cursor} should be about five minutes ago`);
    assert.equal(expectOk(await anna.post('/api/v1/alerts/batch-toggle', { alert_ids: [a.id, copy.id], enabled: false })).changed, 2);
    const b = expectOk(await admin.post('/api/v1/alerts', base({ fractal_id: beta.id })), 201);
    expectError(await anna.post('/api/v1/alerts/batch-toggle', { alert_ids: [a.id, b.id], enabled: true }), 403);
    assert.equal(app.context.alerts.get(a.id)!.enabled, false, 'nothing changes when one alert may not be changed');
  });
});

describe('YAML import', () => {
  test('a document with several alerts, a list, and several documents all import', async () => {
    const yaml = `alerts:
  - name: One
    query_string: user=alice
    severity: high
    labels: [a, b]
  - name: Two {{user}}
    query_string: groupBy(user) | _count > 5
    alert_type: compound
`;
    const r = expectOk<any[]>(await anna.post(`/api/v1/alerts/import?fractal_id=${alpha.id}`, yaml, { 'content-type': 'application/yaml' }), 201);
    assert.deepEqual(r.map((a) => [a.name, a.severity, a.alert_type]), [['One', 'high', 'event'], ['Two {{user}}', 'medium', 'compound']]);
    const docs = `name: Three\nquery_string: "*"\nfractal_id: ${alpha.id}\n---\n- name: Four\n  query_string: user=bob\n  fractal_id: ${alpha.id}\n`;
    const d = expectOk<any[]>(await anna.post('/api/v1/alerts/import', { yaml: docs }), 201);
    assert.deepEqual(d.map((a) => a.name), ['Three', 'Four']);
  });

  test('bad YAML names its line; a bad alert names its item, line and field, and nothing is imported', async () => {
    expectError(await anna.post(`/api/v1/alerts/import?fractal_id=${alpha.id}`, 'alerts:\n  - name: x\n    query_string: a: b\n', { 'content-type': 'application/yaml' }), 400, 'line 3');
    const before = app.context.alerts.inScope({ type: 'fractal', id: alpha.id }).length;
    const yaml = 'alerts:\n  - name: ok\n    query_string: user=a\n  - name: bad\n    query_string: user=b\n    severity: urgent\n';
    const msg = expectError(await anna.post(`/api/v1/alerts/import?fractal_id=${alpha.id}`, yaml, { 'content-type': 'application/yaml' }), 400, 'alerts[1]', 'line 4', '"severity"');
    assert.ok(msg);
    assert.equal(app.context.alerts.inScope({ type: 'fractal', id: alpha.id }).length, before);
  });
});

describe('feed alerts (the feeds domain stores through these)', () => {
  test('a sync creates, updates and deletes in one go; a feed\'s alerts switch on and off and go with the feed', async () => {
    const ctx = app.context;
    const scope = { type: 'fractal' as const, id: alpha.id };
    const def = async (name: string, q: string) => ({
      ...(await checkDefinition(ctx, scope, { name, query_string: q, severity: 'high' })),
      source_path: `rules/${name}.yml`,
      source_rule_id: `rule-${name}`,
    });
    const feedId = unknownId();
    const first = syncFeedAlerts(ctx, feedId, { create: [await def('a', 'user=a'), await def('b', 'user=b')], update: [], delete: [] }, 'feed sync');
    assert.equal(first.created.length, 2);
    const [a, b] = feedAlerts(ctx, feedId);
    assert.equal(a!.feed_id, feedId);
    assert.equal(a!.source_path, 'rules/a.yml');
    assert.equal(a!.source_rule_id, 'rule-a');
    const second = syncFeedAlerts(ctx, feedId, { create: [], update: [{ id: a!.id, definition: await def('a', 'user=aa') }], delete: [b!.id] }, 'feed sync');
    assert.deepEqual([second.updated, second.deleted], [1, 1]);
    assert.deepEqual(feedAlerts(ctx, feedId).map((x) => x.query_string), ['user=aa']);
    const api = expectOk(await anna.get(`/api/v1/alerts/${a!.id}`));
    assert.deepEqual([api.feed_id, api.source_path, api.source_rule_id], [feedId, 'rules/a.yml', 'rule-a']);
    assert.equal(setFeedAlertsEnabled(ctx, feedId, false), 1);
    assert.equal(feedAlerts(ctx, feedId)[0]!.enabled, false);
    assert.equal(deleteFeedAlerts(ctx, feedId), 1);
    assert.equal(feedAlerts(ctx, feedId).length, 0);
  });
});

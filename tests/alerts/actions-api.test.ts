// The action collections over real HTTP: webhooks with every field's check (a 400 naming the
// field, the template's line and column), who may create them (tenant admins), secrets sealed in
// the SQLite file and never returned, preview and send-test on unsaved edits against a loopback
// receiver, the e-mail test against a real SMTP server, and the other kinds' checks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, makeUser, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectBadField, expectError, expectOk, grant } from '../support/api.ts';
import { MailReceiver, WebhookReceiver } from '../support/alert-receivers.ts';

let app: TestAppliance;
let admin: Client;
/** Admin of alpha; analyst of beta. */
let tina: Client;
let alpha: { id: string };
let beta: { id: string };
let hooks: WebhookReceiver;

before(async () => {
  hooks = await new WebhookReceiver().start();
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  alpha = await createFractal(admin, 'act-alpha');
  beta = await createFractal(admin, 'act-beta');
  tina = await makeUser(admin, 'tina');
  await grant(admin, alpha.id, { username: 'tina' }, 'admin');
  await grant(admin, beta.id, { username: 'tina' }, 'analyst');
});
after(async () => {
  await app?.dispose();
  await hooks?.stop();
});

const hook = (over: Record<string, unknown> = {}) => ({ name: 'soc', url: `${hooks.url}/soc`, fractal_id: alpha.id, ...over });

test('a webhook gets the spec defaults; a tenant admin creates it, an analyst may not; global ones are for global admins', async () => {
  const w = expectOk(await tina.post('/api/v1/webhooks', hook()), 201);
  assert.deepEqual(
    [w.method, w.auth_type, w.timeout_seconds, w.retry_count, w.include_alert_link, w.body_mode, w.content_type, w.enabled, w.headers],
    ['POST', 'none', 30, 3, true, 'envelope', 'application/json', true, {}],
  );
  expectError(await tina.post('/api/v1/webhooks', hook({ name: 'x', fractal_id: beta.id })), 403, 'admin');
  expectError(await tina.post('/api/v1/webhooks', hook({ name: 'g', fractal_id: undefined, is_global: true })), 403);
  expectOk(await admin.post('/api/v1/webhooks', hook({ name: 'global one', fractal_id: undefined, is_global: true })), 201);
  expectError(await tina.post('/api/v1/webhooks', hook()), 409, 'soc');
  // Analysts see the actions they may attach.
  const seen = expectOk<any[]>(await tina.get(`/api/v1/webhooks?fractal_id=${beta.id}`)).map((x) => x.name);
  assert.deepEqual(seen, ['global one']);
});

test('every webhook field is checked with a sentence naming it', async () => {
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', url: 'ftp://example.test/x' })), 'url');
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', url: 'not a url' })), 'url');
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', method: 'TRACE' })), 'method');
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', retry_count: 11 })), 'retry_count');
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', timeout_seconds: 0 })), 'timeout_seconds');
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', auth_type: 'digest' })), 'auth_type');
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', auth_type: 'bearer' })), 'auth_config');
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', body_mode: 'template' })), 'body_template');
  expectBadField(await tina.post('/api/v1/webhooks', hook({ name: 'a', headers: { 'bad header': 'x' } })), 'headers');
  const r = await tina.post('/api/v1/webhooks', hook({ name: 'a', body_mode: 'template', body_template: '{\n  "x": {{ .AlertName | nosuch }}\n}' }));
  expectError(r, 400, '"body_template"', 'line 2, column 24', 'function "nosuch" not defined');
  assert.deepEqual([r.body.line, r.body.column], [2, 24]);
});

test('secrets are sealed in the SQLite file, never returned, and kept when an update leaves them out', async () => {
  const w = expectOk(await tina.post('/api/v1/webhooks', hook({ name: 'secret', url: `${hooks.url}/secret`, auth_type: 'bearer', auth_config: { token: 'tok-7f3a9c1e5b' } })), 201);
  assert.deepEqual(w.auth_config, { token_set: true });
  assert.equal(JSON.stringify(expectOk(await tina.get(`/api/v1/webhooks/${w.id}`))).includes('tok-7f3a9c1e5b'), false);
  const u = expectOk(await tina.put(`/api/v1/webhooks/${w.id}`, { retry_count: 1 }));
  assert.deepEqual([u.retry_count, u.auth_config], [1, { token_set: true }]);
  app.context.db.pragma('wal_checkpoint(TRUNCATE)');
  const file = readFileSync(path.join(app.dataDir, 'metadata.sqlite'));
  assert.equal(file.includes('tok-7f3a9c1e5b'), false, 'the token must not be in the file in clear');
  const t = expectOk(await tina.post(`/api/v1/webhooks/${w.id}/test`, {}));
  assert.equal(t.delivered, true);
  assert.equal(hooks.on('/secret').at(-1)!.headers.authorization, 'Bearer tok-7f3a9c1e5b');
  assert.equal(t.sent.headers.authorization, 'Bearer ••••••');
  const basic = expectOk(await tina.put(`/api/v1/webhooks/${w.id}`, { auth_type: 'basic', auth_config: { username: 'u1', password: 'pw-99' } }));
  assert.deepEqual(basic.auth_config, { username: 'u1', password_set: true });
});

test('preview renders unsaved edits against sample data without sending; send-test delivers and shows what was sent', async () => {
  const before = hooks.received.length;
  const body = { ...hook({ name: 'draft', url: `${hooks.url}/draft` }), body_mode: 'template', body_template: '{"n":{{ .MatchCount }},"who":{{ (index .Results 0).user | toJSON }}}' };
  const p = expectOk(await tina.post('/api/v1/webhooks/preview', body));
  assert.equal(p.body, '{"n":2,"who":"alice"}');
  assert.equal(p.method, 'POST');
  assert.equal(p.sample, true);
  assert.equal(hooks.received.length, before, 'a preview sends nothing');
  hooks.answer('/draft', { status: 201, body: '{"received":true}' });
  const t = expectOk(await tina.post('/api/v1/webhooks/test', body));
  assert.deepEqual([t.delivered, t.status_code, t.response_body, t.sent.body], [true, 201, '{"received":true}', '{"n":2,"who":"alice"}']);
  assert.equal(hooks.on('/draft').at(-1)!.body, '{"n":2,"who":"alice"}');
  hooks.answer('/draft', { status: 500, body: 'boom' });
  const failed = expectOk(await tina.post('/api/v1/webhooks/test', body));
  assert.deepEqual([failed.delivered, failed.status_code, failed.response_body], [false, 500, 'boom']);
  // A template that fails on the data is a 400 for the preview.
  expectError(await tina.post('/api/v1/webhooks/preview', { ...body, body_template: '{{ .Nope }}' }), 400, "can't evaluate field Nope");
});

test('SMTP settings are for global admins; the e-mail test sends unsaved edits through the server', async () => {
  const smtp = await new MailReceiver().start();
  try {
    expectError(await tina.post('/api/v1/smtp-settings', { host: '127.0.0.1', port: smtp.port, from_address: 'a@b.test', tls_mode: 'none' }), 403);
    expectBadField(await admin.post('/api/v1/smtp-settings', { host: '127.0.0.1', port: smtp.port, from_address: 'a@b.test', tls_mode: 'ssl' }), 'tls_mode');
    expectOk(await admin.post('/api/v1/smtp-settings', { host: '127.0.0.1', port: smtp.port, from_address: 'alerts@b.test', tls_mode: 'none' }));
    expectBadField(await tina.post('/api/v1/email-actions', { name: 'm', fractal_id: alpha.id, recipients: ['not-an-address'] }), 'recipients');
    expectBadField(await tina.post('/api/v1/email-actions', { name: 'm', fractal_id: alpha.id, recipients: ['a@b.test'], subject_template: '{{ if }}' }), 'subject_template');
    const r = expectOk(await tina.post('/api/v1/email-actions/test', { name: 'm', fractal_id: alpha.id, recipients: ['soc@b.test'], subject_template: 'Test: {{ .AlertName }}' }));
    assert.equal(r.delivered, true, JSON.stringify(r));
    assert.equal(r.subject, 'Test: Failed logins for alice');
    assert.equal(smtp.mails.length, 1);
    assert.match(smtp.mails[0]!.raw, /^Subject: Test: Failed logins for alice\r?$/m);
  } finally {
    await smtp.stop();
  }
});

test('fractal and dictionary actions check their target and fields', async () => {
  const hidden = await createFractal(admin, 'act-hidden');
  expectBadField(await tina.post('/api/v1/fractal-actions', { name: 'f', fractal_id: alpha.id, target_fractal_id: hidden.id }), 'target_fractal_id');
  const f = expectOk(await tina.post('/api/v1/fractal-actions', { name: 'f', fractal_id: alpha.id, target_fractal_id: beta.id }), 201);
  assert.deepEqual([f.preserve_timestamp, f.add_alert_context, f.max_logs_per_trigger], [true, true, 1000]);
  expectBadField(await tina.post('/api/v1/fractal-actions', { name: 'f2', fractal_id: alpha.id, target_fractal_id: beta.id, max_logs_per_trigger: 0 }), 'max_logs_per_trigger');
  expectBadField(await tina.post('/api/v1/dictionary-actions', { name: 'd', fractal_id: alpha.id, dictionary_name: 'bad name!' }), 'dictionary_name');
  expectBadField(await tina.post('/api/v1/dictionary-actions', { name: 'd', fractal_id: alpha.id, dictionary_name: 'ok', key_field: 'a b' }), 'key_field');
  const d = expectOk(await tina.post('/api/v1/dictionary-actions', { name: 'd', fractal_id: alpha.id, dictionary_name: 'watch' }), 201);
  // An alert may attach them; deleting an action detaches it.
  const a = expectOk(await tina.post('/api/v1/alerts', { name: 'uses', fractal_id: alpha.id, query_string: '*', fractal_action_ids: [f.id], dictionary_action_ids: [d.id] }), 201);
  expectOk(await tina.del(`/api/v1/dictionary-actions/${d.id}`));
  assert.deepEqual(expectOk(await tina.get(`/api/v1/alerts/${a.id}`)).dictionary_action_ids, []);
});

// The alert engine with real timing against a real appliance (tick every second): logs sent
// through the ingest endpoint fire alerts once (event and compound alerts), webhooks carry the
// spec's envelope or a rendered template, failed deliveries are retried with growing gaps, a dead,
// hanging, resetting or redirecting destination costs only its own delivery, throttles (global and
// per field) hold, a template that fails to render or renders past 8 MB is recorded and not
// retried, e-mail goes through a real SMTP server, the fractal and dictionary actions write where
// queries see them, and an alert that keeps failing is switched off.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { ingestFractal } from '../support/ingest.ts';
import { ingest } from '../support/query.ts';
import { MailReceiver, waitFor as waitUntil, WebhookReceiver } from '../support/alert-receivers.ts';

let app: TestAppliance;
let admin: Client;
let hooks: WebhookReceiver;
let fractal: { id: string; token: string };

before(async () => {
  hooks = await new WebhookReceiver().start();
  app = await startTestAppliance({ SVC_ALERT_INTERVAL_S: '1', SVC_BASE_URL: 'https://logs.example.test' });
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  fractal = await ingestFractal(admin, 'engine');
});
after(async () => {
  await app?.dispose();
  await hooks?.stop();
});

const webhook = async (name: string, over: Record<string, unknown> = {}) =>
  expectOk(await admin.post('/api/v1/webhooks', { name, url: `${hooks.url}/${name}`, fractal_id: fractal.id, ...over }), 201);
const alert = async (over: Record<string, unknown>) =>
  expectOk(await admin.post('/api/v1/alerts', { fractal_id: fractal.id, severity: 'high', ...over }), 201);
const executions = async (id: string) => expectOk<any[]>(await admin.get(`/api/v1/alerts/${id}/executions`));
/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
/** waitFor, saying on a time-out where the engine stood (its last ticks, how far storage has settled). */
const waitFor: typeof waitUntil = (what, check, timeoutMs) =>
  waitUntil(what, check, timeoutMs).catch((err: Error) => {
    const e = app.alertEngine;
    throw new Error(
      `${err.message}; engine: ${e.ticks.length} ticks (${e.skipped} skipped), last ${JSON.stringify(e.ticks.slice(-2))}, ` +
        `settled before ${app.ingest.settledBefore().toISOString()} at ${new Date().toISOString()}, ${e.outbox.inFlight} deliveries in flight`,
    );
  });
/** Waits until the engine has finished `n` more ticks. */
async function ticks(n: number): Promise<void> {
  const start = app.alertEngine.ticks.length;
  await waitFor(`${n} ticks`, () => app.alertEngine.ticks.length >= start + n);
}

test('a matching log fires once; the webhook gets the spec envelope; the execution records the delivery', async () => {
  const w = await webhook('envelope', { auth_type: 'bearer', auth_config: { token: 's3cret-token' }, headers: { 'X-Team': 'soc' } });
  const noLink = await webhook('nolink', { include_alert_link: false });
  const a = await alert({
    name: 'Failed login for {{user}}',
    description: 'Someone keeps failing',
    labels: ['auth', 'T1110'],
    query_string: 'action=login status=500',
    webhook_action_ids: [w.id, noLink.id],
  });
  await ingest(app, fractal.token, fractal.id, [
    { user: 'alice', action: 'login', status: 500, src_ip: '10.0.0.5', 'http.path': '/login' },
    { user: 'bob', action: 'login', status: 200 },
  ]);
  const [req] = await waitFor('the webhook', () => (hooks.on('/envelope').length ? hooks.on('/envelope') : undefined));
  const body = JSON.parse(req!.body);
  assert.deepEqual(Object.keys(body), ['alert_name', 'original_name', 'alert_id', 'description', 'severity', 'labels', 'triggered_at', 'query_string', 'match_count', 'alert_link', 'results']);
  assert.equal(body.alert_name, 'Failed login for alice');
  assert.equal(body.original_name, 'Failed login for {{user}}');
  assert.equal(body.alert_id, a.id);
  assert.equal(body.description, 'Someone keeps failing');
  assert.equal(body.severity, 'high');
  assert.deepEqual(body.labels, ['auth', 'T1110']);
  assert.match(body.triggered_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  assert.equal(body.query_string, 'action=login status=500');
  assert.equal(body.match_count, 1);
  assert.equal(body.results.length, 1);
  assert.equal(body.results[0].user, 'alice');
  assert.equal(body.results[0]['http.path'], '/login');
  assert.match(body.alert_link, new RegExp(`^https://logs\\.example\\.test/#/search\\?q=action%3Dlogin%20status%3D500&from=.*&scope=fractal%3A${fractal.id}$`));
  assert.equal(req!.headers.authorization, 'Bearer s3cret-token');
  assert.equal(req!.headers['content-type'], 'application/json');
  assert.equal(req!.headers['x-team'], 'soc');
  assert.ok(req!.headers['x-alert-delivery-id']);
  // include_alert_link off: the same envelope without the link.
  const [plain] = await waitFor('the webhook without a link', () => (hooks.on('/nolink').length ? hooks.on('/nolink') : undefined));
  const { alert_link: _link, ...rest } = body;
  assert.deepEqual(JSON.parse(plain!.body), rest);

  const [e] = await waitFor('the delivery recorded', async () => {
    const list = await executions(a.id);
    return list[0]?.actions[0]?.status === 'delivered' ? list : undefined;
  });
  assert.equal(e!.match_count, 1);
  assert.equal(e!.throttled, false);
  const [e2] = await waitFor('both deliveries recorded', async () => {
    const list = await executions(a.id);
    return list[0]?.actions.every((x: any) => x.status === 'delivered') ? list : undefined;
  });
  assert.deepEqual(
    e2!.actions.map((x: any) => [x.kind, x.name, x.status, x.status_code, x.attempts]),
    [['webhook', 'envelope', 'delivered', 200, 1], ['webhook', 'nolink', 'delivered', 200, 1]],
  );
  assert.equal(typeof e2!.actions[0].duration_ms, 'number');
  const listed = expectOk<any[]>(await admin.get(`/api/v1/alerts?fractal_id=${fractal.id}`)).find((x) => x.id === a.id);
  assert.equal(listed.last_match_count, 1);
  assert.equal(listed.sparkline.reduce((s: number, n: number) => s + n, 0), 1);

  // Later ticks see no new log: nothing fires twice.
  await ticks(3);
  assert.equal(hooks.on('/envelope').length, 1);
  assert.equal(hooks.on('/nolink').length, 1);
  assert.equal((await executions(a.id)).length, 1);
});

test('a template body renders the data and functions as expected, with its content type', async () => {
  const template = `{"text":{{ printf "%s: %d hit(s)" .AlertName .MatchCount | toJSON }},
"labels":{{ join ", " .Labels | upper | toJSON }},
"desc":{{ default "n/a" .Description | toJSON }},
"at":{{ unixSeconds .TriggeredAt }},"iso":"{{ rfc3339 .TriggeredAt }}",
"hits":[{{ range $i, $r := .Results }}{{ if $i }},{{ end }}{"user":{{ toJSON $r.user }},"path":{{ field $r "http.path" | toJSON }},"msg":{{ field $r "msg" | lower | toJSON }}}{{ end }}]}`;
  const w = await webhook('templated', { body_mode: 'template', body_template: template, content_type: 'application/vnd.test+json' });
  const a = await alert({ name: 'Template check', query_string: 'kind=tpl', labels: ['a', 'b'], webhook_action_ids: [w.id] });
  await ingest(app, fractal.token, fractal.id, [{ kind: 'tpl', user: 'carol', 'http.path': '/x', msg: 'He said "Hi"\nBye' }]);
  const [req] = await waitFor('the templated webhook', () => (hooks.on('/templated').length ? hooks.on('/templated') : undefined));
  const [e] = await executions(a.id);
  const t = new Date(e!.triggered_at);
  assert.equal(req!.headers['content-type'], 'application/vnd.test+json');
  assert.equal(
    req!.body,
    `{"text":"Template check: 1 hit(s)",
"labels":"A, B",
"desc":"n/a",
"at":${Math.floor(t.getTime() / 1000)},"iso":"${t.toISOString().replace(/\.\d+Z$/, 'Z')}",
"hits":[{"user":"carol","path":"/x","msg":"he said \\"hi\\"\\nbye"}]}`,
  );
  JSON.parse(req!.body); // the quotes and the newline were escaped by toJSON
});

test('a failing destination is retried with growing gaps until it answers; a template that fails to render is not retried', async () => {
  hooks.answer('/flaky', { status: 500 }, { status: 502 }, { status: 503 }, { status: 200 });
  const w = await webhook('flaky', { retry_count: 3 });
  const bad = await webhook('badtemplate', { body_mode: 'template', body_template: 'hello {{ .NoSuchField }}' });
  // 900 lines of 10,000 characters: past the 8 MB cap on a rendered body.
  const huge = await webhook('huge', { body_mode: 'template', body_template: `{{ range 900 }}${'x'.repeat(9999)}\n{{ end }}` });
  const a = await alert({ name: 'Retry check', query_string: 'kind=retry', webhook_action_ids: [w.id, bad.id, huge.id] });
  await ingest(app, fractal.token, fractal.id, [{ kind: 'retry' }]);
  const calls = await waitFor('four attempts', () => (hooks.on('/flaky').length >= 4 ? hooks.on('/flaky') : undefined)).catch(async (err: Error) => {
    // Say where it stood: the attempts that arrived and what the history recorded.
    throw new Error(`${err.message}; /flaky got ${hooks.on('/flaky').length} requests; executions: ${JSON.stringify(await executions(a.id))}`);
  });
  // Each gap is at least the doubling backoff (1 s, 2 s, 4 s; a busy machine only adds to it).
  const gaps = calls.slice(1).map((c, i) => c.at - calls[i]!.at);
  gaps.forEach((gap, i) => assert.ok(gap >= 1000 * 2 ** i - 50, `gap ${i + 1} is ${Math.round(gap)} ms, expected at least ${1000 * 2 ** i} ms: ${gaps.map(Math.round).join(', ')}`));
  const e = await waitFor('both outcomes', async () => {
    const [x] = await executions(a.id);
    return x && x.actions.every((d: any) => d.status !== 'pending') ? x : undefined;
  });
  const byName = Object.fromEntries(e.actions.map((d: any) => [d.name, d]));
  assert.deepEqual([byName.flaky.status, byName.flaky.attempts, byName.flaky.status_code], ['delivered', 4, 200]);
  assert.deepEqual([byName.badtemplate.status, byName.badtemplate.attempts], ['failed', 1]);
  assert.match(byName.badtemplate.error, /can't evaluate field NoSuchField/);
  assert.equal(hooks.on('/badtemplate').length, 0);
  assert.deepEqual([byName.huge.status, byName.huge.attempts], ['failed', 1]);
  assert.match(byName.huge.error, /exceeds 8,388,608/);
  assert.equal(hooks.on('/huge').length, 0);
});

test('a dead, hanging, resetting or endlessly redirecting destination costs only its own delivery', async () => {
  hooks.answer('/hang', 'hang');
  hooks.answer('/reset', 'reset');
  hooks.answer('/loop', { status: 302, location: '/loop' });
  const hang = await webhook('hang', { timeout_seconds: 30, retry_count: 0 });
  const reset = await webhook('reset', { retry_count: 0 });
  const dead = await webhook('dead', { url: `http://127.0.0.1:${await closedPort()}/`, retry_count: 0 });
  const loop = await webhook('loop', { retry_count: 0 });
  const fine = await webhook('fine');
  const a1 = await alert({ name: 'to the broken ones', query_string: 'kind=slow', webhook_action_ids: [hang.id, reset.id, dead.id, loop.id] });
  const a2 = await alert({ name: 'to the fine one', query_string: 'kind=slow', webhook_action_ids: [fine.id] });
  await ingest(app, fractal.token, fractal.id, [{ kind: 'slow' }]);
  await waitFor('the fine webhook', () => hooks.on('/fine').length > 0);
  // The fine delivery did not wait for the hanging one: that one is still waiting for its answer.
  const [stillWaiting] = await executions(a1.id);
  const hangStatus = stillWaiting.actions.find((d: any) => d.name === 'hang').status;
  assert.equal(hangStatus, 'pending', 'the fine delivery waited until the hanging one gave up');
  const e = await waitFor('four failures', async () => {
    const [x] = await executions(a1.id);
    return x && x.actions.every((d: any) => d.status === 'failed') ? x : undefined;
  });
  const errors = Object.fromEntries(e.actions.map((d: any) => [d.name, d.error]));
  assert.match(errors.hang, /no answer within 30 s/);
  assert.match(errors.reset, /request failed/);
  assert.match(errors.dead, /request failed: ECONNREFUSED/);
  assert.match(errors.loop, /too many redirects/);
  assert.ok(hooks.on('/loop').length > 1, 'the redirect was followed');
  assert.equal((await executions(a2.id))[0].actions[0].status, 'delivered');
});

test('a compound alert fires on its aggregating query\'s rows; the name is filled from the first row', async () => {
  const w = await webhook('compound');
  const a = await alert({ name: 'Brute force on {{user}}', alert_type: 'compound', query_string: 'kind=brute | groupBy(user) | _count > 2', webhook_action_ids: [w.id] });
  await ingest(app, fractal.token, fractal.id, [
    ...Array.from({ length: 4 }, () => ({ kind: 'brute', user: 'mallory' })),
    { kind: 'brute', user: 'oscar' },
    { kind: 'other', user: 'oscar' },
  ]);
  const [req] = await waitFor('the compound firing', () => (hooks.on('/compound').length ? hooks.on('/compound') : undefined));
  const body = JSON.parse(req!.body);
  assert.equal(body.alert_name, 'Brute force on mallory');
  assert.equal(body.original_name, 'Brute force on {{user}}');
  assert.equal(body.match_count, 1);
  assert.deepEqual(body.results, [{ user: 'mallory', _count: 4 }]);
  // One more for oscar is still below the threshold in its own window: nothing more fires.
  await ingest(app, fractal.token, fractal.id, [{ kind: 'brute', user: 'oscar' }]);
  await ticks(3);
  assert.equal(hooks.on('/compound').length, 1);
  assert.equal((await executions(a.id)).length, 1);
});

test('throttle: a window of an hour fires once; per field, a new value fires while a seen one stays quiet', async () => {
  const w = await webhook('throttled');
  const perField = await webhook('perfield');
  const g = await alert({ name: 'global throttle', query_string: 'kind=thr', throttle_time_seconds: 3600, webhook_action_ids: [w.id] });
  const f = await alert({ name: 'per user', query_string: 'kind=thr', throttle_time_seconds: 3600, throttle_field: 'user', webhook_action_ids: [perField.id] });
  await ingest(app, fractal.token, fractal.id, [{ kind: 'thr', user: 'alice' }, { kind: 'thr', user: 'bob' }]);
  await waitFor('first firings', () => hooks.on('/throttled').length === 1 && hooks.on('/perfield').length === 1);
  await ticks(2);
  await ingest(app, fractal.token, fractal.id, [{ kind: 'thr', user: 'alice' }, { kind: 'thr', user: 'carol' }]);
  await waitFor('the per-field firing for carol', () => hooks.on('/perfield').length === 2);
  await waitFor('the global alert throttled', async () => (await executions(g.id)).length === 2);
  assert.equal(hooks.on('/throttled').length, 1);
  const [second, first] = await executions(g.id);
  assert.deepEqual([first.throttled, second.throttled, second.match_count, second.actions.length], [false, true, 2, 0]);
  const users = hooks.on('/perfield').map((r) => JSON.parse(r.body).results.map((x: any) => x.user).sort());
  assert.deepEqual(users, [['alice', 'bob'], ['carol']]);
  void f;
});

test('e-mail goes through the SMTP server with rendered subject and body; the SMTP password is sealed and never shown', async () => {
  const smtp = await new MailReceiver({ user: 'mailer', password: 'smtp-pass-123' }).start();
  try {
    const s = expectOk(await admin.post('/api/v1/smtp-settings', { host: '127.0.0.1', port: smtp.port, username: 'mailer', password: 'smtp-pass-123', from_address: 'alerts@appliance.test', tls_mode: 'none' }));
    assert.equal(s.password_set, true);
    assert.equal('password' in s, false);
    assert.equal(JSON.stringify(expectOk(await admin.get('/api/v1/smtp-settings'))).includes('smtp-pass-123'), false);
    app.context.db.pragma('wal_checkpoint(TRUNCATE)');
    assert.equal(readFileSync(path.join(app.dataDir, 'metadata.sqlite')).includes('smtp-pass-123'), false, 'the SMTP password is sealed at rest');
    const e = expectOk(
      await admin.post('/api/v1/email-actions', {
        name: 'soc mail',
        fractal_id: fractal.id,
        recipients: ['soc@example.test'],
        subject_template: '[{{ .Severity | upper }}] {{ .AlertName }}',
        body_template: '{{ .MatchCount }} hit(s){{ range .Results }}\n- {{ .user }}{{ end }}',
      }),
      201,
    );
    await alert({ name: 'Mail {{user}}', query_string: 'kind=mail', email_action_ids: [e.id] });
    await ingest(app, fractal.token, fractal.id, [{ kind: 'mail', user: 'dave' }]);
    const [mail] = await waitFor('the mail', () => (smtp.mails.length ? smtp.mails : undefined));
    assert.deepEqual(mail!.to, ['soc@example.test']);
    assert.equal(mail!.from, 'alerts@appliance.test');
    assert.equal(mail!.user, 'mailer');
    assert.match(mail!.raw, /^Subject: \[HIGH\] Mail dave\r?$/m);
    assert.match(mail!.raw, /1 hit\(s\)\r?\n- dave/);
  } finally {
    await smtp.stop();
  }
});

test('the fractal action writes the results into the target fractal; the dictionary action fills a dictionary match() reads', async () => {
  const target = await ingestFractal(admin, 'detections');
  const fa = expectOk(await admin.post('/api/v1/fractal-actions', { name: 'to detections', fractal_id: fractal.id, target_fractal_id: target.id }), 201);
  const da = expectOk(await admin.post('/api/v1/dictionary-actions', { name: 'bad ips', fractal_id: fractal.id, dictionary_name: 'bad_ips', key_field: 'src_ip', value_fields: ['user'] }), 201);
  const a = await alert({ name: 'Exfil by {{user}}', query_string: 'kind=exfil', fractal_action_ids: [fa.id], dictionary_action_ids: [da.id] });
  const eventTime = '2026-01-02T03:04:05.678Z';
  await ingest(app, fractal.token, fractal.id, [{ timestamp: eventTime, kind: 'exfil', user: 'erin', src_ip: '203.0.113.9' }]);
  await waitFor('both actions done', async () => {
    const [x] = await executions(a.id);
    return x && x.actions.length === 2 && x.actions.every((d: any) => d.status === 'delivered') ? x : undefined;
  });
  const copied = await waitFor('the copied log', async () => {
    const r = await admin.post('/api/v1/query', { query: 'alert_forwarded=true', fractal_id: target.id, start: '2026-01-01T00:00:00Z' });
    return r.body.results?.length ? r.body.results : undefined;
  });
  assert.equal(copied[0].user, 'erin');
  assert.equal(copied[0].alert_name, 'Exfil by erin');
  assert.equal(copied[0].alert_id, a.id);
  assert.equal(copied[0].alert_severity, 'high');
  assert.ok(copied[0].source_log_id);
  assert.equal(copied[0].timestamp, '2026-01-02 03:04:05.678');
  const enriched = await admin.post('/api/v1/query', { query: `src_ip=203.0.113.9 | match(dict="bad_ips", field=src_ip, column=src_ip, include=[user])`, fractal_id: fractal.id, start: '2026-01-01T00:00:00Z' });
  assert.equal(enriched.status, 200, JSON.stringify(enriched.body));
  assert.equal(enriched.body.results[0].user, 'erin');
  const dicts = expectOk<any[]>(await admin.get(`/api/v1/dictionaries?fractal_id=${fractal.id}`));
  assert.equal(dicts.find((d) => d.name === 'bad_ips')?.row_count, 1);
});

test('the fractal action can stamp the time of forwarding, leave out the alert context, and writes at most max_logs_per_trigger', async () => {
  const target = await ingestFractal(admin, 'forwarded');
  const fa = expectOk(
    await admin.post('/api/v1/fractal-actions', { name: 'bare copies', fractal_id: fractal.id, target_fractal_id: target.id, preserve_timestamp: false, add_alert_context: false, max_logs_per_trigger: 2 }),
    201,
  );
  const a = await alert({ name: 'Forward', query_string: 'kind=fwd', fractal_action_ids: [fa.id] });
  const sent = Date.now();
  await ingest(app, fractal.token, fractal.id, [1, 2, 3].map((n) => ({ timestamp: '2026-01-02T03:04:05Z', kind: 'fwd', n })));
  const e = await waitFor('the copies written', async () => {
    const [x] = await executions(a.id);
    return x?.actions[0]?.status === 'delivered' ? x : undefined;
  });
  assert.equal(e.match_count, 3);
  assert.match(e.actions[0].detail, /^2 logs written to forwarded \(max_logs_per_trigger 2 of 3\)$/);
  const copies = await waitFor('the copies stored', async () => {
    const r = await admin.post('/api/v1/query', { query: 'kind=fwd', fractal_id: target.id, start: '2026-01-01T00:00:00Z' });
    return r.body.results?.length === 2 ? r.body.results : undefined;
  });
  for (const c of copies) {
    assert.equal(c.alert_name, undefined);
    assert.equal(c.alert_id, undefined);
    assert.ok(c.source_log_id);
    const stamped = Date.parse(`${c.timestamp.replace(' ', 'T')}Z`);
    assert.ok(stamped >= sent - 1000, `stamped with the time of forwarding, not the event's: ${c.timestamp}`);
  }
});

test('an alert whose query keeps failing is switched off with the reason', async () => {
  const p = expectOk(await admin.post('/api/v1/prisms', { name: 'soon empty', fractal_ids: [fractal.id] }), 201);
  const a = expectOk(await admin.post('/api/v1/alerts', { name: 'on an emptied prism', prism_id: p.id, query_string: '*' }), 201);
  expectOk(await admin.del(`/api/v1/prisms/${p.id}/members/${fractal.id}`));
  const off = await waitFor('the alert switched off', async () => {
    const x = expectOk(await admin.get(`/api/v1/alerts/${a.id}`));
    return x.enabled ? undefined : x;
  });
  assert.match(off.disabled_reason, /Switched off after 3 failed evaluations in a row: .*no member fractals/);
  assert.equal(off.failure_count, 3);
});

test('ticks that overrun the interval (a busy machine) are followed by the next one, never by none', async () => {
  // Hold the whole process for longer than the interval, again and again: every tick in between
  // overruns, and its next one falls due at once (node-schedule refuses a date already past).
  const before = app.alertEngine.ticks.length;
  for (let i = 0; i < 30; i++) {
    const until = Date.now() + 1100;
    while (Date.now() < until) {
      /* busy, as a loaded machine */
    }
    await new Promise((r) => setTimeout(r, 5 + (i % 7) * 20));
  }
  assert.ok(app.alertEngine.ticks.slice(before).some((t) => t.overran), 'some tick overran');
  await ticks(3);
});

test('changing alert_interval_s reschedules the tick without a restart', async () => {
  expectOk(await admin.put('/api/v1/settings', { alert_interval_s: 3 }));
  await ticks(1);
  const before = app.alertEngine.ticks.length;
  await ticks(2);
  const t = app.alertEngine.ticks.slice(before);
  const gap = Date.parse(t[1]!.started_at) - Date.parse(t[0]!.started_at);
  assert.ok(gap >= 2900, `ticks ${gap} ms apart, expected about 3 s`);
  expectOk(await admin.put('/api/v1/settings', { alert_interval_s: 1 }));
});

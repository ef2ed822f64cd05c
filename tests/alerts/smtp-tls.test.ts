// The SMTP settings' tls_mode against real SMTP servers on loopback (smtp-server) holding a
// certificate made for this test with openssl: `tls` speaks TLS from the first byte (port 465
// style), `starttls` requires the upgrade (a server that does not offer it is refused, the password
// never sent in clear), `none` stays plain even where the server offers STARTTLS. Certificates are
// verified: the appliance runs as a child process (as `npm start` runs it) trusting the test's
// certificate through NODE_EXTRA_CA_CERTS, the way an admin trusts an internal CA, and a server
// with a certificate nobody vouched for is refused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { signIn, type Client } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { MailReceiver } from '../support/alert-receivers.ts';
import { selfSignedCert } from '../support/certificates.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-smtp-tls-'));
const PASSWORD = 'smtp-tls-admin-password';
const SMTP_USER = { user: 'mailer', password: 'smtp-secret-9' };

/** A self-signed certificate for 127.0.0.1; its key and certificate in PEM. */
function certificate(name: string): { key: string; cert: string; certPath: string } {
  const made = selfSignedCert(name, '127.0.0.1');
  const certPath = path.join(dir, `${name}.crt`);
  writeFileSync(certPath, made.cert);
  return { ...made, certPath };
}

let service: ServiceProcess;
let admin: Client;
let fractalId: string;
const trusted = certificate('trusted-smtp');
const untrusted = certificate('unknown-smtp');
const implicit = new MailReceiver({ ...SMTP_USER, tls: 'implicit', ...trusted });
const upgrade = new MailReceiver({ ...SMTP_USER, tls: 'starttls', ...trusted });
const plain = new MailReceiver(SMTP_USER);
const stranger = new MailReceiver({ ...SMTP_USER, tls: 'implicit', ...untrusted });

before(async () => {
  await Promise.all([implicit.start(), upgrade.start(), plain.start(), stranger.start()]);
  service = await startServiceProcess({ dataDir: path.join(dir, 'data'), env: { SVC_ADMIN_PASSWORD: PASSWORD, NODE_EXTRA_CA_CERTS: trusted.certPath }, timeoutMs: 120_000 });
  admin = await signIn(service.base, 'admin', PASSWORD);
  fractalId = expectOk<any[]>(await admin.get('/api/v1/fractals')).find((f) => f.name === 'default').id;
});
after(async () => {
  await service?.stop('SIGKILL');
  await Promise.all([implicit.stop(), upgrade.stop(), plain.stop(), stranger.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Points the SMTP settings at `server` with `tls_mode`, then sends the e-mail action's test. */
async function sendThrough(server: MailReceiver, tlsMode: string): Promise<{ delivered: boolean; error: string }> {
  expectOk(await admin.post('/api/v1/smtp-settings', { host: '127.0.0.1', port: server.port, username: SMTP_USER.user, password: SMTP_USER.password, from_address: 'alerts@appliance.test', tls_mode: tlsMode }));
  return expectOk(await admin.post('/api/v1/email-actions/test', { name: `via ${tlsMode}`, fractal_id: fractalId, recipients: ['soc@example.test'], subject_template: `over {{ "${tlsMode}" }}` }));
}

test('tls: TLS from the first byte, the certificate verified, the login inside it', async () => {
  const r = await sendThrough(implicit, 'tls');
  assert.equal(r.delivered, true, r.error);
  assert.equal(implicit.mails.length, 1);
  assert.deepEqual([implicit.mails[0]!.secure, implicit.mails[0]!.user, implicit.mails[0]!.to], [true, 'mailer', ['soc@example.test']]);
  assert.match(implicit.mails[0]!.raw, /^Subject: over tls\r?$/m);
});

test('starttls: the connection is upgraded before the login; a server that does not offer it is refused', async () => {
  const r = await sendThrough(upgrade, 'starttls');
  assert.equal(r.delivered, true, r.error);
  assert.deepEqual([upgrade.mails.length, upgrade.mails[0]!.secure, upgrade.mails[0]!.user], [1, true, 'mailer']);

  const refused = await sendThrough(plain, 'starttls');
  assert.equal(refused.delivered, false);
  assert.match(refused.error, /did not accept STARTTLS, which tls_mode starttls requires/);
  assert.equal(plain.mails.length, 0);
});

test('none: plain even when the server offers STARTTLS', async () => {
  const before = upgrade.mails.length;
  const r = await sendThrough(upgrade, 'none');
  assert.equal(r.delivered, true, r.error);
  assert.equal(upgrade.mails.length, before + 1);
  assert.equal(upgrade.mails.at(-1)!.secure, false);
});

test('a server whose certificate nobody trusts is refused, with the reason', async () => {
  const r = await sendThrough(stranger, 'tls');
  assert.equal(r.delivered, false);
  assert.match(r.error, /certificate is not trusted .*NODE_EXTRA_CA_CERTS/);
  assert.equal(stranger.mails.length, 0);
});

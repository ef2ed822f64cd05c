// The Syslog listeners page's helpers (renderer/src/lib/syslog-listeners.ts): what the form sends,
// what it refuses before asking the service, and where senders are told to point.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressOf, bodyOf, emptyForm, formOf, loggerCommand, type SyslogListener } from '../../renderer/src/lib/syslog-listeners.ts';

const TOKEN = '6f1c2b1e-64a7-4f3c-9a57-3d4f0a8e2b11';
const listener = (over: Partial<SyslogListener> = {}): SyslogListener => ({
  id: 'l1', name: 'firewalls', protocol: 'tcp', bind_address: '0.0.0.0', port: 5514, ingest_token_id: TOKEN,
  ingest_token_name: 'syslog', fractal_id: 'f1', parser_type: 'syslog', time_zone: 'UTC', enabled: true, has_tls_cert: false,
  status: 'listening', status_reason: null, listening_port: 5514,
  counters: { messages: 0, bytes: 0, parse_errors: 0, drops: 0, connections: 0 }, created_at: '', updated_at: '', ...over,
});

test('a new listener: name, port and token are required; defaults fill the rest', () => {
  const f = { ...emptyForm(), name: ' gear ', ingest_token_id: TOKEN };
  assert.deepEqual(bodyOf(f, false), {
    ok: true,
    body: { name: 'gear', protocol: 'udp', bind_address: '0.0.0.0', port: 5514, ingest_token_id: TOKEN, time_zone: 'UTC', enabled: true },
  });
  assert.match((bodyOf({ ...f, name: ' ' }, false) as { error: string }).error, /name/);
  assert.match((bodyOf({ ...f, port: '70000' }, false) as { error: string }).error, /0 to 65535/);
  assert.match((bodyOf({ ...f, port: 'x' }, false) as { error: string }).error, /0 to 65535/);
  assert.match((bodyOf({ ...f, ingest_token_id: '' }, false) as { error: string }).error, /ingest token/);
});

test('TLS: a new listener needs certificate and key; an edit with both empty keeps the stored ones', () => {
  const f = { ...emptyForm(), name: 'tls', protocol: 'tls' as const, ingest_token_id: TOKEN };
  assert.match((bodyOf(f, false) as { error: string }).error, /certificate and private key/);
  assert.match((bodyOf({ ...f, tls_cert: 'CERT' }, true) as { error: string }).error, /certificate and private key/);
  const made = bodyOf({ ...f, tls_cert: ' CERT\n', tls_key: 'KEY' }, false);
  assert.ok(made.ok && made.body.tls_cert === 'CERT' && made.body.tls_key === 'KEY');
  const kept = bodyOf(formOf(listener({ protocol: 'tls', has_tls_cert: true })), true);
  assert.ok(kept.ok && !('tls_cert' in kept.body) && !('tls_key' in kept.body));
  // PEM fields are never sent for UDP or TCP.
  const tcp = bodyOf({ ...f, protocol: 'tcp', tls_cert: 'CERT', tls_key: 'KEY' }, false);
  assert.ok(tcp.ok && !('tls_cert' in tcp.body));
});

test('where senders point: the bound port (the system\'s choice for 0), IPv6 in brackets; a logger line to try it', () => {
  assert.equal(addressOf(listener()), '0.0.0.0:5514/tcp');
  assert.equal(addressOf(listener({ bind_address: '::', port: 0, listening_port: 40123, protocol: 'udp' })), '[::]:40123/udp');
  assert.equal(addressOf(listener({ listening_port: null, status: 'stopped' })), '0.0.0.0:5514/tcp');
  assert.equal(loggerCommand(listener(), 'logs.lan'), "logger --tcp --octet-count --rfc5424 -n logs.lan -P 5514 -t myapp 'hello from logger'");
  assert.equal(loggerCommand(listener({ protocol: 'udp' }), 'logs.lan'), "logger --udp --rfc5424 -n logs.lan -P 5514 -t myapp 'hello from logger'");
  assert.equal(loggerCommand(listener({ protocol: 'tls' }), 'logs.lan'), null);
});

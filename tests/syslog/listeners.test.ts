// Syslog listeners (conventions.md "Syslog listeners") against a real appliance: real UDP, TCP and
// TLS sockets on loopback, the real pipeline and embedded engine. Each test sends to its own fractal
// and counts what was stored, with the fields and times the syslog parser gives.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { waitFor } from '../support/alert-receivers.ts';
import { ADMIN_PASSWORD, makeUser, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { storedLogs, waitForLogs } from '../support/logs.ts';
import { connect, makeListener, octetFrame, refusesConnections, selfSignedCert, sendStream, sendUdp, tokenIdOf } from '../support/syslog.ts';

let a: TestAppliance;
let admin: Client;

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await a?.dispose();
});

/** A fractal with a syslog-parsing token, and that token's id. */
async function syslogFractal(name: string) {
  const f = await ingestFractal(admin, name, { parser_type: 'syslog' });
  return { ...f, tokenId: tokenIdOf(a, f.token) };
}

const countersOf = async (id: string) => (await admin.get(`/api/v1/syslog-listeners/${id}`)).body.data.counters;
const year = new Date().getUTCFullYear();
/** The year an RFC 3164 `Jan  2` timestamp takes today (the previous one only in the first day of the year). */
const janYear = Date.now() < Date.UTC(year, 0, 3) ? year - 1 : year;

test('UDP: one message per datagram, RFC 5424 and RFC 3164, fields and times as the syslog parser reads them, counters', async () => {
  const f = await syslogFractal('udp');
  const l = await makeListener(admin, { name: 'udp gear', protocol: 'udp', ingest_token_id: f.tokenId });
  assert.equal(l.protocol, 'udp');
  assert.equal(l.fractal_id, f.id);
  assert.ok(l.listening_port > 0);
  const rfc5424 = Array.from({ length: 100 }, (_, i) => `<134>1 2026-11-25T10:00:${String(i % 60).padStart(2, '0')}.000Z fw01 filterlog 99 ID47 - udp5424 ${i}\n`);
  const rfc3164 = Array.from({ length: 100 }, (_, i) => `<13>Jan  2 03:04:05 switch7 sshd[${i}]: udp3164 ${i}`);
  await sendUdp(l.listening_port, [...rfc5424, ...rfc3164]);

  const rows = await waitForLogs(a, f.id, 200, 60_000);
  assert.equal(rows.length, 200);
  const first = rows.find((r) => r.fields.message === 'udp5424 7')!;
  assert.equal(first.fields.hostname, 'fw01');
  assert.equal(first.fields.app_name, 'filterlog');
  assert.equal(first.timestamp, '2026-11-25 10:00:07.000000000');
  assert.equal(first.raw, rfc5424[7]!.trim(), 'the datagram without its line end is the raw record');
  const bsd = rows.find((r) => r.fields.message === 'udp3164 42')!;
  assert.equal(bsd.fields.hostname, 'switch7');
  assert.equal(bsd.fields.app_name, 'sshd');
  assert.equal(String(bsd.fields.proc_id), '42');
  assert.equal(bsd.timestamp, `${janYear}-01-02 03:04:05.000000000`, 'no year: this year, in UTC by default');

  const c = await countersOf(l.id);
  assert.equal(c.messages, 200);
  assert.equal(c.drops, 0);
  assert.equal(c.parse_errors, 0);
  assert.ok(c.bytes > 200 * 40);
});

test('TCP: octet counting and newline framing on one port, a frame split anywhere, half a frame then a disconnect, a 10 MB line', async () => {
  const f = await syslogFractal('tcp');
  const l = await makeListener(admin, { name: 'tcp relay', protocol: 'tcp', ingest_token_id: f.tokenId });
  const port = l.listening_port;

  // Octet-counted, written a few bytes at a time so frames and counts are cut at every place.
  const counted = Array.from({ length: 100 }, (_, i) => octetFrame(`<30>1 2026-11-25T11:00:00Z web01 nginx - - - counted ${i} with a line\nfeed inside`)).join('');
  const s1 = await connect(port);
  for (let i = 0; i < counted.length; i += 7) s1.write(counted.slice(i, i + 7));
  await sendStream(s1, '');

  // Newline framing, the last line without its LF (what `printf | nc` sends), CRLF line ends too.
  const lines = Array.from({ length: 100 }, (_, i) => `<30>1 2026-11-25T11:00:00Z web02 app - - - line ${i}`);
  await sendStream(await connect(port), lines.slice(0, 50).join('\n') + '\n' + lines.slice(50).join('\r\n'));

  // Two whole frames and half of a third, then the peer goes away.
  const s3 = await connect(port);
  const whole = [0, 1].map((i) => octetFrame(`<30>1 2026-11-25T11:00:00Z web03 app - - - half test ${i}`)).join('');
  const cut = octetFrame('<30>1 2026-11-25T11:00:00Z web03 app - - - never complete');
  s3.write(whole + cut.slice(0, 30));
  await waitFor('the whole frames', async () => (await countersOf(l.id)).messages >= 202);
  s3.destroy();

  // A 10 MB message on one line.
  const big = `<30>1 2026-11-25T11:00:00Z web04 app - - - ${'x'.repeat(10 * 1024 * 1024)}`;
  await sendStream(await connect(port), big + '\n');

  const rows = await waitForLogs(a, f.id, 203, 120_000);
  assert.equal(rows.length, 203);
  const messages = rows.map((r) => String(r.fields.message));
  for (let i = 0; i < 100; i++) {
    assert.ok(messages.includes(`counted ${i} with a line\nfeed inside`), `counted ${i}`);
    assert.ok(messages.includes(`line ${i}`), `line ${i}`);
  }
  assert.deepEqual(messages.filter((m) => m.startsWith('half test')).sort(), ['half test 0', 'half test 1']);
  assert.ok(!messages.includes('never complete'));
  const bigRow = rows.find((r) => r.fields.hostname === 'web04')!;
  assert.equal(String(bigRow.fields.message).length, 10 * 1024 * 1024);

  await waitFor('counters', async () => {
    const c = await countersOf(l.id);
    return c.messages === 204 && c.connections === 0 ? c : undefined;
  });
  const c = await countersOf(l.id);
  assert.equal(c.drops, 1, 'the cut frame is counted as dropped');
  assert.equal(c.parse_errors, 0);
  assert.equal((await storedLogs(a, f.id)).length, 203, 'nothing stored twice');
});

test('TLS (RFC 5425) with a PEM certificate and key, never returned; a bad PEM is a 400', async () => {
  const f = await syslogFractal('tls');
  const { cert, key } = selfSignedCert();
  const bad = await admin.post('/api/v1/syslog-listeners', {
    name: 'bad tls', protocol: 'tls', port: 0, bind_address: '127.0.0.1', ingest_token_id: f.tokenId, tls_cert: cert, tls_key: 'not a key',
  });
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.body), /tls_cert.*tls_key.*PEM/);
  const none = await admin.post('/api/v1/syslog-listeners', { name: 'no cert', protocol: 'tls', port: 0, ingest_token_id: f.tokenId });
  assert.equal(none.status, 400);

  const l = await makeListener(admin, { name: 'tls', protocol: 'tls', ingest_token_id: f.tokenId, tls_cert: cert, tls_key: key });
  assert.equal(l.has_tls_cert, true);
  const text = JSON.stringify((await admin.get(`/api/v1/syslog-listeners/${l.id}`)).body) + JSON.stringify((await admin.get('/api/v1/syslog-listeners')).body);
  assert.ok(!text.includes('PRIVATE KEY') && !text.includes('CERTIFICATE') && !('tls_key' in l) && !('tls_cert' in l));

  const frames = Array.from({ length: 50 }, (_, i) => octetFrame(`<165>1 2026-11-25T12:00:00.5Z router1 bgpd 7 - [meta seq="${i}"] tls ${i}`)).join('');
  await sendStream(await connect(l.listening_port, { tls: true }), frames);
  const rows = await waitForLogs(a, f.id, 50, 60_000);
  assert.equal(rows.length, 50);
  const r = rows.find((x) => x.fields.message === 'tls 9')!;
  assert.equal(r.fields['sd.meta.seq'], '9');
  assert.equal(r.timestamp, '2026-11-25 12:00:00.500000000');

  // An edit that leaves the certificate out keeps it.
  const renamed = await admin.put(`/api/v1/syslog-listeners/${l.id}`, { name: 'tls renamed' });
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  assert.equal(renamed.body.data.status, 'listening');
  assert.equal(renamed.body.data.has_tls_cert, true);
});

test('RFC 3164 times without a zone are read in the listener\'s time zone; anything not syslog is still stored, as message', async () => {
  const f = await syslogFractal('zone');
  const bad = await admin.post('/api/v1/syslog-listeners', { name: 'bad zone', protocol: 'udp', port: 0, ingest_token_id: f.tokenId, time_zone: 'Mars/Olympus' });
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.body), /time_zone.*Mars\/Olympus/);

  const l = await makeListener(admin, { name: 'berlin', protocol: 'tcp', ingest_token_id: f.tokenId, time_zone: 'Europe/Berlin' });
  assert.equal(l.time_zone, 'Europe/Berlin');
  await sendStream(
    await connect(l.listening_port),
    [
      '<13>Jan  2 03:04:05 sw1 app: winter', // CET, UTC+1
      `<13>${year - 1} Jul  2 03:04:05 sw1 app: summer`, // CEST, UTC+2 (a year given)
      '<13>1 2026-11-25T12:00:00Z sw1 app - - - zoned', // carries its zone: unchanged
      'just some text from a printer',
    ].join('\n') + '\n',
  );
  const rows = await waitForLogs(a, f.id, 4, 60_000);
  const by = (m: string) => rows.find((r) => r.fields.message === m)!;
  assert.equal(by('winter').timestamp, `${janYear}-01-02 02:04:05.000000000`);
  assert.equal(by('summer').timestamp, `${year - 1}-07-02 01:04:05.000000000`);
  assert.equal(by('zoned').timestamp, '2026-11-25 12:00:00.000000000');
  assert.equal(by('just some text from a printer').raw, 'just some text from a printer');
  await waitFor('parse error counted', async () => (await countersOf(l.id)).parse_errors === 1);
});

test('listeners open, move and close without a restart; a port in use is a 400 naming it; bad input; admins only; a deleted token takes its listener', async () => {
  const f = await syslogFractal('api');
  const post = (body: Record<string, unknown>) => admin.post('/api/v1/syslog-listeners', { name: 'x', protocol: 'tcp', port: 0, bind_address: '127.0.0.1', ingest_token_id: f.tokenId, ...body });

  // A port someone else holds.
  const squatter = net.createServer();
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
  const taken = (squatter.address() as net.AddressInfo).port;
  const busy = await post({ name: 'busy', port: taken });
  assert.equal(busy.status, 400);
  assert.match(JSON.stringify(busy.body), new RegExp(`Port ${taken}/tcp on 127\\.0\\.0\\.1 cannot be opened: it is already in use \\(EADDRINUSE\\)`));
  assert.ok(!(await admin.get('/api/v1/syslog-listeners')).body.data.some((x: any) => x.name === 'busy'), 'nothing stored');
  await new Promise<void>((r) => squatter.close(() => r()));

  for (const [body, pattern] of [
    [{ bind_address: 'example.org' }, /bind_address.*IP address/],
    [{ ingest_token_id: '00000000-0000-4000-8000-000000000000' }, /No ingest token has the id/],
    [{ protocol: 'smtp' }, /protocol/],
    [{ port: 70000 }, /port/],
    [{ tls_cert: 'x', tls_key: 'y' }, /apply only to protocol tls/],
  ] as const) {
    const r = await post({ name: `bad ${JSON.stringify(body)}`, ...body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(JSON.stringify(r.body), pattern);
  }

  const user = await makeUser(admin, 'not-an-admin');
  assert.equal((await user.get('/api/v1/syslog-listeners')).status, 403);
  assert.equal((await user.post('/api/v1/syslog-listeners', { name: 'u', protocol: 'udp', port: 0, ingest_token_id: f.tokenId })).status, 403);

  const made = await post({ name: 'mover', port: taken });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.equal(made.body.data.listening_port, taken);
  assert.equal((await post({ name: 'Mover' })).status, 409, 'names are unique');
  const id = made.body.data.id;

  // Moved to another port: the old one closes, the new one takes logs.
  const moved = await admin.put(`/api/v1/syslog-listeners/${id}`, { port: 0 });
  assert.equal(moved.status, 200);
  const newPort = moved.body.data.listening_port;
  assert.notEqual(newPort, taken);
  assert.ok(await refusesConnections(taken));
  await sendStream(await connect(newPort), '<13>1 - h app - - - after the move\n');
  await waitForLogs(a, f.id, 1, 60_000);

  // Switched off and on again.
  const off = await admin.put(`/api/v1/syslog-listeners/${id}`, { enabled: false });
  assert.equal(off.body.data.status, 'stopped');
  assert.equal(off.body.data.listening_port, null);
  assert.ok(await refusesConnections(newPort));
  const on = await admin.put(`/api/v1/syslog-listeners/${id}`, { enabled: true });
  assert.equal(on.body.data.status, 'listening');

  // Deleting its token deletes the listener and closes its port.
  const port = on.body.data.listening_port;
  assert.equal((await admin.del(`/api/v1/fractals/${f.id}/ingest-tokens/${f.tokenId}`)).status, 200);
  assert.equal((await admin.get(`/api/v1/syslog-listeners/${id}`)).status, 404);
  await waitFor('the port closed', () => refusesConnections(port));

  // Deleted through the API.
  const g = await syslogFractal('api2');
  const d = await makeListener(admin, { name: 'to delete', protocol: 'tcp', ingest_token_id: g.tokenId });
  assert.equal((await admin.del(`/api/v1/syslog-listeners/${d.id}`)).status, 200);
  assert.ok(await refusesConnections(d.listening_port));
  assert.equal((await admin.get(`/api/v1/syslog-listeners/${d.id}`)).status, 404);
});

test('per-listener counters are Prometheus metrics too', async () => {
  const text = await a.context.metrics.registry.metrics();
  assert.match(text, /svc_syslog_messages_total\{listener="udp gear"\} 200/);
  assert.match(text, /svc_syslog_drops_total\{listener="tcp relay"\} 1/);
  assert.match(text, /svc_syslog_bytes_total\{listener="tcp relay"\} \d+/);
});

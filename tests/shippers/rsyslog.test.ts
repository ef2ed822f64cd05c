// Debian's rsyslog (8.2302 in bookworm) with the tokens page's own recipes, sending to a real
// service: omelasticsearch to /_bulk, and omfwd over TCP and UDP to syslog listeners. Each route
// gets lines at 200, 1,000 and 5,000 a second (timestamps three hours back), and every line must be
// stored exactly once with its time and fields.
import { test } from 'node:test';
import { rsyslogForwardSnippet, rsyslogSnippet, parseTarget } from '../../renderer/src/lib/snippets.ts';
import { ingestFractal } from '../support/ingest.ts';
import { expectDelivered, feedAtPaces } from '../support/shipper-lines.ts';
import { shipperSuite, startRsyslog } from '../support/shippers.ts';
import { makeListener, tokenIdOf } from '../support/syslog.ts';

const suite = shipperSuite(startRsyslog);

test('omelasticsearch to /_bulk (the rsyslog recipe): every line once, with its time and fields', async () => {
  const f = await ingestFractal(suite.admin, 'rsyslog-bulk');
  const d = await suite.start(rsyslogSnippet(parseTarget(suite.a.url)!, f.token).text);
  const sent = await feedAtPaces(d.inputPort, 'rsyslog-bulk');
  await expectDelivered(suite.a, f.id, sent);
});

test('omfwd over TCP, octet-counted, to a syslog listener (the rsyslog omfwd recipe): every line once', async () => {
  const f = await ingestFractal(suite.admin, 'rsyslog-tcp', { parser_type: 'syslog' });
  const l = await makeListener(suite.admin, { name: 'rsyslog tcp', protocol: 'tcp', ingest_token_id: tokenIdOf(suite.a, f.token) });
  const d = await suite.start(rsyslogForwardSnippet(parseTarget('127.0.0.1')!, f.token, { port: l.listening_port, protocol: 'tcp' }).text);
  const sent = await feedAtPaces(d.inputPort, 'rsyslog-tcp');
  await expectDelivered(suite.a, f.id, sent);
});

test('omfwd over UDP to a syslog listener: every line once at 200 and 1,000 a second', async () => {
  const f = await ingestFractal(suite.admin, 'rsyslog-udp', { parser_type: 'syslog' });
  const l = await makeListener(suite.admin, { name: 'rsyslog udp', protocol: 'udp', ingest_token_id: tokenIdOf(suite.a, f.token) });
  const d = await suite.start(rsyslogForwardSnippet(parseTarget('127.0.0.1')!, f.token, { port: l.listening_port, protocol: 'udp' }).text);
  const sent = await feedAtPaces(d.inputPort, 'rsyslog-udp', [200, 1000]);
  await expectDelivered(suite.a, f.id, sent);
});

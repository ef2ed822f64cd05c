// Debian's syslog-ng (3.38 in bookworm, with syslog-ng-mod-http and the SCL) with the tokens page's
// own recipes, sending to a real service: http() in batches to /api/v1/ingest and
// elasticsearch-http() to /_bulk. Each route gets lines at 200, 1,000 and 5,000 a second
// (timestamps three hours back), and every line must be stored exactly once with its time and fields.
import { test } from 'node:test';
import { parseTarget, syslogNgBulkSnippet, syslogNgSnippet } from '../../renderer/src/lib/snippets.ts';
import { ingestFractal } from '../support/ingest.ts';
import { expectDelivered, feedAtPaces } from '../support/shipper-lines.ts';
import { shipperSuite, startSyslogNg } from '../support/shippers.ts';

const suite = shipperSuite(startSyslogNg);

test('http() with batching to /api/v1/ingest (the syslog-ng recipe): every line once, with its time and fields', async () => {
  const f = await ingestFractal(suite.admin, 'syslog-ng-http');
  const d = await suite.start(syslogNgSnippet(parseTarget(suite.a.url)!, f.token).text);
  const sent = await feedAtPaces(d.inputPort, 'syslog-ng-http');
  await expectDelivered(suite.a, f.id, sent);
});

test('elasticsearch-http() to /_bulk (the syslog-ng bulk recipe): every line once, with its time and fields', async () => {
  const f = await ingestFractal(suite.admin, 'syslog-ng-bulk');
  const d = await suite.start(syslogNgBulkSnippet(parseTarget(suite.a.url)!, f.token).text);
  const sent = await feedAtPaces(d.inputPort, 'syslog-ng-bulk');
  await expectDelivered(suite.a, f.id, sent);
});

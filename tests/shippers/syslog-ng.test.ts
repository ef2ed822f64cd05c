// Debian's syslog-ng (3.38 in bookworm, with syslog-ng-mod-http and the SCL) with the tokens page's
// own recipes, sending to a real service: http() in batches to /api/v1/ingest and
// elasticsearch-http() to /_bulk. Each route gets lines at 200, 1,000 and 5,000 a second
// (timestamps three hours back), and every line must be stored exactly once with its time and fields.
import { after, before, test } from 'node:test';
import { parseTarget, syslogNgBulkSnippet, syslogNgSnippet } from '../../renderer/src/lib/snippets.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { expectDelivered, feedAtPaces } from '../support/shipper-lines.ts';
import { startSyslogNg, type Daemon } from '../support/shippers.ts';

let a: TestAppliance;
let admin: Client;
const daemons: Daemon[] = [];

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  for (const d of daemons) await d.stop();
  await a?.dispose();
});

async function start(config: string): Promise<Daemon> {
  const d = await startSyslogNg(config);
  daemons.push(d);
  return d;
}

test('http() with batching to /api/v1/ingest (the syslog-ng recipe): every line once, with its time and fields', async () => {
  const f = await ingestFractal(admin, 'syslog-ng-http');
  const d = await start(syslogNgSnippet(parseTarget(a.url)!, f.token).text);
  const sent = await feedAtPaces(d.inputPort, 'syslog-ng-http');
  await expectDelivered(a, f.id, sent);
});

test('elasticsearch-http() to /_bulk (the syslog-ng bulk recipe): every line once, with its time and fields', async () => {
  const f = await ingestFractal(admin, 'syslog-ng-bulk');
  const d = await start(syslogNgBulkSnippet(parseTarget(a.url)!, f.token).text);
  const sent = await feedAtPaces(d.inputPort, 'syslog-ng-bulk');
  await expectDelivered(a, f.id, sent);
});

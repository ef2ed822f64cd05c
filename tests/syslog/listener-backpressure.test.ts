// A full ingest queue slows TCP syslog senders instead of dropping their logs: the listener stops
// reading the socket, the kernel's buffers fill and the sender's writes wait; once storage takes
// inserts again every line arrives, once. Storage is a real ClickHouse HTTP interface (the bridge
// over the embedded engine) holding every insert while the test says so, as a busy server would.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { waitFor } from '../support/alert-receivers.ts';
import { ADMIN_PASSWORD, signIn, type Client, type TestAppliance } from '../support/appliance.ts';
import type { ClickHouseHttpBridge } from '../support/clickhouse-http-bridge.ts';
import { startRemoteTestAppliance, type RemoteTestAppliance } from '../support/remote-appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';
import { connect, makeListener, sendUdp, tokenIdOf } from '../support/syslog.ts';

let remote: RemoteTestAppliance;
let bridge: ClickHouseHttpBridge;
let a: TestAppliance;
let admin: Client;

before(async () => {
  // One slot: the queue takes 5,000 logs.
  ({ a, bridge } = remote = await startRemoteTestAppliance({ SVC_CLICKHOUSE_DATABASE: 'syslog_bp', SVC_INGEST_QUEUE_SIZE: '1' }));
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(() => remote?.dispose());

const LINES = 24_000;
const PAD = 'p'.repeat(700);

test('a queue-full stretch: TCP senders wait (their writes back up) and lose nothing; UDP datagrams wait for room (up to a bound)', async () => {
  const f = await ingestFractal(admin, 'backpressure', { parser_type: 'syslog' });
  const l = await makeListener(admin, { name: 'bp tcp', protocol: 'tcp', ingest_token_id: tokenIdOf(a, f.token) });
  const counters = async () => (await admin.get(`/api/v1/syslog-listeners/${l.id}`)).body.data.counters;
  const queue = async () => (await admin.get('/api/v1/system/pressure')).body.data.layers.queue;

  const release = bridge.holdInserts();
  let released = false;
  try {
    // Two senders of 12,000 lines (about 17 MB together): far more than the queue and the
    // kernel's socket buffers hold.
    const senders = await Promise.all([0, 1].map(() => connect(l.listening_port)));
    let written = 0;
    const writesDone = senders.map(
      (sock, s) =>
        new Promise<void>((resolve, reject) => {
          sock.on('error', reject);
          let i = 0;
          const more = () => {
            while (i < LINES / 2) {
              const seq = s * (LINES / 2) + i++;
              written++;
              if (!sock.write(`<13>1 2026-11-25T10:00:00Z host${s} app - - - seq=${seq} ${PAD}\n`)) return void sock.once('drain', more);
            }
            sock.end(resolve);
          };
          more();
        }),
    );

    // The queue fills to its bound and stays there; the listener stops reading: the messages it has
    // read stop growing while the senders still have lines they could not write.
    // (Admission is all or nothing per delivery, so the queue may stop a little short of 5,000.)
    await waitFor('the queue full', async () => {
      const q = await queue();
      return q.active && q.logs_queued > 4000;
    }, 120_000);
    let last = -1;
    await waitFor(
      'the listener to stop reading',
      async () => {
        const c = await counters();
        const stable = c.messages === last;
        last = c.messages;
        if (!stable) await new Promise((r) => setTimeout(r, 1000));
        return stable;
      },
      120_000,
    );
    assert.ok(written < LINES || senders.some((s) => s.writableLength > 0), 'the senders are held back');
    assert.ok(last < LINES, `the listener read ${last} of ${LINES} lines while the queue was full`);
    const held = await counters();
    assert.equal(held.drops, 0);
    assert.equal(held.connections, 2, 'the senders are not disconnected');
    const queued = (await queue()).logs_queued;
    assert.ok(queued <= 5000, `nothing beyond what the queue takes is admitted (${queued})`);

    // UDP meanwhile: datagrams wait up to a bound, beyond it they are counted as drops (none here:
    // a few datagrams wait for room and are delivered later).
    const u = await makeListener(admin, { name: 'bp udp', protocol: 'udp', ingest_token_id: tokenIdOf(a, f.token) });
    await sendUdp(u.listening_port, Array.from({ length: 20 }, (_, i) => `<13>1 2026-11-25T10:00:00Z udp app - - - seq=${LINES + i}`));
    await waitFor('the datagrams read', async () => (await admin.get(`/api/v1/syslog-listeners/${u.id}`)).body.data.counters.messages === 20);

    release();
    released = true;
    await Promise.all(writesDone);
    const rows = await waitForLogs(a, f.id, LINES + 20, 300_000);
    const seqs = rows.map((r) => Number(/seq=(\d+)/.exec(String(r.fields.message))![1]));
    assert.equal(rows.length, LINES + 20);
    assert.equal(new Set(seqs).size, LINES + 20, 'every line exactly once');
    const c = await counters();
    assert.equal(c.messages, LINES);
    assert.equal(c.drops, 0);
  } finally {
    if (!released) release();
  }
});

// A log answered 200 survives kill -9: the spool holds it until ClickHouse has it, and the
// next start replays it.
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { after, test } from 'node:test';
import { Spool } from '../../service/src/ingest/spool.ts';
import { signIn } from '../support/appliance.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = (p: string) => {
  const d = mkdtempSync(path.join(tmpdir(), p));
  dirs.push(d);
  return d;
};

test('spool: unconfirmed batches come back after a crash, confirmed ones and torn tails do not', async () => {
  const dir = tempDir('spool-');
  const s1 = new Spool(dir);
  assert.deepEqual(s1.recover(), []);
  await s1.append({ id: 'b1', fractalId: 'f', count: 1, table: 'logs_ingest', rows: Buffer.from('{"a":1}\n') });
  await s1.append({ id: 'b2', fractalId: 'f', count: 2, table: 'logs_ingest', rows: Buffer.from('{"a":2}\n{"a":3}\n') });
  s1.confirm('b1');
  await s1.append({ id: 'b3', fractalId: 'f', count: 1, table: 'logs_ingest', rows: Buffer.from('{"a":4}\n') });
  // "Crash": no close. Then a write torn in the middle.
  const seg = readdirSync(dir).find((f) => f.endsWith('.spl'))!;
  appendFileSync(path.join(dir, seg), Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 0x42]));

  const s2 = new Spool(dir);
  const back = s2.recover();
  assert.deepEqual(back.map((b) => [b.id, b.count, b.table, b.rows.toString()]), [
    ['b2', 2, 'logs_ingest', '{"a":2}\n{"a":3}\n'],
    ['b3', 1, 'logs_ingest', '{"a":4}\n'],
  ]);
  s2.confirm('b2');
  s2.confirm('b3');
  await s2.close();
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.spl')), [], 'a fully confirmed spool is emptied on close');
});

test('spool: after a crash, a batch never stored comes back and the stored ones around it do not, across segments', async () => {
  // A stored batch's confirmation is written to the segment open at the time, often a newer one
  // than the batch's. So a segment is deleted only after every older one: deleting a newer one
  // while an older segment is kept for a batch still waiting lost the confirmations of the older
  // segment's stored batches, and a crash then stored them a second time. And since writes and
  // fsyncs run off the event loop, a batch can arrive while the segment is being synced and closed.
  const dir = tempDir('spool-rotate-');
  const s1 = new Spool(dir);
  s1.recover();
  const mb = (id: string, n = 1) => ({ id, fractalId: 'f', count: 1, table: 'logs_ingest' as const, rows: Buffer.alloc(n * 1024 * 1024, 0x61) });
  const first: string[] = [];
  for (let i = 0; i < 63; i++) {
    first.push(`a${i}`);
    await s1.append(mb(`a${i}`));
  }
  // The batch that fills the first segment (64 MiB), and one arriving while it is synced.
  const filling = s1.append(mb('fill', 2));
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  const arriving = s1.append(mb('late'));
  await Promise.all([filling, arriving]);
  for (const id of [...first, 'fill']) s1.confirm(id);
  // Two more segments' worth, every batch stored; only the late one still waits.
  for (let i = 0; i < 130; i++) {
    await s1.append(mb(`c${i}`));
    s1.confirm(`c${i}`);
  }
  await s1.append(mb('last'));
  s1.confirm('last');
  await s1.append(mb('flush')); // the confirmations above are on disk once this one is
  // "Crash" (no close): the late batch comes back, and the last one; no stored batch does.
  const back = new Spool(dir).recover();
  assert.deepEqual(
    back.map((b) => b.id),
    ['late', 'flush'],
  );
});

test('spool: a batch spooled by an older version (no table in its header) is replayed as rows of logs', () => {
  const dir = tempDir('spool-old-');
  const payload = Buffer.from('B' + JSON.stringify({ id: 'old', fractalId: 'f', count: 1 }) + '\n{"a":1}\n');
  const head = Buffer.alloc(8);
  head.writeUInt32LE(payload.length, 0);
  head.writeUInt32LE(crc32(payload) >>> 0, 4);
  writeFileSync(path.join(dir, 'segment-0000000001.spl'), Buffer.concat([head, payload]));
  const back = new Spool(dir).recover();
  assert.deepEqual(back.map((b) => [b.id, b.table, b.rows.toString()]), [['old', 'logs', '{"a":1}\n']]);
});

test('every log answered 200 is there after SIGKILL and a restart', async () => {
  const dataDir = tempDir('svc-kill-');
  const start = () => startServiceProcess({ dataDir, env: { SVC_ADMIN_PASSWORD: 'durable-password' } });
  let service = await start();
  const base = service.base;
  const admin = await signIn(base, 'admin', 'durable-password');
  const fractal = (await admin.get('/api/v1/fractals')).body.data[0];
  const token = (await admin.get(`/api/v1/fractals/${fractal.id}/ingest-tokens`)).body.data[0].token;

  // Many batches in flight at once, then kill -9 the moment the last 200 arrives.
  let accepted = 0;
  const sends = Array.from({ length: 40 }, (_, b) =>
    fetch(`${base}/api/v1/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      body: Array.from({ length: 2_500 }, (_, i) => JSON.stringify({ batch: b, i, msg: 'x'.repeat(100) })).join('\n'),
    }).then(async (r) => {
      if (r.status === 200) accepted += (await r.json()).accepted;
    }),
  );
  await Promise.all(sends);
  await service.stop('SIGKILL');
  assert.equal(accepted, 100_000);
  // The kill must have caught work in flight, or this test would prove nothing about replay.
  const pending = new Spool(path.join(dataDir, 'spool')).recover().reduce((n, b) => n + b.count, 0);
  assert.ok(pending > 0, 'some accepted logs were still only on the spool at the kill');

  service = await start();
  try {
    const again = await signIn(service.base, 'admin', 'durable-password');
    let count = 0;
    await waitFor('the replay', async () => {
      count = (await again.get(`/api/v1/fractals/${fractal.id}/stats`)).body.data.log_count;
      return count >= accepted;
    }).catch(() => undefined); // a shortfall is reported below, with the count
    assert.equal(count, accepted, 'every accepted log is stored, none twice');
  } finally {
    await service.stop();
  }
});

// Case archive benchmark (issue 17 item 4). Prints figures; asserts nothing.
//
//   npm run bench:cases [-- --events 500000]
//
// A fractal of `--events` web logs over ten days (inserted through the ingest entry table, as
// ingest stores them) is exported through the API (the job followed until done), the archive
// downloaded to a file, and imported again through the API (the upload streamed from the file).
// Measured for each: wall time, this process's CPU (the service and the embedded engine run in
// it), events per second, and the peak resident memory while it ran against the memory before
// it (what "a big fractal never sits in memory" costs). The load average is printed: other work on
// the machine slows the wall-clock figures.
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { chTime } from '../../service/src/storage/clickhouse.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance } from '../../tests/support/appliance.ts';
import { fmt, webLog } from './support.ts';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '500000' } } });
const EVENTS = Number(args.events);
const BATCH = 50_000;

const a = await startTestAppliance(); // a fresh data directory, removed at the end
const admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
const created = await admin.post('/api/v1/fractals', { name: 'bench-case' });
const fractalId = created.body.data.id as string;

console.log(`inserting ${fmt(EVENTS)} events…`);
const t0 = Date.now() - 10 * 86_400_000;
const step = (10 * 86_400_000) / EVENTS;
for (let from = 0; from < EVENTS; from += BATCH) {
  const rows: string[] = [];
  for (let i = from; i < Math.min(EVENTS, from + BATCH); i++) {
    const raw = webLog(i, t0, step);
    rows.push(JSON.stringify({ fractal_id: fractalId, timestamp: chTime(new Date(t0 + i * step)), ingest_timestamp: chTime(new Date()), log_id: crypto.randomUUID(), raw, fields: '' }));
  }
  await a.context.logs.insert('logs_ingest', [Buffer.from(rows.join('\n'))]);
}

/** Runs `work`, sampling RSS every 50 ms; wall and CPU in ms, RSS growth in MB. */
async function measure<T>(work: () => Promise<T>): Promise<{ result: T; wallMs: number; cpuMs: number; rssBeforeMb: number; rssPeakMb: number }> {
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await work();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  clearInterval(timer);
  return { result, wallMs, cpuMs: (used.user + used.system) / 1000, rssBeforeMb: rssBefore / 2 ** 20, rssPeakMb: peak / 2 ** 20 };
}

async function followJob(url: string): Promise<any> {
  for (;;) {
    const job = (await admin.get(url)).body.data;
    if (job.status !== 'running') return job;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const file = path.join(a.dataDir, 'bench-case.tar.gz');
const exported = await measure(async () => {
  const job = (await admin.post(`/api/v1/fractals/${fractalId}/case-export`, {})).body.data;
  const done = await followJob(`/api/v1/fractals/${fractalId}/case-exports/${job.id}`);
  if (done.status !== 'done') throw new Error(`export failed: ${done.errors.join('; ')}`);
  const res = await fetch(`${a.url}/api/v1/fractals/${fractalId}/case-exports/${job.id}/archive`, { headers: { cookie: admin.cookie } });
  await pipeline(Readable.fromWeb(res.body as never), createWriteStream(file));
  return done;
});
const size = statSync(file).size;

const imported = await measure(async () => {
  const res = await fetch(`${a.url}/api/v1/case-import?name=bench-case-imported`, {
    method: 'POST',
    headers: { cookie: admin.cookie, 'content-type': 'application/gzip' },
    body: Readable.toWeb(createReadStream(file)) as never,
    duplex: 'half',
  } as RequestInit);
  const body = (await res.json()) as any;
  if (res.status !== 202) throw new Error(`import refused: ${body.error}`);
  const done = await followJob(`/api/v1/case-imports/${body.data.id}`);
  if (done.status !== 'done') throw new Error(`import failed: ${done.errors.join('; ')}`);
  return done;
});

const line = (what: string, m: Awaited<ReturnType<typeof measure>>, events: number) =>
  console.log(
    `${what}: ${fmt(events)} events in ${(m.wallMs / 1000).toFixed(1)} s wall (${fmt(events / (m.wallMs / 1000))} events/s), ` +
      `CPU ${(m.cpuMs / 1000).toFixed(1)} s (${fmt(events / (m.cpuMs / 1000))} events per CPU-second), RSS ${fmt(m.rssBeforeMb)} → peak ${fmt(m.rssPeakMb)} MB`,
  );
console.log(`archive: ${fmt(size)} bytes (${(size / EVENTS).toFixed(1)} bytes per event, gzip level 6)`);
line('export (job, then download)', exported, exported.result.events_done);
line('import (upload and verify, then store)', imported, imported.result.events_done);
console.log(`load average: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
await rm(file, { force: true });
await a.dispose();

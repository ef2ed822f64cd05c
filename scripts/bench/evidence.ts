// Evidence import benchmark (issue 17, "Numbers"). Prints figures; asserts nothing.
//
//   npm run bench:evidence [-- --ingest-logs 300000 --mode mix|homogeneous --no-python --profile DIR]
//
// 1. Unpacks ../shared/data/evtx-attack-samples.tar.gz (277 .evtx files). Parses them all with our
//    reader in this process (one core) and, unless --no-python, with python-evtx (the oracle) on
//    the same files: MB/s by CPU time of each.
// 2. Starts the appliance as `npm start` runs it (a child process, fresh data directory) and, in
//    the same run, measures end to end (first byte sent → every event countable by a query):
//    - ingest: the ingest benchmark's load (bench:ingest's own code, ingest-load.ts: `--mode`, mix
//      by default, batches of 5,000 over 8 connections to /api/v1/ingest), `--ingest-logs` logs;
//    - import: the whole sample set dropped on the import page, sent as the page sends it (the
//      drop's files in groups, one multipart request each, renderer/src/lib/import-groups.ts), read
//      end to end (sniffed, parsed, normalized, spooled, stored), every import done;
//    - the same events as NDJSON through /api/v1/ingest: what storing these (large, varied)
//      events costs by ingest, to tell the import's own cost from the events' cost.
//    Each with the service's CPU time (utime + stime, /proc), split into its JavaScript thread and
//    the embedded engine's threads, beside the wall clock, and the load average (the machine is
//    shared: compare CPU figures). Each step starts once the service is quiet (the engine's
//    merges of the step before would be counted in it otherwise). --profile DIR writes the service's CPU profile (node --cpu-prof).
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readEvtx } from '../../service/src/evidence/evtx/index.ts';
import { exactJsonText } from '../../service/src/shared/exact-json.ts';
import { uploadGroups } from '../../renderer/src/lib/import-groups.ts';
import { signIn, type Client } from '../../tests/support/appliance.ts';
import { unpackEvtxSamples } from '../../tests/support/evtx-samples.ts';
import { startServiceProcess } from '../../tests/support/service-process.ts';
import { countable, makeIngestBatches, sendIngestBatches, type IngestMode } from './ingest-load.ts';
import { fmt, freshDataDir, runPythonEvtx } from './support.ts';

const { values: args } = parseArgs({
  options: {
    'ingest-logs': { type: 'string', default: '300000' },
    mode: { type: 'string', default: 'mix' },
    'no-python': { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
});
const INGEST_LOGS = Number(args['ingest-logs']);
const MODE = args.mode as IngestMode;
if (MODE !== 'mix' && MODE !== 'homogeneous') throw new Error(`--mode is mix or homogeneous, not "${args.mode}"`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** CPU seconds (user + system) of each thread of the process, by thread name ("node" is JavaScript's). */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / 100); // clock ticks, 100/s
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

/** CPU of the whole service and of its JavaScript thread over a stretch, in seconds. */
function cpuMeter(pid: number) {
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const before = threadCpu(pid);
  return () => {
    const after = threadCpu(pid);
    const all = total(after) - total(before);
    const js = (after.get('node') ?? 0) - (before.get('node') ?? 0);
    return { all, js, other: all - js };
  };
}
/**
 * Waits (at most a minute) until the service spends under 2% of a core for a second: the engine's
 * merges of what the last step stored would otherwise be counted in the next step's CPU.
 */
async function quiet(pid: number): Promise<void> {
  for (let t = 0; t < 60; t++) {
    const c = cpuMeter(pid);
    await new Promise((r) => setTimeout(r, 1000));
    if (c().all < 0.02) return;
  }
}
const cpuLine = (c: { all: number; js: number; other: number }) => `service CPU ${c.all.toFixed(1)} s (JavaScript thread ${c.js.toFixed(1)} s, engine and other threads ${c.other.toFixed(1)} s)`;

const samples = unpackEvtxSamples();
try {
  const buffers = samples.files.map((f) => readFileSync(f));
  const bytes = buffers.reduce((n, b) => n + b.length, 0);
  console.log(`${samples.files.length} .evtx files, ${(bytes / 1e6).toFixed(1)} MB; load average ${load()}`);

  // ---- parsing: ours and python-evtx ------------------------------------------------------------
  const eventTexts: string[] = [];
  const c0 = process.cpuUsage();
  const p0 = performance.now();
  for (const b of buffers) for await (const r of readEvtx(b)) eventTexts.push(exactJsonText(r.event));
  const used = process.cpuUsage(c0);
  const parseCpu = (used.user + used.system) / 1e6;
  const parseWall = (performance.now() - p0) / 1000;
  const events = eventTexts.length;
  console.log(`parse, ours:        ${fmt(events)} events, ${parseWall.toFixed(2)} s wall, ${parseCpu.toFixed(2)} s CPU → ${(bytes / 1e6 / parseCpu).toFixed(1)} MB/s CPU (${(bytes / 1e6 / parseWall).toFixed(1)} MB/s wall), events as JSON ${fmt(eventTexts.reduce((n, t) => n + t.length, 0) / events)} B on average; load ${load()}`);
  if (!args['no-python']) {
    const { events: n, cpuS: pyCpu, wallS: pyWall } = runPythonEvtx(samples.files);
    console.log(`parse, python-evtx: ${fmt(n)} events, ${pyWall.toFixed(1)} s wall, ${pyCpu.toFixed(1)} s CPU → ${(bytes / 1e6 / pyCpu).toFixed(2)} MB/s CPU; ours ${(pyCpu / parseCpu).toFixed(0)}× faster; load ${load()}`);
  }

  // ---- the appliance --------------------------------------------------------------------------
  const dataDir = freshDataDir('bench-evidence');
  const service = await startServiceProcess({
    dataDir,
    env: { SVC_ADMIN_PASSWORD: 'bench-password', SVC_INGEST_RATE_LIMIT: '100000', SVC_INGEST_RATE_BURST: '100000' },
    nodeArgs: args.profile ? ['--cpu-prof', `--cpu-prof-dir=${args.profile}`] : [],
    timeoutMs: 120_000,
  });
  const pid = service.child.pid!;
  try {
    const { base } = service;
    const token = /Ingest token:\s+(svc_ingest_[0-9a-f]{32})/.exec(service.output())![1]!;
    const admin = await signIn(base, 'admin', 'bench-password');
    const ingestFractal = (await admin.get('/api/v1/fractals')).body.data[0].id as string;
    const newFractal = async (name: string) => (await admin.post('/api/v1/fractals', { name })).body.data.id as string;

    // Ingest: the ingest benchmark's load.
    const { batches, bytes: ingestBytes } = makeIngestBatches({ mode: MODE, seed: 18, batch: 5000, connections: 8 }, 0, INGEST_LOGS, Date.now() - INGEST_LOGS * 3);
    await quiet(pid);
    let cpu = cpuMeter(pid);
    const sent = await sendIngestBatches({ base, token, admin, fractalId: ingestFractal, batches, expect: INGEST_LOGS, connections: 8 });
    const ingestCpu = cpu();
    const ingestRate = INGEST_LOGS / sent.storedS;
    console.log(
      `ingest:  ${fmt(INGEST_LOGS)} ${MODE} logs (${Math.round(ingestBytes / INGEST_LOGS)} B each) in ${sent.storedS.toFixed(2)} s → ${fmt(ingestRate)} logs/s end to end; ` +
        `${cpuLine(ingestCpu)}, ${fmt(INGEST_LOGS / ingestCpu.all)} logs per CPU-second; load ${load()}`,
    );

    // Import: the sample set as the import page sends a drop of it.
    const evidenceFractal = await newFractal('evidence-bench');
    const groups = uploadGroups(buffers.map((b) => b.length));
    await quiet(pid);
    cpu = cpuMeter(pid);
    const es = performance.now();
    let files = 0;
    for (const g of groups) {
      const form = new FormData();
      for (const i of g) form.append('file', new Blob([buffers[i] as unknown as BlobPart]), path.relative(samples.dir, samples.files[i]!));
      const r = await fetch(`${base}/api/v1/fractals/${evidenceFractal}/imports`, { method: 'POST', headers: { cookie: admin.cookie, 'sec-fetch-site': 'same-origin' }, body: form });
      const body = (await r.json()) as { data?: unknown[]; error?: string };
      if (r.status !== 201) throw new Error(`import answered ${r.status}: ${body.error}`);
      files += body.data!.length;
    }
    const uploadedS = (performance.now() - es) / 1000;
    let accepted = 0;
    let rejected = 0;
    for (;;) {
      // As the page follows a drop: one list request a poll.
      const list = (await admin.get(`/api/v1/fractals/${evidenceFractal}/imports?limit=1000`)).body.data as Array<{ status: string; events_accepted: number; events_rejected: number }>;
      if (list.length === files && list.every((x) => x.status !== 'running')) {
        accepted = list.reduce((n, x) => n + x.events_accepted, 0);
        rejected = list.reduce((n, x) => n + x.events_rejected, 0);
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await countable(admin, evidenceFractal, accepted);
    const importWall = (performance.now() - es) / 1000;
    const importCpu = cpu();
    const importRate = accepted / importWall;
    console.log(
      `import:  ${fmt(accepted)} events (${fmt(rejected)} rejected) of ${files} files in ${groups.length} request${groups.length === 1 ? '' : 's'} in ${importWall.toFixed(2)} s (upload ${uploadedS.toFixed(2)} s) → ${fmt(importRate)} events/s end to end; ` +
        `${cpuLine(importCpu)}, ${fmt(accepted / importCpu.all)} events per CPU-second; load ${load()}`,
    );

    // The same events through ingest.
    const sameFractal = await newFractal('evtx-by-ingest');
    const sameToken = (await admin.post(`/api/v1/fractals/${sameFractal}/ingest-tokens`, { name: 'bench' })).body.data.token as string;
    const sameBatches: Buffer[] = [];
    for (let i = 0; i < eventTexts.length; i += 2000) sameBatches.push(Buffer.from(eventTexts.slice(i, i + 2000).join('\n') + '\n'));
    await quiet(pid);
    cpu = cpuMeter(pid);
    const same = await sendIngestBatches({ base, token: sameToken, admin, fractalId: sameFractal, batches: sameBatches, expect: events, connections: 4 });
    const sameCpu = cpu();
    console.log(`the same events by ingest: ${fmt(events)} in ${same.storedS.toFixed(2)} s → ${fmt(events / same.storedS)} events/s end to end; ${cpuLine(sameCpu)}, ${fmt(events / sameCpu.all)} events per CPU-second; load ${load()}`);

    console.log(
      `import / ingest (${MODE}): ${(importRate / ingestRate).toFixed(2)} by wall clock, ${(accepted / importCpu.all / (INGEST_LOGS / ingestCpu.all)).toFixed(2)} by service CPU (target ≥ 0.8); ` +
        `import / the same events by ingest: ${(importRate / (events / same.storedS)).toFixed(2)} by wall clock, ${(accepted / importCpu.all / (events / sameCpu.all)).toFixed(2)} by service CPU`,
    );
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
} finally {
  samples.remove();
}

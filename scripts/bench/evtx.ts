// .evtx parsing benchmark (issue 17, "Numbers": at least 50 MB/s on one core). Prints figures;
// asserts nothing.
//
//   npm run bench:evtx [-- --runs 5 --python-runs 1 --no-python]
//
// 1. Unpacks ../shared/data/evtx-attack-samples.tar.gz (277 files, 38 MB) into a temporary
//    directory and reads every file into memory, so no run times the disk.
// 2. Our reader (service/src/evidence/evtx): one warm-up pass, then `--runs` timed passes over
//    all files, each file's buffer through readEvtx() to the last event (every event shaped as
//    evtx_dump's JSON). Wall clock and this process's CPU time per pass; one core (the reader is
//    single-threaded JavaScript).
// 3. python-evtx, the oracle, on the same files in the same run: one Python process renders
//    every record's XML (record.xml(), what evtx_dump.py prints) and reports its own CPU time.
// 4. Prints MB/s over the files' bytes (the figure of the target) and over the bytes of the
//    chunks that hold records (files are preallocated: many chunks are zeros), events/s, and the
//    machine's load average, since the machine is shared and the figures move with its load.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { readEvtx } from '../../service/src/evidence/evtx/index.ts';
import { unpackEvtxSamples } from '../../tests/support/evtx-samples.ts';
import { fmt, median, runPythonEvtx } from './support.ts';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    'python-runs': { type: 'string', default: '1' },
    'no-python': { type: 'boolean', default: false },
  },
});

const CHUNK = 65536;
const HEADER = 4096;

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

const samples = unpackEvtxSamples();
try {
  const buffers = samples.files.map((f) => readFileSync(f));
  const bytes = buffers.reduce((n, b) => n + b.length, 0);
  // Bytes of chunks that are not all zeros (what a parser must actually look into).
  let usedBytes = 0;
  for (const b of buffers) {
    usedBytes += HEADER;
    for (let o = HEADER; o < b.length; o += CHUNK) if (b.subarray(o, o + CHUNK).some((x) => x !== 0)) usedBytes += Math.min(CHUNK, b.length - o);
  }
  console.log(`${samples.files.length} files, ${(bytes / 1e6).toFixed(1)} MB (${(usedBytes / 1e6).toFixed(1)} MB in chunks with records), ${cpus().length} cores, load average ${load()}`);

  const pass = async (): Promise<number> => {
    let events = 0;
    for (const b of buffers) for await (const r of readEvtx(b)) events += r.recordId > 0 ? 1 : 0;
    return events;
  };
  const warm = await pass();
  const walls: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < Number(args.runs); i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const n = await pass();
    walls.push((performance.now() - t0) / 1000);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1e6);
    if (n !== warm) throw new Error(`pass read ${n} events, the warm-up ${warm}`);
  }
  const wall = median(walls);
  const cpuS = median(cpu);
  console.log(
    `ours:        ${fmt(warm)} events; median of ${walls.length} passes: ${wall.toFixed(3)} s wall, ${cpuS.toFixed(3)} s CPU → ` +
      `${(bytes / 1e6 / wall).toFixed(1)} MB/s wall, ${(bytes / 1e6 / cpuS).toFixed(1)} MB/s CPU ` +
      `(${(usedBytes / 1e6 / cpuS).toFixed(1)} MB/s of chunks with records), ${fmt(warm / cpuS)} events/s CPU; ` +
      `passes ${walls.map((w) => w.toFixed(3)).join(' ')} s; load ${load()}`,
  );

  if (!args['no-python']) {
    for (let i = 0; i < Number(args['python-runs']); i++) {
      const { events: n, cpuS: pyCpu, wallS: pyWall } = runPythonEvtx(samples.files);
      console.log(
        `python-evtx: ${fmt(n)} events; ${pyWall.toFixed(1)} s wall, ${pyCpu.toFixed(1)} s CPU → ${(bytes / 1e6 / pyWall).toFixed(2)} MB/s wall, ` +
          `${(bytes / 1e6 / pyCpu).toFixed(2)} MB/s CPU; ours is ${(pyCpu / cpuS).toFixed(0)}× faster by CPU time; load ${load()}`,
      );
    }
  }
  console.log(`target: ≥ 50 MB/s on one core → ${bytes / 1e6 / cpuS >= 50 ? 'met' : 'NOT met'} (by CPU time)`);
} finally {
  samples.remove();
}

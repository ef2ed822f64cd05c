// Normalizer benchmark (issue 14: normalizing stays inside the ingest benchmark's budget). Prints
// figures; asserts nothing.
//
//   npm run bench:normalizers [-- --logs 200000]
//
// The step ingest runs on every parsed record (flatten, then the token's normalizer), in this
// process, without a service around it, so the figure is the step's own cost per record:
//   - the ingest benchmark's web logs (scripts/bench/support.ts webLog) with no normalizer, with
//     the shipped default (which renames none of their names: the record passes untouched) and with
//     a normalizer that renames every name (snake_case + lowercase + a mapping);
//   - evtx_dump-shaped Sysmon events through the Windows normalizer of docs/normalizers-and-feeds.md
//     (flatten_leaf, mappings, the event-id value mapping).
// Each case runs five times over freshly parsed records after a warm-up of every case; the best
// run's CPU time of this process (process.cpuUsage, so time spent descheduled on a busy machine is
// not counted) is printed as records per second of one core and microseconds per record, beside the
// share of one core it takes at a given ingest rate (--rate, logs/s).
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { flatten } from '../../service/src/ingest/flatten.ts';
import type { Fields } from '../../service/src/ingest/types.ts';
import { compileNormalizer, type CompiledNormalizer } from '../../service/src/normalizers/compile.ts';
import { DEFAULT_NORMALIZER } from '../../service/src/normalizers/default-normalizer.ts';
import type { NormalizerDefinition } from '../../service/src/normalizers/definition.ts';
import { parseJson } from '../../service/src/shared/exact-json.ts';
import { fmt, root, webLog } from './support.ts';

const { values: args } = parseArgs({ options: { logs: { type: 'string', default: '200000' }, rate: { type: 'string', default: '100000' } } });
const N = Number(args.logs);
const RATE = Number(args.rate);

/** The Windows normalizer exactly as the documentation shows it (the test takes it the same way). */
function documentedWindowsNormalizer(): NormalizerDefinition {
  const doc = readFileSync(path.join(root, 'docs/normalizers-and-feeds.md'), 'utf8');
  const block = /<!-- windows-evtx-normalizer[^>]*-->\s*```json\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error('docs/normalizers-and-feeds.md holds no Windows normalizer example');
  const { transforms, field_mappings, value_mappings, timestamp_fields } = JSON.parse(block[1]!);
  return { transforms, field_mappings, value_mappings, timestamp_fields };
}

/** Sysmon event `i` as evtx_dump writes it (process creation, network connection or registry). */
function sysmonEvent(i: number): string {
  const id = [1, 3, 13][i % 3]!;
  const data: Record<string, unknown> =
    id === 1
      ? { RuleName: '-', UtcTime: '2026-03-04 05:06:07.123', ProcessGuid: `{${i}}`, ProcessId: 4000 + (i % 997), Image: 'C:\\Windows\\System32\\whoami.exe', CommandLine: `whoami /priv ${i}`, CurrentDirectory: 'C:\\Users\\ann\\', User: 'WS1\\ann', IntegrityLevel: 'High', Hashes: 'SHA256=ABC', ParentImage: 'C:\\Windows\\System32\\cmd.exe', ParentCommandLine: 'cmd.exe' }
      : id === 3
        ? { RuleName: '-', UtcTime: '2026-03-04 05:06:07.123', ProcessId: 4000 + (i % 997), Image: 'C:\\Windows\\System32\\certutil.exe', User: 'WS1\\ann', Protocol: 'tcp', Initiated: true, SourceIp: `10.0.${i % 256}.5`, SourcePort: 49152 + (i % 1000), DestinationIp: '93.184.216.34', DestinationPort: 443 }
        : { RuleName: '-', EventType: 'SetValue', UtcTime: '2026-03-04 05:06:07.123', ProcessId: 4000 + (i % 997), Image: 'C:\\Windows\\regedit.exe', TargetObject: `HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Run\\x${i % 50}`, Details: 'powershell -w hidden' };
  return JSON.stringify({
    Event: {
      '#attributes': { xmlns: 'http://schemas.microsoft.com/win/2004/08/events/event' },
      System: {
        Provider: { '#attributes': { Name: 'Microsoft-Windows-Sysmon', Guid: '5770385F-C22A-43E0-BF4C-06F5698FFBD9' } },
        EventID: id,
        Version: 5,
        Level: 4,
        TimeCreated: { '#attributes': { SystemTime: '2026-03-04T05:06:07.123456Z' } },
        EventRecordID: i,
        Execution: { '#attributes': { ProcessID: 1880, ThreadID: 2012 } },
        Channel: 'Microsoft-Windows-Sysmon/Operational',
        Computer: 'WS1',
        Security: { '#attributes': { UserID: 'S-1-5-18' } },
      },
      EventData: data,
    },
  });
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Best of `runs` runs of flatten + normalize over the records: records per second of CPU time. */
function measure(texts: string[], normalizer: CompiledNormalizer | null, runs = 5): { perSecond: number; renamed: number } {
  let best = Infinity;
  let renamed = 0;
  for (let run = 0; run < runs; run++) {
    // Parsing is the parser's cost, not this step's: each run gets freshly parsed records.
    const records = texts.map((t) => parseJson(t) as Record<string, unknown>);
    let changed = 0;
    const t0 = cpuMs();
    for (const r of records) {
      const flat: Fields = flatten(r);
      const out = normalizer ? normalizer.apply(flat) : flat;
      if (out !== flat) changed++;
    }
    best = Math.min(best, cpuMs() - t0);
    renamed = changed;
  }
  return { perSecond: (texts.length / Math.max(best, 0.001)) * 1000, renamed };
}

function report(label: string, texts: string[], normalizer: CompiledNormalizer | null) {
  const { perSecond, renamed } = measure(texts, normalizer);
  const us = 1e6 / perSecond;
  console.log(
    `  ${label.padEnd(48)} ${fmt(perSecond).padStart(11)} records/s  ${us.toFixed(2).padStart(6)} µs/record  ` +
      `${((RATE / perSecond) * 100).toFixed(1).padStart(5)} % of a core at ${fmt(RATE)} logs/s  (${fmt(renamed)} records changed)`,
  );
}

function main() {
  const t0 = Date.now() - N * 3;
  const web = Array.from({ length: N }, (_, i) => webLog(i, t0, 3));
  const sysmon = Array.from({ length: N }, (_, i) => sysmonEvent(i));
  const everyName: NormalizerDefinition = {
    transforms: ['snake_case', 'lowercase'],
    field_mappings: [{ sources: ['src_ip'], target: 'source_address' }],
    value_mappings: [{ from_field: 'level', to_field: 'severity_name', map: { error: 'err' } }],
    timestamp_fields: [],
  };
  const cases: Array<[string, string[], CompiledNormalizer | null]> = [
    ['no normalizer', web, null],
    ['the shipped default', web, compileNormalizer(DEFAULT_NORMALIZER)],
    ['snake_case + lowercase + mappings', web, compileNormalizer(everyName)],
    ['no normalizer (flatten only)', sysmon, null],
    ['the shipped default', sysmon, compileNormalizer(DEFAULT_NORMALIZER)],
    ['the documented Windows normalizer', sysmon, compileNormalizer(documentedWindowsNormalizer())],
  ];
  for (const [, texts, n] of cases) measure(texts.slice(0, 20_000), n, 1); // warm-up: every path compiled before any is timed
  console.log(`flatten + normalize, ${fmt(N)} records per case, CPU time, best of 5 (load average ${loadavg()[0]!.toFixed(1)})`);
  console.log(`web logs (~${Math.round(web.reduce((s, t) => s + t.length, 0) / N)} bytes, the ingest benchmark's):`);
  for (const [i, [label, texts, n]] of cases.entries()) {
    if (i === 3) console.log(`Sysmon events as evtx_dump writes them (~${Math.round(sysmon.reduce((s, t) => s + t.length, 0) / N)} bytes):`);
    report(label, texts, n);
  }
}

main();

// Prints the events of .evtx files as NDJSON, one event per line in evtx_dump's JSON shape (as
// `evtx_dump -o jsonl` does), through the appliance's own reader (service/src/evidence/evtx).
//
//   npm run evtx-dump -- <file.evtx|-> [more files…] [--records]
//
// `-` reads standard input. --records wraps each event with its record header:
// {"record_id":…,"timestamp":"…Z","file":"…","event":{"Event":…}}. Warnings about damaged parts
// go to standard error, each with the file it concerns. Exit status: 0 when every file was read
// (warnings or not), 1 when a file could not be read or is no event log, 2 on bad usage.
import { parseArgs } from 'node:util';
import { EvtxFormatError, readEvtx } from '../service/src/evidence/evtx/index.ts';
import { exactJsonText } from '../service/src/shared/exact-json.ts';

let args: ReturnType<typeof parse>;
function parse() {
  return parseArgs({ allowPositionals: true, options: { records: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } });
}
try {
  args = parse();
} catch (e) {
  console.error(`${(e as Error).message}\nusage: npm run evtx-dump -- <file.evtx|-> [more files…] [--records]`);
  process.exit(2);
}
if (args.values.help || args.positionals.length === 0) {
  console.error('usage: npm run evtx-dump -- <file.evtx|-> [more files…] [--records]');
  process.exit(args.values.help ? 0 : 2);
}

/** Writes to stdout, waiting when its buffer is full (a 2 GB log is never held as text). */
async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}

let failed = false;
for (const file of args.positionals) {
  const reading = readEvtx(file === '-' ? process.stdin : file, {
    onWarning: (w) => console.error(`${file}: warning: ${w.message}`),
  });
  try {
    let lines = '';
    for await (const r of reading) {
      lines += `${args.values.records ? `{"record_id":${r.recordId},"timestamp":"${r.timestamp}","file":${JSON.stringify(file)},"event":${exactJsonText(r.event)}}` : exactJsonText(r.event)}\n`;
      if (lines.length > 1 << 16) {
        await write(lines);
        lines = '';
      }
    }
    if (lines) await write(lines);
    const s = reading.stats;
    console.error(`${file}: ${s.records} events, ${s.chunks} chunks${s.skippedRecords ? `, ${s.skippedRecords} damaged records skipped` : ''}${reading.warnings.length ? `, ${reading.warnings.length} warnings` : ''}`);
  } catch (e) {
    failed = true;
    const why = e instanceof EvtxFormatError ? e.message : `cannot be read: ${(e as Error).message}`;
    console.error(`${file}: ${why}`);
  }
}
process.exitCode = failed ? 1 : 0;

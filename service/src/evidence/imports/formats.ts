// What a file holds, told by its content (never its name): an .evtx event log, JSON (an array,
// objects one after another, NDJSON), CSV with a header row, or syslog lines; any of them may be
// gzipped (compression is told apart first, by the gzip magic, see source.ts). Each format has a
// decoder that takes the file's bytes in pieces and gives records as the pipeline takes them.
import { StringDecoder } from 'node:string_decoder';
import { EvtxDecoder } from '../evtx/index.ts';
import { CsvDecoder } from './csv-records.ts';
import { JsonDecoder } from './json-records.ts';
import { EvtxRecords } from './evtx-records.ts';
import { LineDecoder } from './line-records.ts';

export type ImportFormat = 'evtx' | 'json' | 'ndjson' | 'csv' | 'syslog';

/** One record read from the file: what the pipeline takes, or why it could not be read. */
/** `located`: the error names where it is itself (a CSV line), else it is told by its record number. */
export type ImportRecord = { text: string; fields?: Record<string, unknown> } | { error: string; located?: true };

export interface RecordDecoder {
  /** The records these bytes complete. */
  push(bytes: Buffer): ImportRecord[];
  /** The records the end of the file completes. */
  end(): ImportRecord[];
  /** Damage the decoder skipped past (an .evtx chunk with a bad checksum), as sentences; drained on read. */
  takeWarnings(): string[];
  /** Timestamp fields this format's events carry, tried after the chosen and the normalizer's. */
  readonly timestampFields: string[];
}

/** How many bytes of the (decompressed) start of a file sniff() looks at. */
export const SNIFF_BYTES = 64 * 1024;

const EVTX_MAGIC = Buffer.from('ElfFile\0', 'latin1');
const SYSLOG_PRI = /^<\d{1,3}>/;
const RFC3164_DATE = /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d /;
const ISO_START = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?\S* \S/;

/** The format of a file from its first bytes, or a sentence saying why it is none we read. */
export function sniff(head: Buffer, atEnd: boolean): ImportFormat | { unknown: string } {
  if (head.length >= 8 && head.subarray(0, 8).equals(EVTX_MAGIC)) return 'evtx';
  if (head.length >= 4096 + 8 && head.subarray(4096, 4096 + 7).equals(EVTX_MAGIC.subarray(0, 3)) && head.subarray(4096, 4103).toString('latin1') === 'ElfChnk') return 'evtx';
  if (head.length === 0) return { unknown: 'the file is empty' };
  if (head.includes(0)) return { unknown: 'the file holds binary data that is not an .evtx event log (no "ElfFile" signature)' };
  // Cut at the last complete line so a multi-byte character split at SNIFF_BYTES is not misread.
  const text = new StringDecoder('utf8').write(head).replace(/^\uFEFF/, '');
  const trimmed = text.trimStart();
  const first = trimmed[0];
  if (first === '[' || first === '{') {
    const line = trimmed.slice(0, trimmed.indexOf('\n') >= 0 ? trimmed.indexOf('\n') : undefined).trim();
    return first === '{' && line.endsWith('}') && looksLikeOneValue(line) ? 'ndjson' : 'json';
  }
  if (/^Record \d+\s*\n\s*\{/.test(trimmed)) return 'json'; // evtx_dump -o json
  const lines = trimmed.split(/\r?\n/);
  const complete = atEnd ? lines.filter(Boolean) : lines.slice(0, -1).filter(Boolean);
  const firstLine = (complete[0] ?? lines[0] ?? '').trimEnd();
  if (SYSLOG_PRI.test(firstLine) || RFC3164_DATE.test(firstLine) || ISO_START.test(firstLine)) return 'syslog';
  if (firstLine.includes(',') && complete.length >= 1) return 'csv';
  return {
    unknown: `its content is none of the formats imports read: not an .evtx event log, JSON, CSV with a header row, or syslog lines (it starts with ${JSON.stringify(firstLine.slice(0, 40))})`,
  };
}

/** Whether a line is one balanced JSON object (cheap: braces outside strings). */
function looksLikeOneValue(line: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0 && i !== line.length - 1) return false;
    }
  }
  return depth === 0;
}

export function decoderFor(format: ImportFormat): RecordDecoder {
  switch (format) {
    case 'evtx':
      return new EvtxRecords(new EvtxDecoder());
    case 'json':
    case 'ndjson':
      return new JsonDecoder();
    case 'csv':
      return new CsvDecoder();
    case 'syslog':
      return new LineDecoder();
  }
}

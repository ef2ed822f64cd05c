// JSON files read in pieces: a top-level array gives its elements, anything else the values one
// after another (one object, pretty-printed objects, NDJSON; evtx_dump's `Record <n>` lines
// between them are skipped), as ingest/json-text.ts splits a request body, but without ever
// holding more than the value being read. Each value's text goes to the pipeline, which parses it
// (a value that is not an object is refused there, naming it). A value that never ends, or grows
// past MAX_VALUE_CHARS, is refused and reading starts again at the next line.
import { StringDecoder } from 'node:string_decoder';
import { skipWs, stringEnd } from '../../ingest/json-text.ts';
import type { ImportRecord, RecordDecoder } from './formats.ts';

const MAX_VALUE_CHARS = 64 * 1024 * 1024;

export class JsonDecoder implements RecordDecoder {
  readonly timestampFields: string[] = [];
  private readonly utf8 = new StringDecoder('utf8');
  private buf = '';
  /** Where scanning resumes in buf. */
  private pos = 0;
  /** Start of the value being read in buf, or -1 between values. */
  private start = -1;
  private depth = 0;
  /** Inside a top-level array: its elements are the records. */
  private inArray = false;
  private started = false;
  /** The value is NDJSON, one per line: lines are cut without scanning their characters. */
  private lines = false;

  push(bytes: Buffer): ImportRecord[] {
    return this.scan(this.utf8.write(bytes), false);
  }

  end(): ImportRecord[] {
    return this.scan(this.utf8.end(), true);
  }

  takeWarnings(): string[] {
    return [];
  }

  private scan(text: string, atEnd: boolean): ImportRecord[] {
    const out: ImportRecord[] = [];
    // Keep the value being read (from its start) and what is not scanned yet.
    const keep = this.start >= 0 ? this.start : this.pos;
    this.buf = keep === this.buf.length ? text : this.buf.slice(keep) + text;
    if (this.start >= 0) this.start -= keep;
    this.pos -= keep;
    if (!this.started) {
      const i = skipWs(this.buf, 0);
      if (i === this.buf.length && !atEnd) return out;
      this.started = true;
      if (this.buf.charCodeAt(i) === 0x5b) {
        this.inArray = true;
        this.pos = i + 1;
      } else this.lines = this.firstLineIsOneValue(i);
    }
    if (this.lines) return this.cutLines(out, atEnd);
    const s = this.buf;
    let i = this.pos;
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (this.start < 0) {
        // Between values.
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xfeff) {
          i++;
          continue;
        }
        if (this.inArray && c === 0x2c) {
          i++;
          continue;
        }
        if (this.inArray && c === 0x5d) {
          this.inArray = false;
          i++;
          continue;
        }
        if (c === 0x52 && !this.inArray) {
          const n = s.indexOf('\n', i);
          if (n < 0 && !atEnd) break;
          if (/^Record \d+\s*$/.test(s.slice(i, n < 0 ? s.length : n))) {
            i = n < 0 ? s.length : n + 1;
            continue;
          }
        }
        this.start = i;
        this.depth = 0;
        if (c !== 0x7b && c !== 0x5b && c !== 0x22) {
          // A bare scalar: to the next delimiter (the pipeline refuses it as no object).
          let j = i;
          while (j < s.length && !isDelimiter(s.charCodeAt(j))) j++;
          if (j === s.length && !atEnd) break;
          out.push({ text: s.slice(i, j) });
          this.start = -1;
          i = j;
          continue;
        }
      }
      // Inside a value: strings skipped whole, brackets counted.
      if (c === 0x22) {
        const e = stringEnd(s, i);
        if (e < 0) break;
        i = e;
        if (this.depth === 0) this.emit(out, i);
        continue;
      }
      if (c === 0x7b || c === 0x5b) this.depth++;
      else if (c === 0x7d || c === 0x5d) {
        this.depth--;
        if (this.depth === 0) {
          i++;
          this.emit(out, i);
          continue;
        }
      }
      i++;
    }
    this.pos = i;
    if (this.start >= 0 && i - this.start > MAX_VALUE_CHARS) this.refuseValue(out, `a JSON value runs past ${MAX_VALUE_CHARS / 1024 / 1024} MiB of text without ending`);
    if (atEnd && this.start >= 0) this.refuseValue(out, 'the file ends inside a JSON value (it is cut off or its brackets do not balance)');
    if (atEnd) this.buf = '';
    return out;
  }

  private emit(out: ImportRecord[], end: number): void {
    out.push({ text: this.buf.slice(this.start, end) });
    this.start = -1;
  }

  /** Drops the value being read and goes on at the line after where it started. */
  private refuseValue(out: ImportRecord[], why: string): void {
    out.push({ error: why });
    const n = this.buf.indexOf('\n', this.start + 1);
    this.pos = n < 0 ? this.buf.length : n + 1;
    this.start = -1;
    this.depth = 0;
  }

  /** NDJSON: the first line is a whole object by itself. */
  private firstLineIsOneValue(i: number): boolean {
    if (this.buf.charCodeAt(i) !== 0x7b) return false;
    const n = this.buf.indexOf('\n', i);
    if (n < 0) return false;
    let depth = 0;
    for (let j = i; j < n; j++) {
      const c = this.buf.charCodeAt(j);
      if (c === 0x22) {
        const e = stringEnd(this.buf, j);
        if (e < 0 || e > n) return false;
        j = e - 1;
      } else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) return this.buf.slice(j + 1, n).trim() === '';
      }
    }
    return false;
  }

  private cutLines(out: ImportRecord[], atEnd: boolean): ImportRecord[] {
    const s = this.buf;
    let i = this.pos;
    for (;;) {
      const n = s.indexOf('\n', i);
      if (n < 0) break;
      const line = s.slice(i, n).trim();
      if (line) out.push({ text: line });
      i = n + 1;
    }
    this.pos = i;
    if (atEnd) {
      const line = s.slice(i).trim();
      if (line) out.push({ text: line });
      this.buf = '';
      this.pos = 0;
    }
    return out;
  }
}

function isDelimiter(c: number): boolean {
  return c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

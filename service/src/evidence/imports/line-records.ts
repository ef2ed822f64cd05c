// Syslog files: one record per non-blank line, parsed by the pipeline's syslog parser.
import { StringDecoder } from 'node:string_decoder';
import type { ImportRecord, RecordDecoder } from './formats.ts';

export class LineDecoder implements RecordDecoder {
  readonly timestampFields: string[] = [];
  private readonly utf8 = new StringDecoder('utf8');
  private rest = '';

  push(bytes: Buffer): ImportRecord[] {
    return this.lines(this.rest + this.utf8.write(bytes), false);
  }

  end(): ImportRecord[] {
    return this.lines(this.rest + this.utf8.end(), true);
  }

  takeWarnings(): string[] {
    return [];
  }

  private lines(text: string, atEnd: boolean): ImportRecord[] {
    const out: ImportRecord[] = [];
    let i = 0;
    for (;;) {
      const n = text.indexOf('\n', i);
      if (n < 0) break;
      const line = text.slice(i, n).trim();
      if (line) out.push({ text: line });
      i = n + 1;
    }
    this.rest = text.slice(i);
    if (atEnd) {
      const line = this.rest.trim();
      if (line) out.push({ text: line });
      this.rest = '';
    }
    return out;
  }
}

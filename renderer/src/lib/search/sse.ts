// Server-sent events, parsed by hand: EventSource cannot POST, so /query/stream is read with fetch and a
// ReadableStream reader, and the text goes through this parser (the WHATWG "event stream" rules: lines end
// in CRLF, LF or CR; `event:`/`data:`/`id:` fields, one optional space after the colon; `:` starts a
// comment; a blank line dispatches; several `data:` lines join with "\n"; an event without data is
// dropped, as is an unfinished one at the end of the stream). Pure: unit-tested in tests/ui/search-lib.test.ts.

export interface SseFrame {
  /** The `event:` name, "message" when none was given. */
  event: string;
  data: string;
  id?: string;
}

export class SseParser {
  private buf = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  private hasData = false;

  /** Feeds the next piece of text (any split, even inside a line or a CRLF); returns the completed frames. */
  push(chunk: string): SseFrame[] {
    const out: SseFrame[] = [];
    this.buf += chunk;
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk to decide.
      if (c === 13 && i === this.buf.length - 1) break;
      this.line(this.buf.slice(start, i), out);
      if (c === 13 && this.buf.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  /** The stream ended: a trailing CR still ends its line; an event not closed by a blank line is dropped. */
  end(): SseFrame[] {
    const out: SseFrame[] = [];
    if (this.buf.endsWith('\r')) this.line(this.buf.slice(0, -1), out);
    this.buf = '';
    this.reset();
    return out;
  }

  private line(line: string, out: SseFrame[]): void {
    if (line === '') {
      if (this.hasData) {
        const f: SseFrame = { event: this.event || 'message', data: this.data.join('\n') };
        if (this.id !== undefined) f.id = this.id;
        out.push(f);
      }
      this.reset();
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" comment (keep-alives)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'id' && !value.includes('\0')) this.id = value;
    // "retry" and unknown fields are ignored.
  }

  private reset(): void {
    this.event = '';
    this.data = [];
    this.hasData = false;
    // `id` persists across events by the spec; each frame reports the last one seen.
  }
}

// Splits a TCP (or TLS) syslog stream into messages. RFC 6587 allows two framings and senders do
// not say which they use, so the first frame of a connection decides: a count of octets, a space
// and that many octets (`57 <34>1 2026-…`), or lines ended by LF. A connection that starts
// octet-counted and then sends a frame without a count is read as lines from there on (a count
// is `[1-9][0-9]{0,8}` followed by a space, so a line starting `2026-01-02` is never taken for one).
//
// Bytes are kept as the Buffers they arrived in until a frame is complete, so a 10 MB line is
// copied once. A frame longer than `maxBytes` is skipped (reported through `oversized`), never
// held. At the end of the stream an unterminated line is still a message (what `printf 'x' | nc`
// sends), while an octet-counted frame cut short is reported `incomplete`.

export interface FrameSink {
  message(text: string): void;
  /** A frame over the size limit, skipped. */
  oversized(): void;
  /** An octet-counted frame the stream ended in the middle of. */
  incomplete(): void;
}

const LF = 0x0a;
const CR = 0x0d;
const NUL = 0x00;
const SPACE = 0x20;
const MAX_COUNT_DIGITS = 9;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

export class SyslogFramer {
  private mode: 'unknown' | 'octet' | 'lines' = 'unknown';
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** Octet mode: the digits of the count being read (null: not inside a count). */
  private count: string | null = null;
  /** Octet mode: bytes of the current frame still to come (-1: at a frame boundary). */
  private need = -1;
  /** Bytes to throw away: the rest of an oversized octet frame. */
  private skip = 0;
  /** Lines mode: the rest of an oversized line is thrown away up to its LF. */
  private skippingLine = false;

  constructor(
    private readonly maxBytes: number,
    private readonly sink: FrameSink,
  ) {}

  push(chunk: Buffer): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.skip > 0) {
        const k = Math.min(this.skip, n - i);
        this.skip -= k;
        i += k;
        continue;
      }
      if (this.mode === 'unknown') this.mode = isDigit(chunk[i]!) && chunk[i] !== 0x30 ? 'octet' : 'lines';
      if (this.mode === 'lines') {
        i = this.pushLine(chunk, i);
        continue;
      }
      if (this.need > 0) {
        const k = Math.min(this.need, n - i);
        this.keep(chunk.subarray(i, i + k));
        this.need -= k;
        i += k;
        if (this.need === 0) {
          this.need = -1;
          this.emit();
        }
        continue;
      }
      // At a frame boundary (or inside its count) in octet mode.
      const c = chunk[i]!;
      if (this.count === null) {
        if (c === LF || c === CR || c === NUL || c === SPACE) {
          i++; // what some senders put between octet-counted frames
          continue;
        }
        if (isDigit(c) && c !== 0x30) {
          this.count = '';
        } else {
          this.mode = 'lines'; // no count: a line from here on
          continue;
        }
      }
      if (isDigit(c) && this.count.length < MAX_COUNT_DIGITS) {
        this.count += String.fromCharCode(c);
        i++;
        continue;
      }
      if (c === SPACE && this.count.length > 0) {
        const len = Number(this.count);
        this.count = null;
        i++;
        if (len > this.maxBytes) {
          this.skip = len;
          this.sink.oversized();
        } else {
          this.need = len;
        }
        continue;
      }
      // Digits not followed by a space: not a count after all, but the start of a line.
      this.mode = 'lines';
      this.keep(Buffer.from(this.count, 'latin1'));
      this.count = null;
    }
  }

  /** The stream ended: an unterminated line is a message, a cut octet frame is reported. */
  end(): void {
    if (this.mode === 'lines') {
      if (this.partBytes > 0 && !this.skippingLine) this.emit();
    } else if (this.need > 0 || this.skip > 0 || (this.count !== null && this.count.length > 0)) {
      this.sink.incomplete();
    }
    this.parts = [];
    this.partBytes = 0;
  }

  /** Lines mode from chunk[i]: up to and including the next LF. Returns where reading stopped. */
  private pushLine(chunk: Buffer, i: number): number {
    const lf = chunk.indexOf(LF, i);
    const end = lf < 0 ? chunk.length : lf;
    if (!this.skippingLine) {
      if (this.partBytes + (end - i) > this.maxBytes) {
        this.parts = [];
        this.partBytes = 0;
        this.skippingLine = true;
        this.sink.oversized();
      } else {
        this.keep(chunk.subarray(i, end));
      }
    }
    if (lf < 0) return chunk.length;
    if (this.skippingLine) this.skippingLine = false;
    else this.emit();
    return lf + 1;
  }

  private keep(b: Buffer): void {
    if (b.length === 0) return;
    this.parts.push(b);
    this.partBytes += b.length;
  }

  /** The frame held so far, without the line ends and NULs senders leave at its end, if not empty. */
  private emit(): void {
    const buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partBytes);
    this.parts = [];
    this.partBytes = 0;
    let e = buf.length;
    while (e > 0 && (buf[e - 1] === LF || buf[e - 1] === CR || buf[e - 1] === NUL)) e--;
    if (e > 0) this.sink.message(buf.toString('utf8', 0, e));
  }
}

/** One UDP datagram's message: the datagram without trailing line ends and NULs (null if empty). */
export function datagramMessage(msg: Buffer): string | null {
  let e = msg.length;
  while (e > 0 && (msg[e - 1] === LF || msg[e - 1] === CR || msg[e - 1] === NUL)) e--;
  return e > 0 ? msg.toString('utf8', 0, e) : null;
}

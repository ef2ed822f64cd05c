// A streaming multipart/form-data reader (RFC 7578), just enough for file uploads: each part's
// headers are read (at most MAX_HEADER_BYTES), its body handed on in pieces as it arrives, with
// the body stream paused while the receiver writes (no part is ever held whole). A body that
// breaks the format is a MultipartError with a sentence naming what is wrong.

export class MultipartError extends Error {}

export interface PartHeaders {
  /** The form field's name (`file`). */
  field: string;
  /** The file name the browser sent, or null for a plain field. */
  filename: string | null;
  contentType: string | null;
}

export interface PartSink {
  write(piece: Buffer): Promise<void>;
  end(): Promise<void>;
}

const MAX_HEADER_BYTES = 16 * 1024;
const MAX_PARTS = 1000;

/** The boundary of a multipart/form-data Content-Type, or null when it names none. */
export function boundaryOf(contentType: string): string | null {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]!) : null;
}

/** Reads the whole body; `onPart` gives the sink of each part (null: the part's body is dropped). */
export async function readMultipart(body: AsyncIterable<Buffer>, boundary: string, onPart: (h: PartHeaders) => Promise<PartSink | null>): Promise<number> {
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  // The first delimiter has no CRLF before it: pretend it had one.
  let buf: Buffer = Buffer.from('\r\n', 'latin1');
  let state: 'preamble' | 'headers' | 'body' | 'after-delimiter' | 'done' = 'preamble';
  let sink: PartSink | null = null;
  let parts = 0;

  const step = async (atEnd: boolean): Promise<void> => {
    for (;;) {
      if (state === 'preamble') {
        const at = buf.indexOf(delimiter);
        if (at < 0) {
          buf = buf.subarray(Math.max(0, buf.length - delimiter.length));
          return;
        }
        buf = buf.subarray(at + delimiter.length);
        state = 'after-delimiter';
      } else if (state === 'after-delimiter') {
        if (buf.length < 2) return;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = 'done';
          return;
        }
        // Transport padding (spaces, tabs) may follow a delimiter before its CRLF.
        const eol = buf.indexOf('\r\n');
        if (eol < 0) {
          if (buf.length > 256) throw new MultipartError('The multipart body has a malformed boundary line.');
          return;
        }
        buf = buf.subarray(eol + 2);
        state = 'headers';
      } else if (state === 'headers') {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buf.length > MAX_HEADER_BYTES) throw new MultipartError(`A part's headers run past ${MAX_HEADER_BYTES / 1024} KiB.`);
          return;
        }
        if (++parts > MAX_PARTS) throw new MultipartError(`The multipart body has more than ${MAX_PARTS} parts.`);
        const headers = parseHeaders(buf.subarray(0, end).toString('utf8'));
        buf = buf.subarray(end + 4);
        sink = await onPart(headers);
        state = 'body';
      } else if (state === 'body') {
        const at = buf.indexOf(delimiter);
        if (at >= 0) {
          if (sink && at > 0) await sink.write(buf.subarray(0, at));
          await sink?.end();
          sink = null;
          buf = buf.subarray(at + delimiter.length);
          state = 'after-delimiter';
          continue;
        }
        // Everything but what could be the start of a delimiter goes out now.
        const safe = buf.length - delimiter.length + 1;
        if (safe > 0) {
          if (sink) await sink.write(Buffer.from(buf.subarray(0, safe)));
          buf = buf.subarray(safe);
        }
        return;
      } else return;
    }
  };

  for await (const piece of body) {
    if ((state as string) === 'done') continue; // the epilogue is ignored
    buf = buf.length === 0 ? piece : Buffer.concat([buf, piece]);
    await step(false);
  }
  await step(true);
  if ((state as string) !== 'done') {
    throw new MultipartError(state === 'preamble' ? 'The multipart body holds no part with the boundary its Content-Type names.' : 'The multipart body ends before its closing boundary: the upload was cut off.');
  }
  return parts;
}

function parseHeaders(text: string): PartHeaders {
  let field = '';
  let filename: string | null = null;
  let contentType: string | null = null;
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-type') contentType = value;
    if (name !== 'content-disposition') continue;
    field = param(value, 'name') ?? '';
    const star = /;\s*filename\*=(?:UTF-8|utf-8)''([^;]+)/.exec(value);
    filename = star ? safeDecode(star[1]!) : param(value, 'filename');
  }
  return { field, filename, contentType };
}

function param(value: string, name: string): string | null {
  const m = new RegExp(`;\\s*${name}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]+))`, 'i').exec(value);
  if (!m) return null;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

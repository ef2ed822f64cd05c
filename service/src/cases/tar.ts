// The case archive's container: POSIX ustar, written and read as streams, so an archive of any
// size passes through in fixed-size pieces. Only what the archive needs: regular files with short
// relative names (the layout in archive-layout.ts keeps them under 100 bytes), no links, no
// directories, no extended headers. Our own writer and reader rather than an npm package: the
// format is 512-byte blocks and a checksum, and the reader must refuse anything unexpected.
import type { Writable } from 'node:stream';

const BLOCK = 512;
const ZEROES = Buffer.alloc(BLOCK * 2);

/** Octal digits, zero padded to `width` bytes with the terminating NUL. */
function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtime: Date): Buffer {
  const h = Buffer.alloc(BLOCK);
  const nameBytes = Buffer.from(name, 'utf8');
  if (nameBytes.length > 99) throw new Error(`Archive member name too long: ${name}`);
  nameBytes.copy(h, 0);
  h.write(octal(0o644, 8), 100, 'ascii'); // mode
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii'); // checksum counted as spaces
  h.write('0', 156, 'ascii'); // regular file
  h.write('ustar\x0000', 257, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

/** Writes members one after the other into `out`, waiting for it to drain (back-pressure). */
export class TarWriter {
  constructor(private readonly out: Writable) {}

  private write(buf: Buffer): Promise<void> {
    if (this.out.write(buf)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const drained = () => {
        this.out.off('error', failed);
        resolve();
      };
      const failed = (err: Error) => {
        this.out.off('drain', drained);
        reject(err);
      };
      this.out.once('drain', drained);
      this.out.once('error', failed);
    });
  }

  /** One member whose whole content is known (the writer holds at most one part in memory). */
  async add(name: string, content: Buffer, mtime = new Date()): Promise<void> {
    await this.write(header(name, content.length, mtime));
    await this.write(content);
    const pad = (BLOCK - (content.length % BLOCK)) % BLOCK;
    if (pad) await this.write(ZEROES.subarray(0, pad));
  }

  /** One member read from `source`, which must yield exactly `size` bytes (a file written before). */
  async addStream(name: string, size: number, source: AsyncIterable<Buffer>, mtime = new Date()): Promise<void> {
    await this.write(header(name, size, mtime));
    let written = 0;
    for await (const piece of source) {
      written += piece.length;
      if (written > size) break;
      await this.write(piece);
    }
    if (written !== size) throw new Error(`${name} changed while it was archived (${written} bytes, expected ${size}).`);
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad) await this.write(ZEROES.subarray(0, pad));
  }

  /** The two zero blocks that end an archive; the caller ends the stream. */
  async finish(): Promise<void> {
    await this.write(ZEROES);
  }
}

/** Reads exactly the bytes asked for from an async byte source, keeping what it read ahead. */
class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private done = false;
  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<void> {
    while (this.length < n && !this.done) {
      const r = await this.source.next();
      if (r.done) this.done = true;
      else if (r.value.length) {
        this.buffered.push(r.value);
        this.length += r.value.length;
      }
    }
  }

  /** Up to `max` bytes (fewer only at the end of the source); an empty Buffer at the end. */
  async read(max: number): Promise<Buffer> {
    if (this.length === 0) await this.fill(1);
    const n = Math.min(max, this.length);
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.buffered = rest.length ? [rest] : [];
    this.length = rest.length;
    return out;
  }

  /** Exactly `n` bytes, or fewer when the source ended first. */
  async exactly(n: number): Promise<Buffer> {
    await this.fill(n);
    return this.read(n);
  }
}

/** Why an archive cannot be read: the sentence names the member when there is one. */
export class TarFormatError extends Error {}

export interface TarMember {
  name: string;
  size: number;
  /** The content in pieces; must be read to its end before the next member is asked for. */
  content(): AsyncIterable<Buffer>;
}

const field = (h: Buffer, at: number, len: number): string => {
  const s = h.subarray(at, at + len);
  const nul = s.indexOf(0);
  return s.subarray(0, nul < 0 ? len : nul).toString('utf8');
};

/**
 * The members of a ustar stream in order. Refuses (TarFormatError) a header whose checksum is
 * wrong, a member that is not a regular file, a name that is absolute or climbs with `..`, and an
 * archive cut short.
 */
export async function* readTar(source: AsyncIterable<Buffer>): AsyncGenerator<TarMember> {
  const reader = new ByteReader(source[Symbol.asyncIterator]());
  for (let first = true; ; first = false) {
    const h = await reader.exactly(BLOCK);
    const notTar = 'The upload is not a case archive: it is neither a tar nor a tar.gz file.';
    if (h.length === 0) {
      if (first) throw new TarFormatError(notTar);
      return; // no end blocks: tolerated, as GNU tar does
    }
    if (h.length < BLOCK) throw new TarFormatError(first ? notTar : 'The archive ends in the middle of a member header (cut short?).');
    if (h.every((b) => b === 0)) return;
    const stored = parseInt(field(h, 148, 8).trim(), 8);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    const name = field(h, 0, 100);
    if (stored !== sum) throw new TarFormatError(first ? notTar : `The archive's header of "${name.slice(0, 99)}" is damaged (checksum).`);
    const type = field(h, 156, 1) || '0';
    if (type !== '0') throw new TarFormatError(`The archive member "${name}" is not a regular file (type ${type}); a case archive holds only files.`);
    if (name.startsWith('/') || name.split('/').includes('..') || name === '') throw new TarFormatError(`The archive member name "${name}" is not a plain relative path.`);
    const size = parseInt(field(h, 124, 12).trim() || '0', 8);
    if (!Number.isSafeInteger(size) || size < 0) throw new TarFormatError(`The archive member "${name}" has an unreadable size.`);
    let left = size;
    let consumed = false;
    const content = async function* (): AsyncGenerator<Buffer> {
      while (left > 0) {
        const piece = await reader.read(Math.min(left, 256 * 1024));
        if (piece.length === 0) throw new TarFormatError(`The archive ends in the middle of "${name}" (cut short?).`);
        left -= piece.length;
        yield piece;
      }
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad && (await reader.exactly(pad)).length < pad) throw new TarFormatError(`The archive ends in the middle of "${name}" (cut short?).`);
      consumed = true;
    };
    const member: TarMember = { name, size, content };
    yield member;
    if (!consumed) for await (const _ of content()) void _; // skipped by the caller: read past it
  }
}

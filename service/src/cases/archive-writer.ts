// Writes one case archive file: a gzip-compressed tar whose members are hashed as they go in, and
// whose manifest (every member's size and SHA-256) and the manifest's own hash end it. Records too
// large to hold (a fractal's comments, notebooks with their results) are first written to a
// temporary file by RecordFile, then copied in; events parts are small enough to pass as Buffers.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { CASE_FORMAT, MANIFEST, MANIFEST_HASH, type Manifest, type ManifestEntry } from './archive-layout.ts';
import { TarWriter } from './tar.ts';

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

export class CaseArchiveWriter {
  private readonly files: ManifestEntry[] = [];
  private readonly gzip = createGzip({ level: 6 });
  private readonly out: WriteStream;
  private readonly tar = new TarWriter(this.gzip);
  private readonly hash = createHash('sha256');
  /** Compressed bytes written so far (the job's progress in bytes). */
  bytes = 0;
  private readonly done: Promise<void>;

  constructor(readonly file: string) {
    this.out = createWriteStream(file, { flags: 'wx' });
    this.gzip.on('data', (c: Buffer) => {
      this.hash.update(c);
      this.bytes += c.length;
    });
    this.gzip.pipe(this.out);
    this.gzip.on('error', (err) => this.out.destroy(err));
    this.done = finished(this.out);
    this.done.catch(() => undefined); // awaited in finish(); a failure also surfaces in the next write
  }

  async addBuffer(name: string, content: Buffer): Promise<void> {
    this.files.push({ path: name, size: content.length, sha256: sha256(content) });
    await this.tar.add(name, content);
  }

  /** Copies a finished RecordFile in, hashing it as it is read. */
  async addRecordFile(name: string, records: RecordFile): Promise<void> {
    const h = createHash('sha256');
    const size = (await stat(records.file)).size;
    const hashed = async function* (src: AsyncIterable<Buffer>) {
      for await (const piece of src) {
        h.update(piece);
        yield piece;
      }
    };
    await this.tar.addStream(name, size, hashed(createReadStream(records.file)));
    this.files.push({ path: name, size, sha256: h.digest('hex') });
  }

  /** Writes the manifest and its hash, ends the archive and the file. */
  async finish(head: Omit<Manifest, 'format' | 'created_at' | 'files'>): Promise<{ size: number; sha256: string; manifest_sha256: string }> {
    const manifest: Manifest = { format: CASE_FORMAT, created_at: new Date().toISOString(), ...head, files: this.files };
    const text = Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`);
    const manifestSha = sha256(text);
    await this.tar.add(MANIFEST, text);
    await this.tar.add(MANIFEST_HASH, Buffer.from(`${manifestSha}  ${MANIFEST}\n`));
    await this.tar.finish();
    this.gzip.end();
    await this.done;
    return { size: this.bytes, sha256: this.hash.digest('hex'), manifest_sha256: manifestSha };
  }

  /** Stops writing and removes the unfinished file. */
  async abandon(): Promise<void> {
    this.gzip.destroy();
    this.out.destroy();
    await rm(this.file, { force: true });
  }
}

/** An NDJSON file built line by line on disk, so a fractal's records never sit in memory whole. */
export class RecordFile {
  private readonly out: WriteStream;
  count = 0;
  constructor(readonly file: string) {
    this.out = createWriteStream(file, { flags: 'w' });
  }

  async line(record: unknown): Promise<void> {
    this.count++;
    if (!this.out.write(`${JSON.stringify(record)}\n`)) await new Promise<void>((r) => this.out.once('drain', () => r()));
  }

  async close(): Promise<void> {
    this.out.end();
    await finished(this.out);
  }

  async remove(): Promise<void> {
    this.out.destroy();
    await rm(this.file, { force: true });
  }
}

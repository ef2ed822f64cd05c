// Starting an import: the checks (normalizer, names), the upload streamed into a file under
// SVC_DATA_DIR/imports while it is hashed (SHA-256) and counted, then handed to the runner. The
// file is never held in memory: the request body is written as it arrives, paused while the disk
// catches up. An upload cut off fails the import, and the custody log says how much arrived.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Context } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import type { ImportRunner } from './import-runner.ts';
import { importView, type ImportRow, type ImportsStore, type ImportView } from './imports-store.ts';
import { readMultipart, type PartSink } from './multipart.ts';

export interface ImportOptions {
  fractalId: string;
  normalizerId: string | null;
  timestampFields: string[];
  createdBy: string;
}

export class Imports {
  readonly dir: string;

  constructor(
    private readonly ctx: Context,
    readonly store: ImportsStore,
    readonly runner: ImportRunner,
  ) {
    this.dir = path.join(ctx.config.dataDir, 'imports');
    mkdirSync(this.dir, { recursive: true });
  }

  /** A 400 naming the parameter when the options cannot work. */
  check(o: ImportOptions): void {
    if (o.normalizerId && !this.ctx.normalizers.get(o.normalizerId)) throw badRequest(`The query parameter "normalizer_id" names no normalizer (${o.normalizerId}).`);
  }

  /** One file as the raw body. */
  async fromBody(o: ImportOptions, name: string, body: AsyncIterable<Buffer>): Promise<ImportView> {
    const row = this.begin(o, name);
    this.runner.uploadStarted();
    try {
      await this.receive(row, body);
    } finally {
      this.runner.uploadEnded();
    }
    return importView(this.store.get(row.id)!);
  }

  /** Every `file` part of a multipart/form-data body; other parts are ignored. */
  async fromMultipart(o: ImportOptions, boundary: string, body: AsyncIterable<Buffer>): Promise<ImportView[]> {
    const made: ImportRow[] = [];
    let current: { row: ImportRow; upload: Upload } | null = null;
    // While the request goes on, the runner lets a part-filled batch wait for its next file.
    this.runner.uploadStarted();
    try {
      await readMultipart(body, boundary, async (h): Promise<PartSink | null> => {
        if (h.field !== 'file' || h.filename === null) return null;
        const row = this.begin(o, cleanName(h.filename) || `upload-${made.length + 1}`);
        made.push(row);
        const upload = new Upload(row, this.store);
        current = { row, upload };
        return {
          write: (piece) => upload.write(piece),
          end: async () => {
            await upload.close();
            current = null;
            this.stored(row, upload);
          },
        };
      });
    } catch (err) {
      const cut = current as { row: ImportRow; upload: Upload } | null;
      if (cut) {
        await cut.upload.close().catch(() => undefined);
        this.runner.failUpload(cut.row, cut.upload.size, uploadError(err, cut.upload.size));
      }
      throw badRequest(err instanceof Error && err.constructor.name === 'MultipartError' ? err.message : `The upload stopped: ${(err as Error).message}.`);
    } finally {
      this.runner.uploadEnded();
    }
    if (made.length === 0) throw badRequest('The multipart body holds no part named "file" with a file name; send each file as a "file" part.');
    return made.map((r) => importView(this.store.get(r.id)!));
  }

  private begin(o: ImportOptions, name: string): ImportRow {
    return this.store.create({ ...o, name, filePath: (id) => path.join(this.dir, `${id}.upload`) });
  }

  private async receive(row: ImportRow, body: AsyncIterable<Buffer>): Promise<void> {
    const upload = new Upload(row, this.store);
    try {
      for await (const piece of body) await upload.write(piece);
      await upload.close();
    } catch (err) {
      await upload.close().catch(() => undefined);
      this.runner.failUpload(row, upload.size, uploadError(err, upload.size));
      throw badRequest(`The upload of "${row.name}" stopped after ${upload.size} bytes: ${(err as Error).message}.`);
    }
    this.stored(row, upload);
  }

  private stored(row: ImportRow, upload: Upload): void {
    this.store.stored(row.id, upload.size, upload.sha256());
    this.runner.enqueue(row.id);
  }
}

/** A file being written: hashed and counted as it goes, its size saved for progress twice a second. */
class Upload {
  size = 0;
  private readonly hash = createHash('sha256');
  private readonly out;
  private lastSaved = 0;
  private failed: Error | null = null;

  constructor(
    private readonly row: ImportRow,
    private readonly store: ImportsStore,
  ) {
    this.out = createWriteStream(row.file_path, { flags: 'w', mode: 0o600 });
    this.out.on('error', (err) => (this.failed = err));
  }

  async write(piece: Buffer): Promise<void> {
    if (this.failed) throw this.failed;
    this.hash.update(piece);
    this.size += piece.length;
    if (!this.out.write(piece)) await once(this.out, 'drain'); // rejects on the stream's error
    const now = Date.now();
    if (now - this.lastSaved > 500) {
      this.lastSaved = now;
      this.store.received(this.row.id, this.size);
    }
  }

  async close(): Promise<void> {
    if (this.failed) throw this.failed;
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }

  sha256(): string {
    return this.hash.digest('hex');
  }
}

/** The sentence an import cut off mid-upload keeps. */
function uploadError(err: unknown, size: number): string {
  return `The upload stopped after ${size} bytes (${(err as Error).message}); nothing of it was imported. Send the file again.`;
}

/** A browser's file name without any folder part, bounded. */
export function cleanName(name: string): string {
  return name.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f]/g, '').trim().slice(0, 255);
}

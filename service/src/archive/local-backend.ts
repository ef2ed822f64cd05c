// The archive in a local folder (default SVC_DATA_DIR/archive; an external disk works the same).
import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { access, constants, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { keysGlob, sqlString, type ArchiveBackend } from './backend.ts';

export class LocalBackend implements ArchiveBackend {
  readonly kind = 'local' as const;
  constructor(readonly root: string) {}

  location(fractalId: string): string {
    return path.join(this.root, fractalId);
  }

  async put(key: string, data: Buffer): Promise<void> {
    const file = this.file(key);
    const dir = path.dirname(file);
    try {
      await mkdir(dir, { recursive: true });
      // Written aside, fsync'd, then renamed: a reader sees the whole file or none of it.
      const tmp = path.join(dir, `.${path.basename(file)}.${randomUUID()}.tmp`);
      await writeFile(tmp, data);
      syncPath(tmp);
      await rename(tmp, file);
      syncPath(dir);
    } catch (err) {
      // The archive's fault says what to fix (shown on the archive pages and in system/pressure).
      const e = err as NodeJS.ErrnoException;
      throw new Error(`The archive folder ${this.root} cannot be written (${e.code ?? e.message} at ${e.path ?? dir}); check the path, its permissions and free space, or that the disk is mounted`);
    }
  }

  get(key: string): Promise<Buffer> {
    return readFile(this.file(key));
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  async list(prefix: string): Promise<string[]> {
    const base = this.file(prefix);
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const e of entries) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (!e.name.endsWith('.tmp')) out.push(path.relative(this.root, p).split(path.sep).join('/'));
      }
    };
    await walk(base);
    return out.sort();
  }

  async check(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
      await access(this.root, constants.W_OK);
    } catch (err) {
      throw new Error(`The archive folder ${this.root} cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check the path and its permissions, or that the disk is mounted.`);
    }
  }

  engineSource(keys: string[], structure: string): string {
    return `file(${sqlString(path.join(this.root, keysGlob(keys)))}, 'Parquet', ${sqlString(structure)})`;
  }

  async fingerprint(key: string): Promise<string> {
    try {
      const st = await stat(this.file(key));
      return `${st.size}:${st.mtimeMs}`;
    } catch {
      return 'missing';
    }
  }

  redact(sql: string): string {
    return sql;
  }

  private file(key: string): string {
    const p = path.join(this.root, key);
    if (!p.startsWith(this.root)) throw new Error(`archive key ${key} leaves the archive folder`);
    return p;
  }
}

function syncPath(p: string): void {
  const fd = openSync(p, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

// Where archived files live. Keys are relative to the archive's root: <fractal>/data/…,
// <fractal>/metadata/…. Two backends: a local folder and S3-compatible object storage.
export interface ArchiveBackend {
  readonly kind: 'local' | 's3';
  /** A fractal's table location as Iceberg metadata names it (absolute path or s3:// URI). */
  location(fractalId: string): string;
  /** Resolves once the object is durable (local: written, fsync'd and renamed into place). */
  put(key: string, data: Buffer): Promise<void>;
  get(key: string): Promise<Buffer>;
  /** Removing a key that is not there is not an error. */
  delete(key: string): Promise<void>;
  /** Every key below `prefix`. */
  list(prefix: string): Promise<string[]>;
  /** Throws with a sentence naming what is wrong (folder not writable, bucket unreachable, credentials refused). */
  check(): Promise<void>;
  /**
   * A table function of the engine reading these Parquet files (all of one ingest day), for search
   * in place and restore. The embedded engine reads the local folder; S3 is read by any engine.
   */
  engineSource(keys: string[], structure: string): string;
  /**
   * What changes when a stored file is rewritten in place (local: size and modification time),
   * so a file damaged after search in place checked it is checked again; absent where objects are
   * only ever replaced whole (S3).
   */
  fingerprint?(key: string): Promise<string>;
  /** SQL holding engineSource's text with its credentials hidden (an answer's `sql`, a log line). */
  redact(sql: string): string;
}

/** A literal for a table function's argument (keys and paths are checked to hold no glob characters). */
export const sqlString = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Characters the engine reads as a glob in a path: refused in archive paths, prefixes and buckets. */
export const GLOB_CHARACTERS = /[{}*?,]/;

/** The common directory and the file names of keys, as one `dir/{a,b}` glob the engine expands. */
export function keysGlob(keys: string[]): string {
  const dir = keys[0]!.slice(0, keys[0]!.lastIndexOf('/') + 1);
  for (const k of keys) if (!k.startsWith(dir) || k.slice(dir.length).includes('/')) throw new Error('archive: the files of one read must share their folder');
  const names = keys.map((k) => k.slice(dir.length));
  return names.length === 1 ? dir + names[0] : `${dir}{${names.join(',')}}`;
}

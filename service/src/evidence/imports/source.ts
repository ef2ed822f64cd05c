// The stored upload read back in pieces, gunzipped when it starts with the gzip magic (members one
// after another are read as one stream), with the decompression bounded: past BOMB_MIN_OUTPUT,
// output more than BOMB_RATIO times the compressed bytes read is a decompression bomb, and no file
// may inflate past MAX_OUTPUT. Either stops the read with DecompressionBombError, after what was
// read before it was used.
import { createReadStream, openSync, readSync, closeSync } from 'node:fs';
import { createGunzip } from 'node:zlib';

/** Output past which the ratio is checked: small files of zeros (empty .evtx chunks) inflate far. */
export const BOMB_MIN_OUTPUT = 32 * 1024 * 1024;
/** Text logs gzip about 10:1, .evtx files up to about 30:1; a bomb of zeros about 1000:1. */
export const BOMB_RATIO = 200;
export const MAX_OUTPUT = 64 * 1024 ** 3;
const PIECE = 1024 * 1024;

export class DecompressionBombError extends Error {}

export function isGzip(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const magic = Buffer.alloc(2);
    return readSync(fd, magic, 0, 2, 0) === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

/** Counters of a read, for progress: bytes of the stored file consumed, bytes given out. */
export interface SourceProgress {
  fileBytes: number;
  outputBytes: number;
}

/** The file's content in pieces (decompressed when gzipped); `progress` is updated as it goes. */
export async function* fileContent(file: string, gzip: boolean, progress: SourceProgress): AsyncGenerator<Buffer> {
  const raw = createReadStream(file, { highWaterMark: PIECE });
  raw.on('data', (b) => (progress.fileBytes += b.length));
  if (!gzip) {
    for await (const piece of raw) {
      progress.outputBytes += (piece as Buffer).length;
      yield piece as Buffer;
    }
    return;
  }
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  raw.pipe(gunzip);
  raw.on('error', (err) => gunzip.destroy(err));
  try {
    for await (const piece of gunzip) {
      progress.outputBytes += (piece as Buffer).length;
      const ratio = progress.outputBytes / Math.max(1, progress.fileBytes);
      if ((progress.outputBytes > BOMB_MIN_OUTPUT && ratio > BOMB_RATIO) || progress.outputBytes > MAX_OUTPUT) {
        throw new DecompressionBombError(
          `the gzip data is a decompression bomb: ${mib(progress.fileBytes)} of it inflated to ${mib(progress.outputBytes)} (${Math.round(ratio)}:1, more than ${BOMB_RATIO}:1 or ${MAX_OUTPUT / 1024 ** 3} GiB); decompression was stopped there`,
        );
      }
      yield piece as Buffer;
    }
  } finally {
    raw.destroy();
    gunzip.destroy();
  }
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

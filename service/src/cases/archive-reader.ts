// Reading a case archive that arrived: the upload (the raw body, or the `file` part of a multipart
// body, read by the imports domain's multipart reader) saved to a file with its SHA-256,
// the file opened as tar or tar.gz, and every member verified against the manifest before
// anything is imported.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { PassThrough, pipeline as chain, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import {
  CASE_FORMAT,
  CASE_INFO,
  CUSTODY,
  EVENTS_PART,
  MANIFEST,
  MANIFEST_HASH,
  RECORD_FILES,
  type Manifest,
} from './archive-layout.ts';
import { sha256 } from './archive-writer.ts';
import { readTar, TarFormatError, type TarMember } from './tar.ts';
import { carriedChainProblem } from './custody-link.ts';
import type { CustodyEntry } from '../evidence/custody/index.ts';
import { MultipartError, readMultipart } from '../evidence/imports/multipart.ts';

/** An archive refused as a whole: the sentence names the file and what is wrong with it. */
export class CaseArchiveRefused extends Error {}

/** A JSON object (a record's line), not an array or null. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A record of a verified archive that cannot be restored: the sentence names the file and line. */
export class BadRecord extends Error {}

/**
 * Lines of an NDJSON member as parsed values; a line that is not JSON names the member and line.
 * Text is decoded across pieces (a character may be split between two), and a long line is
 * gathered piece by piece rather than searched again from its start at each piece.
 */
export async function* ndjsonLines(name: string, content: AsyncIterable<Buffer>): AsyncGenerator<unknown> {
  const decoder = new StringDecoder('utf8');
  let line: string[] = [];
  let n = 0;
  const parse = (text: string) => {
    n++;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new BadRecord(`${name} line ${n} is not JSON.`);
    }
  };
  for await (const piece of content) {
    const text = decoder.write(piece);
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      line.push(text.slice(from, nl));
      const whole = line.join('');
      line = [];
      from = nl + 1;
      if (whole) yield parse(whole);
    }
    if (from < text.length) line.push(text.slice(from));
  }
  // Only the last line may lack its newline.
  const last = line.join('') + decoder.end();
  if (last) yield parse(last);
}

/** The manifest (and its hash) is read whole; anything larger is not one of ours. */
const MANIFEST_MAX = 64 * 1024 * 1024;

/** Saves the body to `file` and returns its size and SHA-256 as received; `onBytes` follows the upload. */
export async function saveUpload(body: AsyncIterable<Buffer>, file: string, onBytes: (n: number) => void): Promise<{ size: number; sha256: string }> {
  const h = createHash('sha256');
  let size = 0;
  await pipeline(
    body,
    async function* (src: AsyncIterable<Buffer>) {
      for await (const piece of src) {
        h.update(piece);
        size += piece.length;
        onBytes(size);
        yield piece;
      }
    },
    createWriteStream(file, { flags: 'wx' }),
  );
  if (size === 0) throw new CaseArchiveRefused('The request has no body: send the case archive (.tar.gz or .tar) as the body.');
  return { size, sha256: h.digest('hex') };
}

/**
 * Saves the first `file` part of a multipart/form-data body to `file` (the other parts are read
 * and dropped), with its size, SHA-256 and the file name the browser sent.
 */
export async function saveMultipartUpload(
  body: AsyncIterable<Buffer>,
  boundary: string,
  file: string,
  onBytes: (n: number) => void,
): Promise<{ size: number; sha256: string; fileName: string }> {
  const upload: { saved: Promise<{ size: number; sha256: string }> | null; fileName: string } = { saved: null, fileName: '' };
  try {
    await readMultipart(body, boundary, async (part) => {
      if (part.field !== 'file' || upload.saved) return null;
      upload.fileName = part.filename ?? '';
      const pieces = new PassThrough();
      upload.saved = saveUpload(pieces, file, onBytes);
      upload.saved.catch(() => undefined); // awaited below
      return {
        write: async (piece) => {
          if (!pieces.write(piece)) await new Promise<void>((r) => pieces.once('drain', () => r()));
        },
        end: async () => {
          pieces.end();
        },
      };
    });
  } catch (err) {
    if (err instanceof MultipartError) throw new CaseArchiveRefused(err.message);
    throw err;
  }
  if (!upload.saved) throw new CaseArchiveRefused('The multipart body has no part named "file": send the case archive as the part "file", or as the raw body.');
  return { ...(await upload.saved), fileName: upload.fileName };
}

/** The archive's members: gzip is recognised by its first bytes, so `.tar` and `.tar.gz` are both read. */
export async function* archiveMembers(file: string, onBytes: (n: number) => void = () => undefined): AsyncGenerator<TarMember> {
  const fh = await open(file, 'r');
  const magic = Buffer.alloc(2);
  await fh.read(magic, 0, 2, 0);
  await fh.close();
  const raw = createReadStream(file, { highWaterMark: 256 * 1024 });
  let read = 0;
  const counted = async function* (src: AsyncIterable<Buffer>) {
    for await (const piece of src) {
      onBytes((read += piece.length));
      yield piece;
    }
  };
  const gzipped = magic[0] === 0x1f && magic[1] === 0x8b;
  // The bytes of the file are counted as they are read (the job's progress), before inflating.
  // Through stream.pipeline, not .pipe(): when the reader stops early (a refusal) and `raw` is
  // destroyed below, the counter's "premature close" must reach the inflater, not become an
  // uncaught 'error' that stops the whole service.
  const source = gzipped ? chain(Readable.from(counted(raw)), createGunzip(), () => undefined) : counted(raw);
  try {
    yield* readTar(source as AsyncIterable<Buffer>);
  } catch (err) {
    throw unreadable(err);
  } finally {
    raw.destroy();
  }
}

/**
 * A damaged archive as a refusal with its sentence (other errors as they are). Members' contents
 * are read outside archiveMembers' frame, so their readers call this too.
 */
export function unreadable(err: unknown): unknown {
  if (err instanceof TarFormatError) return new CaseArchiveRefused(err.message);
  const code = (err as { code?: string }).code;
  if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR') return new CaseArchiveRefused('The archive is not readable gzip data (damaged, or cut short).');
  return err;
}

export interface VerifiedArchive {
  manifest: Manifest;
  manifestSha256: string;
  /** The source fractal's custody log as carried (its chain checked). */
  custody: CustodyEntry[];
}

/**
 * Reads every member, hashing it, and compares with the manifest: the manifest must match its
 * own hash, every file it lists must be there with its size and SHA-256, and nothing else may be.
 * Refuses (CaseArchiveRefused) with every problem found, the first one in the sentence.
 */
export async function verifyArchive(file: string, onBytes: (n: number) => void): Promise<VerifiedArchive> {
  const seen = new Map<string, { size: number; sha256: string }>();
  let manifestText: Buffer | null = null;
  let manifestHashText: Buffer | null = null;
  let custodyText: Buffer | null = null;
  const problems: string[] = [];
  try {
    for await (const m of archiveMembers(file, onBytes)) {
      if (seen.has(m.name)) problems.push(`The archive holds "${m.name}" twice.`);
      const h = createHash('sha256');
      const kept: Buffer[] = [];
      const keepWhole = m.name === MANIFEST || m.name === MANIFEST_HASH || m.name === CUSTODY;
      if (keepWhole && m.size > MANIFEST_MAX) throw new CaseArchiveRefused(`The archive's ${m.name} is ${m.size} bytes, more than a case archive's ${m.name} holds.`);
      for await (const piece of m.content()) {
        h.update(piece);
        if (keepWhole) kept.push(piece);
      }
      seen.set(m.name, { size: m.size, sha256: h.digest('hex') });
      if (m.name === MANIFEST) manifestText = Buffer.concat(kept);
      if (m.name === MANIFEST_HASH) manifestHashText = Buffer.concat(kept);
      if (m.name === CUSTODY) custodyText = Buffer.concat(kept);
    }
  } catch (err) {
    throw unreadable(err);
  }
  if (!manifestText) throw new CaseArchiveRefused(`The archive has no ${MANIFEST}: it is not a case archive, or it was cut short.`);
  if (!manifestHashText) throw new CaseArchiveRefused(`The archive has no ${MANIFEST_HASH}, the hash its ${MANIFEST} is checked against.`);
  const declared = /^([0-9a-f]{64}) [ *]manifest\.json\s*$/.exec(manifestHashText.toString('utf8'))?.[1];
  if (!declared) throw new CaseArchiveRefused(`The archive's ${MANIFEST_HASH} is not one SHA-256 line for ${MANIFEST}.`);
  const manifestSha256 = sha256(manifestText);
  if (manifestSha256 !== declared) {
    throw new CaseArchiveRefused(`${MANIFEST} was changed: its SHA-256 is ${manifestSha256}, but ${MANIFEST_HASH} records ${declared}. Nothing was imported.`);
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestText.toString('utf8')) as Manifest;
  } catch {
    throw new CaseArchiveRefused(`${MANIFEST} is not JSON.`);
  }
  if (manifest?.format !== CASE_FORMAT) throw new CaseArchiveRefused(`${MANIFEST} names format "${String(manifest?.format)}"; this appliance reads ${CASE_FORMAT}.`);
  if (!Array.isArray(manifest.files) || !manifest.files.every((f) => typeof f?.path === 'string' && typeof f.sha256 === 'string' && Number.isSafeInteger(f.size))) {
    throw new CaseArchiveRefused(`${MANIFEST} does not list its files as {path, size, sha256}.`);
  }
  const listed = new Set<string>();
  for (const f of manifest.files) {
    listed.add(f.path);
    const got = seen.get(f.path);
    if (!RECORD_FILES.includes(f.path as never) && !EVENTS_PART.test(f.path)) problems.push(`${MANIFEST} lists "${f.path}", which is no file of a case archive.`);
    else if (!got) problems.push(`"${f.path}" is listed in ${MANIFEST} but missing from the archive.`);
    else if (got.size !== f.size || got.sha256 !== f.sha256) {
      problems.push(`"${f.path}" was changed: its SHA-256 is ${got.sha256} (${got.size} bytes), but ${MANIFEST} records ${f.sha256} (${f.size} bytes).`);
    }
  }
  for (const name of seen.keys()) {
    if (name !== MANIFEST && name !== MANIFEST_HASH && !listed.has(name)) {
      problems.push(`The archive holds "${name}", which ${MANIFEST} does not list (a file was added, or its entry removed from the manifest).`);
    }
  }
  if (!listed.has(CASE_INFO)) problems.push(`${MANIFEST} does not list ${CASE_INFO}, which every case archive has.`);
  if (problems.length) {
    const more = problems.length > 1 ? ` (${problems.length - 1} more problem${problems.length > 2 ? 's' : ''} in the import's errors)` : '';
    throw Object.assign(new CaseArchiveRefused(`The case archive was refused, nothing was imported: ${problems[0]}${more}`), { problems });
  }
  const custody = custodyEntries(custodyText);
  return { manifest, manifestSha256, custody };
}

/** The carried custody log (absent in an archive of a fractal that has none), refused when its chain is broken. */
function custodyEntries(text: Buffer | null): CustodyEntry[] {
  if (!text) return [];
  let entries: unknown[];
  try {
    entries = text.toString('utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as unknown);
  } catch {
    throw new CaseArchiveRefused(`${CUSTODY} is not one JSON entry a line.`);
  }
  const problem = carriedChainProblem(entries);
  if (problem) throw new CaseArchiveRefused(`The case archive was refused, nothing was imported: ${CUSTODY}: ${problem}.`);
  return entries as CustodyEntry[];
}

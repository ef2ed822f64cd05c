// Runs imports one file at a time: the stored upload is read back (gunzipped, bounded), its format
// sniffed, its records decoded and handed to the ingest pipeline's `accept` (the same parse,
// normalize, timestamp, spool and queue as live ingest) with the fractal's or the chosen
// normalizer, every event tagged `import_id`. Then the alert engine runs over what arrived, the
// custody log gets one entry per file, and the stored file is removed (its SHA-256 stays in the
// custody log).
//
// Many small files (a dropped folder of .evtx recordings averages 30 events a file) share pipeline
// batches: records of consecutive files of the same fractal (and parser and timestamp fields) are
// gathered into one `accept`, so one spool write and one queue push serve many files; each file's
// progress is saved at each batch the spool holds (all files of a batch in one SQLite
// transaction), and files read to their end are finished together (one wait for storage, one
// alert pass, their custody entries in one transaction). Files and their errors stay apart: the
// pipeline tells each record's file by its position (`normalize(fields, index)`).
//
// Restart: an import still `processing` resumes from its file. Records before `resume_records` are
// on the spool already and are read but not sent again; each record's log_id is derived from the
// import id and its position in the file, so the batches sent again after the last saved
// checkpoint leave out the logs storage already holds: resumed imports never store a log twice.
// An import still `receiving` lost its upload with the connection: it fails, saying so.
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Context } from '../../context.ts';
import { HttpError } from '../../http/errors.ts';
import type { Ingest, ResolvedToken } from '../../ingest/pipeline.ts';
import type { IngestTokenRow } from '../../ingest/tokens-store.ts';
import type { Fields, IncomingRecord } from '../../ingest/types.ts';
import { formatNs, parseTimestampNs, resolveTimestamp } from '../../ingest/timestamps.ts';
import { setOwn } from '../../shared/exact-json.ts';
import { decoderFor, sniff, SNIFF_BYTES, type ImportFormat, type ImportRecord, type RecordDecoder } from './formats.ts';
import { importView, type ImportProgress, type ImportRow, type ImportsStore } from './imports-store.ts';
import { DecompressionBombError, fileContent, isGzip, type SourceProgress } from './source.ts';

/** The field every imported event carries: the id of its import. */
export const IMPORT_ID_FIELD = 'import_id';
const BATCH_RECORDS = 2_000;
const BATCH_CHARS = 4 * 1024 * 1024;
/** Errors an import keeps (the first ones); `events_rejected` counts them all. */
export const MAX_KEPT_ERRORS = 100;

/** The log_id of the record at `index` of an import: the same on every run of it. */
export function importLogId(importId: string, index: number): string {
  const h = createHash('sha256').update(`${importId}:${index}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The earliest and latest event time seen, in ns since the epoch. */
interface TimeSpan {
  min: bigint | null;
  max: bigint | null;
}

/** RFC 3339 UTC to the nanosecond: `2019-03-01T10:00:00.000000000Z`. */
const isoOf = (ns: bigint | null): string | null => (ns === null ? null : `${formatNs(ns).replace(' ', 'T')}Z`);

/** Ends an import early with what was read so far (a bomb, a cut gzip stream, a full disk quota). */
class ImportStopped extends Error {}

export interface AlertRun {
  /** Evaluates every enabled alert up to what is stored (the alert engine's tick). */
  tick(): Promise<unknown>;
}

/** One file being read: its row, its counters, and where its records stand. */
interface FileRun {
  row: ImportRow;
  counts: { accepted: number; rejected: number };
  errors: string[];
  span: TimeSpan;
  progress: SourceProgress;
  /** What the pipeline applies to this file's records (its normalizer, its import id). */
  token: ResolvedToken | null;
  /** Records read (the position of the next one). */
  read: number;
  /** Records before this position are on the spool (the checkpoint saved). */
  through: number;
  /** Its records in the shared batch, not yet accepted. */
  pending: number;
  /** Resumed after a stop: records may be stored already, checked against storage until none is. */
  checkStored: boolean;
  /** Read to its end (or stopped early, its reason in `errors`). */
  ended: boolean;
  /** Failed on an internal error: nothing more is done with it. */
  dropped: boolean;
  /** Handed on to be finished. */
  completed: boolean;
}

/** Records of one or more files on their way into the pipeline together. */
interface SharedBatch {
  /** What every file of the batch agrees on: fractal, parser, timestamp fields. */
  key: string;
  token: ResolvedToken;
  records: IncomingRecord[];
  /** Per record: its file and its position in that file. */
  owners: FileRun[];
  positions: number[];
  chars: number;
}

/** Files whose records may share a pipeline batch: the same fractal, parser and timestamp fields. */
const keyOf = (t: ResolvedToken) => `${t.fractalId}\n${t.row.parser_type}\n${t.timestampFields.join('\n')}`;

const addError = (f: FileRun, e: string) => {
  if (f.errors.length < MAX_KEPT_ERRORS) f.errors.push(e);
};

export class ImportRunner {
  private readonly waiting: string[] = [];
  /** Imports read to their end, waiting for storage, their alerts and their custody entry. */
  private readonly finishing = new Set<Promise<void>>();
  private loop: Promise<void> | null = null;
  private stopping = false;
  private batch: SharedBatch | null = null;
  /** Files read and accepted to their end, to be finished together. */
  private ready: FileRun[] = [];
  /** Uploads still arriving (the runner waits a moment for their files before sending a part-filled batch). */
  private receiving = 0;
  private wake: (() => void) | null = null;
  /** Set once the alert engine exists (appliance.ts). */
  alerts: AlertRun | null = null;

  constructor(
    private readonly ctx: Context,
    private readonly ingest: Ingest,
    private readonly store: ImportsStore,
  ) {}

  enqueue(id: string): void {
    if (this.stopping) return;
    this.waiting.push(id);
    this.wake?.();
    this.loop ??= this.drain().finally(() => (this.loop = null));
  }

  /** An upload started / ended (stored or cut off): its file may join the batch being gathered. */
  uploadStarted(): void {
    this.receiving++;
  }
  uploadEnded(): void {
    this.receiving = Math.max(0, this.receiving - 1);
    if (this.receiving === 0) this.wake?.();
  }

  /** At start: uploads cut off by the stop fail; imports being processed resume. */
  resumeAll(): void {
    for (const row of this.store.unfinished()) {
      if (row.phase === 'receiving') {
        this.finish(row, 'failed', [`The upload was cut off when the appliance stopped, after ${row.size_bytes} bytes; send the file again.`], new Date());
      } else this.enqueue(row.id);
    }
  }

  /** An upload cut off before its end: the import fails with what arrived, recorded in the custody log. */
  failUpload(row: ImportRow, size: number, message: string): void {
    this.store.received(row.id, size);
    this.finish(this.store.get(row.id)!, 'failed', [message], new Date());
  }

  /** Stops after the batch in hand; an unfinished import stays `running` and resumes at the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await Promise.all([...this.finishing]);
  }

  private async drain(): Promise<void> {
    while (!this.stopping) {
      const id = this.waiting.shift();
      if (id === undefined) {
        // Nothing waiting: a file still arriving may join the batch; else it goes as it is.
        if (this.batch && this.receiving > 0 && (await this.arrival(250))) continue;
        if (this.stopping) return;
        await this.flush();
        this.finishReady();
        if (this.waiting.length === 0) return;
        continue;
      }
      try {
        await this.run(id);
      } catch (err) {
        this.failed(id, err);
      }
    }
  }

  /** True when a file was queued within `ms` (false on time-out, when uploads end, or at a stop). */
  private arrival(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve(this.waiting.length > 0);
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private async run(id: string): Promise<void> {
    const row = this.store.get(id);
    if (!row || row.status !== 'running') return;
    const f: FileRun = {
      row,
      counts: { accepted: row.accepted, rejected: row.rejected },
      errors: JSON.parse(row.errors),
      span: { min: row.oldest ? parseTimestampNs(row.oldest) : null, max: row.newest ? parseTimestampNs(row.newest) : null },
      progress: { fileBytes: 0, outputBytes: 0 },
      token: null,
      read: 0,
      through: row.resume_records,
      pending: 0,
      checkStored: row.resume_records > 0 || row.accepted > 0,
      ended: row.phase !== 'processing',
      dropped: false,
      completed: false,
    };
    if (f.ended) {
      this.ready.push(f); // resumed after its records were all accepted: only the finishing is left
      return;
    }
    if (f.checkStored) await this.settled();
    try {
      if (!(await this.read(f))) return; // stopping: resumes at the next start
    } catch (err) {
      f.dropped = true; // its records still in the batch are not sent
      throw err;
    }
    f.ended = true;
    if (f.pending === 0) this.completed([f]);
  }

  private failed(id: string, err: unknown): void {
    const row = this.store.get(id);
    this.ctx.log.error({ err: (err as Error).message, import: id }, 'import failed');
    if (row && row.status === 'running' && !this.stopping) this.finish(row, 'failed', [...JSON.parse(row.errors), `The import stopped on an internal error: ${(err as Error).message}`], new Date());
  }

  /** Reads the file into the shared batch; false when it stopped for a shutdown. */
  private async read(f: FileRun): Promise<boolean> {
    const { row, progress } = f;
    const gzip = isGzip(row.file_path);
    const content = fileContent(row.file_path, gzip, progress);
    let decoder: RecordDecoder | null = null;

    const take = async (records: ImportRecord[]) => {
      for (const r of records) {
        const i = f.read++;
        if (i < row.resume_records) continue;
        if ('error' in r) {
          f.counts.rejected++;
          addError(f, r.located ? r.error : `record ${i + 1}: ${r.error}`);
          continue;
        }
        await this.add(f, r, i);
        if (f.ended) throw new ImportStopped(); // the batch it was in could not be accepted
      }
      for (const w of decoder!.takeWarnings()) addError(f, w);
    };

    try {
      let head: Buffer[] = [];
      let headBytes = 0;
      for await (const piece of content) {
        if (this.stopping) return false;
        if (!decoder) {
          head.push(piece);
          headBytes += piece.length;
          if (headBytes < SNIFF_BYTES) continue;
          const begun = this.begin(f, Buffer.concat(head), false, gzip);
          if ('unknown' in begun) return this.unknown(f, begun.unknown);
          decoder = begun.decoder;
          await take(decoder.push(Buffer.concat(head)));
          head = [];
          continue;
        }
        await take(decoder.push(piece));
      }
      if (!decoder) {
        const begun = this.begin(f, Buffer.concat(head), true, gzip);
        if ('unknown' in begun) return this.unknown(f, begun.unknown);
        decoder = begun.decoder;
        await take(decoder.push(Buffer.concat(head)));
      }
      await take(decoder.end());
    } catch (err) {
      if (err instanceof ImportStopped) {
        if (err.message) addError(f, err.message);
      } else if (err instanceof DecompressionBombError) addError(f, err.message);
      else if ((err as { code?: string }).code?.startsWith('Z_') || (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') {
        addError(f, `the gzip data is corrupt or cut off after ${progress.outputBytes} decompressed bytes (${(err as Error).message})`);
      } else throw err;
    }
    if (this.stopping) return false;
    if (f.pending === 0 && !f.dropped) this.store.progress(row.id, this.progressOf(f, true));
    return true;
  }

  /** One record into the shared batch; the batch goes to the pipeline when full or when the next file cannot share it. */
  private async add(f: FileRun, record: IncomingRecord, position: number): Promise<void> {
    const key = keyOf(f.token!);
    if (this.batch && this.batch.key !== key) await this.flush();
    const b = (this.batch ??= this.sharedBatch(key, f.token!));
    b.records.push(record);
    b.owners.push(f);
    b.positions.push(position);
    b.chars += record.text.length;
    f.pending++;
    if (b.records.length >= BATCH_RECORDS || b.chars >= BATCH_CHARS) await this.flush();
  }

  /** An empty batch whose pipeline token normalizes each record with its own file's token. */
  private sharedBatch(key: string, first: ResolvedToken): SharedBatch {
    const b: SharedBatch = { key, token: first, records: [], owners: [], positions: [], chars: 0 };
    // accept() passes each record's index in the records it was given (b.owners is cut to match).
    b.token = { row: first.row, fractalId: first.fractalId, timestampFields: first.timestampFields, normalize: (fields, index) => b.owners[index]!.token!.normalize(fields, index) };
    return b;
  }

  /** The batch into the pipeline; each file's progress saved (one transaction), the files it ends completed. */
  private async flush(): Promise<void> {
    const b = this.batch;
    if (!b) return;
    this.batch = null;
    const { owners: fileOf, positions } = b;
    const files = [...new Set(fileOf)];
    // A file failed meanwhile sends nothing more.
    const keep = fileOf.map((f) => !f.dropped);
    let stoppedBy: string | null = null;
    try {
      // Resumed files: the records storage holds already are left out (and counted).
      const checked = fileOf.flatMap((f, k) => (f.checkStored && keep[k] ? [k] : []));
      if (checked.length > 0) {
        const ids = checked.map((k) => importLogId(fileOf[k]!.row.id, positions[k]!));
        const stored = await this.ctx.logs.existingLogIds(b.token.fractalId, ids);
        const holding = new Set<FileRun>();
        checked.forEach((k, j) => {
          if (!stored.has(ids[j]!)) return;
          keep[k] = false;
          fileOf[k]!.counts.accepted++;
          holding.add(fileOf[k]!);
        });
        for (const k of checked) if (!holding.has(fileOf[k]!)) fileOf[k]!.checkStored = false;
      }
      const sent = keep.flatMap((x, k) => (x ? [k] : []));
      if (sent.length > 0) {
        // The shared token finds each record's file by its index in this call.
        b.owners = sent.map((k) => fileOf[k]!);
        const r = await this.acceptWhenRoom(b.token, sent.map((k) => b.records[k]!), sent.map((k) => importLogId(fileOf[k]!.row.id, positions[k]!)));
        r.outcomes.forEach((o, j) => {
          const f = fileOf[sent[j]!]!;
          if (o.ok) f.counts.accepted++;
          else {
            f.counts.rejected++;
            addError(f, `record ${positions[sent[j]!]! + 1}: ${o.error}`);
          }
        });
      }
    } catch (err) {
      if (!(err instanceof ImportStopped)) {
        for (const f of files) {
          if (f.dropped) continue;
          f.dropped = f.ended = true;
          this.failed(f.row.id, err);
        }
        return;
      }
      stoppedBy = err.message;
    }
    if (stoppedBy === null) fileOf.forEach((f, k) => (f.through = Math.max(f.through, positions[k]! + 1)));
    const done: FileRun[] = [];
    this.ctx.db.transaction(() => {
      for (const f of files) {
        if (f.dropped) continue;
        f.pending = 0;
        if (stoppedBy !== null && !f.ended) {
          addError(f, stoppedBy);
          f.ended = true;
        }
        this.store.progress(f.row.id, this.progressOf(f, f.ended));
        if (f.ended) done.push(f);
      }
    })();
    this.completed(done);
    this.finishReady();
  }

  /** What is saved of a file: its counters, and the checkpoint (its whole length once read). */
  private progressOf(f: FileRun, ended: boolean): ImportProgress {
    return {
      bytes_read: ended ? f.row.size_bytes : Math.min(f.progress.fileBytes, f.row.size_bytes),
      accepted: f.counts.accepted,
      rejected: f.counts.rejected,
      resume_records: ended ? f.read : f.through,
      errors: f.errors,
      oldest: isoOf(f.span.min),
      newest: isoOf(f.span.max),
    };
  }

  /** Files whose records are all in the pipeline: on to storage, alerts and custody with the next group. */
  private completed(files: FileRun[]): void {
    for (const f of files) {
      if (f.dropped || f.completed) continue;
      f.completed = true;
      this.store.phase(f.row.id, 'alerts');
      this.ready.push(f);
    }
  }

  /** The ready files are finished together in the background; the next files are read meanwhile. */
  private finishReady(): void {
    const group = this.ready;
    if (group.length === 0) return;
    this.ready = [];
    const finishing = this.afterProcessing(group).catch((err) => group.forEach((f) => this.failed(f.row.id, err)));
    this.finishing.add(finishing);
    void finishing.finally(() => this.finishing.delete(finishing));
  }

  /** The decoder and pipeline token for a sniffed file, or why no format fits. */
  private begin(f: FileRun, head: Buffer, atEnd: boolean, gzip: boolean): { decoder: RecordDecoder } | { unknown: string } {
    const format = sniff(head, atEnd);
    if (typeof format !== 'string') return format;
    this.store.sniffed(f.row.id, format, gzip ? 'gzip' : null);
    const decoder = decoderFor(format);
    f.token = this.tokenFor(f.row, format, decoder, f.span);
    return { decoder };
  }

  private unknown(f: FileRun, reason: string): boolean {
    f.errors = [`${f.row.name} was not imported: ${reason}.`];
    f.counts = { accepted: 0, rejected: 0 };
    f.read = 0;
    this.store.progress(f.row.id, { ...this.progressOf(f, false), bytes_read: Math.min(f.progress.fileBytes, f.row.size_bytes) });
    return true;
  }

  /**
   * What the pipeline applies to the import's records, as an ingest token would: the chosen
   * normalizer, else the one of the fractal's default token (else the appliance's default); the
   * chosen timestamp fields, then the normalizer's, then the format's own; and the import's id.
   */
  private tokenFor(row: ImportRow, format: ImportFormat, decoder: RecordDecoder, span: TimeSpan): ResolvedToken {
    const { normalizerCache, ingestTokens, settings } = this.ctx;
    const tokens = ingestTokens.list(row.fractal_id);
    const fractalToken = tokens.find((t) => t.is_default === 1) ?? tokens[0];
    const n = row.normalizer_id ? normalizerCache.byId(row.normalizer_id) : fractalToken ? normalizerCache.forToken(fractalToken) : normalizerCache.defaultOne();
    const ownFields = !row.normalizer_id && fractalToken ? (JSON.parse(fractalToken.timestamp_fields) as string[]) : [];
    const timestampFields = [...(JSON.parse(row.timestamp_fields) as string[]), ...ownFields, ...(n?.timestampFields ?? []), ...decoder.timestampFields];
    const importId = row.id;
    const apply = n ? n.apply : (f: Fields) => f;
    return {
      row: { parser_type: format === 'syslog' ? 'syslog' : 'json' } as IngestTokenRow,
      fractalId: row.fractal_id,
      normalize: (fields) => {
        const out = apply(fields);
        setOwn(out, IMPORT_ID_FIELD, importId);
        // The time the pipeline will give the event (it resolves it right after this, the same way).
        const ts = resolveTimestamp(out, timestampFields, settings.get().timestamp_fields);
        if (ts.field !== null) {
          if (span.min === null || ts.ns < span.min) span.min = ts.ns;
          if (span.max === null || ts.ns > span.max) span.max = ts.ns;
        }
        return out;
      },
      timestampFields,
    };
  }

  /** accept(), waiting while the queue is full; a fractal over its quota or a spool that fails ends the import. */
  private async acceptWhenRoom(token: ResolvedToken, records: IncomingRecord[], ids: string[]) {
    for (;;) {
      try {
        return await this.ingest.accept(token, records, ids);
      } catch (err) {
        if (err instanceof HttpError && err.statusCode === 429 && !/quota/.test(err.message)) {
          await this.ingest.whenRoom();
          continue;
        }
        if (err instanceof HttpError) throw new ImportStopped(`the import stopped: ${err.message}`);
        throw err;
      }
    }
  }

  /** Resolves, with the instant it waited for, once every log accepted so far is in storage. */
  private async settled(): Promise<number> {
    const through = this.ingest.acceptedThrough().getTime();
    while (this.ingest.settledBefore().getTime() < through && !this.stopping) await new Promise((r) => setTimeout(r, 100));
    return through;
  }

  /** Storage holds the files' events; the alerts run over them; the custody log records each file. */
  private async afterProcessing(group: FileRun[]): Promise<void> {
    const settledAt = await this.settled();
    if (this.stopping) return;
    const rows = group.map((f) => this.store.get(f.row.id)!).filter((r) => r.status === 'running');
    const alerted = this.alerts ? [...new Set(rows.filter((r) => r.accepted > 0).map((r) => r.fractal_id))] : [];
    for (const fractalId of alerted) await this.runAlerts(fractalId, new Date(settledAt).toISOString());
    if (this.stopping) return;
    const at = new Date();
    this.ctx.db.transaction(() => {
      for (const row of rows) {
        if (alerted.includes(row.fractal_id) && row.accepted > 0) this.store.alerts(row.id, this.ctx.alertExecutions.firingsHolding(IMPORT_ID_FIELD, row.id, row.created_at));
        const errors: string[] = JSON.parse(row.errors);
        const failed = row.accepted === 0 && (errors.length > 0 || row.rejected > 0);
        this.finish(row, failed ? 'failed' : 'done', errors, at);
      }
    })();
  }

  /**
   * Alerts run over windows of arrival (ingest time), whatever the events' own times, so the
   * import's events, however old, are in the windows that end after it: ticks of the alert engine
   * until every enabled alert reading this fractal has evaluated past the moment the import was
   * stored (a tick already running may stop short; an alert that keeps failing is given up on).
   */
  private async runAlerts(fractalId: string, through: string): Promise<void> {
    const reading = () =>
      this.ctx.alerts.enabled().filter((a) => a.fractal_id === fractalId || (a.prism_id !== null && this.ctx.prisms.memberIds(a.prism_id).includes(fractalId)));
    for (let tick = 0; tick < 20 && !this.stopping; tick++) {
      const behind = reading().filter((a) => (a.cursor ?? '') < through);
      if (behind.length === 0) return;
      await this.alerts!.tick();
    }
  }

  private finish(row: ImportRow, status: 'done' | 'failed', errors: string[], at: Date): void {
    const after = this.store.finish(row.id, status, errors);
    const v = importView(after);
    this.ctx.custody.append(row.fractal_id, {
      kind: 'import',
      actor: row.created_by,
      details: {
        import_id: v.id,
        file_name: v.name,
        size_bytes: v.size_bytes,
        sha256: v.sha256,
        format: v.format,
        compression: v.compression,
        normalizer_id: v.normalizer_id,
        status,
        started_at: v.created_at,
        ended_at: at.toISOString(),
        events_accepted: v.events_accepted,
        events_rejected: v.events_rejected,
        errors: v.errors.slice(0, 10),
        oldest_event: v.oldest_event,
        newest_event: v.newest_event,
      },
    }, at);
    rmSync(row.file_path, { force: true });
  }
}

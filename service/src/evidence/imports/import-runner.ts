// Runs imports one at a time: the stored upload is read back (gunzipped, bounded), its format
// sniffed, its records decoded and handed to the ingest pipeline's `accept` (the same parse,
// normalize, timestamp, spool and queue as live ingest) in batches, with the fractal's or the chosen
// normalizer, every event tagged `import_id`. Progress is saved after each batch the spool holds.
// Then the alert engine runs over what arrived, the custody log gets its entry, and the stored
// file is removed (its SHA-256 stays in the custody log).
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
import { importView, type ImportRow, type ImportsStore } from './imports-store.ts';
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

export class ImportRunner {
  private readonly waiting: string[] = [];
  /** Imports read to their end, waiting for storage, their alerts and their custody entry. */
  private readonly finishing = new Set<Promise<void>>();
  private loop: Promise<void> | null = null;
  private stopping = false;
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
    this.loop ??= this.drain().finally(() => (this.loop = null));
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
    await this.loop;
    await Promise.all([...this.finishing]);
  }

  private async drain(): Promise<void> {
    for (let id = this.waiting.shift(); id !== undefined && !this.stopping; id = this.waiting.shift()) {
      try {
        await this.run(id);
      } catch (err) {
        this.failed(id, err);
      }
    }
  }

  private async run(id: string): Promise<void> {
    let row = this.store.get(id);
    if (!row || row.status !== 'running') return;
    if (row.phase === 'processing') {
      const completed = await this.process(row);
      if (!completed) return; // stopping: resumes at the next start
      row = this.store.get(id)!;
      this.store.phase(id, 'alerts');
    }
    // The next file is read while this one waits for storage and its alerts: a folder of small
    // files would otherwise wait one insert linger and one alert pass per file.
    const finishing = this.afterProcessing(row).catch((err) => this.failed(id, err));
    this.finishing.add(finishing);
    void finishing.finally(() => this.finishing.delete(finishing));
  }

  private failed(id: string, err: unknown): void {
    const row = this.store.get(id);
    this.ctx.log.error({ err: (err as Error).message, import: id }, 'import failed');
    if (row && row.status === 'running' && !this.stopping) this.finish(row, 'failed', [...JSON.parse(row.errors), `The import stopped on an internal error: ${(err as Error).message}`], new Date());
  }

  /** Reads the file into the pipeline; false when it stopped for a shutdown. */
  private async process(row: ImportRow): Promise<boolean> {
    const errors: string[] = JSON.parse(row.errors);
    const counts = { accepted: row.accepted, rejected: row.rejected };
    const addError = (e: string) => {
      if (errors.length < MAX_KEPT_ERRORS) errors.push(e);
    };
    const progress: SourceProgress = { fileBytes: 0, outputBytes: 0 };
    const gzip = isGzip(row.file_path);
    const content = fileContent(row.file_path, gzip, progress);
    // Resuming: records before the checkpoint are on the spool; those after it may be too (the
    // batch in flight when the appliance stopped), once the spool's replay has been stored.
    const resumeFrom = row.resume_records;
    let checkStored = resumeFrom > 0 || row.accepted > 0;
    if (checkStored) await this.settled(Date.now());

    // The events' own times, as the pipeline resolves them (kept across a resume in the row).
    const span: TimeSpan = { min: row.oldest ? parseTimestampNs(row.oldest) : null, max: row.newest ? parseTimestampNs(row.newest) : null };
    let decoder: RecordDecoder | null = null;
    let token: ResolvedToken | null = null;
    let index = 0;
    let batch: IncomingRecord[] = [];
    let batchIndex: number[] = [];
    let batchChars = 0;

    const flush = async () => {
      if (batch.length === 0) return;
      let records = batch;
      let ids = batchIndex.map((i) => importLogId(row.id, i));
      let indexes = batchIndex;
      if (checkStored) {
        const stored = await this.ctx.logs.existingLogIds(row.fractal_id, ids);
        if (stored.size === 0) checkStored = false;
        else {
          counts.accepted += stored.size;
          const keep = ids.map((x) => !stored.has(x));
          records = records.filter((_, k) => keep[k]);
          indexes = indexes.filter((_, k) => keep[k]);
          ids = ids.filter((_, k) => keep[k]);
        }
      }
      if (records.length > 0) {
        const r = await this.acceptWhenRoom(token!, records, ids);
        counts.accepted += r.accepted;
        counts.rejected += r.rejected;
        if (r.rejected > 0) r.outcomes.forEach((o, k) => !o.ok && addError(`record ${indexes[k]! + 1}: ${o.error}`));
      }
      const next = batchIndex.at(-1)! + 1;
      batch = [];
      batchIndex = [];
      batchChars = 0;
      this.store.progress(row.id, { bytes_read: Math.min(progress.fileBytes, row.size_bytes), ...counts, resume_records: next, errors });
      this.store.range(row.id, isoOf(span.min), isoOf(span.max));
    };

    const take = async (records: ImportRecord[]) => {
      for (const r of records) {
        const i = index++;
        if (i < resumeFrom) continue;
        if ('error' in r) {
          counts.rejected++;
          addError(r.located ? r.error : `record ${i + 1}: ${r.error}`);
          continue;
        }
        batch.push(r);
        batchIndex.push(i);
        batchChars += r.text.length;
        if (batch.length >= BATCH_RECORDS || batchChars >= BATCH_CHARS) await flush();
      }
      for (const w of decoder!.takeWarnings()) addError(w);
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
          const begun = this.begin(row, Buffer.concat(head), false, gzip, span);
          if ('unknown' in begun) return this.unknown(row, begun.unknown, progress);
          ({ decoder, token } = begun);
          await take(decoder.push(Buffer.concat(head)));
          head = [];
          continue;
        }
        await take(decoder.push(piece));
      }
      if (!decoder) {
        const begun = this.begin(row, Buffer.concat(head), true, gzip, span);
        if ('unknown' in begun) return this.unknown(row, begun.unknown, progress);
        ({ decoder, token } = begun);
        await take(decoder.push(Buffer.concat(head)));
      }
      await take(decoder.end());
    } catch (err) {
      if (err instanceof DecompressionBombError || err instanceof ImportStopped) addError(err.message);
      else if ((err as { code?: string }).code?.startsWith('Z_') || (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') {
        addError(`the gzip data is corrupt or cut off after ${progress.outputBytes} decompressed bytes (${(err as Error).message})`);
      } else throw err;
    }
    if (this.stopping) return false;
    await flush();
    this.store.progress(row.id, { bytes_read: row.size_bytes, ...counts, resume_records: index, errors });
    return true;
  }

  /** The decoder and pipeline token for a sniffed file, or why no format fits. */
  private begin(row: ImportRow, head: Buffer, atEnd: boolean, gzip: boolean, span: TimeSpan): { decoder: RecordDecoder; token: ResolvedToken } | { unknown: string } {
    const format = sniff(head, atEnd);
    if (typeof format !== 'string') return format;
    this.store.sniffed(row.id, format, gzip ? 'gzip' : null);
    const decoder = decoderFor(format);
    return { decoder, token: this.tokenFor(row, format, decoder, span) };
  }

  private unknown(row: ImportRow, reason: string, progress: SourceProgress): boolean {
    const errors = [`${row.name} was not imported: ${reason}.`];
    this.store.progress(row.id, { bytes_read: Math.min(progress.fileBytes, row.size_bytes), accepted: 0, rejected: 0, resume_records: 0, errors });
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

  /** Resolves once every log accepted before `ms` is in storage. */
  private async settled(ms: number): Promise<void> {
    while (this.ingest.settledBefore().getTime() < ms && !this.stopping) await new Promise((r) => setTimeout(r, 100));
  }

  /** Storage holds the import; the alerts run over it; the custody log records it. */
  private async afterProcessing(row: ImportRow): Promise<void> {
    const settledAt = Date.now();
    await this.settled(settledAt);
    if (this.stopping) return;
    if (this.alerts && row.accepted > 0) {
      await this.runAlerts(row.fractal_id, new Date(settledAt).toISOString());
      this.store.alerts(row.id, this.ctx.alertExecutions.firingsHolding(IMPORT_ID_FIELD, row.id, row.created_at));
    }
    const done = this.store.get(row.id)!;
    const errors: string[] = JSON.parse(done.errors);
    const failed = done.accepted === 0 && (errors.length > 0 || done.rejected > 0);
    this.finish(done, failed ? 'failed' : 'done', errors, new Date());
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

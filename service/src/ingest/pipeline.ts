// The ingest pipeline shared by all three endpoints:
//   token (cached) → admission (token bucket) → parse (token's parser) → flatten → normalize
//   → timestamp → spool (fsync'd) → queue → workers → ClickHouse.
// An endpoint calls authenticate(), admit(), then accept() with the records it decoded; it never
// talks to storage itself.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import { presentedCredential } from '../auth/access.ts';
import type { Context } from '../context.ts';
import { HttpError } from '../http/errors.ts';
import { flatten } from './flatten.ts';
import { parseJsonRecord, parsePlainJsonRecord } from './parsers/json.ts';
import { parseKv } from './parsers/kv.ts';
import { ParseError } from './parsers/parse-error.ts';
import { parseSyslog } from './parsers/syslog.ts';
import { Pressure } from './pressure.ts';
import { batchBytes, IngestQueue, type QueuedBatch } from './queue.ts';
import { Spool } from './spool.ts';
import { formatNs, nowNs, resolveTimestamp } from './timestamps.ts';
import { TokenBucket } from './rate-limit.ts';
import { TokenCache, type CachedToken } from './token-cache.ts';
import type { IngestTokenRow } from './tokens-store.ts';
import type { AcceptResult, IncomingRecord, RecordOutcome } from './types.ts';
import { keyCount, plainObjectMembers } from './verbatim.ts';

export type ResolvedToken = CachedToken;

const MAX_BATCH_LOGS = 5_000;
/**
 * How long an insert waits for running searches to end at most: queries first, but a search
 * that runs for minutes does not stop ingest for minutes.
 */
const MAX_YIELD_TO_SEARCHES_MS = 1_000;
/** The log_id of a spooled row (accept() writes it before the record's own text). */
const LOG_ID = /"log_id":"([0-9a-f-]{36})"/;
/** The ingest time of a spooled row, to the millisecond. */
const INGEST_TS = /"ingest_timestamp":"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})/;
const MAX_REPORTED_ERRORS = 5;
/** How many requests' rows-per-text-byte ratios admit() judges a body's length by. */
const RATIOS_KEPT = 16;
/** A \uD800-\uDFFF escape in a JSON text: cheap to look for, and only then are the values checked. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether every field name and text value is well-formed Unicode (no lone surrogate). */
function wellFormed(fields: Record<string, unknown>): boolean {
  for (const k of Object.keys(fields)) {
    const v = fields[k];
    if (LONE_SURROGATE.test(k) || (typeof v === 'string' && LONE_SURROGATE.test(v))) return false;
  }
  return true;
}

/** An ingest row's event time as accept() writes it, which the engine reads. */
const ROW_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,9})?$/;

/**
 * What is stored in place of an ingest row the engine refused alone (none is known since the
 * 1e999999 line; this is the net under "nothing accepted is lost"): the same log id, fractal and
 * times, the record's text as `raw` and as the field `message`, the engine's sentence as the field
 * `ingest_error`, so `ingest_error=*` finds them. Null for a row that is not one accept() wrote.
 */
export function quarantineRow(row: string, reason: string): string | null {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(row) as Record<string, unknown>;
  } catch {
    return null;
  }
  const { fractal_id, log_id, ingest_timestamp, timestamp } = o;
  if (typeof fractal_id !== 'string' || typeof log_id !== 'string' || typeof ingest_timestamp !== 'string' || !ROW_TIME.test(ingest_timestamp)) return null;
  const raw = typeof o.raw === 'string' ? o.raw : JSON.stringify(o.raw ?? null);
  return JSON.stringify({
    fractal_id,
    timestamp: typeof timestamp === 'string' && ROW_TIME.test(timestamp) ? timestamp : ingest_timestamp,
    ingest_timestamp,
    log_id,
    raw,
    fields: JSON.stringify({ message: raw, ingest_error: reason }),
  });
}

export const QUEUE_FULL = 'The ingest queue is full; retry with backoff.';

/** The sentence for a request none of whose records was accepted. */
export function noValidLogs(r: AcceptResult): string {
  return `No valid logs found: ${r.errors.join('; ')}${r.rejected > r.errors.length ? ` (and ${r.rejected - r.errors.length} more)` : ''}.`;
}

export interface IngestPipeline {
  /** The presented ingest token (Bearer, ApiKey, X-API-Key or Basic password); throws 401. */
  authenticate(req: FastifyRequest): ResolvedToken;
  /**
   * Admission before the body is read: 429 with Retry-After when over SVC_INGEST_RATE_LIMIT/BURST,
   * or, on a route that cannot refuse records one by one (`answersPerItem`), when the queue is full
   * or has no room for the rows a body of `bodyBytes` (its Content-Length) would make.
   */
  admit(opts?: { answersPerItem?: boolean; bodyBytes?: number }): void;
  /**
   * Parses, normalizes, stamps, spools and queues, all or nothing: throws 429 when the queue has
   * no room for all the request's logs (or the fractal is over its quota), 503 when the spool
   * cannot be written.
   */
  accept(token: ResolvedToken, records: IncomingRecord[]): Promise<AcceptResult>;
}

const PARSERS = { kv: parseKv, syslog: parseSyslog } as const;

/**
 * One batch's NDJSON rows, written into a Buffer as each row is made: no array of row strings to
 * join and encode afterwards, and a row's text is garbage as soon as it is copied.
 */
class RowWriter {
  private buf: Buffer;
  private len = 0;
  count = 0;

  /**
   * Rows of one month (`month`, see QueuedBatch), sized from the records this batch will most
   * likely hold (records[from…]); a writer for a month other than the request's first starts small,
   * since records of many months (an import of old logs) share out the request's records.
   */
  constructor(
    readonly month: string,
    records: IncomingRecord[],
    from: number,
    small: boolean,
    /** Row bytes per record character seen lately (0: none yet). */
    rowBytesPerChar: number,
  ) {
    let chars = 0;
    const to = small ? from : Math.min(records.length, from + MAX_BATCH_LOGS);
    for (let i = from; i < to; i++) chars += records[i]!.text.length;
    // Sized from the rows of recent requests, so it is neither grown nor copied to size (both were
    // 2% of the event loop's time on nested records, whose rows carry their fields as text too);
    // without them, a row is about 180 bytes of columns plus the record as an escaped JSON string.
    const estimate = rowBytesPerChar > 0 ? Math.ceil(chars * rowBytesPerChar * 1.05) + 4096 : Math.ceil(chars * 1.3) + (to - from) * 200;
    this.buf = Buffer.allocUnsafeSlow(Math.max(small ? 65_536 : 4096, estimate));
  }

  add(row: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; count exactly only when that bound does not fit.
    if (this.len + row.length * 3 > this.buf.length) {
      const need = this.len + Buffer.byteLength(row);
      if (need > this.buf.length) {
        const bigger = Buffer.allocUnsafeSlow(Math.max(need, Math.ceil(this.buf.length * 1.5)));
        this.buf.copy(bigger, 0, 0, this.len);
        this.buf = bigger;
      }
    }
    this.len += this.buf.write(row, this.len);
    this.count++;
  }

  /** The rows, in a Buffer of their own size when the estimate left much unused. */
  finish(): Buffer {
    if (this.len >= this.buf.length * 0.875) return this.buf.subarray(0, this.len);
    const exact = Buffer.allocUnsafeSlow(this.len);
    this.buf.copy(exact, 0, 0, this.len);
    return exact;
  }
}

export class Ingest implements IngestPipeline {
  readonly pressure = new Pressure();
  readonly spool: Spool;
  readonly queue: IngestQueue;
  private readonly tokens: TokenCache;
  private readonly bucket: TokenBucket;
  /**
   * The ingest time (ms) of every batch accepted but not yet in storage, by batch id, and the last
   * ingest time stamped (stamps never go backwards): what settledBefore() reports to the alert engine.
   */
  private readonly unsettled = new Map<string, number>();
  private lastStampMs = 0;
  /**
   * Bytes of queued rows per byte of record text of the last requests accepted (rows add the
   * columns, escape the record, and carry the fields again when the pipeline changed them): the
   * smallest of them is what a body of known length will take in the queue at least, so a body
   * that cannot fit is refused before it is read and parsed. Never below 1: a row holds its text.
   */
  private readonly rowBytesPerTextByte: number[] = [];
  /** Storage insert latency, for the pressure report: the last insert and a moving average. */
  lastInsertMs: number | null = null;
  avgInsertMs: number | null = null;
  /**
   * Rows the engine refused and that were stored apart since start (system/pressure's storage
   * layer): how many, and when last. The engine's reason stays in the log and the row's
   * `ingest_error`: it may quote the row, which not every caller may read.
   */
  storedApart = { rows: 0, lastAt: null as string | null };

  constructor(private readonly ctx: Context) {
    const { config, metrics } = ctx;
    this.tokens = new TokenCache(ctx.ingestTokens, ctx.normalizerCache);
    this.bucket = new TokenBucket(config.ingestRateLimit, config.ingestRateBurst);
    this.spool = new Spool(path.join(config.dataDir, 'spool'));
    this.queue = new IngestQueue({
      slots: config.ingestQueueSize,
      maxBytes: config.ingestQueueBytes,
      workers: config.ingestWorkers,
      insert: (table, chunks) => ctx.logs.insert(table, chunks),
      onInserted: (batches, ms) => {
        for (const b of batches) {
          this.spool.confirm(b.id);
          this.unsettled.delete(b.id);
        }
        this.lastInsertMs = Math.round(ms * 10) / 10;
        this.avgInsertMs = Math.round((this.avgInsertMs === null ? ms : this.avgInsertMs * 0.9 + ms * 0.1) * 10) / 10;
        metrics.ingestInsertSeconds.observe(ms / 1000);
        metrics.ingestStored.inc(batches.reduce((n, b) => n + b.count, 0));
      },
      onInsertError: (err, attempt, delay) => {
        this.pressure.set('storage', true, `inserts failing: ${err.message.split('\n')[0]}`);
        metrics.ingestInsertFailures.inc();
        if (attempt === 1 || attempt % 10 === 0) {
          ctx.log.error({ err: err.message, attempt, retry_in_ms: delay }, 'insert into ClickHouse failed; will retry');
        }
      },
      onRecovered: () => this.pressure.set('storage', false),
      quarantine: (table, row, reason) => (table === 'logs_ingest' ? quarantineRow(row, reason) : null),
      onQuarantined: (rows, reason) => {
        metrics.ingestRowsStoredApart.inc(rows);
        this.storedApart = { rows: this.storedApart.rows + rows, lastAt: new Date().toISOString() };
        ctx.log.error({ rows, reason }, 'the engine refused rows of a batch; stored with their text as `message` and the reason as `ingest_error`');
      },
      yieldToSearches: () => ctx.ch.searches.whenIdle(MAX_YIELD_TO_SEARCHES_MS),
    });
    metrics.trackIngest(() => ({ depth: this.queue.depth, logs: this.queue.queuedLogs, bytes: this.queue.queuedBytes, spoolBytes: this.spool.bytes }));
  }

  /**
   * Replays what the spool holds from before the last stop (or crash). A batch may have reached
   * ClickHouse just before the crash, before its confirmation hit the disk: rows whose log_id is
   * already stored are left out, so a replay never stores a log twice.
   */
  async recover(): Promise<number> {
    let replayed = 0;
    for (const b of this.spool.recover()) {
      const lines = b.rows.toString('utf8').split('\n').filter(Boolean);
      const ids = lines.map((l) => LOG_ID.exec(l)?.[1] ?? '');
      const stored = await this.ctx.logs.existingLogIds(b.fractalId, ids.filter(Boolean));
      const missing = lines.filter((_, i) => !stored.has(ids[i]!));
      if (missing.length === 0) {
        this.spool.confirm(b.id);
        continue;
      }
      const rows = missing.length === lines.length ? b.rows : Buffer.from(missing.join('\n') + '\n');
      // Every row of a batch came with one request and shares its ingest time.
      const stamped = INGEST_TS.exec(lines[0]!)?.[1];
      this.unsettled.set(b.id, stamped ? Date.parse(`${stamped.replace(' ', 'T')}Z`) : 0);
      this.queue.pushRecovered({ ...b, rows, count: missing.length });
      replayed += missing.length;
    }
    return replayed;
  }

  authenticate(req: FastifyRequest): ResolvedToken {
    const value = presentedCredential(req);
    if (!value) {
      this.ctx.metrics.ingestRefused.inc({ reason: 'unauthenticated' });
      throw new HttpError(401, 'Send the ingest token as "Authorization: Bearer svc_ingest_…".');
    }
    const token = this.tokens.lookup(value);
    if (!token) {
      this.ctx.metrics.ingestRefused.inc({ reason: 'unauthenticated' });
      throw new HttpError(401, 'The ingest token is unknown or disabled.');
    }
    return token;
  }

  /** The enabled token of a value from the cache (a syslog listener's), or null. */
  tokenFor(value: string): ResolvedToken | null {
    return this.tokens.lookup(value);
  }

  /** Resolves the next time the queue frees room (a syslog listener holding its senders waits on it). */
  whenRoom(): Promise<void> {
    return this.queue.whenRoom();
  }

  admit(opts: { answersPerItem?: boolean; bodyBytes?: number } = {}): void {
    // A route whose answer has no items (nothing but the whole request can be refused) is turned
    // away before its body is read while the queue is full, or when the rows its body would make
    // (Content-Length × the fewest rows per text byte of the last requests) cannot fit: no memory or parsing spent
    // on a request accept() would refuse anyway. A compressed body's length is less than its text,
    // so it is never refused here wrongly; a body without a length is judged once parsed.
    if (!opts.answersPerItem && !this.queue.hasRoom) throw this.queueFull(0);
    if (!opts.answersPerItem && opts.bodyBytes) {
      const ratios = this.rowBytesPerTextByte;
      const bytes = Math.round(opts.bodyBytes * (ratios.length ? Math.max(1, Math.min(...ratios)) : 1));
      if (!this.queue.hasRoomFor(bytes)) throw this.queueFull(0, bytes);
    }
    // Searches first: while one streams and storage is already behind, a request that can be
    // refused whole is turned away before its body is read or parsed, so the search gets the
    // cores; the shipper retries after a second, when the queue has drained some.
    if (!opts.answersPerItem && this.ctx.ch.searches.active > 0 && this.queue.backlogged) {
      this.pressure.hit('queue', 'searches are running and storage is behind: ingest waits for them');
      this.ctx.metrics.ingestRefused.inc({ reason: 'queue_full' });
      throw new HttpError(429, QUEUE_FULL, { 'retry-after': '1' });
    }
    const wait = this.bucket.take();
    if (wait > 0) {
      this.pressure.hit('rate_limit', `over ${this.ctx.config.ingestRateLimit} requests/s (burst ${this.ctx.config.ingestRateBurst})`);
      this.ctx.metrics.ingestRefused.inc({ reason: 'rate_limit' });
      throw new HttpError(429, 'Ingest rate limit exceeded; retry with backoff.', { 'retry-after': String(wait) });
    }
  }

  /** The 429 of a full queue (reported as pressure; `logs` refused logs are counted). */
  private queueFull(logs: number, bytes = 0): HttpError {
    this.pressure.hit('queue', this.queue.describeFull(logs, bytes));
    this.ctx.metrics.ingestRefused.inc({ reason: 'queue_full' }, Math.max(1, logs));
    return new HttpError(429, QUEUE_FULL, { 'retry-after': '1' });
  }

  async accept(token: ResolvedToken, records: IncomingRecord[], logIds?: string[]): Promise<AcceptResult> {
    const { metrics } = this.ctx;
    if (this.ctx.retention.isBlocked(token.fractalId)) {
      this.pressure.hit('disk_quota', 'a fractal over its disk quota refused a batch');
      metrics.ingestRefused.inc({ reason: 'disk_quota' });
      throw new HttpError(429, 'This fractal is over its disk quota; an admin must raise the quota or free space.', { 'retry-after': '60' });
    }
    const outcomes: RecordOutcome[] = new Array(records.length);
    const errors: string[] = [];
    const chunks: RowWriter[] = [];
    const parser = token.row.parser_type === 'json' ? null : PARSERS[token.row.parser_type];
    const settingsFields = this.ctx.settings.get().timestamp_fields;
    // A record without a timestamp of its own is stamped with exactly its ingestion time.
    const stampMs = Math.max(Number(nowNs() / 1_000_000n), this.lastStampMs);
    this.lastStampMs = stampMs;
    const ingestTs = formatNs(BigInt(stampMs) * 1_000_000n);
    const fid = token.fractalId;
    // The parts of a row that are the same for every record of this request.
    const rowStart = `{"fractal_id":"${fid}","timestamp":"`;
    const rowMiddle = `","ingest_timestamp":"${ingestTs}","log_id":"`;
    // One batch per month the records' timestamps fall in (the queue inserts a month at a time).
    const writers = new Map<string, RowWriter>();
    const rowBytesPerChar = this.rowBytesPerTextByte.reduce((m, r) => Math.max(m, r), 0);
    let rejected = 0;
    /** The record text the rows were made from (records parsed from a body, not given as fields). */
    let textBytes = 0;

    for (let i = 0; i < records.length; i++) {
      const rec = records[i]!;
      try {
        let obj: Record<string, unknown>;
        let members = -1;
        if (rec.fields) obj = rec.fields;
        else if (parser && rec.text.charCodeAt(0) !== 0x7b) obj = parser(rec.text);
        else {
          members = plainObjectMembers(rec.text);
          obj = members >= 0 ? parsePlainJsonRecord(rec.text) : parseJsonRecord(rec.text);
        }
        const fields = token.normalize(flatten(obj), i);
        if (SURROGATE_ESCAPE.test(rec.text) && !wellFormed(fields)) {
          // The engine refuses the whole insert for one such value: it would never be stored,
          // and would hold back every log inserted with it.
          throw new ParseError('it holds an unpaired UTF-16 surrogate escape (\\uD800-\\uDFFF), which is not Unicode text');
        }
        // Unchanged by flatten and normalize, and no key given twice: the engine reads the fields
        // from `raw` itself; otherwise they go along as JSON text.
        const verbatim = members >= 0 && fields === obj && keyCount(obj) === members;
        const ts = resolveTimestamp(fields, token.timestampFields, settingsFields);
        const logId = logIds?.[i] ?? randomUUID();
        const time = ts.field === null ? ingestTs : formatNs(ts.ns);
        const month = time.slice(0, 7);
        let writer = writers.get(month);
        if (!writer) writers.set(month, (writer = new RowWriter(month, records, i, writers.size > 0 || chunks.length > 0, rowBytesPerChar)));
        writer.add(`${rowStart}${time}${rowMiddle}${logId}","raw":${JSON.stringify(rec.text)}${verbatim ? '' : `,"fields":${JSON.stringify(JSON.stringify(fields))}`}}\n`);
        if (writer.count === MAX_BATCH_LOGS) {
          chunks.push(writer);
          writers.delete(month);
        }
        outcomes[i] = { ok: true, logId };
        if (!rec.fields) textBytes += rec.text.length + 1;
      } catch (err) {
        if (!(err instanceof ParseError)) throw err;
        rejected++;
        const error = `record ${i + 1}: ${err.message}`;
        if (errors.length < MAX_REPORTED_ERRORS) errors.push(error);
        outcomes[i] = { ok: false, error: err.message };
      }
    }
    for (const w of writers.values()) chunks.push(w);
    if (rejected) metrics.ingestRefused.inc({ reason: 'invalid_record' }, rejected);
    const accepted = records.length - rejected;
    if (accepted === 0) return { accepted, rejected, errors, outcomes, durable: false };

    const batches: QueuedBatch[] = chunks.map((c) => ({
      id: randomUUID(),
      fractalId: fid,
      count: c.count,
      table: 'logs_ingest',
      month: c.month,
      rows: c.finish(),
    }));
    const bytes = batches.reduce((n, b) => n + batchBytes(b.rows), 0);
    if (textBytes > 0) {
      if (this.rowBytesPerTextByte.push(bytes / textBytes) > RATIOS_KEPT) this.rowBytesPerTextByte.shift();
    }
    if (!this.queue.reserve(accepted, bytes)) throw this.queueFull(accepted, bytes);
    for (const b of batches) this.unsettled.set(b.id, stampMs);
    try {
      await Promise.all(batches.map((b) => this.spool.append(b)));
    } catch (err) {
      this.queue.release(accepted, bytes);
      for (const b of batches) this.unsettled.delete(b.id);
      this.pressure.set('spool', true, `spool write failed: ${(err as Error).message}`);
      metrics.ingestRefused.inc({ reason: 'spool_error' }, accepted);
      this.ctx.log.error({ err: (err as Error).message }, 'spool write failed; refusing ingest');
      throw new HttpError(503, 'The appliance could not write its ingest spool (is the disk full?); nothing from this request was stored.', { 'retry-after': '5' });
    }
    this.pressure.set('spool', false);
    for (const b of batches) this.queue.push(b);
    metrics.ingestAccepted.inc(accepted);
    return { accepted, rejected, errors, outcomes, durable: true };
  }

  /**
   * Writes records into a fractal for the alert engine's fractal action: JSON records without a
   * token (no normalizer, no rate limit), their time from `timestampFields` first. `logIds` fix
   * each record's id, so a delivery retried after a crash can leave out what was already stored.
   */
  async write(fractalId: string, records: IncomingRecord[], opts: { timestampFields: string[]; logIds?: string[] }): Promise<AcceptResult> {
    const row = { parser_type: 'json' } as IngestTokenRow;
    return this.accept({ row, fractalId, normalize: (fields) => fields, timestampFields: opts.timestampFields }, records, opts.logIds);
  }

  /**
   * Every log whose ingest_timestamp is before this instant is in storage, where queries see it,
   * and every log stamped later gets this instant or after: a window of ingest time that ends here
   * is complete and stays so (the alert engine's cursor never passes a log still on its way).
   */
  settledBefore(): Date {
    let min = Math.max(Date.now(), this.lastStampMs);
    for (const ms of this.unsettled.values()) if (ms < min) min = ms;
    return new Date(min);
  }

  /**
   * The instant just after every log accepted so far was stamped: once settledBefore() reaches it,
   * all of them are in storage. (Waiting for settledBefore() to reach Date.now() left out a batch
   * stamped in that same millisecond.)
   */
  acceptedThrough(): Date {
    return new Date(Math.max(Date.now(), this.lastStampMs) + 1);
  }

  /** Stops taking work, inserts what is queued (up to the time-out), and closes the spool. */
  async stop(timeoutMs = 30_000): Promise<void> {
    const drained = await this.queue.drain(timeoutMs);
    if (!drained) this.ctx.log.warn({ pending: this.queue.depth }, 'ingest queue not drained in time; the spool keeps it for the next start');
    await this.queue.stop();
    await this.spool.close();
  }
}

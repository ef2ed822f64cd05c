// POST /api/v1/ingest: a JSON array, one object, or NDJSON (sniffed from the content, not the
// header); with a kv or syslog token, one record per line. GET /api/v1/system/pressure.
import { isUtf8 } from 'node:buffer';
import type { Context } from '../context.ts';
import { HttpError, badRequest } from '../http/errors.ts';
import type { App } from '../http/app.ts';
import { splitJsonValues, splitLines } from './json-text.ts';
import { noValidLogs, type Ingest } from './pipeline.ts';
import { ingestTokenOf, type IngestDeps } from './plugin.ts';
import type { IncomingRecord } from './types.ts';

/** Content types a shipper plausibly sends text records with; the content itself is sniffed. */
const TEXT_TYPES = /^(application\/(json|x-ndjson|ndjson|jsonl|x-json-stream|x-www-form-urlencoded|octet-stream)|text\/[a-z-]+)\b/i;

function bodyText(req: { headers: Record<string, unknown>; body: unknown }): string {
  const type = String(req.headers['content-type'] ?? '');
  if (type && !TEXT_TYPES.test(type)) {
    throw badRequest(`Content type "${type.split(';')[0]}" is not accepted; send application/json or application/x-ndjson.`);
  }
  const buf = req.body as Buffer | undefined;
  if (!buf || buf.length === 0) throw badRequest('The request body is empty; send at least one log record.');
  if (!isUtf8(buf)) throw badRequest('The request body is not valid UTF-8.');
  return buf.toString('utf8');
}

/** One record per JSON value, or per non-blank line for the kv and syslog parsers. */
function splitRecords(text: string, parserType: string): IncomingRecord[] {
  return parserType === 'json' ? splitJsonValues(text) : splitLines(text);
}

export async function ingestRoutes(app: App, { pipeline }: IngestDeps) {
  app.post('/api/v1/ingest', { config: { access: { ingest: true } } }, async (req) => {
    const token = ingestTokenOf(req);
    const records = splitRecords(bodyText(req), token.row.parser_type);
    if (records.length === 0) throw badRequest('No log records found in the request body.');
    const r = await pipeline.accept(token, records);
    if (r.accepted === 0) {
      throw new HttpError(400, noValidLogs(r));
    }
    const summary = { accepted: r.accepted, rejected: r.rejected, errors: r.errors, durable: r.durable };
    // Counts at the top level too: shippers and scripts read them without unwrapping.
    return { success: true, ...summary, data: summary };
  });
}

export async function pressureRoutes(app: App, { ctx, pipeline: ingest }: { ctx: Context; pipeline: Ingest }) {
  app.get('/api/v1/system/pressure', { config: { access: { authenticated: true } } }, async (req) => {
    const { config } = ctx;
    // The fractals over quota the caller holds a role on; other tenants' ids are not theirs to see.
    const visible = ctx.roles.visibleIds(req.principal!, 'fractal');
    const overQuota = ctx.retention.blockedFractals.filter((id) => visible === 'all' || visible.has(id));
    const layers = ingest.pressure.snapshot({
      rate_limit: { limit_per_s: config.ingestRateLimit, burst: config.ingestRateBurst },
      queue: {
        slots_used: ingest.queue.depth,
        slots: ingest.queue.capacity,
        logs_queued: ingest.queue.queuedLogs,
        logs_capacity: ingest.queue.logCapacity,
        bytes_queued: ingest.queue.queuedBytes,
        bytes_capacity: ingest.queue.byteCapacity,
        rows_waiting: ingest.queue.waitingRows,
      },
      spool: { bytes: ingest.spool.bytes, unconfirmed_batches: ingest.spool.unconfirmed },
      storage: {
        last_insert_ms: ingest.lastInsertMs,
        avg_insert_ms: ingest.avgInsertMs,
        // Rows the engine refused, stored apart with `ingest_error` (docs/ingest.md): `ingest_error=*` finds them.
        rows_stored_apart: ingest.storedApart.rows,
        last_stored_apart_at: ingest.storedApart.lastAt,
      },
      disk_quota: { fractals_over_quota: overQuota },
    });
    const active = Object.entries(layers).filter(([, v]) => (v as { active: boolean }).active).map(([k]) => k);
    // The archive never refuses ingest: its lag and fault are reported beside the layers.
    return { success: true, data: { active, layers, archive: ctx.archive.pressure() } };
  });
}

// Calls of the search workspace. The query endpoints answer a flat body (query-language.md §5), not the
// usual {success, data} envelope, so /query, /query/stream and /query/validate go through api.ts's send()
// and read their answer here; the stream is read with a ReadableStream reader and parsed as server-sent
// events (EventSource cannot POST). Aborting the signal closes the connection, and the service stops the
// query. A 401 anywhere shows sign-in (send() reports it).
import { ApiError, fractalStats, get, post, send, type Id } from '../api.ts';
import { SseParser } from './sse.ts';
import type { Span } from './time.ts';

export interface ScopeParams {
  fractal_id?: string;
  prism_id?: string;
}

export interface QueryBody extends ScopeParams {
  query: string;
  start?: string;
  end?: string;
  variables?: Array<{ name: string; value: string }>;
  cursor?: string;
  /** Read the archived partitions of the range too (search in place). */
  include_archive?: boolean;
}

export interface ErrorPos {
  start: number;
  end: number;
}

/** A query the service refused or failed, in its own words, with where in the query when it says. */
export class QueryError extends ApiError {
  constructor(
    message: string,
    status: number,
    readonly errorType?: string,
    readonly errorPos?: ErrorPos,
  ) {
    super(message, status);
    this.name = 'QueryError';
  }
}

export interface QueryMeta {
  field_order: string[];
  is_aggregated: boolean;
  chart_type: string;
  chart_config: Record<string, unknown>;
  /** Present when the result includes archived logs: what of the archive the query read. */
  archive?: { files_scanned: number; bytes_scanned: number; rows_scanned: number };
  /** E.g. an archived file that could not be read and was left out. */
  warnings?: string[];
}

export interface HistogramFrame {
  histogram: Array<{ time: string; count: number }>;
  time_start: string;
  time_end: string;
  bucket_seconds: number;
}

export interface DoneFrame {
  count: number;
  has_more: boolean;
  next_cursor: string;
  execution_ms: number;
  limit_hit: string;
  histogram_pending?: boolean;
  /** /query's warning when it truncated (`limit_hit: "truncated"`). */
  error?: string;
}

export interface StreamHandlers {
  /** The HTTP response arrived (headers): the query was accepted and rows will follow. */
  response?(): void;
  /** The first bytes of the first `rows` frame arrived (before the frame is complete and parsed). */
  rowBytes?(): void;
  meta(m: QueryMeta): void;
  rows(rows: Array<Record<string, unknown>>): void;
  histogram(h: HistogramFrame): void;
  done(d: DoneFrame): void;
}

async function readFailure(res: Response): Promise<QueryError> {
  let body: Record<string, unknown> | null = null;
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    body = null;
  }
  const msg = typeof body?.error === 'string' && body.error ? body.error : `The service failed to answer (HTTP ${res.status}).`;
  return new QueryError(msg, res.status, body?.error_type as string | undefined, body?.error_pos as ErrorPos | undefined);
}

/** POSTs a query body; a refusal or failure throws its QueryError. */
async function postQuery(path: string, body: QueryBody, signal?: AbortSignal, accept?: string): Promise<Response> {
  const res = await send('POST', path, { body, signal, accept });
  if (!res.ok) throw await readFailure(res);
  return res;
}

/**
 * Runs a query on /query/stream and calls the handlers frame by frame. Resolves when the stream ends;
 * rejects with a QueryError (refused, failed, or an `error` frame), an ApiError when the service cannot be
 * reached, or an AbortError when cancelled.
 */
export async function streamQuery(body: QueryBody, h: StreamHandlers, signal: AbortSignal): Promise<void> {
  const res = await postQuery('/query/stream', body, signal, 'text/event-stream');
  if (!res.body) throw await readFailure(res);
  h.response?.();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  let failure: QueryError | null = null;
  const onFrame = (event: string, data: string) => {
    let v: any;
    try {
      v = JSON.parse(data);
    } catch {
      return;
    }
    switch (event) {
      case 'meta':
        h.meta(v as QueryMeta);
        break;
      case 'rows':
        if (Array.isArray(v?.rows)) h.rows(v.rows);
        break;
      case 'histogram':
        h.histogram(v as HistogramFrame);
        break;
      case 'done':
        h.done(v as DoneFrame);
        break;
      case 'error':
        failure = new QueryError(
          typeof v?.error === 'string' ? v.error : 'The query failed.',
          500,
          v?.error_type,
          v?.error_pos,
        );
        break;
    }
  };
  let tail = '';
  let sawRows = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!sawRows && (tail + value).includes('event: rows')) {
        sawRows = true;
        h.rowBytes?.();
      }
      if (!sawRows) tail = value.slice(-16);
      for (const f of parser.push(value)) onFrame(f.event, f.data);
    }
    for (const f of parser.end()) onFrame(f.event, f.data);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new QueryError('The connection to the service broke while the results were arriving.', 0);
  } finally {
    reader.releaseLock();
  }
  if (failure) throw failure;
}

/** Runs a query on /query and returns its flat body (used by live tail for the few new rows). */
export async function runQuery(body: QueryBody, signal?: AbortSignal): Promise<Record<string, any>> {
  return (await (await postQuery('/query', body, signal)).json()) as Record<string, any>;
}

export interface Validation {
  valid: boolean;
  error?: string;
  error_type?: string;
  error_pos?: ErrorPos;
}

export async function validateQuery(body: QueryBody, signal?: AbortSignal): Promise<Validation> {
  return (await (await postQuery('/query/validate', body, signal)).json()) as Validation;
}

export interface CommandRef {
  name: string;
  aliases: string[];
  signature: string;
  description: string;
  example: string;
  category?: string;
  outputs?: string;
  condition?: boolean;
}

export interface Reference {
  commands: CommandRef[];
  keywords?: string[];
  reserved_fields?: string[];
}

let referencePromise: Promise<Reference> | null = null;

/** The command reference, fetched once per page load. */
export function loadReference(): Promise<Reference> {
  referencePromise ??= get<Reference>('/query/reference').catch((err) => {
    referencePromise = null;
    throw err;
  });
  return referencePromise;
}

export interface CatalogField {
  name: string;
  type: string;
  count: number;
}

export async function loadFields(scope: ScopeParams, start: string, end: string): Promise<{ fields: CatalogField[]; reserved: string[] }> {
  const q = new URLSearchParams({ ...scope, start, end } as Record<string, string>);
  const d = await get<{ fields: CatalogField[]; reserved?: string[] }>(`/query/fields?${q}`);
  return { fields: d?.fields ?? [], reserved: d?.reserved ?? [] };
}

/** POST /api/v1/query/fieldstats → data (the field sidebar's top values, the editor's value completion). */
export interface FieldStats {
  field?: string;
  total: number;
  present: number;
  distinct: number;
  top: Array<{ value: string; count: number; share: number }>;
  numeric?: { min: number; max: number; avg: number };
}

export function loadFieldStats(body: QueryBody & { field: string; limit?: number }, signal?: AbortSignal): Promise<FieldStats> {
  return post<FieldStats>('/query/fieldstats', body, { signal });
}

/** The union of the stats of these fractals (a fractal alone, or a prism's members); null when they hold nothing. */
export async function loadSpan(fractalIds: Id[]): Promise<(Span & { count: number }) | null> {
  const all = await Promise.allSettled(fractalIds.map(fractalStats));
  let oldest: Date | null = null;
  let newest: Date | null = null;
  let count = 0;
  let firstError: unknown = null;
  for (const r of all) {
    if (r.status === 'rejected') {
      firstError ??= r.reason;
      continue;
    }
    const s = r.value;
    count += s.log_count ?? 0;
    const o = s.oldest ? new Date(s.oldest) : null;
    const n = s.newest ? new Date(s.newest) : null;
    if (o && !Number.isNaN(o.getTime()) && (!oldest || o < oldest)) oldest = o;
    if (n && !Number.isNaN(n.getTime()) && (!newest || n > newest)) newest = n;
  }
  if (firstError && count === 0) throw firstError instanceof Error ? firstError : new ApiError(String(firstError), 0);
  return oldest && newest && count > 0 ? { oldest, newest, count } : null;
}

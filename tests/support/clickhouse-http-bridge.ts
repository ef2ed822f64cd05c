// ClickHouse HTTP bridge (test support).
//
// A loopback `node:http` server that speaks enough of ClickHouse's HTTP interface for the real
// `@clickhouse/client` (remote transport, `createClient({ url, username, password, database })`)
// to work unchanged, executing every statement on the embedded engine (chDB) bound to `dataDir`.
// It exists because a real ClickHouse server cannot be installed in this environment, and the
// remote transport (SVC_CLICKHOUSE_URL) still needs end-to-end tests.
//
//   const bridge = await startClickHouseHttpBridge({ dataDir, user: 'u', password: 'p' });
//   const client = createClient({ url: bridge.url, username: 'u', password: 'p' });
//   ...
//   bridge.queries   // every SQL statement received (insert data not included), in order
//   await bridge.close();
//
// SUPPORTED
// - GET /ping and GET / (no query) -> "Ok.\n" (no authentication, as on a real server).
// - Queries: `query` URL parameter (GET or POST) or the POST body. With both, the statement is
//   `query + "\n" + body`, which is how `insert()` / `exec({ values })` send INSERT data.
// - Output formats: whatever the engine supports. The FORMAT clause wins; otherwise
//   `default_format` / the `X-ClickHouse-Format` request header; otherwise TabSeparated.
//   Binary outputs (RowBinary, Parquet, Arrow...) are passed through byte for byte.
// - Responses are computed completely first (like `wait_end_of_query=1`), then written in 64 KiB
//   chunks, so `ResultSet.stream()` really receives a chunked stream; engine errors always arrive
//   as a proper error response, never mid-stream.
// - INSERT: the body goes to the engine as raw bytes (text and binary input formats alike), and
//   `X-ClickHouse-Summary` reports the engine's written_rows / written_bytes. An empty body is an
//   INSERT of zero rows.
// - Query parameters: `param_<name>` URL parameters, and `multipart/form-data` bodies (the
//   client's `use_multipart_params`) with `query` and `param_*` parts. Values are handed to the
//   engine's server-side `{name:Type}` binding exactly as the client encoded them (they are never
//   spliced into the SQL text).
// - `database` URL parameter / `X-ClickHouse-Database` header: default database of the request.
// - ClickHouse settings as URL parameters: applied with SET for the request only. After every
//   request the connection is put back the way it started: the settings the request changed (its
//   URL settings, or the names in a `SET a = 1, b = 2` statement) go back to their startup values
//   and the current database back to `default`, so nothing leaks into the next request, just as
//   on a server without HTTP sessions. Unknown settings are refused by the engine with
//   UNKNOWN_SETTING (115), as a real server would.
// - Parameters that belong to the HTTP layer rather than the engine are consumed, not SET:
//   query, query_id, database, default_format, user, password, quota_key, role, stacktrace,
//   buffer_size, wait_end_of_query, client_protocol_version, session_timeout, session_check,
//   enable_http_compression, http_zlib_compression_level, send_progress_in_http_headers,
//   http_headers_progress_interval_ms, http_response_buffer_size, http_wait_end_of_query,
//   http_native_compression_disable_checksumming_on_decompress, add_http_cors_header,
//   cancel_http_readonly_queries_on_client_close, http_write_exception_in_output_format, readonly.
// - `query_id` (URL parameter or `X-ClickHouse-Query-Id` header; generated when absent), echoed in
//   `X-ClickHouse-Query-Id`. Other response headers: `X-ClickHouse-Summary` (JSON, approximate),
//   `X-ClickHouse-Format`, `X-ClickHouse-Timezone`, `X-ClickHouse-Server-Display-Name`,
//   `Content-Type` by format.
// - Request bodies with `Content-Encoding` gzip / deflate / br (and zstd where this Node has it).
//   Compressed responses when the request has `enable_http_compression=1` and an
//   `Accept-Encoding` the bridge can produce (gzip, deflate, br, zstd where available).
// - Authentication as on a real server: `X-ClickHouse-User` / `X-ClickHouse-Key` headers, or
//   HTTP Basic, or `user` / `password` URL parameters (mixing methods is refused); no credentials
//   means user `default` with an empty password. Credentials other than the configured ones get
//   `Code: 516. DB::Exception: ... (AUTHENTICATION_FAILED)` with `X-ClickHouse-Exception-Code: 516`
//   and HTTP status 403, which is what ClickHouse's exceptionCodeToHTTPStatus maps code 516 to.
// - Errors: body `Code: N. DB::Exception: ... (NAME)`, header `X-ClickHouse-Exception-Code: N`,
//   HTTP status mapped from the code the way ClickHouse does (400 for syntax/parse errors, 403 for
//   authentication, 404 for unknown table/database/setting/format, 408 for timeouts, 500 else).
// - Like a real server: GET (and `readonly=1|2`) only runs read-only statements (READONLY, 164);
//   more than one statement in a request is refused (SYNTAX_ERROR, 62, "Multi-statements are not
//   allowed"); an empty query is a syntax error.
//
// NOT SUPPORTED (and what happens instead)
// - `session_id` (server-side sessions, temporary tables across requests): refused with
//   NOT_IMPLEMENTED (48) rather than silently running sessionless.
// - `compress=1` / `decompress=1` (ClickHouse's native LZ4 framing): refused with NOT_IMPLEMENTED.
// - External tables (multipart parts with a filename): refused with NOT_IMPLEMENTED.
// - Users, roles, grants, quotas: one user (the configured one) who can do everything; `role` and
//   `quota_key` are ignored. `readonly` is enforced by statement kind, not by the engine.
// - Progress: no `X-ClickHouse-Progress` headers and no progress rows; the summary's read_rows is
//   the engine's row count for the result (it is exact for INSERT written_rows, approximate for
//   reads: chDB reports rows of the result, not rows scanned).
// - Streaming from the engine: results are materialised in memory before the response starts, so
//   a multi-GB result needs that much memory. Errors are therefore never sent mid-stream.
// - Concurrency: requests are executed one at a time on one engine connection (per-request
//   settings and default database are connection state). HTTP requests are accepted concurrently
//   and queue; a client holding a result stream open does not block others (the result is
//   already computed).
// - Query parameters go through chDB's native binding entry point directly (the public
//   `queryBindAsync` re-escapes strings, which would corrupt values the HTTP client already
//   encoded, e.g. `['a\'b']` for an Array(String)). That relies on the installed chdb build's
//   internal addon surface (`QueryAsyncConnection` / `InsertRawAsyncConnection`); the bridge
//   checks for it at startup and fails loudly if it is missing.
// - One data directory per process (a chDB rule): do not open another chDB Session on a different
//   path in the same process while a bridge is running, nor run chDB parameterised queries of your
//   own concurrently with the bridge's.
// - Not implemented at all: HTTPS, HEAD, OPTIONS/CORS, /replicas_status (answers "Ok."), /play,
//   /dashboard, predefined HTTP handlers, `X-ClickHouse-Exception-Tag` mid-stream errors.
import http from 'node:http';
import zlib from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Session as ChdbSession } from 'chdb';

export interface ClickHouseHttpBridgeOptions {
  /** Data directory of the embedded engine (created by the engine if missing). */
  dataDir: string;
  /** The only user accepted. Default `default`. */
  user?: string;
  /** Its password. Default empty. */
  password?: string;
}

/** Value of `X-ClickHouse-Server-Display-Name`. */
const displayName = 'chdb-http-bridge';

export interface ClickHouseHttpBridge {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every SQL statement received from an authenticated client, in arrival order (INSERT data
   *  excluded). The same array is appended to for the bridge's lifetime. */
  queries: string[];
  /**
   * Holds every INSERT until the returned function is called, as a server too busy to take writes
   * would (reads still run): how a test fills the appliance's ingest queue.
   */
  holdInserts(): () => void;
  /** Stops the server (open connections are dropped), waits for the engine, closes the session. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Engine access

interface NativeResult {
  bytes?: Uint8Array;
  elapsed: number;
  rowsRead?: number;
  bytesRead?: number;
  rowsWritten?: number;
  bytesWritten?: number;
}
interface ChdbNative {
  QueryAsyncConnection(conn: unknown, sql: string, format: string, params?: Record<string, string>): Promise<NativeResult>;
  InsertRawAsyncConnection(conn: unknown, prefix: string, data: Buffer, countLines: boolean): Promise<NativeResult>;
}

const require = createRequire(import.meta.url);

function loadChdb(): { Session: typeof ChdbSession; native: ChdbNative } {
  const chdb = require('chdb') as { Session: typeof ChdbSession };
  // The addon itself is not an exported subpath; load it through the package's own loader (same
  // module instance the package uses).
  const loaderPath = path.join(path.dirname(require.resolve('chdb')), 'dist', 'loader.js');
  const native = (require(loaderPath) as { loadNative(): ChdbNative }).loadNative();
  if (typeof native.QueryAsyncConnection !== 'function' || typeof native.InsertRawAsyncConnection !== 'function') {
    throw new Error('clickhouse-http-bridge: the installed chdb addon lacks QueryAsyncConnection/InsertRawAsyncConnection');
  }
  return { Session: chdb.Session, native };
}

/** Runs tasks one at a time, in submission order. */
class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const p = this.#tail.then(task);
    this.#tail = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }
  idle(): Promise<void> {
    return this.#tail.then(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

const CODE = {
  BAD_ARGUMENTS: 36,
  NOT_IMPLEMENTED: 48,
  SYNTAX_ERROR: 62,
  UNKNOWN_SETTING: 115,
  READONLY: 164,
  AUTHENTICATION_FAILED: 516,
  STD_EXCEPTION: 1001,
} as const;

class BridgeError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
  ) {
    super(message);
  }
}

function bridgeError(name: keyof typeof CODE, message: string): BridgeError {
  return new BridgeError(CODE[name], name, message);
}

// HTTP status by ClickHouse error name, following ClickHouse's exceptionCodeToHTTPStatus.
const STATUS_BY_ERROR_NAME: Record<string, number> = {};
for (const n of ['REQUIRED_PASSWORD']) STATUS_BY_ERROR_NAME[n] = 401;
for (const n of ['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE', 'ACCESS_DENIED']) {
  STATUS_BY_ERROR_NAME[n] = 403;
}
for (const n of [
  'BAD_ARGUMENTS', 'CANNOT_COMPILE_REGEXP', 'CANNOT_PARSE_TEXT', 'CANNOT_PARSE_ESCAPE_SEQUENCE',
  'CANNOT_PARSE_QUOTED_STRING', 'CANNOT_PARSE_DATE', 'CANNOT_PARSE_DATETIME', 'CANNOT_PARSE_NUMBER',
  'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING', 'CANNOT_PARSE_IPV4', 'CANNOT_PARSE_IPV6',
  'CANNOT_PARSE_INPUT_ASSERTION_FAILED', 'CANNOT_PARSE_UUID', 'DUPLICATE_COLUMN', 'ILLEGAL_COLUMN',
  'UNKNOWN_ELEMENT_IN_AST', 'UNKNOWN_TYPE_OF_AST_NODE', 'THERE_IS_NO_COLUMN', 'TOO_DEEP_AST', 'TOO_BIG_AST',
  'UNEXPECTED_AST_STRUCTURE', 'SYNTAX_ERROR', 'INCORRECT_DATA', 'TYPE_MISMATCH', 'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
]) {
  STATUS_BY_ERROR_NAME[n] = 400;
}
for (const n of [
  'UNKNOWN_TABLE', 'UNKNOWN_FUNCTION', 'UNKNOWN_IDENTIFIER', 'UNKNOWN_TYPE', 'UNKNOWN_STORAGE', 'UNKNOWN_DATABASE',
  'UNKNOWN_SETTING', 'UNKNOWN_DIRECTION_OF_SORTING', 'UNKNOWN_AGGREGATE_FUNCTION', 'UNKNOWN_FORMAT',
  'UNKNOWN_DATABASE_ENGINE', 'UNKNOWN_TYPE_OF_QUERY', 'UNKNOWN_ROLE',
]) {
  STATUS_BY_ERROR_NAME[n] = 404;
}
Object.assign(STATUS_BY_ERROR_NAME, {
  QUERY_IS_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  SOCKET_TIMEOUT: 503,
  CANNOT_OPEN_FILE: 503,
  HTTP_LENGTH_REQUIRED: 411,
  TIMEOUT_EXCEEDED: 408,
  CANNOT_SCHEDULE_TASK: 503,
  UNSUPPORTED_MEDIA_TYPE: 415,
});

// ---------------------------------------------------------------------------------------------
// SQL scanning (just enough lexing to find statement boundaries and the leading keyword)

interface StatementInfo {
  /** Upper-cased first keyword ('' if none; '(' for a parenthesised query). */
  keyword: string;
  /** True when a second, non-empty statement follows a ';'. */
  multi: boolean;
  /** True when the text holds no token at all (only whitespace / comments / ';'). */
  empty: boolean;
}

function scanStatements(sql: string): StatementInfo {
  let keyword = '';
  let sawToken = false;
  let afterSemicolon = false;
  let insertFormatSeen = false;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') {
      i++;
      continue;
    }
    if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
      continue;
    }
    if (c === '#' && (sql[i + 1] === ' ' || sql[i + 1] === '!')) {
      while (i < n && sql[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (sql[i] === '/' && sql[i + 1] === '*') {
          depth++;
          i += 2;
        } else if (sql[i] === '*' && sql[i + 1] === '/') {
          depth--;
          i += 2;
        } else i++;
      }
      continue;
    }
    if (afterSemicolon) {
      if (c === ';') {
        i++;
        continue;
      }
      return { keyword, multi: true, empty: false };
    }
    if (c === ';') {
      afterSemicolon = true;
      i++;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < n) {
        if (sql[i] === '\\') {
          i += 2;
          continue;
        }
        if (sql[i] === c) {
          if (sql[i + 1] === c) {
            i += 2;
            continue;
          }
          break;
        }
        i++;
      }
      i++;
      sawToken = true;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_]/.test(sql[j]!)) j++;
      const word = sql.slice(i, j).toUpperCase();
      if (!sawToken) keyword = word;
      sawToken = true;
      i = j;
      // After `INSERT ... FORMAT <name>` comes data, not SQL.
      if (keyword === 'INSERT' && word === 'FORMAT') insertFormatSeen = true;
      else if (insertFormatSeen) return { keyword, multi: false, empty: false };
      continue;
    }
    if (!sawToken && c === '(') keyword = '(';
    sawToken = true;
    i++;
  }
  return { keyword, multi: false, empty: !sawToken };
}

/**
 * Names of the settings a `SET a = 1, b = 'x'` statement changes (not `SET ROLE`, `SET DEFAULT
 * ROLE`, `SET TRANSACTION ...`, which change no setting).
 */
function setStatementNames(sql: string): string[] {
  const m = /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*SET\b/i.exec(sql);
  if (!m) return [];
  const rest = sql.slice(m[0].length).replace(/[\s;]+$/, '');
  if (/^\s*(ROLE|DEFAULT\s+ROLE|TRANSACTION)\b/i.test(rest)) return [];
  const items: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!;
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < rest.length; i++) {
        if (rest[i] === '\\') i++;
        else if (rest[i] === c) break;
      }
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      items.push(rest.slice(from, i));
      from = i + 1;
    }
  }
  items.push(rest.slice(from));
  const names: string[] = [];
  for (const item of items) {
    const name = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:=|$)/.exec(item)?.[1];
    if (name !== undefined && !name.startsWith('param_')) names.push(name);
  }
  return names;
}

const READ_ONLY_KEYWORDS = new Set(['SELECT', 'WITH', 'SHOW', 'DESC', 'DESCRIBE', 'EXISTS', 'EXPLAIN', 'SET', 'USE', '(']);

/** Output format named by a trailing FORMAT clause, if any. */
function trailingFormat(sql: string): string | undefined {
  const m = /\bFORMAT\s+([A-Za-z][A-Za-z0-9_]*)\s*;*\s*$/i.exec(sql);
  return m?.[1];
}

function contentTypeFor(format: string): string {
  const f = format.toLowerCase();
  if (/^(json|ndjson|jsonl)/.test(f)) {
    if (/eachrow|lines|^ndjson|^jsonl/.test(f)) return 'application/x-ndjson; charset=UTF-8';
    return 'application/json; charset=UTF-8';
  }
  if (f.startsWith('tabseparated') || f.startsWith('tsv')) return 'text/tab-separated-values; charset=UTF-8';
  if (f.startsWith('csv')) return `text/csv; charset=UTF-8; header=${f.includes('withnames') ? 'present' : 'absent'}`;
  if (/^(rowbinary|native|parquet|arrow|orc|avro|protobuf|capnproto|msgpack|npy|bson)/.test(f)) return 'application/octet-stream';
  return 'text/plain; charset=UTF-8';
}

function quoteString(v: string): string {
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function quoteIdentifier(v: string): string {
  return `\`${v.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

/** URL / form parameters that the HTTP layer consumes instead of passing them on as settings. */
const HTTP_LAYER_PARAMS = new Set([
  'query', 'query_id', 'database', 'default_format', 'user', 'password', 'quota_key', 'role', 'stacktrace',
  'buffer_size', 'wait_end_of_query', 'client_protocol_version', 'session_id', 'session_timeout', 'session_check',
  'compress', 'decompress', 'readonly', 'enable_http_compression', 'http_zlib_compression_level',
  'send_progress_in_http_headers', 'http_headers_progress_interval_ms', 'http_response_buffer_size',
  'http_wait_end_of_query', 'http_native_compression_disable_checksumming_on_decompress', 'add_http_cors_header',
  'cancel_http_readonly_queries_on_client_close', 'http_write_exception_in_output_format',
]);

const hasZstd = typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress === 'function';

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function decodeBody(body: Buffer, encodingHeader: string | undefined): Buffer {
  const enc = (encodingHeader ?? '').trim().toLowerCase();
  if (enc === '' || enc === 'identity' || body.length === 0) return body;
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return zlib.gunzipSync(body);
    if (enc === 'deflate') {
      try {
        return zlib.inflateSync(body);
      } catch {
        return zlib.inflateRawSync(body);
      }
    }
    if (enc === 'br') return zlib.brotliDecompressSync(body);
    if (enc === 'zstd' && hasZstd) {
      return (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer }).zstdDecompressSync(body);
    }
  } catch (e) {
    throw bridgeError('BAD_ARGUMENTS', `Cannot decompress the request body (Content-Encoding: ${enc}): ${(e as Error).message}`);
  }
  throw bridgeError('NOT_IMPLEMENTED', `Unknown HTTP Content-Encoding: ${enc}`);
}

/** Picks the response codec from Accept-Encoding, in the client's order of preference. */
function pickResponseCodec(acceptEncoding: string | undefined): 'gzip' | 'deflate' | 'br' | 'zstd' | undefined {
  const offered = (acceptEncoding ?? '')
    .split(',')
    .map((s) => s.trim().split(';')[0]!.toLowerCase())
    .filter(Boolean);
  for (const codec of offered) {
    if (codec === 'gzip' || codec === 'deflate' || codec === 'br') return codec;
    if (codec === 'zstd' && hasZstd) return codec;
  }
  return undefined;
}

function createCompressor(codec: 'gzip' | 'deflate' | 'br' | 'zstd', level: number | undefined) {
  const opts = level !== undefined && level >= 0 && level <= 9 ? { level } : undefined;
  if (codec === 'gzip') return zlib.createGzip(opts);
  if (codec === 'deflate') return zlib.createDeflate(opts);
  if (codec === 'br') return zlib.createBrotliCompress();
  return (zlib as unknown as { createZstdCompress(): NodeJS.ReadWriteStream }).createZstdCompress();
}

/** Parses a multipart/form-data body into its named non-file fields. */
function parseMultipart(body: Buffer, contentType: string): Map<string, string> {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!m) throw bridgeError('BAD_ARGUMENTS', 'multipart/form-data request without a boundary');
  const boundary = `--${m[1] ?? m[2]}`;
  const text = body.toString('utf8');
  const fields = new Map<string, string>();
  const parts = text.split(boundary);
  // parts[0] is the preamble; the last one starts with "--" (the closing delimiter).
  for (const raw of parts.slice(1)) {
    if (raw.startsWith('--')) break;
    const part = raw.startsWith('\r\n') ? raw.slice(2) : raw;
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd < 0) continue;
    const headers = part.slice(0, headerEnd);
    let value = part.slice(headerEnd + 4);
    if (value.endsWith('\r\n')) value = value.slice(0, -2);
    const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) continue;
    if (/\bfilename=/i.test(disposition)) {
      throw bridgeError('NOT_IMPLEMENTED', `External tables (multipart part "${name}" with a filename) are not supported by the bridge`);
    }
    fields.set(name, value);
  }
  return fields;
}

function headerValue(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

// ---------------------------------------------------------------------------------------------

interface ExecResult {
  bytes: Buffer;
  format: string;
  summary: Record<string, string>;
}

export async function startClickHouseHttpBridge(opts: ClickHouseHttpBridgeOptions): Promise<ClickHouseHttpBridge> {
  const { Session, native } = loadChdb();
  const session = new Session(opts.dataDir);
  try {
    return await serve(session, native, opts);
  } catch (e) {
    session.close();
    throw e;
  }
}

async function serve(session: ChdbSession, native: ChdbNative, opts: ClickHouseHttpBridgeOptions): Promise<ClickHouseHttpBridge> {
  const user = opts.user ?? 'default';
  const password = opts.password ?? '';
  const conn = () => {
    if (!session.connection) throw bridgeError('STD_EXCEPTION', 'The bridge is closed');
    return session.connection;
  };
  const queue = new SerialQueue();
  const queries: string[] = [];
  let closing = false;
  /** Awaited by every INSERT (holdInserts replaces it with a promise that waits). */
  let insertGate: Promise<void> = Promise.resolve();
  let openGate = () => {};

  // chDB quirk (26.7): when a query fails after its output has started (TOO_MANY_ROWS_OR_BYTES,
  // TIMEOUT_EXCEEDED mid-result, ...), the partial output is not discarded but handed out as the
  // beginning of the NEXT result on that connection. Every engine call goes through `engine()`,
  // which after a failure runs one throwaway query to absorb that leftover.
  async function engine<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      await native.QueryAsyncConnection(conn(), 'SELECT 1', 'TabSeparated').catch(() => undefined);
      throw e;
    }
  }

  async function run(sql: string, format = 'TabSeparated'): Promise<Buffer> {
    const r = await engine(() => native.QueryAsyncConnection(conn(), sql, format));
    return Buffer.from(r.bytes ?? new Uint8Array(0));
  }

  // Startup facts: version, timezone, error names, and the connection state to restore to.
  const [version, timezone] = (await run('SELECT version(), timezone()')).toString('utf8').trim().split('\t') as [string, string];
  const errorNames = new Map<number, string>();
  for (const line of (await run("SELECT number, errorCodeToName(number) AS n FROM numbers(5000) WHERE n != ''")).toString('utf8').split('\n')) {
    const [num, name] = line.split('\t');
    if (num && name) errorNames.set(Number(num), name);
  }
  const baselineDatabase = (await run('SELECT currentDatabase()')).toString('utf8').trim();
  // chDB starts with a few settings that differ from ClickHouse's defaults; resets go back to
  // those values rather than to DEFAULT.
  const baselineSettings = new Map<string, string>();
  for (const line of (await run('SELECT name, value FROM system.settings WHERE changed', 'TSVRaw')).toString('utf8').split('\n')) {
    const tab = line.indexOf('\t');
    if (tab > 0) baselineSettings.set(line.slice(0, tab), line.slice(tab + 1));
  }

  /** Puts back the settings / current database a request may have changed. */
  async function restoreState(settingNames: Iterable<string>, database: boolean): Promise<void> {
    const assignments = [...new Set(settingNames)].map((name) => {
      const base = baselineSettings.get(name);
      return base === undefined ? `${name} = DEFAULT` : `${name} = ${quoteString(base)}`;
    });
    if (assignments.length > 0) await run(`SET ${assignments.join(', ')}`);
    if (database) await run(`USE ${quoteIdentifier(baselineDatabase)}`);
  }

  function errorParts(e: unknown): { code: number; name: string; text: string } {
    if (e instanceof BridgeError) {
      return { code: e.code, name: e.codeName, text: `Code: ${e.code}. DB::Exception: ${e.message}. (${e.codeName}) (version ${version})` };
    }
    const message = e instanceof Error ? e.message : String(e);
    const m = /Code: (\d+)\./.exec(message);
    if (m) {
      const code = Number(m[1]);
      return { code, name: errorNames.get(code) ?? '', text: message.trim() };
    }
    const code = CODE.STD_EXCEPTION;
    return { code, name: 'STD_EXCEPTION', text: `Code: ${code}. DB::Exception: ${message}. (STD_EXCEPTION) (version ${version})` };
  }

  function sendError(res: http.ServerResponse, queryId: string | undefined, e: unknown): void {
    const { code, name, text } = errorParts(e);
    const status = STATUS_BY_ERROR_NAME[name] ?? 500;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(status, {
      'Content-Type': 'text/plain; charset=UTF-8',
      'X-ClickHouse-Exception-Code': String(code),
      'X-ClickHouse-Server-Display-Name': displayName,
      ...(queryId ? { 'X-ClickHouse-Query-Id': queryId } : {}),
    });
    res.end(`${text}\n`);
  }

  function authenticate(req: http.IncomingMessage, params: Map<string, string>): void {
    const hUser = headerValue(req, 'x-clickhouse-user');
    const hKey = headerValue(req, 'x-clickhouse-key');
    const authorization = headerValue(req, 'authorization');
    const pUser = params.get('user');
    const pPassword = params.get('password');
    let u: string;
    let p: string;
    if (hUser !== undefined || hKey !== undefined) {
      if (authorization !== undefined || pUser !== undefined || pPassword !== undefined) {
        throw bridgeError('AUTHENTICATION_FAILED', 'Invalid authentication: it is not allowed to use X-ClickHouse HTTP headers and other authentication methods simultaneously');
      }
      u = hUser ?? 'default';
      p = hKey ?? '';
    } else if (authorization !== undefined) {
      if (pUser !== undefined || pPassword !== undefined) {
        throw bridgeError('AUTHENTICATION_FAILED', 'Invalid authentication: it is not allowed to use Authorization HTTP header and authentication via parameters simultaneously');
      }
      const m = /^(\S+)\s+(.*)$/.exec(authorization.trim());
      if (!m || m[1]!.toLowerCase() !== 'basic') {
        throw bridgeError('AUTHENTICATION_FAILED', `Invalid authentication: '${m?.[1] ?? authorization}' HTTP Authorization scheme is not supported`);
      }
      const decoded = Buffer.from(m[2]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      u = colon < 0 ? decoded : decoded.slice(0, colon);
      p = colon < 0 ? '' : decoded.slice(colon + 1);
    } else {
      u = pUser ?? 'default';
      p = pPassword ?? '';
    }
    if (u !== user || p !== password) {
      throw bridgeError('AUTHENTICATION_FAILED', `${u}: Authentication failed: password is incorrect, or there is no user with such name`);
    }
  }

  /** Runs one request's statement with its database and settings; restores state afterwards. */
  async function execute(req: {
    sql: string;
    data: Buffer | undefined;
    keyword: string;
    database: string | undefined;
    settings: [string, string][];
    /** Settings a SET statement in the request changes. */
    setStatementNames: string[];
    params: Record<string, string>;
    defaultFormat: string;
  }): Promise<ExecResult> {
    const start = process.hrtime.bigint();
    try {
      if (req.database !== undefined && req.database !== '') await run(`USE ${quoteIdentifier(req.database)}`);
      if (req.settings.length > 0) {
        await run(`SET ${req.settings.map(([k, v]) => `${k} = ${quoteString(v)}`).join(', ')}`);
      }
      const hasParams = Object.keys(req.params).length > 0;
      const format = req.keyword === 'INSERT' ? req.defaultFormat : (trailingFormat(req.sql) ?? req.defaultFormat);
      if (req.keyword === 'INSERT' && !hasParams) {
        // Raw path: data stays bytes (binary formats work) and the engine reports rows written.
        const r = await engine(() => native.InsertRawAsyncConnection(conn(), req.sql, req.data ?? Buffer.alloc(0), false));
        const elapsed = String(process.hrtime.bigint() - start);
        const rows = String(r.rowsWritten ?? 0);
        const bytes = String(r.bytesWritten ?? 0);
        return {
          bytes: Buffer.alloc(0),
          format,
          summary: {
            read_rows: rows, read_bytes: bytes, written_rows: rows, written_bytes: bytes,
            total_rows_to_read: '0', result_rows: rows, result_bytes: bytes, elapsed_ns: elapsed,
          },
        };
      }
      const sql = req.data !== undefined ? `${req.sql}\n${req.data.toString('utf8')}` : req.sql;
      const r = await engine(() =>
        hasParams
          ? native.QueryAsyncConnection(conn(), sql, req.defaultFormat, req.params)
          : native.QueryAsyncConnection(conn(), sql, req.defaultFormat),
      );
      const rows = String(r.rowsRead ?? 0);
      const bytes = String(r.bytesRead ?? 0);
      return {
        bytes: Buffer.from(r.bytes ?? new Uint8Array(0)),
        format,
        summary: {
          read_rows: rows, read_bytes: bytes, written_rows: '0', written_bytes: '0',
          total_rows_to_read: rows, result_rows: rows, result_bytes: bytes,
          elapsed_ns: String(process.hrtime.bigint() - start),
        },
      };
    } finally {
      const names = [...req.settings.map(([k]) => k), ...req.setStatementNames];
      const database = (req.database !== undefined && req.database !== '') || req.keyword === 'USE';
      try {
        await restoreState(names, database);
      } catch {
        // Some name was never applied (an unknown setting the engine refused): reset one by one.
        for (const name of names) await restoreState([name], false).catch(() => undefined);
        if (database) {
          await restoreState([], true).catch((e: unknown) => {
            console.error('clickhouse-http-bridge: failed to restore the current database:', e);
          });
        }
      }
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let queryId: string | undefined;
    try {
      const url = new URL(req.url ?? '/', 'http://bridge');
      const method = req.method ?? 'GET';
      if (url.pathname === '/ping' || url.pathname === '/replicas_status') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' });
        res.end('Ok.\n');
        return;
      }
      if (url.pathname !== '/') {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=UTF-8' });
        res.end(`There is no handle ${url.pathname}\n\nUse / or /ping for health checks.\n`);
        return;
      }
      if (method !== 'GET' && method !== 'POST') {
        res.writeHead(405, { 'Content-Type': 'text/plain; charset=UTF-8', Allow: 'GET, POST' });
        res.end(`Method ${method} is not supported by the bridge\n`);
        return;
      }

      const params = new Map<string, string>(url.searchParams);
      let body = decodeBody(await readBody(req), headerValue(req, 'content-encoding'));
      const contentType = headerValue(req, 'content-type') ?? '';
      if (/^multipart\/form-data/i.test(contentType)) {
        for (const [k, v] of parseMultipart(body, contentType)) params.set(k, v);
        body = Buffer.alloc(0);
      }
      queryId = params.get('query_id') || headerValue(req, 'x-clickhouse-query-id') || randomUUID();

      if (method === 'GET' && !params.has('query')) {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' });
        res.end('Ok.\n');
        return;
      }
      authenticate(req, params);

      let sql: string;
      let data: Buffer | undefined;
      if (params.get('query')) {
        sql = params.get('query')!;
        data = body.length > 0 ? body : undefined;
      } else {
        sql = body.toString('utf8');
      }
      queries.push(sql);

      if (params.has('session_id')) {
        throw bridgeError('NOT_IMPLEMENTED', 'HTTP sessions (session_id) are not supported by the bridge');
      }
      if (params.get('compress') === '1' || params.get('decompress') === '1') {
        throw bridgeError('NOT_IMPLEMENTED', 'ClickHouse native compression (compress/decompress=1) is not supported by the bridge');
      }
      const info = scanStatements(sql);
      const keyword = info.keyword;
      if (info.empty) throw bridgeError('SYNTAX_ERROR', 'Empty query');
      if (info.multi) {
        throw bridgeError('SYNTAX_ERROR', 'Syntax error (Multi-statements are not allowed): only one statement per request');
      }
      const readonly = method === 'GET' || ['1', '2'].includes(params.get('readonly') ?? '');
      if (readonly && !READ_ONLY_KEYWORDS.has(keyword)) {
        throw bridgeError(
          'READONLY',
          method === 'GET'
            ? 'Cannot execute query in readonly mode. For queries over HTTP, method GET implies readonly. You should use method POST for modifying queries'
            : 'Cannot execute query in readonly mode',
        );
      }

      const setNames = keyword === 'SET' ? setStatementNames(sql) : [];
      if (setNames.includes('readonly')) {
        // It could not be reset afterwards, and would lock the shared connection.
        throw bridgeError('NOT_IMPLEMENTED', 'SET readonly is not supported by the bridge');
      }
      const settings: [string, string][] = [];
      const bound: Record<string, string> = {};
      for (const [k, v] of params) {
        if (k.startsWith('param_')) {
          bound[k.slice('param_'.length)] = v;
          continue;
        }
        if (HTTP_LAYER_PARAMS.has(k)) continue;
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) {
          throw new BridgeError(CODE.UNKNOWN_SETTING, 'UNKNOWN_SETTING', `Unknown setting '${k}'`);
        }
        settings.push([k, v]);
      }
      const database = params.get('database') ?? headerValue(req, 'x-clickhouse-database');
      const defaultFormat = params.get('default_format') || headerValue(req, 'x-clickhouse-format') || 'TabSeparated';

      if (closing) throw bridgeError('STD_EXCEPTION', 'The bridge is shutting down');
      if (keyword === 'INSERT') await insertGate;
      const result = await queue.run(() =>
        execute({ sql, data, keyword, database, settings, setStatementNames: setNames, params: bound, defaultFormat }),
      );

      const codec = ['1', 'true'].includes(params.get('enable_http_compression') ?? '')
        ? pickResponseCodec(headerValue(req, 'accept-encoding'))
        : undefined;
      const levelParam = params.get('http_zlib_compression_level');
      res.writeHead(200, {
        'Content-Type': contentTypeFor(result.format),
        'X-ClickHouse-Format': result.format,
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Server-Display-Name': displayName,
        'X-ClickHouse-Timezone': timezone,
        'X-ClickHouse-Summary': JSON.stringify(result.summary),
        ...(codec ? { 'Content-Encoding': codec } : {}),
      });
      const chunkSize = 64 * 1024;
      const bytes = result.bytes;
      const chunks = (function* () {
        for (let off = 0; off < bytes.length; off += chunkSize) yield bytes.subarray(off, off + chunkSize);
      })();
      if (codec) {
        await pipeline(Readable.from(chunks), createCompressor(codec, levelParam ? Number(levelParam) : 3), res);
      } else {
        await pipeline(Readable.from(chunks), res);
      }
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendError(res, queryId, e);
    }
  }

  const server = http.createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('clickhouse-http-bridge: no TCP address');

  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${address.port}`,
    queries,
    holdInserts() {
      let open!: () => void;
      insertGate = new Promise<void>((r) => (open = r));
      openGate = () => {
        insertGate = Promise.resolve();
        open();
      };
      return openGate;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        openGate();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await stopped;
        await queue.idle();
        session.close();
      })();
      return closed;
    },
  };
}

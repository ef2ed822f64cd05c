// OTLP/HTTP logs: decoding ExportLogsServiceRequest (protobuf or OTLP JSON) into IncomingRecords,
// and encoding the responses (ExportLogsServiceResponse, google.rpc.Status).
//
// Both wire formats are first brought to one canonical form (OTLP JSON: camelCase keys, int64 as
// decimal strings, trace/span ids as lowercase hex, bytes as base64). Each log record's canonical
// form is its `raw` text; its stored fields are mapped from the same form:
//   Body → message, SeverityText → severity_text, SeverityNumber → severity_number,
//   TraceId/SpanId → trace_id/span_id (hex), Resource.Attributes → resource.<key>,
//   Scope.Name/Version → scope.name/scope.version, Scope.Attributes → scope.<key>,
//   record Attributes → their own names, TimeUnixNano (else ObservedTimeUnixNano) → timestamp
//   (decimal nanoseconds), EventName → event_name. Nested kvlists become dotted names.
import protobuf from 'protobufjs';
import { BigNumberText, exactJsonText } from '../../shared/exact-json.ts';
import type { IncomingRecord } from '../types.ts';
import { ExportLogsServiceRequest, ExportLogsServiceResponse, RpcStatus } from './schema.ts';

export type OtlpFormat = 'protobuf' | 'json';

/** The request body is not a readable ExportLogsServiceRequest; the message is a sentence. */
export class OtlpPayloadError extends Error {}

// ---------------------------------------------------------------------------------------------
// Canonical (OTLP JSON) shapes

export type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number | 'NaN' | 'Infinity' | '-Infinity' }
  | { bytesValue: string }
  | { arrayValue: { values: AnyValue[] } }
  | { kvlistValue: { values: KeyValue[] } }
  | Record<string, never>;

export interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface LogRecord {
  timeUnixNano?: string;
  observedTimeUnixNano?: string;
  severityNumber?: number;
  severityText?: string;
  body?: AnyValue;
  attributes?: KeyValue[];
  droppedAttributesCount?: number;
  flags?: number;
  traceId?: string;
  spanId?: string;
  eventName?: string;
}

export interface Scope {
  name?: string;
  version?: string;
  attributes?: KeyValue[];
}

export interface ScopeLogs {
  scope: Scope;
  logRecords: LogRecord[];
}

export interface ResourceLogs {
  resource: { attributes: KeyValue[] };
  scopeLogs: ScopeLogs[];
}

export interface LogsRequest {
  resourceLogs: ResourceLogs[];
}

// ---------------------------------------------------------------------------------------------
// Wire → canonical

const MAX_DEPTH = 64;

/** Decodes a protobuf ExportLogsServiceRequest. */
export function decodeProtobuf(body: Uint8Array): LogsRequest {
  let obj: Record<string, unknown>;
  try {
    const reader = protobuf.Reader.create(body);
    const msg = ExportLogsServiceRequest.decode(reader);
    obj = ExportLogsServiceRequest.toObject(msg, { longs: String });
    // Bytes that parse only as unknown fields are not a logs export (e.g. a JSON text sent as protobuf).
    if (body.length > 0 && !Array.isArray(obj.resource_logs)) {
      throw new OtlpPayloadError('The request body is not a protobuf ExportLogsServiceRequest: it holds no resource_logs.');
    }
  } catch (err) {
    if (err instanceof OtlpPayloadError) throw err;
    throw new OtlpPayloadError(`The request body is not a valid protobuf ExportLogsServiceRequest (${(err as Error).message}).`);
  }
  return canonicalRequest(obj);
}

/** Parses an OTLP JSON ExportLogsServiceRequest; int64 numbers beyond 2^53 keep every digit. */
export function decodeJson(body: Uint8Array): LogsRequest {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  let obj: unknown;
  try {
    obj = JSON.parse(quoteUnsafeIntegers(text));
  } catch (err) {
    throw new OtlpPayloadError(`The request body is not valid JSON (${(err as Error).message}).`);
  }
  if (!isObject(obj)) throw new OtlpPayloadError('The request body must be a JSON object with resourceLogs.');
  return canonicalRequest(obj);
}

export function decodeRequest(body: Uint8Array, format: OtlpFormat): LogsRequest {
  return format === 'protobuf' ? decodeProtobuf(body) : decodeJson(body);
}

/**
 * JSON.parse turns integer literals past 2^53 into rounded doubles. Quote those literals first, so
 * that an intValue or timeUnixNano sent as a bare number keeps its exact digits (both are read as
 * decimal strings). Strings are matched whole, so digits inside them are never touched.
 */
export function quoteUnsafeIntegers(text: string): string {
  if (!/[^"\d.eE+-]-?\d{16}/.test(text)) return text;
  return text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (m) => {
    if (m.charCodeAt(0) === 34 /* " */ || m.length < 16 || /[.eE]/.test(m)) return m;
    return Number.isSafeInteger(Number(m)) ? m : `"${m}"`;
  });
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** A field by its lowerCamelCase name or its proto (snake_case) name, as the proto3 JSON mapping allows. */
function get(o: Obj, camel: string): unknown {
  const v = o[camel];
  if (v !== undefined && v !== null) return v;
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const s = o[snake];
  return s === null ? undefined : s;
}

function list(o: Obj, camel: string, where: string): unknown[] {
  const v = get(o, camel);
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new OtlpPayloadError(`${where}.${camel} must be an array.`);
  return v;
}

function object(v: unknown, where: string): Obj {
  if (v === undefined) return {};
  if (!isObject(v)) throw new OtlpPayloadError(`${where} must be an object.`);
  return v;
}

function str(o: Obj, camel: string, where: string): string | undefined {
  const v = get(o, camel);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new OtlpPayloadError(`${where}.${camel} must be a string.`);
  return v;
}

/** int64/uint64/fixed64 as a canonical decimal string (JSON allows a number or a string). */
function int64(v: unknown, where: string, unsigned = false): string {
  let s: string;
  if (typeof v === 'number' && Number.isInteger(v)) s = BigInt(v).toString();
  else if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) s = BigInt(v.trim()).toString();
  else throw new OtlpPayloadError(`${where} must be an integer (a number or a decimal string).`);
  if (unsigned && s.startsWith('-')) throw new OtlpPayloadError(`${where} must not be negative.`);
  return s;
}

function uint32(v: unknown, where: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffffffff) {
    throw new OtlpPayloadError(`${where} must be a non-negative 32-bit integer.`);
  }
  return n;
}

const SEVERITY_NAMES = ['UNSPECIFIED', 'TRACE', 'TRACE2', 'TRACE3', 'TRACE4', 'DEBUG', 'DEBUG2', 'DEBUG3', 'DEBUG4', 'INFO', 'INFO2', 'INFO3', 'INFO4', 'WARN', 'WARN2', 'WARN3', 'WARN4', 'ERROR', 'ERROR2', 'ERROR3', 'ERROR4', 'FATAL', 'FATAL2', 'FATAL3', 'FATAL4'];

/** SeverityNumber: an integer, or (leniently) the enum's name such as SEVERITY_NUMBER_INFO. */
function severityNumber(v: unknown, where: string): number {
  if (typeof v === 'string') {
    const i = SEVERITY_NAMES.indexOf(v.replace(/^SEVERITY_NUMBER_/, ''));
    if (i >= 0) return i;
    if (/^\d+$/.test(v)) return Number(v);
  }
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0x7fffffff) return v;
  throw new OtlpPayloadError(`${where} must be an integer from 0 to 24.`);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * A trace or span id as lowercase hex. Protobuf carries bytes; OTLP JSON carries hex (some older
 * senders used base64, which is accepted when it has the id's exact length).
 */
function id(v: unknown, size: number, where: string): string {
  if (v instanceof Uint8Array) return hex(v);
  if (typeof v !== 'string') throw new OtlpPayloadError(`${where} must be a hex string.`);
  if (/^(?:[0-9a-fA-F]{2})*$/.test(v)) return v.toLowerCase();
  const b = Buffer.from(v, 'base64');
  if (b.length === size && /^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) return b.toString('hex');
  throw new OtlpPayloadError(`${where} must be ${size * 2} hex characters.`);
}

function canonicalRequest(o: Obj): LogsRequest {
  const resourceLogs = list(o, 'resourceLogs', 'request').map((rl, i) => {
    const where = `resourceLogs[${i}]`;
    const r = object(rl, where);
    const resource = object(get(r, 'resource'), `${where}.resource`);
    return {
      resource: { attributes: keyValues(resource, `${where}.resource`) },
      scopeLogs: list(r, 'scopeLogs', where).map((sl, j) => {
        const w = `${where}.scopeLogs[${j}]`;
        const s = object(sl, w);
        const sc = object(get(s, 'scope'), `${w}.scope`);
        const scope: Scope = {};
        const name = str(sc, 'name', `${w}.scope`);
        const version = str(sc, 'version', `${w}.scope`);
        if (name) scope.name = name;
        if (version) scope.version = version;
        const attrs = keyValues(sc, `${w}.scope`);
        if (attrs.length) scope.attributes = attrs;
        return { scope, logRecords: list(s, 'logRecords', w).map((lr, k) => logRecord(lr, `${w}.logRecords[${k}]`)) };
      }),
    };
  });
  return { resourceLogs };
}

function logRecord(v: unknown, where: string): LogRecord {
  const o = object(v, where);
  const rec: LogRecord = {};
  const time = get(o, 'timeUnixNano');
  if (time !== undefined) {
    const t = int64(time, `${where}.timeUnixNano`, true);
    if (t !== '0') rec.timeUnixNano = t;
  }
  const observed = get(o, 'observedTimeUnixNano');
  if (observed !== undefined) {
    const t = int64(observed, `${where}.observedTimeUnixNano`, true);
    if (t !== '0') rec.observedTimeUnixNano = t;
  }
  const sevNum = get(o, 'severityNumber');
  if (sevNum !== undefined) {
    const n = severityNumber(sevNum, `${where}.severityNumber`);
    if (n !== 0) rec.severityNumber = n;
  }
  const sevText = str(o, 'severityText', where);
  if (sevText) rec.severityText = sevText;
  const body = get(o, 'body');
  if (body !== undefined) rec.body = anyValue(body, `${where}.body`, 0);
  const attrs = keyValues(o, where);
  if (attrs.length) rec.attributes = attrs;
  const dropped = get(o, 'droppedAttributesCount');
  if (dropped !== undefined && dropped !== 0) rec.droppedAttributesCount = uint32(dropped, `${where}.droppedAttributesCount`);
  const flags = get(o, 'flags');
  if (flags !== undefined && flags !== 0) rec.flags = uint32(flags, `${where}.flags`);
  const traceId = get(o, 'traceId');
  if (traceId !== undefined) {
    const h = id(traceId, 16, `${where}.traceId`);
    if (/[1-9a-f]/.test(h)) rec.traceId = h;
  }
  const spanId = get(o, 'spanId');
  if (spanId !== undefined) {
    const h = id(spanId, 8, `${where}.spanId`);
    if (/[1-9a-f]/.test(h)) rec.spanId = h;
  }
  const eventName = str(o, 'eventName', where);
  if (eventName) rec.eventName = eventName;
  return rec;
}

function keyValues(o: Obj, where: string, field = 'attributes', depth = 0): KeyValue[] {
  return list(o, field, where).map((item, i) => {
    const w = `${where}.${field}[${i}]`;
    const kv = object(item, w);
    const key = get(kv, 'key');
    if (typeof key !== 'string') throw new OtlpPayloadError(`${w}.key must be a string.`);
    const value = get(kv, 'value');
    return { key, value: value === undefined ? {} : anyValue(value, `${w}.value`, depth + 1) };
  });
}

function anyValue(v: unknown, where: string, depth: number): AnyValue {
  if (depth > MAX_DEPTH) throw new OtlpPayloadError(`${where} nests values more than ${MAX_DEPTH} levels deep.`);
  const o = object(v, where);
  let x: unknown;
  if ((x = get(o, 'stringValue')) !== undefined) {
    if (typeof x !== 'string') throw new OtlpPayloadError(`${where}.stringValue must be a string.`);
    return { stringValue: x };
  }
  if ((x = get(o, 'boolValue')) !== undefined) {
    if (typeof x !== 'boolean') throw new OtlpPayloadError(`${where}.boolValue must be true or false.`);
    return { boolValue: x };
  }
  if ((x = get(o, 'intValue')) !== undefined) return { intValue: int64(x, `${where}.intValue`) };
  if ((x = get(o, 'doubleValue')) !== undefined) return { doubleValue: double(x, `${where}.doubleValue`) };
  if ((x = get(o, 'arrayValue')) !== undefined) {
    const a = object(x, `${where}.arrayValue`);
    return { arrayValue: { values: list(a, 'values', `${where}.arrayValue`).map((e, i) => anyValue(e, `${where}.arrayValue.values[${i}]`, depth + 1)) } };
  }
  if ((x = get(o, 'kvlistValue')) !== undefined) {
    const kl = object(x, `${where}.kvlistValue`);
    return { kvlistValue: { values: keyValues(kl, `${where}.kvlistValue`, 'values', depth) } };
  }
  if ((x = get(o, 'bytesValue')) !== undefined) {
    if (x instanceof Uint8Array) return { bytesValue: base64(x) };
    if (typeof x !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(x)) throw new OtlpPayloadError(`${where}.bytesValue must be base64.`);
    return { bytesValue: Buffer.from(x, 'base64').toString('base64') };
  }
  return {}; // an empty AnyValue
}

function double(v: unknown, where: string): number | 'NaN' | 'Infinity' | '-Infinity' {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) n = Number(v);
  else if (v === 'NaN') return 'NaN';
  else throw new OtlpPayloadError(`${where} must be a number.`);
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  return n;
}

// ---------------------------------------------------------------------------------------------
// Canonical → IncomingRecords

/** A value as stored: int64 past 2^53 as BigNumberText, kvlists as objects, arrays as arrays. */
type Plain = string | number | boolean | null | BigNumberText | Plain[] | { [k: string]: Plain };

function plainValue(v: AnyValue): Plain {
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : new BigNumberText(v.intValue);
  }
  if ('doubleValue' in v) return v.doubleValue; // non-finite values stay the strings "NaN", "Infinity"
  if ('bytesValue' in v) return v.bytesValue;
  if ('arrayValue' in v) return v.arrayValue.values.map(plainValue);
  if ('kvlistValue' in v) {
    const out: { [k: string]: Plain } = {};
    for (const kv of v.kvlistValue.values) out[kv.key] = plainValue(kv.value);
    return out;
  }
  return null;
}

/** Sets attributes under `prefix`, a kvlist value becoming dotted names (`a.b.c`). */
function putAttributes(out: Record<string, unknown>, prefix: string, attrs: KeyValue[] | undefined): void {
  for (const { key, value } of attrs ?? []) {
    const name = prefix + key;
    if ('kvlistValue' in value && value.kvlistValue.values.length) putAttributes(out, `${name}.`, value.kvlistValue.values);
    else out[name] = plainValue(value); // an empty kvlist stays {} (stored as "{}", as for JSON)
  }
}

/** The stored fields of one log record. */
function recordFields(resource: ResourceLogs['resource'], scope: Scope, rec: LogRecord): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  putAttributes(f, 'resource.', resource.attributes);
  putAttributes(f, 'scope.', scope.attributes);
  if (scope.name) f['scope.name'] = scope.name;
  if (scope.version) f['scope.version'] = scope.version;
  putAttributes(f, '', rec.attributes);
  if (rec.body) {
    const body = plainValue(rec.body);
    if (Array.isArray(body) || (body !== null && typeof body === 'object' && !(body instanceof BigNumberText))) {
      f.message = exactJsonText(body);
    } else if (body !== null) {
      f.message = body;
    }
  }
  if (rec.severityText) f.severity_text = rec.severityText;
  if (rec.severityNumber) f.severity_number = rec.severityNumber;
  if (rec.traceId) f.trace_id = rec.traceId;
  if (rec.spanId) f.span_id = rec.spanId;
  if (rec.eventName) f.event_name = rec.eventName;
  const ts = rec.timeUnixNano ?? rec.observedTimeUnixNano;
  if (ts) f.timestamp = ts;
  return f;
}

/** One IncomingRecord per log record, in request order; `text` is the record's OTLP JSON. */
export function toIncomingRecords(req: LogsRequest): IncomingRecord[] {
  const out: IncomingRecord[] = [];
  for (const rl of req.resourceLogs) {
    for (const sl of rl.scopeLogs) {
      for (const rec of sl.logRecords) {
        out.push({ text: JSON.stringify(rec), fields: recordFields(rl.resource, sl.scope, rec) });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Responses

export function contentTypeOf(format: OtlpFormat): string {
  return format === 'protobuf' ? 'application/x-protobuf' : 'application/json';
}

/** ExportLogsServiceResponse: empty on full success, else partial_success. */
export function encodeExportResponse(format: OtlpFormat, partial?: { rejected: number; errorMessage: string }): Buffer | string {
  if (format === 'json') {
    if (!partial) return '{}';
    return JSON.stringify({ partialSuccess: { rejectedLogRecords: String(partial.rejected), errorMessage: partial.errorMessage } });
  }
  if (!partial) return Buffer.alloc(0);
  const msg = ExportLogsServiceResponse.fromObject({
    partial_success: { rejected_log_records: partial.rejected, error_message: partial.errorMessage },
  });
  return Buffer.from(ExportLogsServiceResponse.encode(msg).finish());
}

/** google.rpc.Code for an HTTP status, as OTLP/HTTP error responses carry it. */
function rpcCode(status: number): number {
  switch (status) {
    case 400:
    case 413:
    case 415:
      return 3; // INVALID_ARGUMENT
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 5; // NOT_FOUND
    case 429:
      return 8; // RESOURCE_EXHAUSTED
    case 503:
      return 14; // UNAVAILABLE
    default:
      return status >= 500 ? 13 /* INTERNAL */ : 2; /* UNKNOWN */
  }
}

/**
 * A google.rpc.Status for an error. The JSON form also carries the service's error envelope
 * (`success`, `error`); OTLP readers ignore fields they do not know.
 */
export function encodeStatus(format: OtlpFormat, status: number, message: string): Buffer | string {
  const code = rpcCode(status);
  if (format === 'json') return JSON.stringify({ code, message, success: false, error: message });
  return Buffer.from(RpcStatus.encode(RpcStatus.fromObject({ code, message })).finish());
}

/** Decodes a protobuf google.rpc.Status (used by tests and clients). */
export function decodeStatus(body: Uint8Array): { code: number; message: string } {
  const o = RpcStatus.toObject(RpcStatus.decode(body), { defaults: true }) as { code: number; message: string };
  return { code: o.code, message: o.message };
}

/** Decodes a protobuf ExportLogsServiceResponse (used by tests and clients). */
export function decodeExportResponse(body: Uint8Array): { partialSuccess?: { rejectedLogRecords: string; errorMessage: string } } {
  const o = ExportLogsServiceResponse.toObject(ExportLogsServiceResponse.decode(body), { longs: String, defaults: false }) as {
    partial_success?: { rejected_log_records?: string; error_message?: string };
  };
  if (!o.partial_success) return {};
  return { partialSuccess: { rejectedLogRecords: o.partial_success.rejected_log_records ?? '0', errorMessage: o.partial_success.error_message ?? '' } };
}

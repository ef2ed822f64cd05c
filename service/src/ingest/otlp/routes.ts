// POST /v1/logs: OTLP/HTTP log export (application/x-protobuf or application/json). The answer is
// an ExportLogsServiceResponse in the request's content type (empty on full success,
// partial_success when some records were refused); errors carry a google.rpc.Status in that
// content type, with the HTTP status OTLP exporters act on (429/503 with Retry-After: retry).
// Only logs are served here: /v1/traces and /v1/metrics stay unknown routes (404).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../http/errors.ts';
import { noValidLogs } from '../pipeline.ts';
import { bodyError, ingestTokenOf, type IngestRoutes } from '../plugin.ts';
import { OtlpPayloadError, contentTypeOf, decodeRequest, encodeExportResponse, encodeStatus, toIncomingRecords, type OtlpFormat } from './decode.ts';

/** The wire format named by a Content-Type header, or null when it is neither OTLP encoding. */
export function otlpFormat(contentType: unknown): OtlpFormat | null {
  const type = String(contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return null;
}

function fail(reply: FastifyReply, format: OtlpFormat, status: number, message: string, headers: Record<string, string> = {}) {
  return reply.code(status).headers(headers).type(contentTypeOf(format)).send(encodeStatus(format, status, message));
}

export const otlpRoutes: IngestRoutes = async (app, deps) => {
  const { pipeline } = deps;
  const limit = deps.ctx.config.maxBodySize;
  // Every refusal of this route, the ingest scope's onRequest 401/429 and its 413 included, is a
  // google.rpc.Status in the request's encoding (JSON before the content type is known to be OTLP).
  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, req, reply) => {
    const answerAs: OtlpFormat = otlpFormat(req.headers['content-type']) ?? 'json';
    if (err instanceof OtlpPayloadError) return fail(reply, answerAs, 400, err.message);
    if (err instanceof HttpError) return fail(reply, answerAs, err.statusCode, err.message, err.headers);
    const refused = bodyError(err, limit);
    if (refused) return fail(reply, answerAs, refused.status, refused.message);
    throw err; // the app-wide handler answers everything else
  });

  app.post('/v1/logs', { config: { access: { ingest: true } } }, async (req: FastifyRequest, reply: FastifyReply) => {
    const token = ingestTokenOf(req);
    const format = otlpFormat(req.headers['content-type']);
    if (!format) {
      const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim();
      return fail(reply, 'json', 415, `Content type ${type ? `"${type}"` : '(none)'} is not accepted on /v1/logs; send application/x-protobuf or application/json.`);
    }
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const records = toIncomingRecords(decodeRequest(body, format));
    if (records.length === 0) return reply.code(200).type(contentTypeOf(format)).send(encodeExportResponse(format));
    const r = await pipeline.accept(token, records);
    if (r.accepted === 0) {
      return fail(reply, format, 400, noValidLogs(r));
    }
    const partial = r.rejected > 0 ? { rejected: r.rejected, errorMessage: r.errors.join('; ') } : undefined;
    return reply.code(200).type(contentTypeOf(format)).send(encodeExportResponse(format, partial));
  });
};

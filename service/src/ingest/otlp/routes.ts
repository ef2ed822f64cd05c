// POST /v1/logs: OTLP/HTTP log export (application/x-protobuf or application/json). The answer is
// an ExportLogsServiceResponse in the request's content type (empty on full success,
// partial_success when some records were refused); errors carry a google.rpc.Status in that
// content type, with the HTTP status OTLP exporters act on (429/503 with Retry-After: retry).
// Only logs are served here: /v1/traces and /v1/metrics stay unknown routes (404).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../http/errors.ts';
import { noValidLogs } from '../pipeline.ts';
import type { IngestRoutes } from '../plugin.ts';
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

export const otlpRoutes: IngestRoutes = async (app, { pipeline }) => {
  app.post('/v1/logs', { config: { access: { ingest: true } } }, async (req: FastifyRequest, reply: FastifyReply) => {
    const format = otlpFormat(req.headers['content-type']);
    // Errors before the content type is known to be OTLP are answered in JSON.
    const answerAs: OtlpFormat = format ?? 'json';
    try {
      const token = pipeline.authenticate(req);
      pipeline.admit();
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
    } catch (err) {
      if (err instanceof OtlpPayloadError) return fail(reply, answerAs, 400, err.message);
      if (err instanceof HttpError) return fail(reply, answerAs, err.statusCode, err.message, err.headers);
      throw err;
    }
  });
};

// The ingest scope: every route declared `{ingest: true}` is authenticated (ingest token) and
// admitted (rate limit) in onRequest, before a single byte of its body is read or inflated, so a
// caller without a token costs a header parse and nothing more. Its body then arrives as a
// Buffer (any content type; the content is sniffed, not trusted), gunzipped/inflated when the
// sender compressed it, and refused with 413 as soon as it passes SVC_MAX_BODY_SIZE without being
// buffered whole first.
import { createGunzip, createInflate } from 'node:zlib';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { HttpError } from '../http/errors.ts';
import type { IngestPipeline, ResolvedToken } from './pipeline.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An ingest route whose answer refuses records one by one (`/_bulk`): never refused whole for a full queue. */
    answersPerItem?: boolean;
  }
  interface FastifyRequest {
    /** The ingest token of a `{ingest: true}` route, checked in onRequest. */
    ingestToken: ResolvedToken | null;
  }
}

/** The token onRequest resolved; only ever called on `{ingest: true}` routes. */
export function ingestTokenOf(req: { ingestToken: ResolvedToken | null }): ResolvedToken {
  if (!req.ingestToken) throw new HttpError(500, 'This route reads an ingest token but is not declared {ingest: true}.');
  return req.ingestToken;
}

export interface IngestDeps {
  ctx: Context;
  pipeline: IngestPipeline;
}

export type IngestRoutes = (app: App, deps: IngestDeps) => Promise<void>;

/** A body refused before any handler ran: too large (413) or not decompressible (400); else null. */
export function bodyError(err: { code?: string }, limit: number): { status: 413 | 400; message: string } | null {
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { status: 413, message: `The request body is larger than SVC_MAX_BODY_SIZE (${limit} bytes); send smaller batches.` };
  }
  if (err.code === 'Z_DATA_ERROR' || err.code === 'Z_BUF_ERROR') {
    return { status: 400, message: 'The compressed request body is corrupt; check Content-Encoding.' };
  }
  return null;
}

export function ingestScope(routes: IngestRoutes[]) {
  return async (app: App, deps: IngestDeps) => {
    const limit = deps.ctx.config.maxBodySize;
    app.decorateRequest('ingestToken', null);
    app.addHook('onRequest', async (req) => {
      const access = req.routeOptions.config?.access;
      if (!access || !('ingest' in access)) return;
      req.ingestToken = deps.pipeline.authenticate(req);
      const length = Number(req.headers['content-length']);
      deps.pipeline.admit({ answersPerItem: req.routeOptions.config.answersPerItem === true, bodyBytes: Number.isFinite(length) && length > 0 ? length : undefined });
    });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (_req, body, done) => done(null, body));
    app.addHook('preParsing', async (req, _reply, payload) => {
      const enc = String(req.headers['content-encoding'] ?? '').toLowerCase();
      if (!enc || enc === 'identity') return payload;
      if (enc !== 'gzip' && enc !== 'deflate') {
        throw new HttpError(415, `Content-Encoding "${enc}" is not supported; send gzip, deflate or an uncompressed body.`);
      }
      // The decompressed length counts against the limit; the compressed length is what
      // Content-Length declares, which Fastify checks against receivedEncodedLength.
      const inflater = Object.assign(enc === 'gzip' ? createGunzip() : createInflate(), { receivedEncodedLength: 0 });
      payload.on('data', (chunk: Buffer) => (inflater.receivedEncodedLength += chunk.length));
      payload.pipe(inflater);
      payload.on('error', (e) => inflater.destroy(e));
      // A body nobody reads to its end (refused first) must not turn a corrupt stream into an
      // uncaught error: whoever reads reports it (400), the rest is dropped.
      inflater.on('error', () => undefined);
      return inflater;
    });
    app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, _req, reply) => {
      const refused = bodyError(err, limit);
      if (refused) return reply.code(refused.status).send({ success: false, error: refused.message });
      throw err; // the app-wide handler answers everything else
    });
    for (const r of routes) await app.register(r as never, deps as never);
  };
}

// `POST|PUT /_bulk` and `POST|PUT /{index}/_bulk`: the search-engine bulk format in, its bulk
// response schema out, so shippers written for that format deliver here unchanged. Also
// registers the probe endpoints those shippers call first (es-compat.ts).
//
// Every `index`/`create` document becomes one record for the pipeline: its fields are the parsed
// document plus `_index` (from the action line, else from the path) so shippers can be told
// apart; its raw text is the document line. `update`/`delete` and unreadable documents are
// refused per item (400) while the rest are stored; an unreadable action line fails the request.
//
// A request the pipeline cannot take now (the queue is full, the fractal is over its quota, the
// spool cannot be written) is still a 200: every item carries the 429 (or 503) the format's
// clients retry item by item (Beats, Logstash, Fluent Bit, rsyslog's retryfailures, Vector's
// request_retry_partial). Admission is all or nothing, so a client that resends the whole request
// stores nothing twice. Only the rate limit, checked before the body is read, refuses a request
// whole, and a full queue does so for the clients known to look only at the status: syslog-ng's
// elasticsearch-http() (its User-Agent says syslog-ng) retries a 429 but drops failed items.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/app.ts';
import { HttpError } from '../../http/errors.ts';
import { ingestTokenOf, type IngestDeps, type IngestRoutes } from '../plugin.ts';
import type { IncomingRecord, RecordOutcome } from '../types.ts';
import { esCompatRoutes, esErrorBody, esErrorHandler, markProduct } from './es-compat.ts';
import { BulkSyntaxError, parseBulk, type BulkItem, type EsError } from './parse.ts';

interface ItemResult {
  _index: string;
  _id: string | null;
  status: number;
  _version?: number;
  result?: string;
  _shards?: { total: number; successful: number; failed: number };
  _seq_no?: number;
  _primary_term?: number;
  error?: EsError & { index?: string };
}

export const bulkRoutes: IngestRoutes = async (app: App, deps: IngestDeps) => {
  // Every answer of the bulk endpoint and the probes, errors included, is in the format's shape.
  markProduct(app);
  esErrorHandler(app, deps.ctx.config.maxBodySize);
  await app.register(bulkEndpoint as never, deps as never);
  await app.register(esCompatRoutes as never, deps as never);
};

async function bulkEndpoint(app: App, deps: IngestDeps): Promise<void> {
  // The ingest scope checks the token in onRequest, before the body is read.
  const config = { access: { ingest: true }, answersPerItem: true } as const;
  const handler = async (req: FastifyRequest<{ Params: { index?: string } }>, reply: FastifyReply) => {
    const started = process.hrtime.bigint();
    const token = ingestTokenOf(req);
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let items: BulkItem[];
    try {
      items = parseBulk(body, req.params.index);
    } catch (e) {
      if (e instanceof BulkSyntaxError) return reply.code(400).send(esErrorBody(400, e.type, e.message));
      throw e;
    }
    const fallbackIndex = req.params.index ?? fractalName(deps, token.fractalId);

    const records: IncomingRecord[] = [];
    for (const it of items) if (it.ok) records.push({ text: it.source, fields: it.doc });
    let outcomes: RecordOutcome[] = [];
    let refused: HttpError | null = null;
    if (records.length > 0) {
      try {
        outcomes = (await deps.pipeline.accept(token, records)).outcomes;
      } catch (err) {
        if (!(err instanceof HttpError) || (err.statusCode !== 429 && err.statusCode !== 503)) throw err;
        // A client that never reads the items would take a 200 as stored: it gets the whole-request
        // 429 (or 503), which it retries.
        if (!readsItems(req)) throw err;
        refused = err;
      }
    }

    let errors = false;
    let k = 0;
    const out = items.map((it): Record<string, ItemResult> => {
      const index = it.index ?? fallbackIndex;
      if (!it.ok) {
        errors = true;
        return { [it.action]: { _index: index, _id: it.id ?? null, status: it.status, error: { ...it.error, index } } };
      }
      if (refused) {
        errors = true;
        return { [it.action]: { _index: index, _id: null, status: refused.statusCode, error: { type: 'es_rejected_execution_exception', reason: refused.message, index } } };
      }
      const o = outcomes[k++];
      if (!o || !o.ok) {
        errors = true;
        const reason = o ? o.error : 'the record was not accepted';
        return { [it.action]: { _index: index, _id: null, status: 400, error: { type: 'mapper_parsing_exception', reason, index } } };
      }
      return {
        [it.action]: {
          _index: index,
          _id: o.logId,
          _version: 1,
          result: 'created',
          _shards: { total: 1, successful: 1, failed: 0 },
          _seq_no: 0,
          _primary_term: 1,
          status: 201,
        },
      };
    });
    const took = Number((process.hrtime.bigint() - started) / 1_000_000n);
    if (refused?.headers['retry-after']) reply.header('retry-after', refused.headers['retry-after']);
    return reply.code(200).send({ took, errors, items: out });
  };

  for (const url of ['/_bulk', '/:index/_bulk']) {
    app.route({ method: ['POST', 'PUT'], url, config, handler: handler as never });
  }
}

/** The response's `_index` for items that named none: the fractal the token writes to. */
function fractalName(deps: IngestDeps, fractalId: string): string {
  return deps.ctx.fractals.get(fractalId)?.name ?? fractalId;
}

/** Whether the client reads the items of a bulk answer (syslog-ng's http() reads only the status). */
function readsItems(req: FastifyRequest): boolean {
  return !/syslog-ng/i.test(req.headers['user-agent'] ?? '');
}

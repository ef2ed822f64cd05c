// GET /api/v1/logs/recent, /logs/histogram, /logs/fields and POST /api/v1/logs/by-timestamp,
// /logs/surrounding: the quick reads of the search workspace, scoped like queries (fractal_id or
// prism_id, else the session's selection).
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { badRequest, HttpError, notFound } from '../http/errors.ts';
import { isUuid } from '../http/schemas.ts';
import { compileQuery } from '../query/compile.ts';
import { fieldCatalog } from '../query/field-stats.ts';
import { timeRange, QueryInputError } from '../query/query-service.ts';
import { resolveReadScope } from '../auth/read-scope.ts';
import { countPerBucket, QueryExecutionError, QueryLimitError, QueryTimeoutError, runQueryRows, unpackFields } from '../query/run.ts';
import { parseShownTime } from './log-store.ts';
import { DEFAULT_SURROUNDING, MAX_SURROUNDING, surroundingLogs } from './surrounding.ts';

const ScopeQuery = Type.Object({
  fractal_id: Type.Optional(Type.String()),
  prism_id: Type.Optional(Type.String()),
  start: Type.Optional(Type.String()),
  end: Type.Optional(Type.String()),
});
type ScopeParams = { fractal_id?: string; prism_id?: string; start?: string; end?: string };

/** Histogram buckets: per minute up to a day; beyond, the smallest step keeping ≤ 1,440 buckets. */
const STEPS = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400];
function histogramStep(start: Date, end: Date): number {
  const range = (end.getTime() - start.getTime()) / 1000;
  return STEPS.find((s) => range / s <= 1440) ?? STEPS[STEPS.length - 1];
}

function range(q: ScopeParams) {
  try {
    return timeRange(q);
  } catch (err) {
    if (err instanceof QueryInputError) throw badRequest(err.message);
    throw err;
  }
}

export async function logsRoutes(app: App, ctx: Context) {
  const timeoutS = () => ctx.settings.get().query_timeout_s;
  // The engine's refusals of these reads as the query endpoints word them, in the envelope.
  app.setErrorHandler((err, req) => {
    if (err instanceof QueryTimeoutError) throw new HttpError(408, err.message);
    if (err instanceof QueryLimitError) throw new HttpError(400, err.message);
    if (err instanceof QueryExecutionError) {
      req.log.error({ detail: err.detail }, 'logs read failed in the engine');
      throw new HttpError(500, err.message);
    }
    throw err;
  });

  app.get('/api/v1/logs/recent', { config: { access: { authenticated: true } }, schema: { querystring: ScopeQuery } }, async (req) => {
    const q = req.query as ScopeParams;
    const scope = resolveReadScope(ctx, req.principal, q);
    const end = new Date();
    const compiled = compileQuery('', {
      table: ctx.ch.table('logs'),
      fractalIds: scope.fractalIds,
      start: new Date(end.getTime() - 24 * 3600_000),
      end,
      maxRows: 50,
    });
    const rows = await runQueryRows(ctx.ch, compiled, { timeoutS: timeoutS() });
    return { success: true, data: rows };
  });

  app.get('/api/v1/logs/histogram', { config: { access: { authenticated: true } }, schema: { querystring: ScopeQuery } }, async (req) => {
    const q = req.query as ScopeParams;
    const scope = resolveReadScope(ctx, req.principal, q);
    const { start, end } = range(q);
    const step = histogramStep(start, end);
    // Every event of the scope and range, counted the way a query's histogram counts.
    const everything = compileQuery('', { table: ctx.ch.table('logs'), fractalIds: scope.fractalIds, start, end, maxRows: 0 });
    const counts = await countPerBucket(ctx.ch, everything, step, { timeoutS: timeoutS() });
    const from = Math.floor(start.getTime() / 1000 / step) * step;
    const to = Math.floor(end.getTime() / 1000 / step) * step;
    const buckets: Array<{ time: string; count: number }> = [];
    for (let t = from; t <= to; t += step) buckets.push({ time: new Date(t * 1000).toISOString(), count: counts.get(t) ?? 0 });
    const data: Record<string, unknown> = { bucket_seconds: step, start: start.toISOString(), end: end.toISOString(), buckets };
    if (step > 60) data.note = `The range is longer than a day, so each bar counts ${step >= 3600 ? `${step / 3600} hour(s)` : `${step / 60} minutes`} instead of one minute.`;
    return { success: true, data };
  });

  app.get('/api/v1/logs/fields', { config: { access: { authenticated: true } }, schema: { querystring: ScopeQuery } }, async (req) => {
    const q = req.query as ScopeParams;
    const scope = resolveReadScope(ctx, req.principal, q);
    const { start, end } = range(q);
    const catalog = await fieldCatalog(ctx.ch, scope.fractalIds, start, end, timeoutS());
    return { success: true, data: catalog.fields.map((f) => f.name) };
  });

  app.post(
    '/api/v1/logs/by-timestamp',
    {
      config: { access: { authenticated: true } },
      schema: { body: Type.Object({ timestamp: Type.String({ minLength: 1 }), log_id: Type.String(), fractal_id: Type.String() }) },
    },
    async (req) => {
      const body = req.body as { timestamp: string; log_id: string; fractal_id: string };
      if (!isUuid(body.log_id)) throw badRequest('log_id must be a valid UUID.');
      const scope = resolveReadScope(ctx, req.principal, { fractal_id: body.fractal_id });
      // Rows show times to the millisecond ("YYYY-MM-DD hh:mm:ss.mmm", UTC) or RFC 3339: look in that millisecond.
      const t = parseShownTime(body.timestamp);
      if (!t) throw badRequest('timestamp must be RFC 3339 or "YYYY-MM-DD hh:mm:ss.mmm" (UTC).');
      const row = await ctx.logs.logAt(scope.id, body.log_id, t);
      if (!row) throw notFound(`Log ${body.log_id} not found at ${body.timestamp} in this fractal.`);
      const iso = (s: string) => `${s.replace(' ', 'T')}Z`;
      return {
        success: true,
        data: {
          log_id: row.id_text,
          fractal_id: row.fractal_text,
          timestamp: iso(row.time_text),
          ingest_timestamp: iso(row.ingest_text),
          raw: row.raw,
          fields: unpackFields(row.fields_json),
        },
      };
    },
  );

  const Count = Type.Integer({ minimum: 0, maximum: MAX_SURROUNDING });
  app.post(
    '/api/v1/logs/surrounding',
    {
      config: { access: { authenticated: true } },
      schema: {
        body: Type.Object({
          fractal_id: Type.String({ minLength: 1 }),
          timestamp: Type.String({ minLength: 1, maxLength: 64 }),
          log_id: Type.String({ minLength: 1 }),
          before: Type.Optional(Count),
          after: Type.Optional(Count),
          same: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
        }),
      },
    },
    async (req) => {
      const body = req.body as { fractal_id: string; timestamp: string; log_id: string; before?: number; after?: number; same?: string };
      const scope = resolveReadScope(ctx, req.principal, { fractal_id: body.fractal_id });
      const data = await surroundingLogs(
        ctx.ch,
        {
          fractalId: scope.id,
          timestamp: body.timestamp,
          logId: body.log_id,
          before: body.before ?? DEFAULT_SURROUNDING,
          after: body.after ?? DEFAULT_SURROUNDING,
          same: body.same,
        },
        timeoutS(),
      );
      return { success: true, data };
    },
  );
}

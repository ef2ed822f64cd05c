// /api/v1/alerts…: CRUD scoped to a fractal or prism, YAML import, duplicate, batch-toggle, the
// executions history, and two additions for the pages: a preview of what a query would have
// matched in the last hours, and the recent firings the search workspace shows as a badge.
// Access is checked in alerts-logic.ts from the alert's own scope (routes are `authenticated`).
import { Type } from 'typebox';
import { resolveReadScope } from '../auth/read-scope.ts';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { badRequest } from '../http/errors.ts';
import { pageOf, withTotal } from '../http/paging.ts';
import { IdParams } from '../http/schemas.ts';
import { QueryInputError, runScopeQuery } from '../query/query-service.ts';
import { QueryExecutionError, QueryTimeoutError } from '../query/run.ts';
import {
  AlertBody,
  createAlert,
  duplicateAlert,
  importAlerts,
  readable,
  scopeOf,
  toggleAlerts,
  updateAlert,
  view,
  writable,
} from './alerts-logic.ts';

const authenticated = { access: { authenticated: true as const } };
const ScopeQuery = Type.Object({ fractal_id: Type.Optional(Type.String()), prism_id: Type.Optional(Type.String()) });
const SPARK_HOURS = 24;
const PREVIEW_ROWS = 50;

export async function alertRoutes(app: App, ctx: Context) {
  // A YAML import arrives as text (text/plain too, Fastify's own parser).
  app.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'], { parseAs: 'string', bodyLimit: 8 * 1024 * 1024 }, (_req, body, done) => done(null, body));

  app.get('/api/v1/alerts', { config: authenticated, schema: { querystring: ScopeQuery } }, async (req) => {
    const scope = resolveReadScope(ctx, req.principal, req.query);
    const alerts = ctx.alerts.inScope(scope);
    const hourly = ctx.alertExecutions.hourly(alerts.map((a) => a.id), new Date(), SPARK_HOURS);
    return ok(alerts.map((a) => ({ ...view(a), sparkline: hourly.get(a.id) })));
  });

  app.post('/api/v1/alerts', { config: authenticated, schema: { body: AlertBody } }, async (req, reply) =>
    reply.code(201).send(ok(view(await createAlert(ctx, req.principal!, req.body)))),
  );

  app.post(
    '/api/v1/alerts/import',
    { config: authenticated, bodyLimit: 8 * 1024 * 1024, schema: { querystring: ScopeQuery } },
    async (req, reply) => {
      const body = req.body as unknown;
      const text = typeof body === 'string' ? body : typeof (body as { yaml?: unknown })?.yaml === 'string' ? (body as { yaml: string }).yaml : null;
      if (text === null) throw badRequest('Send the alerts as YAML (Content-Type: application/yaml), or as JSON {"yaml": "…"}.');
      const target = typeof body === 'object' ? { ...req.query, ...(body as { fractal_id?: string; prism_id?: string }) } : req.query;
      const created = await importAlerts(ctx, req.principal!, text, { fractal_id: target.fractal_id, prism_id: target.prism_id });
      return reply.code(201).send(ok(created.map(view), `Imported ${created.length} alert${created.length === 1 ? '' : 's'}.`));
    },
  );

  app.post(
    '/api/v1/alerts/batch-toggle',
    { config: authenticated, schema: { body: Type.Object({ alert_ids: Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 5000 }), enabled: Type.Boolean() }) } },
    async (req) => ok({ changed: toggleAlerts(ctx, req.principal!, req.body.alert_ids, req.body.enabled) }),
  );

  app.post(
    '/api/v1/alerts/preview',
    {
      config: authenticated,
      schema: {
        body: Type.Object({
          query_string: Type.String({ minLength: 1, maxLength: 100_000 }),
          fractal_id: Type.Optional(Type.String()),
          prism_id: Type.Optional(Type.String()),
          hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 168 })),
        }),
      },
    },
    async (req) => {
      const scope = resolveReadScope(ctx, req.principal, req.body);
      const hours = req.body.hours ?? 24;
      const end = new Date();
      const start = new Date(end.getTime() - hours * 3_600_000);
      try {
        const r = await runScopeQuery(ctx, { query: req.body.query_string, scope, start, end });
        // Matches per hour of the event's time when the rows carry one (events, or rows with a time column).
        const counts = new Array<number>(hours).fill(0);
        for (const row of r.rows) {
          const t = typeof row.timestamp === 'string' ? Date.parse(`${row.timestamp.replace(' ', 'T')}Z`) : NaN;
          if (Number.isFinite(t)) counts[Math.max(0, Math.min(hours - 1, Math.floor((t - start.getTime()) / 3_600_000)))]!++;
        }
        return ok({
          match_count: r.rows.length,
          limit_hit: r.limitHit,
          is_aggregated: r.compiled.isAggregated,
          field_order: r.compiled.fieldOrder,
          hourly: counts.map((count, i) => ({ start: new Date(start.getTime() + i * 3_600_000).toISOString(), count })),
          results: r.rows.slice(0, PREVIEW_ROWS),
          start: start.toISOString(),
          end: end.toISOString(),
        });
      } catch (err) {
        if (err instanceof QueryInputError) throw badRequest(err.message.replace(/\.?$/, '.'));
        if (err instanceof QueryTimeoutError || err instanceof QueryExecutionError) throw badRequest(`${err.message}`);
        throw err;
      }
    },
  );

  app.get(
    '/api/v1/alerts/firing',
    { config: authenticated, schema: { querystring: Type.Object({ fractal_id: Type.Optional(Type.String()), prism_id: Type.Optional(Type.String()), hours: Type.Optional(Type.String()) }) } },
    async (req) => {
      const scope = resolveReadScope(ctx, req.principal, req.query);
      const hours = Math.min(168, Math.max(1, Number(req.query.hours) || 24));
      const alerts = new Map(ctx.alerts.inScope(scope).map((a) => [a.id, a]));
      const since = new Date(Date.now() - hours * 3_600_000).toISOString();
      const firings = ctx.alertExecutions.recent([...alerts.keys()], since, 200);
      return ok(
        firings.map((f) => {
          const a = alerts.get(f.alert_id)!;
          return {
            execution_id: f.id,
            alert_id: a.id,
            alert_name: a.name,
            severity: a.severity,
            query_string: a.query_string,
            fractal_id: a.fractal_id,
            prism_id: a.prism_id,
            triggered_at: f.triggered_at,
            match_count: f.match_count,
            events_start: f.events_start,
            events_end: f.events_end,
          };
        }),
      );
    },
  );

  app.get('/api/v1/alerts/:id', { config: authenticated, schema: { params: IdParams } }, async (req) => ok(view(readable(ctx, req.principal, req.params.id))));

  app.put('/api/v1/alerts/:id', { config: authenticated, schema: { params: IdParams, body: AlertBody } }, async (req) =>
    ok(view(await updateAlert(ctx, req.principal!, req.params.id, req.body))),
  );

  app.delete('/api/v1/alerts/:id', { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const a = writable(ctx, req.principal!, req.params.id);
    ctx.alerts.delete(a.id);
    return ok({ deleted: true });
  });

  app.post('/api/v1/alerts/:id/duplicate', { config: authenticated, schema: { params: IdParams } }, async (req, reply) =>
    reply.code(201).send(ok(view(duplicateAlert(ctx, req.principal!, req.params.id)), 'The copy is switched off; switch it on when it is ready.')),
  );

  app.get(
    '/api/v1/alerts/:id/executions',
    { config: authenticated, schema: { params: IdParams, querystring: Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }) } },
    async (req, reply) => {
      const a = readable(ctx, req.principal, req.params.id);
      const { total, executions } = ctx.alertExecutions.list(a.id, pageOf(req.query));
      return withTotal(
        reply,
        total,
        executions.map((e) => ({
          id: e.id,
          triggered_at: e.triggered_at,
          window_start: e.window_start,
          window_end: e.window_end,
          match_count: e.match_count,
          throttled: e.throttled === 1,
          limit_hit: e.limit_hit === 1,
          duration_ms: e.duration_ms,
          events_start: e.events_start,
          events_end: e.events_end,
          scope: scopeOf(a),
          actions: e.deliveries.map((d) => ({
            kind: d.action_kind,
            action_id: d.action_id,
            name: d.action_name,
            status: d.status,
            attempts: d.attempts,
            status_code: d.status_code,
            error: d.error,
            detail: d.detail,
            duration_ms: d.duration_ms,
            finished_at: d.finished_at,
          })),
        })),
      );
    },
  );
}

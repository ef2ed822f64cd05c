// Feeds (interface-spec "Alerts, actions, feeds"; conventions "Feeds and Sigma"): CRUD, a sync
// now (answered when it is done), the skipped rules with their reasons, and the feed-sourced
// alerts: a feed's own, all of a scope's, switched on and off one by one or together. Access is
// checked from each feed's scope in feeds-logic.ts, so every route is `{authenticated: true}`.
import { Type } from 'typebox';
import { resolveReadScope } from '../auth/read-scope.ts';
import type { Context } from '../context.ts';
import { enableCursor, feedAlerts, setFeedAlertsEnabled, view as alertView, writable as writableAlert } from '../alerts/alerts-logic.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { badRequest } from '../http/errors.ts';
import { Description, IdParams, Nullable, StringEnum, Uuid } from '../http/schemas.ts';
import { coverage } from './coverage.ts';
import { SCHEDULES, SEVERITIES, STATUSES } from './feeds-store.ts';
import {
  checkedInput,
  deleteFeed,
  feedView,
  manageableFeed,
  readableFeed,
  scopeOfFeed,
  skippedRules,
  syncFeed,
  syncInBackground,
  targetScope,
} from './feeds-logic.ts';
import { SKIP_CODES } from './sigma/skip.ts';

const authenticated = { access: { authenticated: true as const } };
const ScopeQuery = Type.Object({ fractal_id: Type.Optional(Type.String()), prism_id: Type.Optional(Type.String()) });
const FeedFields = {
  description: Type.Optional(Description),
  repo_url: Type.Optional(Type.String({ maxLength: 2000 })),
  branch: Type.Optional(Type.String({ maxLength: 250 })),
  path: Type.Optional(Type.String({ maxLength: 1000 })),
  auth_token: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
  normalizer_id: Type.Optional(Nullable(Uuid)),
  sync_schedule: Type.Optional(StringEnum(SCHEDULES)),
  min_severity: Type.Optional(StringEnum(SEVERITIES)),
  min_status: Type.Optional(StringEnum(STATUSES)),
  enabled: Type.Optional(Type.Boolean()),
};

export async function feedRoutes(app: App, ctx: Context) {
  app.get('/api/v1/feeds', { config: authenticated, schema: { querystring: ScopeQuery } }, async (req) => {
    const scope = resolveReadScope(ctx, req.principal, req.query);
    return ok(ctx.feeds.ofScope(scope).map((f) => feedView(ctx, f)));
  });

  app.post(
    '/api/v1/feeds',
    {
      config: authenticated,
      schema: { body: Type.Object({ name: Type.String({ maxLength: 200 }), fractal_id: Type.Optional(Type.String()), prism_id: Type.Optional(Type.String()), ...FeedFields }) },
    },
    async (req, reply) => {
      const p = req.principal!;
      const scope = targetScope(ctx, p, req.body);
      const input = checkedInput(ctx, scope, req.body);
      const f = ctx.feeds.create(scope, input, p.kind === 'user' ? p.user.username : `api key ${p.key.name}`);
      // The first sync starts at once; the feed's page shows it running, then its outcome.
      if (input.enabled) void syncInBackground(ctx, f.id);
      return reply.code(201).send(ok(feedView(ctx, f)));
    },
  );

  app.get('/api/v1/feeds/:id', { config: authenticated, schema: { params: IdParams } }, async (req) => ok(feedView(ctx, readableFeed(ctx, req.principal, req.params.id))));

  app.put(
    '/api/v1/feeds/:id',
    { config: authenticated, schema: { params: IdParams, body: Type.Object({ name: Type.Optional(Type.String({ maxLength: 200 })), ...FeedFields }) } },
    async (req) => {
      const f = manageableFeed(ctx, req.principal!, req.params.id);
      if ((req.body as { fractal_id?: string }).fractal_id || (req.body as { prism_id?: string }).prism_id) {
        throw badRequest('A feed cannot move to another fractal or prism; create one there instead.');
      }
      return ok(feedView(ctx, ctx.feeds.update(f.id, checkedInput(ctx, scopeOfFeed(f), req.body, f))));
    },
  );

  app.delete('/api/v1/feeds/:id', { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const f = manageableFeed(ctx, req.principal!, req.params.id);
    const alerts = deleteFeed(ctx, f);
    return ok({ deleted: true, alerts_deleted: alerts });
  });

  app.post('/api/v1/feeds/:id/sync', { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const f = manageableFeed(ctx, req.principal!, req.params.id);
    const r = await syncFeed(ctx, f.id);
    if (r.status === 'failed') throw badRequest(`The sync of feed "${f.name}" failed: ${r.error}`);
    return ok({ ...r, feed: feedView(ctx, ctx.feeds.get(f.id)!) });
  });

  app.get(
    '/api/v1/feeds/:id/skipped',
    { config: authenticated, schema: { params: IdParams, querystring: Type.Object({ reason: Type.Optional(Type.String()), q: Type.Optional(Type.String({ maxLength: 500 })) }) } },
    async (req) => {
      const f = readableFeed(ctx, req.principal, req.params.id);
      return ok(skippedRules(ctx, f, req.query));
    },
  );

  /** The skip reasons a feed lists, with their labels (the skipped table's filter). */
  app.get('/api/v1/feeds/skip-reasons', { config: authenticated }, async () => ok(Object.entries(SKIP_CODES).map(([code, label]) => ({ code, label }))));

  app.get('/api/v1/feeds/:id/alerts', { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const f = readableFeed(ctx, req.principal, req.params.id);
    return ok(feedAlerts(ctx, f.id).map(alertView));
  });

  for (const [action, enabled] of [['enable-all', true], ['disable-all', false]] as const) {
    app.post(`/api/v1/feeds/:id/alerts/${action}`, { config: authenticated, schema: { params: IdParams } }, async (req) => {
      const f = manageableFeed(ctx, req.principal!, req.params.id);
      return ok({ changed: setFeedAlertsEnabled(ctx, f.id, enabled) });
    });
  }

  // ---- feed-sourced alerts of a scope -----------------------------------------------------------

  app.get('/api/v1/alerts/feed', { config: authenticated, schema: { querystring: ScopeQuery } }, async (req) => {
    const scope = resolveReadScope(ctx, req.principal, req.query);
    const names = new Map(ctx.feeds.ofScope(scope).map((f) => [f.id, f.name]));
    return ok(ctx.alerts.inScope(scope).filter((a) => a.feed_id).map((a) => ({ ...alertView(a), feed_name: names.get(a.feed_id!) ?? null })));
  });

  app.post(
    '/api/v1/alerts/feed/batch-toggle',
    { config: authenticated, schema: { body: Type.Object({ alert_ids: Type.Array(Uuid, { minItems: 1, maxItems: 10_000 }), enabled: Type.Boolean() }) } },
    async (req) => {
      const p = req.principal!;
      const alerts = req.body.alert_ids.map((id) => writableAlert(ctx, p, id));
      const notFeed = alerts.find((a) => !a.feed_id);
      if (notFeed) throw badRequest(`Alert "${notFeed.name}" does not come from a feed; switch it with /api/v1/alerts/batch-toggle.`);
      return ok({ changed: ctx.alerts.setEnabled(alerts.map((a) => a.id), req.body.enabled, enableCursor()) });
    },
  );

  app.post('/api/v1/alerts/:id/toggle-feed', { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const a = writableAlert(ctx, req.principal!, req.params.id);
    if (!a.feed_id) throw badRequest(`Alert "${a.name}" does not come from a feed.`);
    ctx.alerts.setEnabled([a.id], !a.enabled, enableCursor());
    return ok(alertView(ctx.alerts.get(a.id)!));
  });

  // ---- ATT&CK coverage ----------------------------------------------------------------------------

  app.get('/api/v1/attack/coverage', { config: authenticated, schema: { querystring: ScopeQuery } }, async (req) => {
    const scope = resolveReadScope(ctx, req.principal, req.query);
    return ok(coverage(ctx.alerts.inScope(scope), ctx.feeds.skippedInScope(scope)));
  });
}

// Dashboards (interface-spec "Dashboards"): CRUD, widgets on the 12-column grid, execute one or
// all, variables, refresh interval, live co-editing and presence (live/), YAML export and import,
// shared links; and the public side of a shared link, GET /api/v1/shared/{token} and the page
// /shared/{token}, which need no sign-in.
// Every route but the public two is `{authenticated: true}` for the access hook: the scope comes
// from the dashboard itself (or the body, query string or selection when creating, listing,
// importing), so dashboards-logic.ts checks roles and the API key's `dashboard` permission.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { badRequest, HttpError } from '../http/errors.ts';
import { pageOf, withTotal } from '../http/paging.ts';
import { IdParams, Uuid } from '../http/schemas.ts';
import { liveRoutes, originOf } from '../live/routes.ts';
import { normalizeVariables, scopeOf, type Actor, type Variable } from '../shared/documents.ts';
import { UI_DIR } from '../ui/routes.ts';
import {
  addWidget,
  createDashboard,
  DashboardBody,
  dashboardFor,
  dashboardScope,
  dashboardView,
  deleteDashboard,
  deleteWidget,
  LIVE_KIND,
  mayRun,
  moveWidget,
  newFields,
  setRefreshInterval,
  setVariables,
  updateDashboard,
  updateWidget,
  VariablesField,
  WidgetBody,
  widgetFields,
  widgetOf,
  boxOf,
  type DashboardAccess,
} from './dashboards-logic.ts';
import type { Dashboard } from './dashboards-store.ts';
import { exportYaml, importYaml, MAX_DOCUMENT_BYTES } from './document.ts';
import { createLink, deleteLink, linkView, liveLink, publicDashboard } from './shared-links.ts';
import { resultView, runWidgets, storedResult, type RunOptions } from './widget-runs.ts';

const authenticated = { access: { authenticated: true as const } };
const ScopeFields = { fractal_id: Type.Optional(Type.String()), prism_id: Type.Optional(Type.String()) };
const WidgetParams = Type.Object({ id: Uuid, widget_id: Uuid });
const LinkParams = Type.Object({ id: Uuid, link_id: Uuid });
const Cell = Type.Unknown();
const RunBody = {
  variables: Type.Optional(VariablesField),
  start: Type.Optional(Type.String({ maxLength: 64 })),
  end: Type.Optional(Type.String({ maxLength: 64 })),
  max_age_s: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
};
const Version = Type.Optional(Type.Integer({ minimum: 1 }));

const actor = (req: FastifyRequest): Actor => ({ p: req.principal!, origin: originOf(req) });

/** The whole dashboard for a reader: its fields, widgets with their last results, and where its live events resume. */
function fullView(ctx: Context, a: DashboardAccess) {
  return {
    ...dashboardView(a.d),
    scope: { ...scopeOf(a.d), name: a.scopeName },
    can_edit: a.canEdit,
    // Read before the widgets: an event stored after this point is replayed from here.
    live_event_id: ctx.live.cursor(LIVE_KIND, a.d.id),
    widgets: ctx.dashboards.widgets(a.d.id, true).map((w) => ({ ...widgetFields(w), result: storedResult(a.d, w) })),
  };
}

/** A run's other settings: the stored variables with the ones sent on top, another range, how old stored results may be. */
function runOptions(d: Dashboard, body: { variables?: Array<{ name: unknown; value: unknown }>; start?: string; end?: string; max_age_s?: number }, req: FastifyRequest): RunOptions {
  let variables: Variable[] | undefined;
  if (body.variables !== undefined) {
    const given = normalizeVariables(body.variables);
    variables = [...d.variables.filter((v) => !given.some((g) => g.name === v.name)), ...given];
  }
  return { variables, start: body.start || undefined, end: body.end || undefined, maxAgeS: body.max_age_s, origin: originOf(req) };
}

/** Stops an answered-only run when the client goes away (a shared run goes on: others wait for it). */
function abortOnClose(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableEnded) controller.abort();
  });
  return controller.signal;
}

/** The address people open a shared link at: SVC_BASE_URL, else the one this request came to. */
const publicBase = (ctx: Context, req: FastifyRequest) => ctx.config.baseUrl ?? `${req.protocol}://${req.host}`;

export async function dashboardRoutes(app: App, ctx: Context) {
  const base = '/api/v1/dashboards';
  app.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'], { parseAs: 'string', bodyLimit: MAX_DOCUMENT_BYTES }, (_req, body, done) =>
    done(null, body),
  );

  app.get(
    base,
    {
      config: authenticated,
      schema: { querystring: Type.Object({ ...ScopeFields, q: Type.Optional(Type.String({ maxLength: 1000 })), limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }) },
    },
    async (req, reply) => {
      const scope = dashboardScope(ctx, req.principal!, req.query, false);
      const { rows, total } = ctx.dashboards.list(scope, req.query.q?.trim() || undefined, pageOf(req.query));
      return withTotal(reply, total, rows.map((d) => ({ ...dashboardView(d), widget_count: d.widget_count })));
    },
  );

  app.post(
    base,
    { config: authenticated, schema: { body: Type.Object({ ...DashboardBody.properties, name: Type.String({ maxLength: 10_000 }), ...ScopeFields }) } },
    async (req, reply) => {
      const scope = dashboardScope(ctx, req.principal!, req.body, true);
      const d = createDashboard(ctx, actor(req), scope, newFields(req.body));
      return reply.code(201).send(ok(fullView(ctx, { d, canEdit: true, scopeName: scope.name })));
    },
  );

  app.post(`${base}/import`, { config: authenticated, bodyLimit: MAX_DOCUMENT_BYTES, schema: { querystring: Type.Object(ScopeFields) } }, async (req, reply) => {
    const body = req.body as unknown;
    const text = typeof body === 'string' ? body : typeof (body as { yaml?: unknown })?.yaml === 'string' ? (body as { yaml: string }).yaml : null;
    if (text === null) throw badRequest('Send the dashboard as YAML (Content-Type: application/yaml), or as JSON {"yaml": "…"}.');
    const target = typeof body === 'object' && body !== null ? { ...req.query, ...(body as { fractal_id?: string; prism_id?: string }) } : req.query;
    const scope = dashboardScope(ctx, req.principal!, { fractal_id: target.fractal_id, prism_id: target.prism_id }, true);
    const d = await importYaml(ctx, actor(req), scope, text);
    return reply.code(201).send(ok(fullView(ctx, { d, canEdit: true, scopeName: scope.name }), `Imported "${d.name}".`));
  });

  app.get(`${base}/:id`, { config: authenticated, schema: { params: IdParams } }, async (req) => ok(fullView(ctx, dashboardFor(ctx, req.principal!, req.params.id))));

  app.put(`${base}/:id`, { config: authenticated, schema: { params: IdParams, body: DashboardBody } }, async (req) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
    return ok(dashboardView(updateDashboard(ctx, actor(req), d, req.body)));
  });

  app.delete(`${base}/:id`, { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
    deleteDashboard(ctx, actor(req), d);
    return ok({ deleted: true });
  });

  // ---- widgets ----------------------------------------------------------------------------------

  app.post(`${base}/:id/widgets`, { config: authenticated, schema: { params: IdParams, body: WidgetBody } }, async (req, reply) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
    const { widget, moved } = await addWidget(ctx, actor(req), d, req.body);
    return reply.code(201).send(ok({ ...widgetFields(widget), result: null, moved }));
  });

  app.put(`${base}/:id/widgets/:widget_id`, { config: authenticated, schema: { params: WidgetParams, body: WidgetBody } }, async (req) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
    const w = await updateWidget(ctx, actor(req), d, req.params.widget_id, req.body);
    return ok({ ...widgetFields(w), result: storedResult(ctx.dashboards.get(d.id)!, w) });
  });

  app.delete(`${base}/:id/widgets/:widget_id`, { config: authenticated, schema: { params: WidgetParams } }, async (req) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
    deleteWidget(ctx, actor(req), d, req.params.widget_id);
    return ok({ deleted: true });
  });

  app.put(
    `${base}/:id/widgets/:widget_id/layout`,
    { config: authenticated, schema: { params: WidgetParams, body: Type.Object({ pos_x: Cell, pos_y: Cell, width: Cell, height: Cell }) } },
    async (req) => {
      const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
      const { widget, moved } = moveWidget(ctx, actor(req), d, req.params.widget_id, req.body);
      return ok({ ...boxOf(widget), moved, layout: ctx.dashboards.widgets(d.id).map(boxOf) });
    },
  );

  // ---- running ----------------------------------------------------------------------------------

  app.post(
    `${base}/:id/execute`,
    { config: authenticated, schema: { params: IdParams, body: Type.Optional(Type.Object({ ...RunBody, widget_ids: Type.Optional(Type.Array(Uuid, { maxItems: 100 })) })) } },
    async (req, reply) => {
      const { d } = dashboardFor(ctx, req.principal!, req.params.id);
      mayRun(req.principal!);
      const body = req.body ?? {};
      let widgets = ctx.dashboards.widgets(d.id, true);
      if (body.widget_ids) {
        const wanted = new Set(body.widget_ids.map((i) => i.toLowerCase()));
        const unknown = [...wanted].find((i) => !widgets.some((w) => w.id === i));
        if (unknown) throw badRequest(`The field "widget_ids" names ${unknown}, which is not a widget of dashboard "${d.name}".`);
        widgets = widgets.filter((w) => wanted.has(w.id));
      }
      const outcomes = await runWidgets(ctx, d, widgets, { ...runOptions(d, body, req), signal: abortOnClose(reply) });
      return ok({
        executed_at: new Date().toISOString(),
        results: outcomes.map((o) => resultView(o.widget, o.run, { cached: o.cached, stale: false })),
      });
    },
  );

  app.post(
    `${base}/:id/widgets/:widget_id/execute`,
    { config: authenticated, schema: { params: WidgetParams, body: Type.Optional(Type.Object(RunBody)) } },
    async (req, reply) => {
      const { d } = dashboardFor(ctx, req.principal!, req.params.id);
      mayRun(req.principal!);
      const w = widgetOf(ctx, d, req.params.widget_id, true);
      const [o] = await runWidgets(ctx, d, [w], { ...runOptions(d, req.body ?? {}, req), signal: abortOnClose(reply) });
      const { run } = o!;
      if (!run.success) {
        // One widget asked for: its failure is the answer's status (the result is stored all the same).
        const status = run.error_type === 'timeout' ? 408 : run.error_type === 'execution' ? 500 : 400;
        throw new HttpError(status, run.error!.replace(/([^.!?])$/, '$1.'), {}, { error_type: run.error_type, ...(run.error_pos ? { error_pos: run.error_pos } : {}) });
      }
      return ok(resultView(w, run, { cached: o!.cached, stale: false }));
    },
  );

  app.put(`${base}/:id/variables`, { config: authenticated, schema: { params: IdParams, body: Type.Object({ variables: VariablesField, version: Version }) } }, async (req) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
    const updated = setVariables(ctx, actor(req), d, req.body.variables, req.body.version);
    return ok({ variables: updated.variables, version: updated.version });
  });

  app.put(
    `${base}/:id/refresh-interval`,
    { config: authenticated, schema: { params: IdParams, body: Type.Object({ refresh_interval_s: Type.Unknown(), version: Version }) } },
    async (req) => {
      const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
      const updated = setRefreshInterval(ctx, actor(req), d, req.body.refresh_interval_s, req.body.version);
      return ok({ refresh_interval_s: updated.refresh_interval_s, version: updated.version });
    },
  );

  // ---- export -----------------------------------------------------------------------------------

  app.get(`${base}/:id/export`, { config: authenticated, schema: { params: IdParams } }, async (req, reply) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id);
    const file = `dashboard-${d.name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'export'}.yaml`;
    return reply
      .header('content-disposition', `attachment; filename="${file}"`)
      .type('application/yaml; charset=utf-8')
      .send(exportYaml(d, ctx.dashboards.widgets(d.id)));
  });

  // ---- shared links -------------------------------------------------------------------------------

  app.get(`${base}/:id/shared-links`, { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
    return ok(ctx.dashboards.links(d.id).map((l) => linkView(l)));
  });

  app.post(
    `${base}/:id/shared-links`,
    {
      config: authenticated,
      schema: {
        params: IdParams,
        body: Type.Optional(Type.Object({ label: Type.Optional(Type.String({ maxLength: 10_000 })), expires_at: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])) })),
      },
    },
    async (req, reply) => {
      const access = dashboardFor(ctx, req.principal!, req.params.id, true);
      const link = createLink(ctx, actor(req), access, req.body ?? {}, publicBase(ctx, req));
      return reply.code(201).send(ok(link, 'The link is shown once: copy it now.'));
    },
  );

  app.delete(`${base}/:id/shared-links/:link_id`, { config: authenticated, schema: { params: LinkParams } }, async (req) => {
    const { d } = dashboardFor(ctx, req.principal!, req.params.id, true);
    deleteLink(ctx, actor(req), d, req.params.link_id);
    return ok({ deleted: true });
  });

  liveRoutes(app, ctx.live, {
    kind: LIVE_KIND,
    path: `${base}/:id`,
    authorize: (req, id) => {
      dashboardFor(ctx, req.principal!, id);
    },
  });

  // ---- the public side of a shared link -------------------------------------------------------------

  const TokenParams = Type.Object({ token: Type.String({ maxLength: 200 }) });
  const publicHeaders = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow', 'referrer-policy': 'no-referrer' };

  // The answer may be kept by the reader's browser but must be asked for again each time (a link
  // deleted or switched off is a 404 at once); a reader holding the current one gets a 304.
  const publicApiHeaders = { ...publicHeaders, 'cache-control': 'private, no-cache' };
  app.get('/api/v1/shared/:token', { config: { access: { public: true } }, schema: { params: TokenParams } }, async (req, reply) => {
    const view = await publicDashboard(ctx, req.params.token);
    reply.headers(publicApiHeaders).header('etag', view.etag);
    if (req.headers['if-none-match'] === view.etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(view.body);
  });

  // The page is the UI's own (renderer/src/shared.ts picks it by its path), answered 404 when the link is not live.
  app.get('/shared/:token', { config: { access: { public: true } }, schema: { params: TokenParams } }, async (req, reply) => {
    let status = 200;
    try {
      liveLink(ctx, req.params.token);
    } catch (err) {
      if (!(err instanceof HttpError) || err.statusCode !== 404) throw err;
      status = 404;
    }
    let html: string;
    try {
      html = await indexHtml();
    } catch {
      return reply.code(503).type('text/plain').send('The web UI has not been built. Run `npm run build:ui` (npm start does this for you).\n');
    }
    return reply.code(status).headers(publicHeaders).type('text/html; charset=utf-8').send(html);
  });
}

/** The UI's index.html, read again only when the file changed (a wall of screens reloading the public page reads it often). */
let indexCache: { mtimeMs: number; html: string } | undefined;
async function indexHtml(): Promise<string> {
  const file = path.join(UI_DIR, 'index.html');
  const { mtimeMs } = await stat(file);
  if (indexCache?.mtimeMs !== mtimeMs) indexCache = { mtimeMs, html: await readFile(file, 'utf8') };
  return indexCache.html;
}

// Public read-only links to a dashboard (interface-spec "Dashboards", conventions.md): an analyst of
// the dashboard's scope makes one while an admin allows it (`shared_links_enabled`); anyone with
// its token then reads the dashboard at GET /api/v1/shared/{token} (and the page /shared/{token})
// without signing in. Deleted, expired, or links switched off: 404, the same answer as a token that
// never existed, so the route tells nothing about which tokens exist.
//
// A token is 256 random bits; only its SHA-256 is stored, so it is shown once, when made.
//
// What a public reader gets is the dashboard's own name, description, layout and widgets' last
// results: no ids of its fractal or prism (event rows lose their fractal_id and log_id), no
// variables, no author, no SQL, and no query text when the dashboard hides it
// (`shared_hide_queries`, on by default). The answer is built once per dashboard revision and kept
// as bytes with an entity tag (a hit is a map look-up and a write, or a 304); a little before its
// results are one refresh interval old (PUBLIC_MAX_AGE_S when the dashboard does not refresh), a
// read starts one rebuild in the background, which refreshes the stale widgets through
// widget-runs.ts at a lower OS priority than the service's requests (query-service `lowPriority`:
// the engine's threads must not starve the event loop that serves the readers), and readers get
// the built answer meanwhile: however many read, a widget costs
// one query per refresh (about one per interval), and while rebuilding takes less than the head
// start no answer is older than the interval.
import { createHash, randomBytes } from 'node:crypto';
import type { Context } from '../context.ts';
import { badRequest, forbidden, notFound } from '../http/errors.ts';
import { sha256 } from '../storage/secret-box.ts';
import { publish, type DashboardAccess } from './dashboards-logic.ts';
import type { Dashboard, SharedLink } from './dashboards-store.ts';
import { displayChart } from './display.ts';
import { runWidgets, type PublicView, type WidgetRun } from './widget-runs.ts';
import { actorName, type Actor } from '../shared/documents.ts';

export const TOKEN_PREFIX = 'svc_share_';
/** How old a public reader's results may be when the dashboard does not refresh by itself. */
export const PUBLIC_MAX_AGE_S = 60;
const MAX_LABEL = 200;
const MAX_LINKS = 50;
/** last_used_at is written at most this often per link (not on every public read). */
const TOUCH_EVERY_MS = 60_000;

/** A link as its dashboard's analysts see it (never the token, which only its maker saw). */
export function linkView(l: SharedLink, now = Date.now()) {
  return {
    id: l.id,
    dashboard_id: l.dashboard_id,
    label: l.label,
    token_prefix: l.token_prefix,
    expires_at: l.expires_at,
    expired: l.expires_at !== null && Date.parse(l.expires_at) <= now,
    created_by: l.created_by,
    created_at: l.created_at,
    last_used_at: l.last_used_at,
  };
}

/** A new link: refused while links are switched off; `expires_at` (optional) must be in the future. */
export function createLink(ctx: Context, a: Actor, access: DashboardAccess, input: { label?: string; expires_at?: string | null }, baseUrl: string) {
  if (!ctx.settings.get().shared_links_enabled) {
    throw forbidden('Shared links are switched off on this appliance; an administrator can allow them in the settings (shared_links_enabled).');
  }
  const label = (input.label ?? '').trim();
  if (label.length > MAX_LABEL) throw badRequest(`The field "label" must be at most ${MAX_LABEL} characters long.`);
  let expiresAt: string | null = null;
  if (input.expires_at != null && input.expires_at !== '') {
    const t = Date.parse(input.expires_at);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(input.expires_at) || Number.isNaN(t)) throw badRequest('The field "expires_at" must be an RFC 3339 time, or null for a link that does not expire.');
    if (t <= Date.now()) throw badRequest(`The field "expires_at" must lie in the future; ${input.expires_at} has passed.`);
    expiresAt = new Date(t).toISOString();
  }
  if (ctx.dashboards.links(access.d.id).length >= MAX_LINKS) throw badRequest(`Dashboard "${access.d.name}" already has ${MAX_LINKS} shared links; delete one first.`);
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const link = ctx.dashboards.addLink(access.d.id, { label, tokenHash: sha256(token), tokenPrefix: token.slice(0, TOKEN_PREFIX.length + 4), expiresAt }, actorName(a.p));
  publish(ctx, a.origin, access.d.id, 'shared_links_changed', { count: ctx.dashboards.links(access.d.id).length });
  return { ...linkView(link), token, url: `${baseUrl.replace(/\/+$/, '')}/shared/${token}` };
}

export function deleteLink(ctx: Context, a: Actor, d: Dashboard, linkId: string): void {
  const l = ctx.dashboards.link(linkId.toLowerCase());
  if (!l || l.dashboard_id !== d.id) throw notFound(`Shared link ${linkId} not found on dashboard "${d.name}".`);
  ctx.dashboards.deleteLink(l.id);
  if (ctx.dashboards.links(d.id).length === 0) ctx.dashboardRuns.publicViews.built.delete(d.id);
  publish(ctx, a.origin, d.id, 'shared_links_changed', { count: ctx.dashboards.links(d.id).length });
}

// ---- the public side ----------------------------------------------------------------------------

const GONE = 'This shared dashboard does not exist, has expired, or is no longer shared.';

/** The live link of a token, or 404 (links off, unknown, expired: all alike). */
export function liveLink(ctx: Context, token: string) {
  if (!ctx.settings.get().shared_links_enabled || !token.startsWith(TOKEN_PREFIX) || token.length > 100) throw notFound(GONE);
  const link = ctx.dashboards.linkByTokenHash(sha256(token));
  if (!link || (link.expires_at !== null && Date.parse(link.expires_at) <= Date.now())) throw notFound(GONE);
  return link;
}

/**
 * GET /api/v1/shared/{token}: the built answer, at once. From `refreshLeadMs` before its results
 * reach the interval (or once the dashboard changed: new results stored by a page count) a read
 * also starts one rebuild in the background, so that the new answer is ready before the old one is
 * a full interval old and no reader waits: answers stay within the interval as long as a rebuild
 * takes less than the lead. When rebuilding takes longer (a machine that cannot keep up) readers
 * still get the last answer at once rather than queueing behind the engine. Only a read with no
 * built answer waits: the first, or one after the dashboard's queries were hidden or shown
 * (dashboards-logic.ts drops the answer then: no reader sees hidden queries again). The price of
 * the head start: a widget runs about once per interval minus the lead, not once per interval.
 */
export async function publicDashboard(ctx: Context, token: string): Promise<PublicView> {
  const link = liveLink(ctx, token);
  const now = Date.now();
  if (!link.last_used_at || now - Date.parse(link.last_used_at) > TOUCH_EVERY_MS) ctx.dashboards.touchLink(link.id, new Date(now).toISOString());
  const maxAgeMs = (link.refresh_interval_s || PUBLIC_MAX_AGE_S) * 1000;
  const view = ctx.dashboardRuns.publicViews.built.get(link.dashboard_id);
  if (!view) return rebuild(ctx, link.dashboard_id, maxAgeMs, false);
  const lead = refreshLeadMs(view, maxAgeMs);
  if (view.revision !== link.revision || now - view.oldest >= maxAgeMs - lead) {
    // Readers meanwhile get the built answer: the refresh's queries yield the CPU to serving them.
    rebuild(ctx, link.dashboard_id, maxAgeMs - lead, true).catch((err) => ctx.log.error({ err, dashboard: link.dashboard_id }, 'refreshing a shared dashboard failed'));
  }
  return view;
}

/** The least head start a rebuild gets before the answer reaches the interval. */
const MIN_REFRESH_LEAD_MS = 1000;

/**
 * How long before the interval is reached a rebuild starts: twice the last build's time, at least
 * MIN_REFRESH_LEAD_MS, at most half the interval (so a widget runs at most twice per interval).
 */
export function refreshLeadMs(view: Pick<PublicView, 'buildMs'>, maxAgeMs: number): number {
  return Math.min(maxAgeMs / 2, Math.max(MIN_REFRESH_LEAD_MS, 2 * view.buildMs));
}

/**
 * One build at a time per dashboard (a burst of readers waits for the same one), reusing widget
 * results younger than `maxAgeMs`; kept while the dashboard still has links.
 */
function rebuild(ctx: Context, dashboardId: string, maxAgeMs: number, inBackground: boolean): Promise<PublicView> {
  const cache = ctx.dashboardRuns.publicViews;
  let build = cache.building.get(dashboardId);
  if (!build) {
    build = buildView(ctx, dashboardId, maxAgeMs, inBackground)
      .then((built) => {
        if (ctx.dashboards.links(dashboardId).length > 0) cache.built.set(dashboardId, built);
        return built;
      })
      .finally(() => cache.building.delete(dashboardId));
    cache.building.set(dashboardId, build);
  }
  return build;
}

async function buildView(ctx: Context, dashboardId: string, maxAgeMs: number, inBackground: boolean): Promise<PublicView> {
  const started = performance.now();
  const d = ctx.dashboards.get(dashboardId);
  if (!d) throw notFound(GONE);
  // The revision is read before the widgets: a change made while this builds makes the next read build again.
  const revision = d.revision;
  const outcomes = await runWidgets(ctx, d, ctx.dashboards.widgets(d.id, true), { maxAgeS: maxAgeMs / 1000, lowPriority: inBackground });
  const hide = d.shared_hide_queries;
  const widgets = outcomes.map(({ widget: w, run }) => {
    const chart = displayChart(w, run);
    return {
      id: w.id,
      title: w.title,
      ...chart,
      pos_x: w.pos_x,
      pos_y: w.pos_y,
      width: w.width,
      height: w.height,
      ...(hide ? {} : { query_content: w.query_content }),
      result: { ...publicResult(run, hide), ...chart },
    };
  });
  const oldest = outcomes.reduce((t, o) => Math.min(t, Date.parse(o.run.executed_at)), Date.now());
  const data = {
    name: d.name,
    description: d.description,
    time_range: d.time_range,
    start: d.time_start,
    end: d.time_end,
    refresh_interval_s: d.refresh_interval_s,
    max_age_s: d.refresh_interval_s || PUBLIC_MAX_AGE_S,
    hide_queries: hide,
    widgets,
  };
  const body = Buffer.from(JSON.stringify({ success: true, data }), 'utf8');
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { revision, oldest, body, etag, buildMs: performance.now() - started };
}

/** Columns of event rows that name this appliance's own records, not what happened: left out of public answers. */
const INTERNAL_COLUMNS = new Set(['fractal_id', 'log_id']);

/** A run for a public reader: the rows and how to draw them; an error without detail when queries are hidden. */
function publicResult(run: WidgetRun, hideQueries: boolean) {
  const internal = run.field_order.some((f) => INTERNAL_COLUMNS.has(f)) || run.results.some((r) => Object.keys(r).some((k) => INTERNAL_COLUMNS.has(k)));
  const base = {
    success: run.success,
    results: internal ? run.results.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !INTERNAL_COLUMNS.has(k)))) : run.results,
    count: run.count,
    field_order: run.field_order.filter((f) => !INTERNAL_COLUMNS.has(f)),
    is_aggregated: run.is_aggregated,
    limit_hit: run.limit_hit,
    start: run.start,
    end: run.end,
    executed_at: run.executed_at,
  };
  if (run.success) return base;
  return hideQueries
    ? { ...base, error: 'This widget could not be refreshed; its owners can see why on the dashboard.' }
    : { ...base, error: run.error, error_type: run.error_type, ...(run.error_pos ? { error_pos: run.error_pos } : {}) };
}

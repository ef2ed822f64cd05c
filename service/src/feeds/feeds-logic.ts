// Who may see and change feeds, the checks of a feed's fields, and the sync: the repository
// checked out (git.ts), every rule file read (rule-files.ts), every translation and native alert
// checked as an alert of the feed's scope (all queries at once), and the feed's alerts created,
// updated and deleted to match, through the alerts domain, in one transaction with the catalog.
// A sync that fails changes no alert. Reading a feed needs what querying its scope needs;
// changing or syncing one needs the admin role there (it makes the appliance fetch from a URL).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { enforceScopeRule } from '../auth/access.ts';
import type { Principal, ScopeType } from '../auth/principal.ts';
import { resolveReadScope } from '../auth/read-scope.ts';
import type { Context } from '../context.ts';
import { badRequest, conflict, HttpError, notFound } from '../http/errors.ts';
import { checkDefinitions, deleteFeedAlerts, syncFeedAlerts, type FeedAlertChanges } from '../alerts/alerts-logic.ts';
import type { Alert, AlertDefinition } from '../alerts/alerts-store.ts';
import type { Feed, FeedInput, FeedRule, Schedule, Severity, Status } from './feeds-store.ts';
import { checkout, FeedSourceError, locate } from './git.ts';
import { readRules, type RuleOutcome } from './rule-files.ts';
import { SKIP_CODES, type SkipCode } from './sigma/skip.ts';

export type FeedScope = { type: ScopeType; id: string };
export const scopeOfFeed = (f: Pick<Feed, 'fractal_id' | 'prism_id'>): FeedScope =>
  f.fractal_id ? { type: 'fractal', id: f.fractal_id } : { type: 'prism', id: f.prism_id! };

/** The feed as the API shows it: never its token, only whether it has one. */
export function feedView(ctx: Context, f: Feed) {
  const { auth_token_sealed, enabled, ...rest } = f;
  const next = ctx.feedScheduler?.next(f.id) ?? null;
  return { ...rest, enabled: enabled === 1, has_auth_token: auth_token_sealed !== null, next_sync_at: next ? next.toISOString() : null, syncing: syncing.has(f.id) };
}

export function readableFeed(ctx: Context, p: Principal | null, id: string): Feed {
  const f = ctx.feeds.get(id);
  const missing = notFound(`Feed ${id} not found.`);
  if (!f) throw missing;
  const s = scopeOfFeed(f);
  try {
    resolveReadScope(ctx, p, s.type === 'fractal' ? { fractal_id: s.id } : { prism_id: s.id });
  } catch (err) {
    throw err instanceof HttpError && err.statusCode === 404 ? missing : err;
  }
  return f;
}

export function mayManage(ctx: Context, p: Principal, scope: FeedScope): void {
  enforceScopeRule(p, { scope: scope.type, role: 'admin' }, ctx.roles.resolve(p, scope.type, scope.id), { needs: 'Managing feeds needs' });
}

export function manageableFeed(ctx: Context, p: Principal, id: string): Feed {
  const f = readableFeed(ctx, p, id);
  mayManage(ctx, p, scopeOfFeed(f));
  return f;
}

/** Where a new feed goes: the fractal or prism the body names, else the session's selection. */
export function targetScope(ctx: Context, p: Principal, body: { fractal_id?: string; prism_id?: string }): FeedScope {
  if (body.fractal_id && body.prism_id) throw badRequest('Give fractal_id or prism_id, not both.');
  const s = resolveReadScope(ctx, p, body);
  mayManage(ctx, p, s);
  return { type: s.type, id: s.id };
}

export interface FeedBody {
  name?: string;
  description?: string;
  repo_url?: string;
  branch?: string;
  path?: string;
  auth_token?: string | null;
  normalizer_id?: string | null;
  sync_schedule?: Schedule;
  min_severity?: Severity;
  min_status?: Status;
  enabled?: boolean;
}

/** A feed's fields from a body (over the stored feed for PUT), refused with 400 naming the field. */
export function checkedInput(ctx: Context, scope: FeedScope, b: FeedBody, current?: Feed): FeedInput {
  const name = (b.name ?? current?.name ?? '').trim();
  if (!name) throw badRequest('The field "name" must not be empty.');
  const other = ctx.feeds.byName(scope, name);
  if (other && other.id !== current?.id) throw conflict(`A feed named "${name}" already exists in this ${scope.type}.`);
  const repoUrl = (b.repo_url ?? current?.repo_url ?? '').trim();
  if (!repoUrl) throw badRequest('The field "repo_url" is required: an https://, http:// or file:// URL, or a local folder path.');
  try {
    locate(repoUrl);
  } catch (err) {
    if (err instanceof FeedSourceError) throw badRequest(err.message);
    throw err;
  }
  const branch = (b.branch ?? current?.branch ?? 'main').trim();
  if (!/^[A-Za-z0-9._/-]+$/.test(branch) || branch.startsWith('-') || branch.includes('..')) {
    throw badRequest(`The field "branch" is not a branch name: "${branch}".`);
  }
  const sub = (b.path ?? current?.path ?? '').trim().replace(/^\/+|\/+$/g, '');
  if (sub.split('/').includes('..')) throw badRequest('The field "path" must stay inside the repository (no "..").');
  const normalizerId = b.normalizer_id === undefined ? (current?.normalizer_id ?? null) : b.normalizer_id;
  if (normalizerId && !ctx.normalizers.get(normalizerId)) throw badRequest(`The field "normalizer_id" names no normalizer (${normalizerId}).`);
  return {
    name,
    description: b.description ?? current?.description ?? '',
    repo_url: repoUrl,
    branch,
    path: sub,
    auth_token: b.auth_token === undefined ? undefined : b.auth_token === '' ? null : b.auth_token,
    normalizer_id: normalizerId,
    sync_schedule: b.sync_schedule ?? current?.sync_schedule ?? 'daily',
    min_severity: b.min_severity ?? current?.min_severity ?? 'informational',
    min_status: b.min_status ?? current?.min_status ?? 'experimental',
    enabled: b.enabled ?? (current ? current.enabled === 1 : true),
  };
}

/** Deletes a feed with its alerts (manual copies of them stay). */
export function deleteFeed(ctx: Context, f: Feed): number {
  return ctx.db.transaction(() => {
    const n = deleteFeedAlerts(ctx, f.id);
    ctx.feeds.delete(f.id);
    return n;
  })();
}

// ---- sync -----------------------------------------------------------------------------------------

/** Feeds being synced now (one sync per feed at a time), with the sync's promise. */
const syncing = new Map<string, Promise<unknown>>();

/** Resolves once no sync runs (the appliance waits for this before it closes its stores). */
export async function waitForSyncs(): Promise<void> {
  while (syncing.size > 0) await Promise.allSettled([...syncing.values()]);
}

export interface SyncResult {
  status: 'ok' | 'failed';
  error: string | null;
  commit: string | null;
  ms: number;
  imported: number;
  skipped: number;
  created: number;
  updated: number;
  deleted: number;
}

/** A sync failure for the HTTP answer: a refused checkout is the feed's settings (400), a hang 504. */
export class FeedSyncError extends HttpError {}

const sameDefinition = (a: Alert, d: AlertDefinition) =>
  a.name === d.name &&
  a.description === d.description &&
  a.query_string === d.query_string &&
  a.alert_type === d.alert_type &&
  a.severity === d.severity &&
  a.throttle_time_seconds === d.throttle_time_seconds &&
  a.throttle_field === d.throttle_field &&
  a.source_rule_id === (d.source_rule_id ?? null) &&
  JSON.stringify(a.labels) === JSON.stringify(d.labels) &&
  JSON.stringify(a.references) === JSON.stringify(d.references);

function skip(o: RuleOutcome, code: SkipCode, reason: string): void {
  o.rule.imported = false;
  o.rule.reason_code = code;
  o.rule.reason = reason;
  delete o.alert;
}

/** Syncs a feed now; the outcome is recorded on the feed either way. Throws 409 while it is already syncing. */
export function syncFeed(ctx: Context, feedId: string): Promise<SyncResult> {
  const feed = ctx.feeds.get(feedId);
  if (!feed) throw notFound(`Feed ${feedId} not found.`);
  if (syncing.has(feedId)) throw conflict(`Feed "${feed.name}" is syncing already; wait for it to finish.`);
  const run = runSync(ctx, feed).finally(() => syncing.delete(feedId));
  syncing.set(feedId, run);
  return run;
}

async function runSync(ctx: Context, feed: Feed): Promise<SyncResult> {
  const t0 = performance.now();
  const workDir = path.join(ctx.config.dataDir, 'feeds');
  mkdirSync(workDir, { recursive: true });
  let dispose = () => {};
  try {
    const loc = locate(feed.repo_url);
    const co = await checkout(loc, { branch: feed.branch, authToken: ctx.feeds.authToken(feed), workDir, timeoutMs: ctx.config.feedGitTimeoutS * 1000 });
    dispose = co.dispose;
    const normalizer = feed.normalizer_id ? ctx.normalizerCache.byId(feed.normalizer_id) : ctx.normalizerCache.defaultOne();
    const fieldName = normalizer ? normalizer.fieldName : (n: string) => n;
    const outcomes = readRules(feed, co.root, fieldName);

    const seen = new Map<string, string>();
    for (const o of outcomes) {
      if (!o.alert || !o.rule.rule_id) continue;
      const first = seen.get(o.rule.rule_id);
      if (first) skip(o, 'duplicate', `the rule id ${o.rule.rule_id} is also in ${first}`);
      else seen.set(o.rule.rule_id, o.rule.source_path);
    }

    const scope = scopeOfFeed(feed);
    const existing = new Map(ctx.alerts.ofFeed(feed.id).map((a) => [a.source_path ?? '', a]));
    const importing = outcomes.filter((o) => o.alert);
    const bodies = importing.map((o) => {
      const current = existing.get(o.rule.source_path);
      // What a person set on a feed alert (on or off, its actions) stays through syncs.
      return {
        ...(o.alert as object),
        enabled: current ? current.enabled : true,
        webhook_action_ids: current?.actions.webhook,
        email_action_ids: current?.actions.email,
        fractal_action_ids: current?.actions.fractal,
        dictionary_action_ids: current?.actions.dictionary,
      };
    });
    const checked = await checkDefinitions(ctx, scope, bodies);
    const changes: FeedAlertChanges = { create: [], update: [], delete: [] };
    importing.forEach((o, i) => {
      const d = checked[i]!;
      if (d instanceof HttpError) {
        const code = o.rule.kind === 'alert' ? 'invalid_alert' : /regular expression/.test(d.message) ? 'unsupported_regex' : /Query too long/.test(d.message) ? 'query_too_long' : 'query_error';
        skip(o, code, o.rule.kind === 'alert' ? d.message : d.message.replace(/^The field "query_string" /, 'the translation '));
        return;
      }
      const def: AlertDefinition = { ...d, feed_id: feed.id, source_path: o.rule.source_path, source_rule_id: o.rule.rule_id };
      const current = existing.get(o.rule.source_path);
      if (!current) changes.create.push(def);
      else if (!sameDefinition(current, def)) changes.update.push({ id: current.id, definition: def });
    });
    const kept = new Set(outcomes.filter((o) => o.rule.imported).map((o) => o.rule.source_path));
    for (const [p, a] of existing) if (!kept.has(p)) changes.delete.push(a.id);

    const rules: FeedRule[] = outcomes.map((o) => o.rule);
    const imported = rules.filter((r) => r.imported).length;
    const ms = performance.now() - t0;
    const applied = ctx.db.transaction(() => {
      const r = syncFeedAlerts(ctx, feed.id, changes, `feed ${feed.name}`);
      ctx.feeds.replaceCatalog(feed.id, rules);
      ctx.feeds.recordSync(feed.id, { status: 'ok', error: null, commit: co.commit, ms, imported, skipped: rules.length - imported });
      return r;
    })();
    return { status: 'ok', error: null, commit: co.commit, ms: Math.round(ms), imported, skipped: rules.length - imported, created: applied.created.length, updated: applied.updated, deleted: applied.deleted };
  } catch (err) {
    if (!(err instanceof FeedSourceError)) throw err;
    const ms = performance.now() - t0;
    ctx.feeds.recordSync(feed.id, { status: 'failed', error: err.message, commit: null, ms });
    return { status: 'failed', error: err.message, commit: null, ms: Math.round(ms), imported: feed.imported_count, skipped: feed.skipped_count, created: 0, updated: 0, deleted: 0 };
  } finally {
    dispose();
  }
}

/** A scheduled (or background) sync: its outcome is on the feed; an unexpected error is logged. */
export async function syncInBackground(ctx: Context, feedId: string): Promise<void> {
  try {
    if (!ctx.feeds.get(feedId)) return;
    const r = await syncFeed(ctx, feedId);
    if (r.status === 'failed') ctx.log.warn({ feed: feedId, error: r.error }, 'feed sync failed');
  } catch (err) {
    if (err instanceof HttpError && err.statusCode === 409) return; // a sync is running already
    ctx.log.error({ feed: feedId, err: (err as Error).message }, 'feed sync failed unexpectedly');
    ctx.feeds.get(feedId) && ctx.feeds.recordSync(feedId, { status: 'failed', error: `The sync failed unexpectedly: ${(err as Error).message}`, commit: null, ms: 0 });
  }
}

/** Filters of the skipped list: a reason code and text matched in the title, path or reason. */
export function skippedRules(ctx: Context, f: Feed, filter: { reason?: string; q?: string }): Array<FeedRule & { reason_label: string }> {
  if (filter.reason && !(filter.reason in SKIP_CODES)) {
    throw badRequest(`The query parameter "reason" must be one of ${Object.keys(SKIP_CODES).join(', ')}.`);
  }
  const q = filter.q?.trim().toLowerCase();
  return ctx.feeds
    .catalog(f.id, true)
    .filter((r) => !filter.reason || r.reason_code === filter.reason)
    .filter((r) => !q || `${r.title}\n${r.source_path}\n${r.reason}\n${r.tags.join(' ')}`.toLowerCase().includes(q))
    .map((r) => ({ ...r, reason_label: SKIP_CODES[r.reason_code as SkipCode] ?? '' }));
}

// Who may read and change alerts, and the checks every alert passes before it is stored, whether
// it comes from the API, a YAML import or a feed: its query compiles for its scope (a 400 with
// `error_pos` otherwise), its type fits the query (compound needs an aggregation), its severity,
// throttle and actions are valid. Reading an alert needs what querying its fractal or prism needs;
// changing one needs the analyst role there (an API key: `alert_manage`).
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parseAllDocuments } from 'yaml';
import { enforceScopeRule } from '../auth/access.ts';
import type { Principal, ScopeType } from '../auth/principal.ts';
import { resolveReadScope } from '../auth/read-scope.ts';
import type { Context } from '../context.ts';
import { badRequest, HttpError, notFound } from '../http/errors.ts';
import { validationSentence } from '../http/validation-message.ts';
import { prepareScopeQueries, prepareScopeQuery, QueryInputError, type PreparedQuery } from '../query/query-service.ts';
import { ACTION_KINDS, SEVERITIES, type ActionIds, type Alert, type AlertDefinition, type AlertType, type Severity } from './alerts-store.ts';

/**
 * Switching an alert on (again) starts its window this far back, not where it stopped, on a whole
 * minute: alerts switched on within the same minute then start together and share their first scan.
 */
export const ENABLE_LOOKBACK_MS = 5 * 60_000;
export const enableCursor = (now = Date.now()): string => new Date(Math.floor((now - ENABLE_LOOKBACK_MS) / 60_000) * 60_000).toISOString();

/** A field name of the query language (query-language.md §1.1 identifier). */
const FIELD = /^[\p{L}_][\p{L}\p{N}_.*-]{0,199}$/u;
const MAX_THROTTLE_S = 30 * 86_400;

const Strings = (maxItems: number, maxLength: number) => Type.Array(Type.String({ maxLength }), { maxItems });
const Ids = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 });

/** An alert as a request (or a YAML document) gives it; every field optional for PUT. */
export const AlertBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  fractal_id: Type.Optional(Type.String()),
  prism_id: Type.Optional(Type.String()),
  query_string: Type.Optional(Type.String({ maxLength: 100_000 })),
  alert_type: Type.Optional(Type.String()),
  severity: Type.Optional(Type.String()),
  labels: Type.Optional(Strings(100, 200)),
  references: Type.Optional(Strings(100, 2000)),
  enabled: Type.Optional(Type.Boolean()),
  throttle_time_seconds: Type.Optional(Type.Integer()),
  throttle_field: Type.Optional(Type.String({ maxLength: 200 })),
  webhook_action_ids: Type.Optional(Ids),
  email_action_ids: Type.Optional(Ids),
  fractal_action_ids: Type.Optional(Ids),
  dictionary_action_ids: Type.Optional(Ids),
});
export type AlertBody = Static<typeof AlertBody>;

const idsField = (kind: (typeof ACTION_KINDS)[number]) => `${kind}_action_ids` as const;

/** The alert as the API shows it. */
export function view(a: Alert) {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    fractal_id: a.fractal_id,
    prism_id: a.prism_id,
    query_string: a.query_string,
    alert_type: a.alert_type,
    severity: a.severity,
    labels: a.labels,
    references: a.references,
    enabled: a.enabled,
    throttle_time_seconds: a.throttle_time_seconds,
    throttle_field: a.throttle_field,
    webhook_action_ids: a.actions.webhook,
    email_action_ids: a.actions.email,
    fractal_action_ids: a.actions.fractal,
    dictionary_action_ids: a.actions.dictionary,
    feed_id: a.feed_id,
    source_path: a.source_path,
    source_rule_id: a.source_rule_id,
    disabled_reason: a.disabled_reason,
    last_error: a.last_error,
    failure_count: a.failure_count,
    last_triggered: a.last_triggered,
    last_match_count: a.last_match_count,
    last_evaluated_at: a.last_evaluated_at,
    last_execution_ms: a.last_execution_ms,
    created_by: a.created_by,
    created_at: a.created_at,
    updated_at: a.updated_at,
  };
}

export const scopeOf = (a: Pick<Alert, 'fractal_id' | 'prism_id'>): { type: ScopeType; id: string } =>
  a.fractal_id ? { type: 'fractal', id: a.fractal_id } : { type: 'prism', id: a.prism_id! };

export const creatorName = (p: Principal): string => (p.kind === 'user' ? p.user.username : `api key ${p.key.name}`);

/** The alert `id` if the caller may read it; otherwise 404, so its existence is not revealed. */
export function readable(ctx: Context, p: Principal | null, id: string): Alert {
  const a = ctx.alerts.get(id);
  const missing = notFound(`Alert ${id} not found.`);
  if (!a) throw missing;
  const s = scopeOf(a);
  try {
    resolveReadScope(ctx, p, s.type === 'fractal' ? { fractal_id: s.id } : { prism_id: s.id });
  } catch (err) {
    throw err instanceof HttpError && err.statusCode === 404 ? missing : err;
  }
  return a;
}

/** Refuses unless the caller may change alerts of this fractal or prism. */
export function mayChange(ctx: Context, p: Principal, scope: { type: ScopeType; id: string }): void {
  enforceScopeRule(p, { scope: scope.type, role: 'analyst', keyPermission: 'alert_manage' }, ctx.roles.resolve(p, scope.type, scope.id), {
    needs: 'Changing alerts needs',
  });
}

export function writable(ctx: Context, p: Principal, id: string): Alert {
  const a = readable(ctx, p, id);
  mayChange(ctx, p, scopeOf(a));
  return a;
}

/** Where a new alert goes: the fractal or prism the body names, else the session's selection. */
export function targetScope(ctx: Context, p: Principal, body: { fractal_id?: string; prism_id?: string }): { type: ScopeType; id: string } {
  if (body.fractal_id && body.prism_id) throw badRequest('Give fractal_id or prism_id, not both.');
  const s = resolveReadScope(ctx, p, body);
  mayChange(ctx, p, s);
  return { type: s.type, id: s.id };
}

const fieldError = (where: string, field: string, sentence: string) => badRequest(`${where}The field "${field}" ${sentence}`);

/** The checks of an alert's own fields (everything but whether its query compiles). */
function checkFields(ctx: Context, scope: { type: ScopeType; id: string }, b: AlertBody, where: string) {
  const name = (b.name ?? '').trim();
  if (!name) throw fieldError(where, 'name', 'must not be empty.');
  const query = b.query_string ?? '';
  if (!query.trim()) throw fieldError(where, 'query_string', 'must not be empty.');
  const alertType = b.alert_type ?? 'event';
  if (alertType !== 'event' && alertType !== 'compound') throw fieldError(where, 'alert_type', 'must be event or compound.');
  const severity = (b.severity ?? 'medium') as Severity;
  if (!SEVERITIES.includes(severity)) throw fieldError(where, 'severity', `must be one of ${SEVERITIES.join(', ')}.`);
  const throttle = b.throttle_time_seconds ?? 0;
  if (!Number.isInteger(throttle) || throttle < 0 || throttle > MAX_THROTTLE_S) {
    throw fieldError(where, 'throttle_time_seconds', `must be a whole number of seconds from 0 to ${MAX_THROTTLE_S}.`);
  }
  const throttleField = (b.throttle_field ?? '').trim();
  if (throttleField && !FIELD.test(throttleField)) {
    throw fieldError(where, 'throttle_field', `is not a field name: use letters, digits, "_", ".", "-", starting with a letter or "_".`);
  }
  const actions: ActionIds = { webhook: [], email: [], fractal: [], dictionary: [] };
  for (const kind of ACTION_KINDS) {
    const ids = [...new Set(b[idsField(kind)] ?? [])];
    for (const id of ids) {
      const a = ctx.alertActions.get(kind, id);
      const usable = a && ((!a.fractal_id && !a.prism_id) || (scope.type === 'fractal' ? a.fractal_id === scope.id : a.prism_id === scope.id));
      if (!usable) throw fieldError(where, idsField(kind), `names an unknown ${kind} action: ${id} (an alert uses actions of its own ${scope.type} or global ones).`);
    }
    actions[kind] = ids;
  }
  return { name, query, alertType: alertType as AlertType, severity, throttle, throttleField, actions };
}

/** The definition once its query is prepared (or the 400 its query's error makes). */
function definitionOf(
  scope: { type: ScopeType; id: string },
  b: AlertBody,
  f: ReturnType<typeof checkFields>,
  prepared: PreparedQuery | QueryInputError,
  where: string,
): AlertDefinition {
  if (prepared instanceof QueryInputError) {
    throw new HttpError(400, `${where}The field "query_string" does not compile: ${prepared.message.replace(/\.?$/, '.')}`, {}, prepared.errorPos ? { error_pos: prepared.errorPos } : {});
  }
  const aggregated = prepared.compiled.isAggregated;
  if (f.alertType === 'compound' && !aggregated) {
    throw fieldError(where, 'alert_type', 'is compound, which fires on the rows of an aggregating query (e.g. groupBy(user) | _count > 20); this query returns events: use event.');
  }
  if (f.alertType === 'event' && aggregated) {
    throw fieldError(where, 'alert_type', 'is event, which fires on matching events; this query aggregates: use compound.');
  }
  return {
    name: f.name,
    description: b.description ?? '',
    fractal_id: scope.type === 'fractal' ? scope.id : null,
    prism_id: scope.type === 'prism' ? scope.id : null,
    query_string: f.query,
    alert_type: f.alertType,
    severity: f.severity,
    labels: b.labels ?? [],
    references: b.references ?? [],
    enabled: b.enabled ?? true,
    throttle_time_seconds: f.throttle,
    throttle_field: f.throttleField,
    actions: f.actions,
  };
}

/** A query checked for a scope over the last minute (what saving an alert validates). */
const checkRequest = (query: string, scope: { type: ScopeType; id: string }) => {
  const end = new Date();
  return { query, scope, start: new Date(end.getTime() - 60_000), end };
};

/**
 * Every check of an alert, as it will be stored in `scope`. `where` prefixes the sentences of an
 * import ("alerts[2] (line 14): "). Throws a 400 naming the field.
 */
export async function checkDefinition(
  ctx: Context,
  scope: { type: ScopeType; id: string },
  b: AlertBody,
  where = '',
): Promise<AlertDefinition> {
  const f = checkFields(ctx, scope, b, where);
  let prepared: PreparedQuery | QueryInputError;
  try {
    prepared = await prepareScopeQuery(ctx, checkRequest(f.query, scope));
  } catch (err) {
    if (!(err instanceof QueryInputError)) throw err;
    prepared = err;
  }
  return definitionOf(scope, b, f, prepared, where);
}

/**
 * checkDefinition for the many alerts of a feed sync, their queries checked together (thousands of
 * regexes in a few engine statements instead of one each). Each result is the definition or the
 * 400 that checkDefinition would have thrown.
 */
export async function checkDefinitions(ctx: Context, scope: { type: ScopeType; id: string }, bodies: AlertBody[]): Promise<Array<AlertDefinition | HttpError>> {
  const fields = bodies.map((b) => {
    try {
      return checkFields(ctx, scope, b, '');
    } catch (err) {
      if (err instanceof HttpError) return err;
      throw err;
    }
  });
  const prepared = await prepareScopeQueries(ctx, fields.flatMap((f) => (f instanceof HttpError ? [] : [checkRequest(f.query, scope)])));
  let next = 0;
  return fields.map((f, i) => {
    if (f instanceof HttpError) return f;
    try {
      return definitionOf(scope, bodies[i]!, f, prepared[next++]!, '');
    } catch (err) {
      if (err instanceof HttpError) return err;
      throw err;
    }
  });
}

/** The body an existing alert would have, for PUT's partial update and for duplicate. */
export function bodyOf(a: Alert): AlertBody {
  const v = view(a);
  return {
    name: v.name, description: v.description, query_string: v.query_string, alert_type: v.alert_type, severity: v.severity,
    labels: v.labels, references: v.references, enabled: v.enabled, throttle_time_seconds: v.throttle_time_seconds,
    throttle_field: v.throttle_field, webhook_action_ids: v.webhook_action_ids, email_action_ids: v.email_action_ids,
    fractal_action_ids: v.fractal_action_ids, dictionary_action_ids: v.dictionary_action_ids,
  };
}

export async function createAlert(ctx: Context, p: Principal, b: AlertBody): Promise<Alert> {
  const scope = targetScope(ctx, p, b);
  const d = await checkDefinition(ctx, scope, b);
  return ctx.alerts.create(d, creatorName(p), enableCursor());
}

export async function updateAlert(ctx: Context, p: Principal, id: string, b: AlertBody): Promise<Alert> {
  const a = writable(ctx, p, id);
  if ((b.fractal_id && b.fractal_id !== a.fractal_id) || (b.prism_id && b.prism_id !== a.prism_id)) {
    throw badRequest('An alert cannot move to another fractal or prism; duplicate it there instead.');
  }
  const d = await checkDefinition(ctx, scopeOf(a), { ...bodyOf(a), ...b });
  // A feed's alert is the feed's: an edit becomes a manual copy, and the next sync keeps the feed's version as the repository has it.
  if (a.feed_id) return ctx.alerts.create({ ...d, feed_id: null, source_path: null, source_rule_id: null }, creatorName(p), enableCursor());
  return ctx.alerts.update(id, d, enableCursor());
}

/** A copy in the same scope, switched off (two alerts firing on the same logs is rarely wanted). */
export function duplicateAlert(ctx: Context, p: Principal, id: string): Alert {
  const a = writable(ctx, p, id);
  const d: AlertDefinition = { ...a, name: `${a.name} (copy)`.slice(0, 200), enabled: false, feed_id: null, source_path: null, source_rule_id: null };
  return ctx.alerts.create(d, creatorName(p), enableCursor());
}

/** Switches alerts on or off; every one must be changeable by the caller (else nothing changes). */
export function toggleAlerts(ctx: Context, p: Principal, ids: string[], enabled: boolean): number {
  for (const id of ids) writable(ctx, p, id);
  return ctx.alerts.setEnabled(ids, enabled, enableCursor());
}

// ---- YAML import --------------------------------------------------------------------------------

const MAX_IMPORT = 1000;

/** The alerts a YAML text holds: one alert, a list, `alerts: [...]`, or several documents. */
export function alertsFromYaml(text: string): Array<{ body: Record<string, unknown>; line: number }> {
  const docs = parseAllDocuments(text);
  const list: Array<{ body: Record<string, unknown>; line: number }> = [];
  const lineOf = (offset: number) => text.slice(0, offset).split('\n').length;
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    const err = doc.errors[0];
    if (err) {
      const pos = err.linePos?.[0];
      throw badRequest(`The YAML is not valid${pos ? ` at line ${pos.line}, column ${pos.col}` : ''}: ${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}.`);
    }
    const contents = doc.contents as { items?: Array<{ range?: [number, number, number]; value?: { range?: [number, number, number] } }>; range?: [number, number, number] } | null;
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    const items: Array<{ v: unknown; offset: number }> = [];
    if (Array.isArray(value)) value.forEach((v, i) => items.push({ v, offset: contents?.items?.[i]?.range?.[0] ?? 0 }));
    else if (typeof value === 'object' && Array.isArray((value as { alerts?: unknown }).alerts)) {
      const seq = (contents?.items ?? []).find((it) => (it as { key?: { value?: unknown } }).key?.value === 'alerts')?.value as { items?: Array<{ range?: [number, number, number] }> } | undefined;
      ((value as { alerts: unknown[] }).alerts).forEach((v, i) => items.push({ v, offset: seq?.items?.[i]?.range?.[0] ?? 0 }));
    } else items.push({ v: value, offset: contents?.range?.[0] ?? 0 });
    for (const { v, offset } of items) {
      const line = lineOf(offset);
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw badRequest(`The YAML item at line ${line} is not an alert (a mapping of alert fields).`);
      list.push({ body: v as Record<string, unknown>, line });
    }
  }
  if (list.length === 0) throw badRequest('The YAML holds no alert.');
  if (list.length > MAX_IMPORT) throw badRequest(`The YAML holds ${list.length} alerts; import at most ${MAX_IMPORT} at a time.`);
  return list;
}

/** Imports every alert of a YAML text, all or none, into the scope each names (else `fallback`). */
export async function importAlerts(ctx: Context, p: Principal, text: string, fallback: { fractal_id?: string; prism_id?: string }): Promise<Alert[]> {
  const items = alertsFromYaml(text);
  const defs: AlertDefinition[] = [];
  for (const [i, { body, line }] of items.entries()) {
    const where = `alerts[${i}] (line ${line}): `;
    const issue = [...Value.Errors(AlertBody, body)][0];
    if (issue) throw badRequest(where + validationSentence([issue as never], 'body'));
    const b = body as AlertBody;
    const scope = targetScope(ctx, p, b.fractal_id || b.prism_id ? b : fallback);
    defs.push(await checkDefinition(ctx, scope, b, where));
  }
  const cursor = enableCursor();
  const ids = ctx.alerts.transaction(() => defs.map((d) => ctx.alerts.insert(d, creatorName(p), cursor)));
  const byId = new Map(ctx.alerts.getMany(ids).map((a) => [a.id, a]));
  return ids.map((id) => byId.get(id)!);
}

// ---- feeds (the feeds domain stores its alerts through these) ---------------------------------------

/** What one feed sync changes, applied in one transaction. */
export interface FeedAlertChanges {
  create: AlertDefinition[];
  update: Array<{ id: string; definition: AlertDefinition }>;
  delete: string[];
}

/**
 * Applies a feed sync's alert changes together (a failure leaves the feed's alerts as they were).
 * Definitions must have passed checkDefinition; each carries feed_id, source_path, source_rule_id.
 * An update replaces the definition as given (pass the alert's current `enabled` and `actions` to
 * keep what a person set); switching it on starts its window a few minutes back.
 */
export function syncFeedAlerts(ctx: Context, feedId: string, changes: FeedAlertChanges, createdBy: string): { created: string[]; updated: number; deleted: number } {
  const cursor = enableCursor();
  return ctx.alerts.transaction(() => {
    const created = changes.create.map((d) => ctx.alerts.insert({ ...d, feed_id: feedId }, createdBy, cursor));
    for (const u of changes.update) ctx.alerts.replace(u.id, { ...u.definition, feed_id: feedId }, cursor);
    let deleted = 0;
    for (const id of changes.delete) if (ctx.alerts.get(id)?.feed_id === feedId && ctx.alerts.delete(id)) deleted++;
    return { created, updated: changes.update.length, deleted };
  });
}

export const feedAlerts = (ctx: Context, feedId: string): Alert[] => ctx.alerts.ofFeed(feedId);

/** Switches every alert of a feed on or off (on: from a few minutes ago). */
export function setFeedAlertsEnabled(ctx: Context, feedId: string, enabled: boolean): number {
  return ctx.alerts.setEnabled(ctx.alerts.ofFeed(feedId).map((a) => a.id), enabled, enableCursor());
}

/** Removes every alert of a feed (the feed is being deleted). */
export function deleteFeedAlerts(ctx: Context, feedId: string): number {
  return ctx.alerts.transaction(() => ctx.alerts.ofFeed(feedId).filter((a) => ctx.alerts.delete(a.id)).length);
}

// What the documents of a fractal or prism (notebooks, dashboards) share: the scope one belongs to
// and who may read or write it, who acts, and the fields both carry with the same rules (a name,
// @variables, a time range of a preset, `all` or `custom`).
//
// Access (conventions.md): reading a document needs a role on its fractal or prism (viewer and up),
// changing it the analyst role; an API key needs the domain's permission (`notebook`, `dashboard`)
// for both. A document the caller may not read is "not found", never revealed.
import { enforceScopeRule, type ScopeRule } from '../auth/access.ts';
import type { KeyPermission, Principal, ScopeType } from '../auth/principal.ts';
import { currentSelection } from '../auth/selection.ts';
import type { Context } from '../context.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { isUuid } from '../http/schemas.ts';
import { timeRange } from '../query/query-service.ts';

export interface Scope {
  type: ScopeType;
  id: string;
}

export interface Variable {
  name: string;
  value: string;
}

/** Who acts, and the browser tab they act from (X-Live-Client), echoed in the live event. */
export interface Actor {
  p: Principal;
  origin?: string;
}

export const actorName = (p: Principal): string => (p.kind === 'user' ? p.user.username : `${p.key.name} (API key)`);

export const scopeOf = (doc: { fractal_id: string | null; prism_id: string | null }): Scope =>
  doc.fractal_id ? { type: 'fractal', id: doc.fractal_id } : { type: 'prism', id: doc.prism_id! };

/** `fractal_id` or `prism_id` of a scope, as a query request names it. */
export const scopeParams = (s: Scope): { fractal_id: string } | { prism_id: string } => (s.type === 'fractal' ? { fractal_id: s.id } : { prism_id: s.id });

// ---- access ---------------------------------------------------------------------------------

export interface DocumentRule {
  /** The API key's permission for this kind of document. */
  keyPermission: KeyPermission;
  /** Changing (analyst) rather than reading (viewer). */
  write: boolean;
}

const rule = (scope: ScopeType, r: DocumentRule): ScopeRule => ({ scope, role: r.write ? 'analyst' : 'viewer', keyPermission: r.keyPermission });

/**
 * The caller's standing on the scope of an existing document: 404 (`notFound`) without a role
 * there, 403 (`needs` the role) with too small a one. `canEdit`: the caller may change it.
 */
export function documentAccess(
  ctx: Context,
  p: Principal,
  scope: Scope,
  r: DocumentRule,
  wording: { notFound: string; needs: string },
): { canEdit: boolean; scopeName: string } {
  const target = enforceScopeRule(p, rule(scope.type, r), ctx.roles.resolve(p, scope.type, scope.id), wording);
  return { canEdit: target.role !== 'viewer', scopeName: target.name };
}

/**
 * The fractal or prism a list, a create or an import acts on: the one named, else the caller's
 * selection; the role (viewer to read, analyst to write) and the key's permission checked.
 */
export function requestedScope(
  ctx: Context,
  p: Principal,
  requested: { fractal_id?: string; prism_id?: string },
  r: DocumentRule & { needs?: string },
): Scope & { name: string } {
  let scope: Scope;
  if (requested.fractal_id) {
    if (!isUuid(requested.fractal_id)) throw badRequest('The field "fractal_id" must be a valid UUID.');
    scope = { type: 'fractal', id: requested.fractal_id.toLowerCase() };
  } else if (requested.prism_id) {
    if (!isUuid(requested.prism_id)) throw badRequest('The field "prism_id" must be a valid UUID.');
    scope = { type: 'prism', id: requested.prism_id.toLowerCase() };
  } else {
    const sel = currentSelection(ctx, p);
    if (!sel) throw notFound('No fractal is selected and you have access to none; ask an admin for a role on a fractal.');
    scope = { type: sel.type, id: sel.id };
  }
  const target = enforceScopeRule(p, rule(scope.type, r), ctx.roles.resolve(p, scope.type, scope.id), { needs: r.write ? r.needs : undefined });
  return { ...scope, name: target.name };
}

// ---- fields ---------------------------------------------------------------------------------

export const MAX_VARIABLES = 50;
export const MAX_VARIABLE_VALUE = 2_000;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function normalizeName(raw: string, field = 'name'): string {
  const name = raw.trim();
  if (!name) throw badRequest(`The field "${field}" must not be empty.`);
  if (name.length > 200) throw badRequest(`The field "${field}" must be at most 200 characters long.`);
  return name;
}

export function normalizeVariables(raw: Array<{ name: unknown; value: unknown }>, field = 'variables'): Variable[] {
  if (raw.length > MAX_VARIABLES) throw badRequest(`The field "${field}" may hold at most ${MAX_VARIABLES} variables.`);
  const seen = new Set<string>();
  return raw.map((v, i) => {
    if (typeof v?.name !== 'string' || !VARIABLE_NAME.test(v.name)) {
      throw badRequest(
        `The variable name ${JSON.stringify(v?.name ?? null)} (${field}[${i}].name) is not a name: use letters, digits and _, not starting with a digit, as in @src_ip.`,
      );
    }
    if (typeof v.value !== 'string') throw badRequest(`The field "${field}[${i}].value" must be a string.`);
    if (v.value.length > MAX_VARIABLE_VALUE) throw badRequest(`The field "${field}[${i}].value" must be at most ${MAX_VARIABLE_VALUE} characters long.`);
    if (seen.has(v.name)) throw badRequest(`The variable "${v.name}" is named twice in "${field}".`);
    seen.add(v.name);
    return { name: v.name, value: v.value };
  });
}

export const TIME_PRESETS: Record<string, number> = {
  '15m': 15 * 60_000,
  '1h': 3_600_000,
  '4h': 4 * 3_600_000,
  '24h': 24 * 3_600_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
};

/** A stored time range: a preset, `all`, or `custom` with RFC 3339 `time_start` and `time_end`. */
export interface StoredRange {
  time_range: string;
  time_start: string | null;
  time_end: string | null;
}

export interface TimeFields {
  time_range?: string;
  start?: string | null;
  end?: string | null;
}

/** The range a request sets (`field` names it in sentences), over the `current` one it changes. */
export function normalizeTimeRange(t: TimeFields, current?: StoredRange, field = 'time_range'): StoredRange {
  const range = t.time_range ?? current?.time_range ?? '24h';
  if (range !== 'all' && range !== 'custom' && !(range in TIME_PRESETS)) {
    throw badRequest(`The field "${field}" has an unsupported value (allowed: ${Object.keys(TIME_PRESETS).join(', ')}, all, custom).`);
  }
  if (range !== 'custom') return { time_range: range, time_start: null, time_end: null };
  const start = t.start !== undefined ? t.start : current?.time_start;
  const end = t.end !== undefined ? t.end : current?.time_end;
  if (!start || !end) throw badRequest(`A "custom" ${field} needs both "start" and "end" (RFC 3339 times).`);
  try {
    const r = timeRange({ start, end });
    return { time_range: 'custom', time_start: r.start.toISOString(), time_end: r.end.toISOString() };
  } catch {
    throw badRequest('The fields "start" and "end" must be RFC 3339 times with start not after end.');
  }
}

/** The absolute range a stored one stands for now, or the one a request names instead. */
export function rangeOf(stored: StoredRange, override: { start?: string; end?: string } = {}, now = new Date()): { start: string; end: string } {
  if (override.start || override.end) {
    try {
      const r = timeRange(override, now);
      return { start: r.start.toISOString(), end: r.end.toISOString() };
    } catch {
      throw badRequest('The fields "start" and "end" must be RFC 3339 times with start not after end.');
    }
  }
  if (stored.time_range === 'custom' && stored.time_start && stored.time_end) return { start: stored.time_start, end: stored.time_end };
  const end = now.toISOString();
  if (stored.time_range === 'all') return { start: '1970-01-01T00:00:00.000Z', end };
  return { start: new Date(now.getTime() - (TIME_PRESETS[stored.time_range] ?? TIME_PRESETS['24h']!)).toISOString(), end };
}

/** A name free among `taken` (case-insensitive): `name` itself, else "<name> (2)", "(3)"… */
export function freeName(taken: readonly string[], name: string): string {
  const set = new Set(taken.map((n) => n.toLowerCase()));
  if (!set.has(name.toLowerCase())) return name;
  for (let i = 2; ; i++) {
    const candidate = `${name} (${i})`;
    if (!set.has(candidate.toLowerCase())) return candidate;
  }
}

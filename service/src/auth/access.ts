// The one authorisation check. Every route declares `config.access`; this onRequest hook
// authenticates the caller, resolves the fractal or prism the route acts on, and refuses with
// 401/403/404 before any handler or body parsing runs. A route without a declaration is refused.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, forbidden, HttpError, notFound, unauthorized } from '../http/errors.ts';
import { isUuid } from '../http/schemas.ts';
import type { ApiKeysStore } from './api-keys-store.ts';
import { parsePermissions } from './api-keys-store.ts';
import type { KeyPermission, Principal, Role, ScopeTarget, ScopeType } from './principal.ts';
import { roleRank } from './principal.ts';
import type { ResolvedScope, RoleResolver } from './roles.ts';
import { SESSION_COOKIE, type SessionStore } from './sessions.ts';

export type Access =
  /** No credentials needed (health, login, public pages). */
  | { public: true }
  /** Ingest token routes; checked by the ingest domain itself. */
  | { ingest: true }
  /** Any signed-in user or valid API key. */
  | { authenticated: true; usersOnly?: boolean }
  /** The global admin flag. */
  | { globalAdmin: true }
  /** A role on the fractal or prism named by a path parameter. */
  | (ScopeRule & { param: string });

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    principal: Principal | null;
    target: ScopeTarget | null;
  }
}

export const INGEST_TOKEN_PREFIX = 'svc_ingest_';

/** The credential a request presents: Bearer, ApiKey, X-API-Key, or Basic with it as password. */
export function presentedCredential(req: FastifyRequest): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const auth = req.headers.authorization;
  if (!auth) return undefined;
  const [scheme, ...rest] = auth.trim().split(/\s+/);
  const value = rest.join(' ');
  switch (scheme?.toLowerCase()) {
    case 'bearer':
      return value || undefined;
    case 'apikey': {
      // Filebeat and Logstash take `api_key: "id:key"` and send base64("id:key"): the token is
      // the part after the colon. A raw token (the ES JS client's string key) is used as is.
      if (!value || value.startsWith('svc_')) return value || undefined;
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      return colon >= 0 && decoded.slice(colon + 1).startsWith('svc_') ? decoded.slice(colon + 1) : value;
    }
    case 'basic': {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      return colon >= 0 ? decoded.slice(colon + 1) || decoded.slice(0, colon) : decoded;
    }
    default:
      return undefined;
  }
}

export function registerAccessControl(
  app: FastifyInstance,
  deps: { sessions: SessionStore; apiKeys: ApiKeysStore; roles: RoleResolver },
): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('target', null);

  const authenticate = (req: FastifyRequest): Principal | null => {
    const cookie = req.cookies?.[SESSION_COOKIE];
    if (cookie) {
      const s = deps.sessions.lookup(cookie);
      if (s) return { kind: 'user', user: s.user, sessionHash: s.hash };
    }
    const cred = presentedCredential(req);
    if (!cred) return null;
    if (cred.startsWith(INGEST_TOKEN_PREFIX)) {
      throw unauthorized('Ingest tokens are accepted only on /api/v1/ingest, /_bulk and /v1/logs; sign in or use an API key here.');
    }
    const key = deps.apiKeys.authenticate(cred);
    if (!key) throw unauthorized('The API key is unknown, disabled or expired.');
    return { kind: 'api_key', key, permissions: parsePermissions(key.permissions) };
  };

  app.addHook('onRequest', async (req) => {
    const access = req.routeOptions.config?.access;
    if (!access) {
      // Unknown routes reach the not-found handler through here with no declaration.
      if (req.routeOptions.url === undefined) return;
      throw new HttpError(500, 'This route has no access rule; refusing by default.');
    }
    // Public routes never read the caller: no session look-up or key check (and no last-used
    // write) for UI files, health polls, sign-in or shippers' probes.
    if ('ingest' in access || 'public' in access) return;
    const p = authenticate(req);
    if (!p) throw unauthorized();
    req.principal = p;

    if ('authenticated' in access) {
      if (access.usersOnly && p.kind !== 'user') throw forbidden('This endpoint needs a signed-in user; API keys cannot use it.');
      return;
    }
    if ('globalAdmin' in access) {
      if (p.kind !== 'user' || p.user.is_admin !== 1) throw forbidden('Only administrators can do this.');
      return;
    }
    const id = (req.params as Record<string, string>)[access.param] ?? '';
    // This hook runs before schema validation, so a malformed id is refused here as bad input.
    if (!isUuid(id)) throw badRequest(`The path parameter "${access.param}" must be a valid UUID.`);
    req.target = enforceScopeRule(p, access, deps.roles.resolve(p, access.scope, id));
  });
}

/** What a route (or a domain checking a scope it reads from a body or query) requires on one fractal or prism. */
export interface ScopeRule {
  scope: ScopeType;
  role: Role;
  /** What an API key needs instead of the role; `query` when absent. */
  keyPermission?: KeyPermission;
  usersOnly?: boolean;
}

/**
 * The rule applied to the caller's role on one scope (`RoleResolver.resolve`, or a domain's own
 * role such as comments counting prism roles): no role or no such scope is 404, so the scope is
 * not revealed to exist; an API key needs the rule's permission and never passes a users-only or
 * admin rule; a user needs at least the role. `wording` lets a domain name its own 404 and what
 * needs the role ("Writing comments needs").
 */
export function enforceScopeRule(
  p: Principal,
  rule: ScopeRule,
  scope: ResolvedScope,
  wording: { notFound?: string; needs?: string } = {},
): ScopeTarget {
  const { id, name, role } = scope;
  const label = rule.scope === 'fractal' ? 'Fractal' : 'Prism';
  if (name === undefined || role === null) throw notFound(wording.notFound ?? `${label} ${id} not found.`);
  if (p.kind === 'api_key') {
    if (rule.usersOnly || rule.role === 'admin') {
      throw forbidden(`API keys cannot do this; sign in as an admin of ${rule.scope} "${name}".`);
    }
    const need = rule.keyPermission ?? 'query';
    if (!p.permissions[need]) throw forbidden(`This API key lacks the "${need}" permission.`);
  } else if (roleRank(role) < roleRank(rule.role)) {
    throw forbidden(`${wording.needs ?? 'This needs'} the ${rule.role} role on ${rule.scope} "${name}"; you have ${role}.`);
  }
  return { type: rule.scope, id, name, role };
}

// Which fractals a request reads (queries, logs, comments, dictionaries) (interface-spec "Authentication" 4): the fractal
// or prism the request names, else the session's selection (an API key: its own scope). The role
// and the key's `query` permission are checked here, before any SQL is built; a scope the caller
// holds no role on is answered 404, as everywhere else. A prism reads only the members its
// reader may read now (readsThroughPrism).
import { currentSelection } from './selection.ts';
import type { Principal, Role, ScopeType } from './principal.ts';
import type { Context } from '../context.ts';
import { badRequest, forbidden, notFound, unauthorized } from '../http/errors.ts';
import { isUuid } from '../http/schemas.ts';

export interface ReadScope {
  type: ScopeType;
  id: string;
  name: string;
  role: Role;
  /** The fractals read: the fractal itself, or a prism's members. */
  fractalIds: string[];
}

export function resolveReadScope(
  ctx: Context,
  principal: Principal | null,
  requested: { fractal_id?: string; prism_id?: string },
): ReadScope {
  if (!principal) throw unauthorized();
  if (principal.kind === 'api_key' && !principal.permissions.query) throw forbidden('This API key lacks the "query" permission.');
  let type: ScopeType;
  let id: string;
  if (requested.fractal_id) {
    if (!isUuid(requested.fractal_id)) throw badRequest('fractal_id must be a valid UUID.');
    [type, id] = ['fractal', requested.fractal_id];
  } else if (requested.prism_id) {
    if (!isUuid(requested.prism_id)) throw badRequest('prism_id must be a valid UUID.');
    [type, id] = ['prism', requested.prism_id];
  } else {
    const sel = currentSelection(ctx, principal);
    if (!sel) throw notFound('No fractal is selected and you have access to none; ask an admin for a role on a fractal.');
    [type, id] = [sel.type, sel.id];
  }
  const label = type === 'fractal' ? 'Fractal' : 'Prism';
  const name = ctx.roles.scopeName(type, id);
  let role = name === undefined ? null : ctx.roles.roleOf(principal, type, id);
  // A key scoped to a prism may read each member fractal of it that the prism shows it.
  if (!role && name !== undefined && type === 'fractal' && principal.kind === 'api_key' && principal.key.scope_type === 'prism') {
    if (readableMembers(ctx, principal, principal.key.scope_id).includes(id)) role = 'viewer';
  }
  if (name === undefined || !role) throw notFound(`${label} ${id} not found.`);
  const fractalIds = type === 'fractal' ? [id] : readableMembers(ctx, principal, id);
  return { type, id, name, role, fractalIds };
}

/**
 * Whether a prism shows `p` the member fractal `fractalId`, decided now, at every read: a user
 * must hold a role on the fractal itself (a global admin holds one everywhere); a prism's API key
 * reads what the user who made it may read (nothing once that user is gone or disabled). A prism
 * is a view, never a grant: losing the role on a fractal hides it from every prism at once, and a
 * membership added by someone who has since lost the fractal shows it to no one without a role.
 */
export function readsThroughPrism(ctx: Context, p: Principal, fractalId: string): boolean {
  if (p.kind === 'user') return ctx.roles.roleOf(p, 'fractal', fractalId) !== null;
  const creator = p.key.created_by ? ctx.users.byId(p.key.created_by) : undefined;
  if (!creator || creator.enabled !== 1) return false;
  return ctx.roles.userRole(creator.id, creator.is_admin === 1, 'fractal', fractalId) !== null;
}

/** The member fractals of a prism that it shows `p` (readsThroughPrism), in membership order. */
export function readableMembers(ctx: Context, p: Principal, prismId: string): string[] {
  return ctx.prisms.memberIds(prismId).filter((id) => readsThroughPrism(ctx, p, id));
}

// Which fractals a request reads (queries, logs, comments, dictionaries) (interface-spec "Authentication" 4): the fractal
// or prism the request names, else the session's selection (an API key: its own scope). The role
// and the key's `query` permission are checked here, before any SQL is built; a scope the caller
// holds no role on is answered 404, as everywhere else.
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
  // A key scoped to a prism may read each member fractal of it.
  if (!role && name !== undefined && type === 'fractal' && principal.kind === 'api_key' && principal.key.scope_type === 'prism') {
    if (ctx.prisms.memberIds(principal.key.scope_id).includes(id)) role = 'viewer';
  }
  if (name === undefined || !role) throw notFound(`${label} ${id} not found.`);
  const fractalIds = type === 'fractal' ? [id] : ctx.prisms.memberIds(id);
  return { type, id, name, role, fractalIds };
}

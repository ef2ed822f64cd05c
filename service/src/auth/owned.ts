// Things owned by one fractal, one prism, or everyone (both null): dictionaries and alert actions.
// Who may read one follows from its owner (read-scope rules; everyone's are read by everyone), and
// where a new one goes follows from the request (the named scope, `is_global`, else the selection).
import type { Context } from '../context.ts';
import { badRequest, HttpError } from '../http/errors.ts';
import type { Principal, ScopeType } from './principal.ts';
import { resolveReadScope } from './read-scope.ts';

export interface Owner {
  fractal_id: string | null;
  prism_id: string | null;
}

/** The owning fractal or prism; null for everyone's. */
export const ownerScope = (o: Owner): { type: ScopeType; id: string } | null =>
  o.fractal_id ? { type: 'fractal', id: o.fractal_id } : o.prism_id ? { type: 'prism', id: o.prism_id } : null;

/** Refuses with `missing` (a 404, so the thing is not revealed) unless the caller may read what `owner` owns. */
export function assertReadable(ctx: Context, p: Principal | null, owner: Owner, missing: HttpError): void {
  const scope = ownerScope(owner);
  if (!scope) return;
  try {
    resolveReadScope(ctx, p, scope.type === 'fractal' ? { fractal_id: scope.id } : { prism_id: scope.id });
  } catch (err) {
    throw err instanceof HttpError && err.statusCode === 404 ? missing : err;
  }
}

/** Where a new one goes: the named fractal or prism, everyone (`is_global`), else the session's selection. `what` names it ("A dictionary"). */
export function ownerFor(ctx: Context, p: Principal, body: { fractal_id?: string; prism_id?: string; is_global?: boolean }, what: string): Owner {
  if (body.is_global) {
    if (body.fractal_id || body.prism_id) throw badRequest(`${what} is either global (is_global) or belongs to fractal_id or prism_id, not both.`);
    return { fractal_id: null, prism_id: null };
  }
  if (body.fractal_id && body.prism_id) throw badRequest('Give fractal_id or prism_id, not both.');
  const scope = resolveReadScope(ctx, p, body);
  return scope.type === 'fractal' ? { fractal_id: scope.id, prism_id: null } : { fractal_id: null, prism_id: scope.id };
}

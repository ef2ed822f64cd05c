// The fractal or prism a signed-in user works in when a request names none. Falls back to the
// default fractal, then to the first fractal the user can see.
import type { Context } from '../context.ts';
import type { Principal, ScopeType } from './principal.ts';

export interface Selection {
  type: ScopeType;
  id: string;
  name: string;
}

export function currentSelection(ctx: Context, p: Principal): Selection | null {
  if (p.kind === 'api_key') {
    const name = ctx.roles.scopeName(p.key.scope_type, p.key.scope_id);
    return name ? { type: p.key.scope_type, id: p.key.scope_id, name } : null;
  }
  const u = p.user;
  if (u.selected_type && u.selected_id) {
    const name = ctx.roles.scopeName(u.selected_type, u.selected_id);
    if (name && ctx.roles.roleOf(p, u.selected_type, u.selected_id)) return { type: u.selected_type, id: u.selected_id, name };
  }
  const visible = ctx.roles.visibleIds(p, 'fractal');
  const def = ctx.fractals.defaultFractal();
  if (def && (visible === 'all' || visible.has(def.id))) return { type: 'fractal', id: def.id, name: def.name };
  const first = ctx.fractals.list().find((f) => visible === 'all' || visible.has(f.id));
  return first ? { type: 'fractal', id: first.id, name: first.name } : null;
}

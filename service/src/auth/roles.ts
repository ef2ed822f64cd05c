// Effective role of a principal on a fractal or prism: the global admin flag implies admin;
// otherwise the highest role granted to the user directly or through any of their groups.
// An API key acts only inside its own scope and never with the admin role.
import type { Db } from '../storage/sqlite.ts';
import { ROLES, type Principal, type Role, type ScopeType } from './principal.ts';

/** A fractal or prism by id as one principal sees it. */
export interface ResolvedScope {
  id: string;
  /** Undefined when no such scope exists. */
  name: string | undefined;
  /** Null when the principal holds no role on it (or it does not exist). */
  role: Role | null;
}

export class RoleResolver {
  constructor(private readonly db: Db) {}

  scopeName(type: ScopeType, id: string): string | undefined {
    const table = type === 'fractal' ? 'fractals' : 'prisms';
    const row = this.db.prepare(`SELECT name FROM ${table} WHERE id = ?`).get(id) as { name: string } | undefined;
    return row?.name;
  }

  userRole(userId: string, isAdmin: boolean, type: ScopeType, scopeId: string): Role | null {
    if (isAdmin) return 'admin';
    const rows = this.db
      .prepare(
        `SELECT role FROM permissions WHERE scope_type = ? AND scope_id = ? AND (
           user_id = ? OR group_id IN (SELECT group_id FROM group_members WHERE user_id = ?))`,
      )
      .all(type, scopeId, userId, userId) as Array<{ role: Role }>;
    let best: Role | null = null;
    for (const r of rows) if (!best || ROLES.indexOf(r.role) > ROLES.indexOf(best)) best = r.role;
    return best;
  }

  /** The scope's name (undefined: it does not exist) and the principal's role on it. */
  resolve(p: Principal, type: ScopeType, id: string): ResolvedScope {
    const name = this.scopeName(type, id);
    return { id, name, role: name === undefined ? null : this.roleOf(p, type, id) };
  }

  roleOf(p: Principal, type: ScopeType, scopeId: string): Role | null {
    if (p.kind === 'user') return this.userRole(p.user.id, p.user.is_admin === 1, type, scopeId);
    if (p.key.scope_type !== type || p.key.scope_id !== scopeId) return null;
    // Keys hold permissions, not roles: anything they may do is at most analyst-level.
    return p.permissions.comment || p.permissions.alert_manage || p.permissions.notebook || p.permissions.dashboard
      ? 'analyst'
      : 'viewer';
  }

  /** Ids of every fractal (or prism) the principal holds any role on. */
  visibleIds(p: Principal, type: ScopeType): Set<string> | 'all' {
    if (p.kind === 'api_key') return new Set(p.key.scope_type === type ? [p.key.scope_id] : []);
    if (p.user.is_admin === 1) return 'all';
    const rows = this.db
      .prepare(
        `SELECT DISTINCT scope_id FROM permissions WHERE scope_type = ? AND (
           user_id = ? OR group_id IN (SELECT group_id FROM group_members WHERE user_id = ?))`,
      )
      .all(type, p.user.id, p.user.id) as Array<{ scope_id: string }>;
    return new Set(rows.map((r) => r.scope_id));
  }
}

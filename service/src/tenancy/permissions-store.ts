// Role grants on a fractal or prism, to one user or one group.
import { randomUUID } from 'node:crypto';
import type { Role, ScopeType } from '../auth/principal.ts';
import type { Db } from '../storage/sqlite.ts';

export interface PermissionView {
  id: string;
  scope_type: ScopeType;
  scope_id: string;
  user_id: string | null;
  username: string | null;
  group_id: string | null;
  group_name: string | null;
  role: Role;
  created_at: string;
  updated_at: string;
}

const SELECT = `SELECT p.id, p.scope_type, p.scope_id, p.user_id, u.username, p.group_id, g.name AS group_name,
  p.role, p.created_at, p.updated_at
  FROM permissions p LEFT JOIN users u ON u.id = p.user_id LEFT JOIN groups g ON g.id = p.group_id`;

export class PermissionsStore {
  constructor(private readonly db: Db) {}

  list(scope: ScopeType, scopeId: string): PermissionView[] {
    return this.db.prepare(`${SELECT} WHERE p.scope_type = ? AND p.scope_id = ? ORDER BY p.created_at`).all(scope, scopeId) as PermissionView[];
  }
  get(scope: ScopeType, scopeId: string, id: string): PermissionView | undefined {
    return this.db.prepare(`${SELECT} WHERE p.scope_type = ? AND p.scope_id = ? AND p.id = ?`).get(scope, scopeId, id) as PermissionView | undefined;
  }
  grant(scope: ScopeType, scopeId: string, to: { userId?: string; groupId?: string }, role: Role): PermissionView {
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db
      .prepare('INSERT INTO permissions (id, scope_type, scope_id, user_id, group_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(id, scope, scopeId, to.userId ?? null, to.groupId ?? null, role, now, now);
    return this.get(scope, scopeId, id)!;
  }
  setRole(scope: ScopeType, scopeId: string, id: string, role: Role): PermissionView {
    this.db.prepare('UPDATE permissions SET role = ?, updated_at = ? WHERE id = ?').run(role, new Date().toISOString(), id);
    return this.get(scope, scopeId, id)!;
  }
  revoke(id: string): void {
    this.db.prepare('DELETE FROM permissions WHERE id = ?').run(id);
  }
}

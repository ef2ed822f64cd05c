// Users in SQLite. Passwords arrive here already hashed.
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';
import type { ScopeType, UserRow } from './principal.ts';

export interface PublicUser {
  id: string;
  username: string;
  is_admin: boolean;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

export const publicUser = (u: UserRow): PublicUser => ({
  id: u.id,
  username: u.username,
  is_admin: u.is_admin === 1,
  enabled: u.enabled === 1,
  created_at: u.created_at,
  updated_at: u.updated_at,
});

export class UsersStore {
  constructor(private readonly db: Db) {}

  list(): UserRow[] {
    return this.db.prepare('SELECT * FROM users ORDER BY username').all() as UserRow[];
  }
  byId(id: string): UserRow | undefined {
    return this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined;
  }
  byName(username: string): UserRow | undefined {
    return this.db.prepare('SELECT * FROM users WHERE username = ?').get(username) as UserRow | undefined;
  }
  count(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  }
  create(u: { username: string; passwordHash: string; isAdmin: boolean; enabled: boolean }): UserRow {
    const now = new Date().toISOString();
    const id = randomUUID();
    this.db
      .prepare(
        `INSERT INTO users (id, username, password_hash, is_admin, enabled, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, u.username, u.passwordHash, u.isAdmin ? 1 : 0, u.enabled ? 1 : 0, now, now);
    return this.byId(id)!;
  }
  update(id: string, patch: { passwordHash?: string; isAdmin?: boolean; enabled?: boolean }): UserRow {
    const cur = this.byId(id)!;
    this.db
      .prepare('UPDATE users SET password_hash = ?, is_admin = ?, enabled = ?, updated_at = ? WHERE id = ?')
      .run(
        patch.passwordHash ?? cur.password_hash,
        patch.isAdmin === undefined ? cur.is_admin : patch.isAdmin ? 1 : 0,
        patch.enabled === undefined ? cur.enabled : patch.enabled ? 1 : 0,
        new Date().toISOString(),
        id,
      );
    return this.byId(id)!;
  }
  delete(id: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM permissions WHERE user_id = ?').run(id);
      this.db.prepare('DELETE FROM users WHERE id = ?').run(id);
    })();
  }
  countEnabledAdmins(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM users WHERE is_admin = 1 AND enabled = 1').get() as { n: number }).n;
  }
  select(id: string, type: ScopeType | null, scopeId: string | null): void {
    this.db.prepare('UPDATE users SET selected_type = ?, selected_id = ? WHERE id = ?').run(type, scopeId, id);
  }
}

// Groups of users; a role granted to a group applies to each member.
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';

export interface GroupRow {
  id: string;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
}

export class GroupsStore {
  constructor(private readonly db: Db) {}

  list(): GroupRow[] {
    return this.db.prepare('SELECT * FROM groups ORDER BY name').all() as GroupRow[];
  }
  get(id: string): GroupRow | undefined {
    return this.db.prepare('SELECT * FROM groups WHERE id = ?').get(id) as GroupRow | undefined;
  }
  members(id: string): Array<{ user_id: string; username: string; added_at: string }> {
    return this.db
      .prepare('SELECT u.id AS user_id, u.username, m.added_at FROM group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = ? ORDER BY u.username')
      .all(id) as Array<{ user_id: string; username: string; added_at: string }>;
  }
  create(g: { name: string; description: string }): GroupRow {
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db.prepare('INSERT INTO groups (id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(id, g.name, g.description, now, now);
    return this.get(id)!;
  }
  update(id: string, patch: { name?: string; description?: string }): GroupRow {
    const cur = this.get(id)!;
    this.db
      .prepare('UPDATE groups SET name = ?, description = ?, updated_at = ? WHERE id = ?')
      .run(patch.name ?? cur.name, patch.description ?? cur.description, new Date().toISOString(), id);
    return this.get(id)!;
  }
  delete(id: string): void {
    this.db.prepare('DELETE FROM groups WHERE id = ?').run(id); // members and permissions cascade
  }
  addMember(groupId: string, userId: string): boolean {
    return this.db
      .prepare('INSERT OR IGNORE INTO group_members (group_id, user_id, added_at) VALUES (?, ?, ?)')
      .run(groupId, userId, new Date().toISOString()).changes > 0;
  }
  removeMember(groupId: string, userId: string): boolean {
    return this.db.prepare('DELETE FROM group_members WHERE group_id = ? AND user_id = ?').run(groupId, userId).changes > 0;
  }
}

// Prisms: named views over several fractals.
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';

export interface PrismRow {
  id: string;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
}

export class PrismsStore {
  constructor(private readonly db: Db) {}

  list(): PrismRow[] {
    return this.db.prepare('SELECT * FROM prisms ORDER BY name').all() as PrismRow[];
  }
  get(id: string): PrismRow | undefined {
    return this.db.prepare('SELECT * FROM prisms WHERE id = ?').get(id) as PrismRow | undefined;
  }
  memberIds(id: string): string[] {
    return (this.db.prepare('SELECT fractal_id FROM prism_members WHERE prism_id = ? ORDER BY added_at, fractal_id').all(id) as Array<{ fractal_id: string }>).map(
      (r) => r.fractal_id,
    );
  }
  /** Ids of the prisms that hold this fractal. */
  containing(fractalId: string): string[] {
    return (this.db.prepare('SELECT prism_id FROM prism_members WHERE fractal_id = ?').all(fractalId) as Array<{ prism_id: string }>).map((r) => r.prism_id);
  }
  create(p: { name: string; description: string; fractalIds: string[] }): PrismRow {
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db.transaction(() => {
      this.db.prepare('INSERT INTO prisms (id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(id, p.name, p.description, now, now);
      for (const f of p.fractalIds) this.addMember(id, f);
    })();
    return this.get(id)!;
  }
  update(id: string, patch: { name?: string; description?: string; fractalIds?: string[] }): PrismRow {
    const cur = this.get(id)!;
    this.db.transaction(() => {
      this.db
        .prepare('UPDATE prisms SET name = ?, description = ?, updated_at = ? WHERE id = ?')
        .run(patch.name ?? cur.name, patch.description ?? cur.description, new Date().toISOString(), id);
      if (patch.fractalIds) {
        this.db.prepare('DELETE FROM prism_members WHERE prism_id = ?').run(id);
        for (const f of patch.fractalIds) this.addMember(id, f);
      }
    })();
    return this.get(id)!;
  }
  addMember(prismId: string, fractalId: string): boolean {
    const r = this.db
      .prepare('INSERT OR IGNORE INTO prism_members (prism_id, fractal_id, added_at) VALUES (?, ?, ?)')
      .run(prismId, fractalId, new Date().toISOString());
    return r.changes > 0;
  }
  removeMember(prismId: string, fractalId: string): boolean {
    return this.db.prepare('DELETE FROM prism_members WHERE prism_id = ? AND fractal_id = ?').run(prismId, fractalId).changes > 0;
  }
  delete(id: string): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM permissions WHERE scope_type = 'prism' AND scope_id = ?").run(id);
      this.db.prepare("DELETE FROM api_keys WHERE scope_type = 'prism' AND scope_id = ?").run(id);
      this.db.prepare("UPDATE users SET selected_type = NULL, selected_id = NULL WHERE selected_type = 'prism' AND selected_id = ?").run(id);
      this.db.prepare('DELETE FROM prisms WHERE id = ?').run(id);
    })();
  }
}

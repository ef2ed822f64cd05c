// Fractals (log containers) in SQLite. Their logs live in ClickHouse; see fractals-logic.ts.
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';

export type QuotaAction = 'reject' | 'rollover';

export interface FractalRow {
  id: string;
  name: string;
  description: string;
  is_default: number;
  retention_days: number | null;
  archive_retention_days: number | null;
  quota_bytes: number | null;
  quota_action: QuotaAction;
  stats_log_count: number;
  stats_size_bytes: number;
  stats_oldest: string | null;
  stats_newest: string | null;
  stats_updated_at: string | null;
  created_at: string;
  updated_at: string;
}

export const publicFractal = (f: FractalRow) => ({
  id: f.id,
  name: f.name,
  description: f.description,
  is_default: f.is_default === 1,
  retention_days: f.retention_days,
  archive_retention_days: f.archive_retention_days,
  quota_bytes: f.quota_bytes,
  quota_action: f.quota_action,
  log_count: f.stats_log_count,
  size_bytes: f.stats_size_bytes,
  created_at: f.created_at,
  updated_at: f.updated_at,
});

export interface FractalStats {
  log_count: number;
  size_bytes: number;
  oldest: string | null;
  newest: string | null;
}

export class FractalsStore {
  constructor(private readonly db: Db) {}

  list(): FractalRow[] {
    return this.db.prepare('SELECT * FROM fractals ORDER BY name').all() as FractalRow[];
  }
  get(id: string): FractalRow | undefined {
    return this.db.prepare('SELECT * FROM fractals WHERE id = ?').get(id) as FractalRow | undefined;
  }
  byName(name: string): FractalRow | undefined {
    return this.db.prepare('SELECT * FROM fractals WHERE name = ?').get(name) as FractalRow | undefined;
  }
  defaultFractal(): FractalRow | undefined {
    return this.db.prepare('SELECT * FROM fractals WHERE is_default = 1').get() as FractalRow | undefined;
  }
  /** `id` is given only by a case import, whose logs were stored under it before the fractal existed. */
  create(f: { name: string; description: string; isDefault?: boolean; id?: string }): FractalRow {
    const id = f.id ?? randomUUID();
    const now = new Date().toISOString();
    this.db
      .prepare('INSERT INTO fractals (id, name, description, is_default, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, f.name, f.description, f.isDefault ? 1 : 0, now, now);
    return this.get(id)!;
  }
  update(id: string, patch: Partial<Pick<FractalRow, 'name' | 'description' | 'retention_days' | 'archive_retention_days' | 'quota_bytes' | 'quota_action'>>): FractalRow {
    const cur = this.get(id)!;
    // Fields left undefined in the patch keep their current value (null clears a nullable one).
    const next = { ...cur };
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) (next as Record<string, unknown>)[k] = v;
    this.db
      .prepare(
        `UPDATE fractals SET name = ?, description = ?, retention_days = ?, archive_retention_days = ?,
           quota_bytes = ?, quota_action = ?, updated_at = ? WHERE id = ?`,
      )
      .run(next.name, next.description, next.retention_days, next.archive_retention_days, next.quota_bytes,
        next.quota_action, new Date().toISOString(), id);
    return this.get(id)!;
  }
  saveStats(id: string, s: FractalStats): void {
    this.db
      .prepare(
        `UPDATE fractals SET stats_log_count = ?, stats_size_bytes = ?, stats_oldest = ?, stats_newest = ?,
           stats_updated_at = ? WHERE id = ?`,
      )
      .run(s.log_count, s.size_bytes, s.oldest, s.newest, new Date().toISOString(), id);
  }
  /** Removes the fractal and everything that only makes sense with it, in one transaction. */
  delete(id: string): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM permissions WHERE scope_type = 'fractal' AND scope_id = ?").run(id);
      this.db.prepare("DELETE FROM api_keys WHERE scope_type = 'fractal' AND scope_id = ?").run(id);
      this.db.prepare("UPDATE users SET selected_type = NULL, selected_id = NULL WHERE selected_type = 'fractal' AND selected_id = ?").run(id);
      this.db.prepare('DELETE FROM fractals WHERE id = ?').run(id); // tokens and prism memberships cascade
    })();
  }
}

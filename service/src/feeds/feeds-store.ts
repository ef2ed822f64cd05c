// Feeds and their rule catalog in SQLite (`feeds`, `feed_rules`; see the migration). The auth
// token is sealed with the secret box and only ever opened to hand it to git.
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../storage/secret-box.ts';
import type { Db } from '../storage/sqlite.ts';
import type { SkipCode } from './sigma/skip.ts';

import type { Severity } from '../alerts/alert-terms.ts';
import type { Schedule, Status } from './feed-terms.ts';

export { SEVERITIES, type Severity } from '../alerts/alert-terms.ts';
export { SCHEDULES, STATUSES, type Schedule, type Status } from './feed-terms.ts';

export interface Feed {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  repo_url: string;
  branch: string;
  path: string;
  auth_token_sealed: string | null;
  normalizer_id: string | null;
  sync_schedule: Schedule;
  min_severity: Severity;
  min_status: Status;
  enabled: number;
  last_sync_at: string | null;
  last_sync_status: 'ok' | 'failed' | null;
  last_sync_error: string | null;
  last_sync_commit: string | null;
  last_sync_ms: number | null;
  imported_count: number;
  skipped_count: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface FeedInput {
  name: string;
  description: string;
  repo_url: string;
  branch: string;
  path: string;
  /** undefined: keep the stored token; null: remove it. */
  auth_token?: string | null;
  normalizer_id: string | null;
  sync_schedule: Schedule;
  min_severity: Severity;
  min_status: Status;
  enabled: boolean;
}

/** One rule file of the last successful sync and what became of it. */
export interface FeedRule {
  source_path: string;
  kind: 'sigma' | 'alert' | 'unknown';
  rule_id: string | null;
  title: string;
  level: string | null;
  status: string | null;
  tags: string[];
  imported: boolean;
  reason_code: SkipCode | null;
  reason: string | null;
}

export interface SyncRecord {
  status: 'ok' | 'failed';
  error: string | null;
  commit: string | null;
  ms: number;
  imported?: number;
  skipped?: number;
}

export class FeedsStore {
  private listeners: Array<(id: string) => void> = [];
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  /** Called with a feed's id after it is created, changed or deleted (the scheduler re-plans it). */
  onChange(fn: (id: string) => void): void {
    this.listeners.push(fn);
  }
  private changed(id: string): void {
    for (const fn of this.listeners) fn(id);
  }

  get(id: string): Feed | undefined {
    return this.db.prepare('SELECT * FROM feeds WHERE id = ?').get(id) as Feed | undefined;
  }
  all(): Feed[] {
    return this.db.prepare('SELECT * FROM feeds ORDER BY name COLLATE NOCASE').all() as Feed[];
  }
  /** The feeds of a fractal or prism. */
  ofScope(scope: { type: 'fractal' | 'prism'; id: string }): Feed[] {
    const col = scope.type === 'fractal' ? 'fractal_id' : 'prism_id';
    return this.db.prepare(`SELECT * FROM feeds WHERE ${col} = ? ORDER BY name COLLATE NOCASE`).all(scope.id) as Feed[];
  }
  byName(scope: { type: 'fractal' | 'prism'; id: string }, name: string): Feed | undefined {
    const col = scope.type === 'fractal' ? 'fractal_id' : 'prism_id';
    return this.db.prepare(`SELECT * FROM feeds WHERE ${col} = ? AND name = ? COLLATE NOCASE`).get(scope.id, name) as Feed | undefined;
  }

  authToken(f: Feed): string | null {
    return f.auth_token_sealed ? this.box.open(f.auth_token_sealed) : null;
  }

  create(scope: { type: 'fractal' | 'prism'; id: string }, f: FeedInput, createdBy: string): Feed {
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO feeds (id, name, description, fractal_id, prism_id, repo_url, branch, path, auth_token_sealed, normalizer_id,
           sync_schedule, min_severity, min_status, enabled, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        f.name,
        f.description,
        scope.type === 'fractal' ? scope.id : null,
        scope.type === 'prism' ? scope.id : null,
        f.repo_url,
        f.branch,
        f.path,
        f.auth_token ? this.box.seal(f.auth_token) : null,
        f.normalizer_id,
        f.sync_schedule,
        f.min_severity,
        f.min_status,
        f.enabled ? 1 : 0,
        createdBy,
        now,
        now,
      );
    this.changed(id);
    return this.get(id)!;
  }

  update(id: string, f: FeedInput): Feed {
    const current = this.get(id)!;
    const sealed = f.auth_token === undefined ? current.auth_token_sealed : f.auth_token ? this.box.seal(f.auth_token) : null;
    this.db
      .prepare(
        `UPDATE feeds SET name = ?, description = ?, repo_url = ?, branch = ?, path = ?, auth_token_sealed = ?, normalizer_id = ?,
           sync_schedule = ?, min_severity = ?, min_status = ?, enabled = ?, updated_at = ? WHERE id = ?`,
      )
      .run(f.name, f.description, f.repo_url, f.branch, f.path, sealed, f.normalizer_id, f.sync_schedule, f.min_severity, f.min_status, f.enabled ? 1 : 0, new Date().toISOString(), id);
    this.changed(id);
    return this.get(id)!;
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM feeds WHERE id = ?').run(id);
    this.changed(id);
  }

  /** Records a sync's outcome; a successful one also replaces the catalog (in `apply`'s transaction). */
  recordSync(id: string, r: SyncRecord, at = new Date()): void {
    this.db
      .prepare(
        `UPDATE feeds SET last_sync_at = ?, last_sync_status = ?, last_sync_error = ?, last_sync_commit = coalesce(?, last_sync_commit),
           last_sync_ms = ?, imported_count = coalesce(?, imported_count), skipped_count = coalesce(?, skipped_count) WHERE id = ?`,
      )
      .run(at.toISOString(), r.status, r.error, r.commit, Math.round(r.ms), r.imported ?? null, r.skipped ?? null, id);
    this.changed(id);
  }

  /** Replaces the catalog of a feed with the rules of its latest sync. */
  replaceCatalog(id: string, rules: FeedRule[]): void {
    this.db.prepare('DELETE FROM feed_rules WHERE feed_id = ?').run(id);
    const insert = this.db.prepare(
      `INSERT INTO feed_rules (feed_id, source_path, kind, rule_id, title, level, status, tags, imported, reason_code, reason)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const r of rules) {
      insert.run(id, r.source_path, r.kind, r.rule_id, r.title, r.level, r.status, JSON.stringify(r.tags), r.imported ? 1 : 0, r.reason_code, r.reason);
    }
  }

  /** Rules of the feed's latest sync, skipped ones only when `skippedOnly`. */
  catalog(id: string, skippedOnly = false): FeedRule[] {
    const rows = this.db
      .prepare(`SELECT * FROM feed_rules WHERE feed_id = ? ${skippedOnly ? 'AND imported = 0' : ''} ORDER BY source_path`)
      .all(id) as Array<Omit<FeedRule, 'tags' | 'imported'> & { tags: string; imported: number }>;
    return rows.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[], imported: r.imported === 1 }));
  }

  /** Skipped rules of every feed of a scope (the ATT&CK view's "would have covered"). */
  skippedInScope(scope: { type: 'fractal' | 'prism'; id: string }): Array<FeedRule & { feed_id: string; feed_name: string }> {
    const col = scope.type === 'fractal' ? 'f.fractal_id' : 'f.prism_id';
    const rows = this.db
      .prepare(
        `SELECT r.*, f.id AS feed_id, f.name AS feed_name FROM feed_rules r JOIN feeds f ON f.id = r.feed_id
         WHERE ${col} = ? AND r.imported = 0 ORDER BY f.name, r.source_path`,
      )
      .all(scope.id) as Array<Omit<FeedRule, 'tags' | 'imported'> & { tags: string; imported: number; feed_id: string; feed_name: string }>;
    return rows.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[], imported: false }));
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}

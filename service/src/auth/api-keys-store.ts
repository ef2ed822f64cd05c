// API keys: `svc_` + 40 hex, shown once; stored as a SHA-256 hash (keys are random, so a fast
// hash is enough) plus a short prefix for display. Scoped to one fractal or prism.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';
import { sha256 } from '../storage/secret-box.ts';
import { KEY_PERMISSIONS, type ApiKeyRow, type KeyPermission, type ScopeType } from './principal.ts';

export const API_KEY_PATTERN = /^svc_[0-9a-f]{32,}$/;
export const DEFAULT_KEY_PERMISSIONS: Record<KeyPermission, boolean> = {
  query: true,
  comment: true,
  alert_manage: false,
  notebook: false,
  dashboard: false,
};

export function parsePermissions(json: string): Record<KeyPermission, boolean> {
  const p = JSON.parse(json) as Partial<Record<KeyPermission, boolean>>;
  return Object.fromEntries(KEY_PERMISSIONS.map((k) => [k, p[k] === true])) as Record<KeyPermission, boolean>;
}

export function publicApiKey(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    description: k.description,
    scope_type: k.scope_type,
    [k.scope_type === 'fractal' ? 'fractal_id' : 'prism_id']: k.scope_id,
    key_prefix: k.key_prefix,
    permissions: parsePermissions(k.permissions),
    expires_at: k.expires_at,
    enabled: k.enabled === 1,
    expired: k.expires_at !== null && k.expires_at <= new Date().toISOString(),
    created_by: k.created_by,
    last_used_at: k.last_used_at,
    created_at: k.created_at,
    updated_at: k.updated_at,
  };
}

export class ApiKeysStore {
  constructor(private readonly db: Db) {}

  list(scope: ScopeType, scopeId: string): ApiKeyRow[] {
    return this.db
      .prepare('SELECT * FROM api_keys WHERE scope_type = ? AND scope_id = ? ORDER BY created_at')
      .all(scope, scopeId) as ApiKeyRow[];
  }
  get(scope: ScopeType, scopeId: string, id: string): ApiKeyRow | undefined {
    return this.db
      .prepare('SELECT * FROM api_keys WHERE scope_type = ? AND scope_id = ? AND id = ?')
      .get(scope, scopeId, id) as ApiKeyRow | undefined;
  }
  create(a: {
    scope: ScopeType;
    scopeId: string;
    name: string;
    description: string;
    permissions: Record<KeyPermission, boolean>;
    expiresAt: string | null;
    createdBy: string | null;
  }): { row: ApiKeyRow; key: string } {
    const key = `svc_${randomBytes(20).toString('hex')}`;
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO api_keys (id, scope_type, scope_id, name, description, key_hash, key_prefix, permissions,
           expires_at, enabled, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
      )
      .run(id, a.scope, a.scopeId, a.name, a.description, sha256(key), key.slice(0, 12), JSON.stringify(a.permissions),
        a.expiresAt, a.createdBy, now, now);
    return { row: this.get(a.scope, a.scopeId, id)!, key };
  }
  update(
    row: ApiKeyRow,
    patch: { name?: string; description?: string; permissions?: Record<KeyPermission, boolean>; expiresAt?: string | null; enabled?: boolean },
  ): ApiKeyRow {
    this.db
      .prepare('UPDATE api_keys SET name = ?, description = ?, permissions = ?, expires_at = ?, enabled = ?, updated_at = ? WHERE id = ?')
      .run(
        patch.name ?? row.name,
        patch.description ?? row.description,
        patch.permissions ? JSON.stringify(patch.permissions) : row.permissions,
        patch.expiresAt === undefined ? row.expires_at : patch.expiresAt,
        patch.enabled === undefined ? row.enabled : patch.enabled ? 1 : 0,
        new Date().toISOString(),
        row.id,
      );
    return this.get(row.scope_type, row.scope_id, row.id)!;
  }
  delete(id: string): void {
    this.db.prepare('DELETE FROM api_keys WHERE id = ?').run(id);
  }

  /** The usable key for a presented value: enabled and not expired. */
  authenticate(value: string): ApiKeyRow | undefined {
    if (!API_KEY_PATTERN.test(value)) return undefined;
    const row = this.db
      .prepare(`SELECT * FROM api_keys WHERE key_hash = ? AND enabled = 1 AND (expires_at IS NULL OR expires_at > ?)`)
      .get(sha256(value), new Date().toISOString()) as ApiKeyRow | undefined;
    if (row) this.db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(new Date().toISOString(), row.id);
    return row;
  }
}

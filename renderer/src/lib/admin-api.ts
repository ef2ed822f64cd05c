// Calls and shapes of the administration endpoints (fractals, tokens, keys, prisms, users, groups,
// permissions, settings). Field names follow the service's route files; every call throws ApiError
// with the service's own sentence, which the pages show next to the control that failed.
import { del, enc, get, post, put, type Id } from './api.ts';

export type ScopeType = 'fractal' | 'prism';
export type QuotaAction = 'reject' | 'rollover';
export type ParserType = 'json' | 'kv' | 'syslog';
export type Role = 'viewer' | 'analyst' | 'admin';

export const PARSER_TYPES: ParserType[] = ['json', 'kv', 'syslog'];
export const ROLES: Role[] = ['viewer', 'analyst', 'admin'];
export const KEY_PERMISSIONS = ['query', 'comment', 'alert_manage', 'notebook', 'dashboard'] as const;
export type KeyPermission = (typeof KEY_PERMISSIONS)[number];

export interface AdminFractal {
  id: string;
  name: string;
  description: string;
  is_default: boolean;
  retention_days: number | null;
  archive_retention_days: number | null;
  quota_bytes: number | null;
  quota_action: QuotaAction;
  /** Cached by the service at the last stats read; refreshStats() gives current figures. */
  log_count: number;
  size_bytes: number;
  created_at: string;
  updated_at: string;
}

export interface FractalStatsRow {
  fractal_id: string;
  log_count: number;
  size_bytes: number;
  oldest: string | null;
  newest: string | null;
}

export interface AdminIngestToken {
  id: string;
  fractal_id: string;
  name: string;
  token: string;
  parser_type: ParserType;
  normalization: boolean;
  normalizer_id: string | null;
  /** The normalizer applied (its own, or the default); null: names are kept as they arrive. */
  normalizer: { id: string; name: string; is_default: boolean } | null;
  timestamp_fields: string[];
  enabled: boolean;
  is_default: boolean;
  created_at: string;
  updated_at: string;
}

export interface TokenInput {
  name: string;
  parser_type: ParserType;
  normalization: boolean;
  normalizer_id: string | null;
  timestamp_fields: string[];
  enabled?: boolean;
}

export interface ApiKey {
  id: string;
  name: string;
  description: string;
  scope_type: ScopeType;
  key_prefix: string;
  permissions: Record<KeyPermission, boolean>;
  expires_at: string | null;
  enabled: boolean;
  expired: boolean;
  last_used_at: string | null;
  created_at: string;
}

export interface ApiKeyInput {
  name: string;
  description?: string;
  expires_at: string | null;
  permissions: Record<KeyPermission, boolean>;
}

export interface AdminPrism {
  id: string;
  name: string;
  description: string;
  fractal_ids: string[];
  fractals: Array<{ id: string; name: string }>;
}

export interface AdminUser {
  id: string;
  username: string;
  is_admin: boolean;
  enabled: boolean;
  created_at: string;
}

export interface Group {
  id: string;
  name: string;
  description: string;
  members: string[];
}

export interface Permission {
  id: string;
  user_id: string | null;
  username: string | null;
  group_id: string | null;
  group_name: string | null;
  role: Role;
}

export interface Settings {
  shared_links_enabled: boolean;
  query_timeout_s: number;
  alert_interval_s: number;
  timestamp_fields: string[];
  max_query_rows: number;
}

const scopePath = (type: ScopeType, id: Id) => `/${type}s/${enc(id)}`;

export const admin = {
  // ---- fractals
  fractals: () => get<AdminFractal[]>('/fractals'),
  createFractal: (body: { name: string; description: string }) =>
    post<AdminFractal & { default_ingest_token: string }>('/fractals', body),
  updateFractal: (id: Id, body: { name?: string; description?: string }) => put<AdminFractal>(`/fractals/${enc(id)}`, body),
  deleteFractal: (id: Id) => del<{ deleted: boolean }>(`/fractals/${enc(id)}`),
  setRetention: (id: Id, retention_days: number | null) =>
    put<AdminFractal>(`/fractals/${enc(id)}/retention`, { retention_days }),
  /** null: the archive keeps this fractal's logs forever. */
  setArchiveRetention: (id: Id, archive_retention_days: number | null) =>
    put<AdminFractal>(`/fractals/${enc(id)}/archive-retention`, { archive_retention_days }),
  setQuota: (id: Id, quota_bytes: number | null, action: QuotaAction) =>
    put<AdminFractal>(`/fractals/${enc(id)}/disk-quota`, { quota_bytes, action }),
  refreshStats: () => post<FractalStatsRow[]>('/fractals/stats/refresh'),
  /** The prisms holding a fractal, for its admins (a member added by someone who since lost the fractal included). */
  fractalPrisms: (id: Id) => get<Array<{ id: string; name: string }>>(`/fractals/${enc(id)}/prisms`),
  leavePrism: (id: Id, prismId: Id) => del<{ removed: boolean }>(`/fractals/${enc(id)}/prisms/${enc(prismId)}`),

  // ---- ingest tokens (fractals only)
  tokens: (fractalId: Id) => get<AdminIngestToken[]>(`/fractals/${enc(fractalId)}/ingest-tokens`),
  createToken: (fractalId: Id, body: TokenInput) =>
    post<AdminIngestToken>(`/fractals/${enc(fractalId)}/ingest-tokens`, body),
  updateToken: (fractalId: Id, id: Id, body: Partial<TokenInput>) =>
    put<AdminIngestToken>(`/fractals/${enc(fractalId)}/ingest-tokens/${enc(id)}`, body),
  toggleToken: (fractalId: Id, id: Id) =>
    post<AdminIngestToken>(`/fractals/${enc(fractalId)}/ingest-tokens/${enc(id)}/toggle`),
  deleteToken: (fractalId: Id, id: Id) => del(`/fractals/${enc(fractalId)}/ingest-tokens/${enc(id)}`),

  // ---- API keys (fractal or prism)
  keys: (type: ScopeType, id: Id) => get<ApiKey[]>(`${scopePath(type, id)}/api-keys`),
  createKey: (type: ScopeType, id: Id, body: ApiKeyInput) =>
    post<ApiKey & { key: string }>(`${scopePath(type, id)}/api-keys`, body),
  toggleKey: (type: ScopeType, id: Id, keyId: Id) => post<ApiKey>(`${scopePath(type, id)}/api-keys/${enc(keyId)}/toggle`),
  deleteKey: (type: ScopeType, id: Id, keyId: Id) => del(`${scopePath(type, id)}/api-keys/${enc(keyId)}`),

  // ---- permissions (fractal or prism)
  permissions: (type: ScopeType, id: Id) => get<Permission[]>(`${scopePath(type, id)}/permissions`),
  grant: (type: ScopeType, id: Id, body: { username?: string; group_id?: string; role: Role }) =>
    post<Permission>(`${scopePath(type, id)}/permissions`, body),
  setRole: (type: ScopeType, id: Id, permId: Id, role: Role) =>
    put<Permission>(`${scopePath(type, id)}/permissions/${enc(permId)}`, { role }),
  revoke: (type: ScopeType, id: Id, permId: Id) => del(`${scopePath(type, id)}/permissions/${enc(permId)}`),

  // ---- prisms
  prisms: () => get<AdminPrism[]>('/prisms'),
  createPrism: (body: { name: string; description: string; fractal_ids: string[] }) => post<AdminPrism>('/prisms', body),
  deletePrism: (id: Id) => del(`/prisms/${enc(id)}`),
  addMember: (id: Id, fractal_id: string) => post<AdminPrism>(`/prisms/${enc(id)}/members`, { fractal_id }),
  removeMember: (id: Id, fractalId: Id) => del<AdminPrism>(`/prisms/${enc(id)}/members/${enc(fractalId)}`),

  // ---- users (global admins)
  users: () => get<AdminUser[]>('/users'),
  createUser: (body: { username: string; password: string; is_admin: boolean }) => post<AdminUser>('/users', body),
  updateUser: (username: string, body: { password?: string; is_admin?: boolean; enabled?: boolean }) =>
    put<AdminUser>(`/users/${enc(username)}`, body),
  deleteUser: (username: string) => del(`/users/${enc(username)}`),

  // ---- groups (global admins)
  groups: () => get<Group[]>('/groups'),
  createGroup: (body: { name: string; description: string }) => post<Group>('/groups', body),
  deleteGroup: (id: Id) => del(`/groups/${enc(id)}`),
  addGroupMember: (id: Id, username: string) => post(`/groups/${enc(id)}/members`, { username }),
  removeGroupMember: (id: Id, username: string) => del(`/groups/${enc(id)}/members/${enc(username)}`),

  // ---- settings
  settings: () => get<Settings>('/settings'),
  saveSettings: (patch: Partial<Settings>) => put<Settings>('/settings', patch),
};

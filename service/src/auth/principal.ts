// Who is calling: a signed-in user, an API key, or an ingest token (ingest routes only).
export type Role = 'viewer' | 'analyst' | 'admin';
export const ROLES: Role[] = ['viewer', 'analyst', 'admin'];
export const roleRank = (r: Role | null): number => (r ? ROLES.indexOf(r) + 1 : 0);

export type ScopeType = 'fractal' | 'prism';

export type KeyPermission = 'query' | 'comment' | 'alert_manage' | 'notebook' | 'dashboard';
export const KEY_PERMISSIONS: KeyPermission[] = ['query', 'comment', 'alert_manage', 'notebook', 'dashboard'];

export interface UserRow {
  id: string;
  username: string;
  password_hash: string;
  is_admin: number;
  enabled: number;
  selected_type: ScopeType | null;
  selected_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyRow {
  id: string;
  scope_type: ScopeType;
  scope_id: string;
  name: string;
  description: string;
  key_prefix: string;
  permissions: string;
  expires_at: string | null;
  enabled: number;
  created_by: string | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}

export type Principal =
  | { kind: 'user'; user: UserRow; sessionHash: string }
  | { kind: 'api_key'; key: ApiKeyRow; permissions: Record<KeyPermission, boolean> };

/** The fractal or prism a route acts on, resolved and authorised by the access hook. */
export interface ScopeTarget {
  type: ScopeType;
  id: string;
  name: string;
  role: Role;
}

// Browser sessions: a random id in an HttpOnly cookie; only its hash is stored.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import type { Db } from '../storage/sqlite.ts';
import { sha256 } from '../storage/secret-box.ts';
import type { UserRow } from './principal.ts';

export const SESSION_COOKIE = 'svc_session';
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * The session cookie's attributes: HttpOnly, SameSite=Lax, and Secure per SVC_SECURE_COOKIE
 * (`auto`: when the request arrived over https, as a trusted proxy reports it).
 */
export function sessionCookieOptions(config: Pick<Config, 'secureCookie'>, req: { protocol: string }) {
  const secure = config.secureCookie === 'always' || (config.secureCookie === 'auto' && req.protocol === 'https');
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure };
}

export class SessionStore {
  constructor(private readonly db: Db) {}

  create(userId: string): { id: string; expires: Date } {
    const id = randomBytes(32).toString('base64url');
    const now = new Date();
    const expires = new Date(now.getTime() + SESSION_TTL_MS);
    this.db
      .prepare('INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
      .run(sha256(id), userId, now.toISOString(), expires.toISOString());
    return { id, expires };
  }

  /** The enabled user behind a live session id, or undefined. */
  lookup(id: string): { user: UserRow; hash: string } | undefined {
    const hash = sha256(id);
    const row = this.db
      .prepare(
        `SELECT u.* FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.id_hash = ? AND s.expires_at > ? AND u.enabled = 1`,
      )
      .get(hash, new Date().toISOString()) as UserRow | undefined;
    return row ? { user: row, hash } : undefined;
  }

  delete(hash: string): void {
    this.db.prepare('DELETE FROM sessions WHERE id_hash = ?').run(hash);
  }

  deleteForUser(userId: string): void {
    this.db.prepare('DELETE FROM sessions WHERE user_id = ?').run(userId);
  }

  purgeExpired(): void {
    this.db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(new Date().toISOString());
  }
}

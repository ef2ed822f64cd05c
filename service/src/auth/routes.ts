// Session login, logout and "who am I".
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { HttpError, unauthorized } from '../http/errors.ts';
import type { App } from '../http/app.ts';
import { DUMMY_HASH, verifyPassword } from './passwords.ts';
import { currentSelection } from './selection.ts';
import { SESSION_COOKIE, sessionCookieOptions } from './sessions.ts';
import { publicUser } from './users-store.ts';

export async function authRoutes(app: App, ctx: Context) {
  app.post(
    '/api/v1/auth/login',
    {
      config: { access: { public: true } },
      schema: { body: Type.Object({ username: Type.String({ minLength: 1, maxLength: 200 }), password: Type.String({ minLength: 1, maxLength: 1000 }) }) },
    },
    async (req, reply) => {
      const client = req.ip;
      const { username, password } = req.body;
      // Counted before the slow hash: parallel guesses are refused as they arrive, not after.
      const wait = ctx.loginLimiter.attempt(client, username);
      if (wait > 0) {
        throw new HttpError(429, `Too many failed sign-ins from this address; try again in ${wait} seconds.`, { 'retry-after': String(wait) });
      }
      const user = ctx.users.byName(username);
      const good = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
      if (!user || !good || user.enabled !== 1) {
        // Never log the password; the user name helps spot guessing.
        req.log.warn({ username, client, reason: !user ? 'unknown user' : !good ? 'wrong password' : 'disabled' }, 'failed sign-in');
        throw unauthorized(user && good ? 'This account is disabled; ask an administrator.' : 'Wrong user name or password.');
      }
      ctx.loginLimiter.succeeded(client, username);
      const s = ctx.sessions.create(user.id);
      reply.setCookie(SESSION_COOKIE, s.id, { ...sessionCookieOptions(ctx.config, req), expires: s.expires });
      const selection = currentSelection(ctx, { kind: 'user', user, sessionHash: '' });
      return ok({ ...publicUser(user), selected: selection });
    },
  );

  app.post('/api/v1/auth/logout', { config: { access: { authenticated: true, usersOnly: true } } }, async (req, reply) => {
    const p = req.principal!;
    if (p.kind === 'user') ctx.sessions.delete(p.sessionHash);
    reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(ctx.config, req));
    return ok({ signed_out: true });
  });

  app.get('/api/v1/auth/me', { config: { access: { authenticated: true } } }, async (req) => {
    const p = req.principal!;
    const selected = currentSelection(ctx, p);
    if (p.kind === 'api_key') {
      return ok({ api_key: { id: p.key.id, name: p.key.name, permissions: p.permissions }, is_admin: false, selected });
    }
    return ok({ ...publicUser(p.user), selected });
  });
}

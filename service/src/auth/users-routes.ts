// User administration (global admins only).
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import type { App } from '../http/app.ts';
import { hashPassword } from './passwords.ts';
import type { UserRow } from './principal.ts';
import { publicUser } from './users-store.ts';

const Username = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._@-]+$' });
const Password = Type.String({ minLength: 8, maxLength: 1000 });
const admin = { access: { globalAdmin: true as const } };

export async function usersRoutes(app: App, ctx: Context) {
  const find = (username: string) => {
    const u = ctx.users.byName(username);
    if (!u) throw notFound(`User "${username}" not found.`);
    return u;
  };
  /** Refuses to take away the last enabled administrator (by demotion, disabling or deletion). */
  const keepAnAdmin = (u: UserRow) => {
    if (u.is_admin === 1 && u.enabled === 1 && ctx.users.countEnabledAdmins() <= 1) {
      throw badRequest('This is the last enabled administrator; make another user an administrator first.');
    }
  };

  app.get('/api/v1/users', { config: admin }, async () => ok(ctx.users.list().map(publicUser)));

  app.post(
    '/api/v1/users',
    {
      config: admin,
      schema: {
        body: Type.Object({
          username: Username,
          password: Password,
          is_admin: Type.Optional(Type.Boolean()),
          enabled: Type.Optional(Type.Boolean()),
        }),
      },
    },
    async (req, reply) => {
      const b = req.body;
      if (ctx.users.byName(b.username)) throw conflict(`A user named "${b.username}" already exists.`);
      const u = ctx.users.create({ username: b.username, passwordHash: await hashPassword(b.password), isAdmin: b.is_admin ?? false, enabled: b.enabled ?? true });
      return reply.code(201).send(ok(publicUser(u)));
    },
  );

  app.get('/api/v1/users/:username', { config: admin, schema: { params: Type.Object({ username: Type.String() }) } }, async (req) =>
    ok(publicUser(find(req.params.username))),
  );

  app.put(
    '/api/v1/users/:username',
    {
      config: admin,
      schema: {
        params: Type.Object({ username: Type.String() }),
        body: Type.Object({ password: Type.Optional(Password), is_admin: Type.Optional(Type.Boolean()), enabled: Type.Optional(Type.Boolean()) }),
      },
    },
    async (req) => {
      const u = find(req.params.username);
      const b = req.body;
      if (b.is_admin === false || b.enabled === false) keepAnAdmin(u);
      const updated = ctx.users.update(u.id, {
        passwordHash: b.password ? await hashPassword(b.password) : undefined,
        isAdmin: b.is_admin,
        enabled: b.enabled,
      });
      // A new password or a disabled account ends the user's sessions.
      if (b.password || b.enabled === false) ctx.sessions.deleteForUser(u.id);
      return ok(publicUser(updated));
    },
  );

  app.delete('/api/v1/users/:username', { config: admin, schema: { params: Type.Object({ username: Type.String() }) } }, async (req) => {
    const u = find(req.params.username);
    const p = req.principal!;
    if (p.kind === 'user' && p.user.id === u.id) throw badRequest('You cannot delete your own account.');
    keepAnAdmin(u);
    ctx.users.delete(u.id);
    return ok({ deleted: true });
  });
}

// Permissions and API keys of a fractal or a prism: the same routes under /fractals/{id} and
// /prisms/{id}, managed by that scope's admins.
import { Type } from 'typebox';
import { parsePermissions, DEFAULT_KEY_PERMISSIONS, publicApiKey } from '../auth/api-keys-store.ts';
import type { KeyPermission, ScopeType } from '../auth/principal.ts';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { DateTime, Description, Name, Nullable, StringEnum, Uuid } from '../http/schemas.ts';
import type { App } from '../http/app.ts';

const RoleSchema = StringEnum(['viewer', 'analyst', 'admin'] as const);
const PermissionsSchema = Type.Object({
  query: Type.Optional(Type.Boolean()),
  comment: Type.Optional(Type.Boolean()),
  alert_manage: Type.Optional(Type.Boolean()),
  notebook: Type.Optional(Type.Boolean()),
  dashboard: Type.Optional(Type.Boolean()),
}, { additionalProperties: false }); // a misspelt permission is a 400, not silently nothing

export async function scopeAccessRoutes(app: App, ctx: Context, scope: ScopeType) {
  const base = `/api/v1/${scope}s/:id`;
  const admin = { access: { scope, param: 'id', role: 'admin' as const } };

  // ---- permissions -------------------------------------------------------------------------
  const PermParams = Type.Object({ id: Uuid, permId: Uuid });
  const permission = (scopeId: string, id: string) =>
    ctx.permissions.get(scope, scopeId, id) ?? (() => { throw notFound(`Permission ${id} not found on this ${scope}.`); })();

  app.get(`${base}/permissions`, { config: admin, schema: { params: Type.Object({ id: Uuid }) } }, async (req) =>
    ok(ctx.permissions.list(scope, req.params.id)),
  );

  app.post(
    `${base}/permissions`,
    {
      config: admin,
      schema: {
        params: Type.Object({ id: Uuid }),
        body: Type.Object({ username: Type.Optional(Type.String({ minLength: 1 })), group_id: Type.Optional(Uuid), role: RoleSchema }),
      },
    },
    async (req, reply) => {
      const { username, group_id, role } = req.body;
      if ((username === undefined) === (group_id === undefined)) throw badRequest('Give exactly one of "username" or "group_id".');
      let to: { userId?: string; groupId?: string };
      if (username !== undefined) {
        const u = ctx.users.byName(username);
        if (!u) throw notFound(`User "${username}" not found.`);
        to = { userId: u.id };
      } else {
        if (!ctx.groups.get(group_id!)) throw notFound(`Group ${group_id} not found.`);
        to = { groupId: group_id };
      }
      const existing = ctx.permissions
        .list(scope, req.params.id)
        .find((p) => (to.userId && p.user_id === to.userId) || (to.groupId && p.group_id === to.groupId));
      if (existing) throw conflict(`That ${username ? 'user' : 'group'} already has a role on this ${scope}; change it with PUT.`);
      return reply.code(201).send(ok(ctx.permissions.grant(scope, req.params.id, to, role)));
    },
  );

  app.put(
    `${base}/permissions/:permId`,
    { config: admin, schema: { params: PermParams, body: Type.Object({ role: RoleSchema }) } },
    async (req) => {
      permission(req.params.id, req.params.permId);
      return ok(ctx.permissions.setRole(scope, req.params.id, req.params.permId, req.body.role));
    },
  );

  app.delete(`${base}/permissions/:permId`, { config: admin, schema: { params: PermParams } }, async (req) => {
    permission(req.params.id, req.params.permId);
    ctx.permissions.revoke(req.params.permId);
    return ok({ deleted: true });
  });

  // ---- API keys ----------------------------------------------------------------------------
  const KeyParams = Type.Object({ id: Uuid, keyId: Uuid });
  const key = (scopeId: string, id: string) =>
    ctx.apiKeys.get(scope, scopeId, id) ?? (() => { throw notFound(`API key ${id} not found on this ${scope}.`); })();
  const nameTaken = (scopeId: string, name: string, except?: string) =>
    ctx.apiKeys.list(scope, scopeId).some((k) => k.name.toLowerCase() === name.toLowerCase() && k.id !== except);
  const futureOrNull = (t: string | null | undefined) => {
    if (t && new Date(t).getTime() <= Date.now()) throw badRequest('The field "expires_at" must be in the future.');
    return t === undefined ? undefined : t === null ? null : new Date(t).toISOString();
  };

  app.get(`${base}/api-keys`, { config: admin, schema: { params: Type.Object({ id: Uuid }) } }, async (req) =>
    ok(ctx.apiKeys.list(scope, req.params.id).map(publicApiKey)),
  );

  app.post(
    `${base}/api-keys`,
    {
      config: admin,
      schema: {
        params: Type.Object({ id: Uuid }),
        body: Type.Object({
          name: Name,
          description: Type.Optional(Description),
          expires_at: Type.Optional(Nullable(DateTime)),
          permissions: Type.Optional(PermissionsSchema),
        }),
      },
    },
    async (req, reply) => {
      const b = req.body;
      if (nameTaken(req.params.id, b.name.trim())) throw conflict(`An API key named "${b.name.trim()}" already exists on this ${scope}.`);
      const p = req.principal!;
      const { row, key: value } = ctx.apiKeys.create({
        scope,
        scopeId: req.params.id,
        name: b.name.trim(),
        description: b.description ?? '',
        permissions: { ...DEFAULT_KEY_PERMISSIONS, ...(b.permissions as Partial<Record<KeyPermission, boolean>>) },
        expiresAt: futureOrNull(b.expires_at) ?? null,
        createdBy: p.kind === 'user' ? p.user.id : null,
      });
      return reply.code(201).send(ok({ ...publicApiKey(row), key: value }, 'Copy the key now; it is not shown again.'));
    },
  );

  app.get(`${base}/api-keys/:keyId`, { config: admin, schema: { params: KeyParams } }, async (req) =>
    ok(publicApiKey(key(req.params.id, req.params.keyId))),
  );

  app.put(
    `${base}/api-keys/:keyId`,
    {
      config: admin,
      schema: {
        params: KeyParams,
        body: Type.Object({
          name: Type.Optional(Name),
          description: Type.Optional(Description),
          expires_at: Type.Optional(Nullable(DateTime)),
          permissions: Type.Optional(PermissionsSchema),
          enabled: Type.Optional(Type.Boolean()),
        }),
      },
    },
    async (req) => {
      const row = key(req.params.id, req.params.keyId);
      const b = req.body;
      if (b.name && nameTaken(req.params.id, b.name.trim(), row.id)) throw conflict(`An API key named "${b.name.trim()}" already exists on this ${scope}.`);
      return ok(
        publicApiKey(
          ctx.apiKeys.update(row, {
            name: b.name?.trim(),
            description: b.description,
            expiresAt: futureOrNull(b.expires_at),
            permissions: b.permissions ? { ...parsePermissions(row.permissions), ...(b.permissions as Partial<Record<KeyPermission, boolean>>) } : undefined,
            enabled: b.enabled,
          }),
        ),
      );
    },
  );

  app.delete(`${base}/api-keys/:keyId`, { config: admin, schema: { params: KeyParams } }, async (req) => {
    ctx.apiKeys.delete(key(req.params.id, req.params.keyId).id);
    return ok({ deleted: true });
  });

  app.post(`${base}/api-keys/:keyId/toggle`, { config: admin, schema: { params: KeyParams } }, async (req) => {
    const row = key(req.params.id, req.params.keyId);
    return ok(publicApiKey(ctx.apiKeys.update(row, { enabled: row.enabled !== 1 })));
  });
}

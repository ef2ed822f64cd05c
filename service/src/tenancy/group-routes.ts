// Groups and their members (global admins only).
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { conflict, notFound } from '../http/errors.ts';
import { Description, IdParams, Name, Uuid } from '../http/schemas.ts';
import type { App } from '../http/app.ts';
import type { GroupRow } from './groups-store.ts';

const admin = { access: { globalAdmin: true as const } };

export async function groupRoutes(app: App, ctx: Context) {
  const group = (id: string) => ctx.groups.get(id) ?? (() => { throw notFound(`Group ${id} not found.`); })();
  const view = (g: GroupRow) => ({ ...g, members: ctx.groups.members(g.id).map((m) => m.username) });
  const nameClash = (name: string, except?: string) => {
    if (ctx.groups.list().some((g) => g.name.toLowerCase() === name.toLowerCase() && g.id !== except)) {
      throw conflict(`A group named "${name}" already exists.`);
    }
  };

  app.get('/api/v1/groups', { config: admin }, async () => ok(ctx.groups.list().map(view)));

  app.post('/api/v1/groups', { config: admin, schema: { body: Type.Object({ name: Name, description: Type.Optional(Description) }) } }, async (req, reply) => {
    nameClash(req.body.name.trim());
    return reply.code(201).send(ok(view(ctx.groups.create({ name: req.body.name.trim(), description: req.body.description ?? '' }))));
  });

  app.get('/api/v1/groups/:id', { config: admin, schema: { params: IdParams } }, async (req) => ok(view(group(req.params.id))));

  app.put(
    '/api/v1/groups/:id',
    { config: admin, schema: { params: IdParams, body: Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) }) } },
    async (req) => {
      group(req.params.id);
      if (req.body.name) nameClash(req.body.name.trim(), req.params.id);
      return ok(view(ctx.groups.update(req.params.id, { name: req.body.name?.trim(), description: req.body.description })));
    },
  );

  app.delete('/api/v1/groups/:id', { config: admin, schema: { params: IdParams } }, async (req) => {
    ctx.groups.delete(group(req.params.id).id);
    return ok({ deleted: true });
  });

  app.get('/api/v1/groups/:id/members', { config: admin, schema: { params: IdParams } }, async (req) => ok(ctx.groups.members(group(req.params.id).id)));

  app.post(
    '/api/v1/groups/:id/members',
    { config: admin, schema: { params: IdParams, body: Type.Object({ username: Type.String({ minLength: 1 }) }) } },
    async (req, reply) => {
      const g = group(req.params.id);
      const u = ctx.users.byName(req.body.username);
      if (!u) throw notFound(`User "${req.body.username}" not found.`);
      if (!ctx.groups.addMember(g.id, u.id)) throw conflict(`"${u.username}" is already a member of group "${g.name}".`);
      return reply.code(201).send(ok(ctx.groups.members(g.id)));
    },
  );

  app.delete(
    '/api/v1/groups/:id/members/:username',
    { config: admin, schema: { params: Type.Object({ id: Uuid, username: Type.String() }) } },
    async (req) => {
      const g = group(req.params.id);
      const u = ctx.users.byName(req.params.username);
      if (!u || !ctx.groups.removeMember(g.id, u.id)) throw notFound(`"${req.params.username}" is not a member of group "${g.name}".`);
      return ok(ctx.groups.members(g.id));
    },
  );
}

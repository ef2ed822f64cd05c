// Comments (interface-spec "Comments"): analysts annotate single logs and tag them.
// Every route is `{authenticated: true}` for the access hook: the fractal comes from the body,
// a query parameter or the comment itself, so comments-logic.ts (writes) and
// auth/read-scope.ts (list scopes) check roles and API-key permissions in the handler.
// Lists return an array under `data` and the number of matches before paging in X-Total-Count.
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { pageOf, withTotal } from '../http/paging.ts';
import { IdParams, Uuid } from '../http/schemas.ts';
import { resolveReadScope } from '../auth/read-scope.ts';
import {
  accessFor,
  bulkAddTag,
  bulkDelete,
  bulkRemoveTag,
  createComment,
  deleteComment,
  deleteLogComments,
  listFilter,
  MAX_BULK,
  readableComment,
  resolveWriteScope,
  updateComment,
  view,
} from './comments-logic.ts';

const authenticated = { access: { authenticated: true as const } };

const Scope = {
  fractal_id: Type.Optional(Type.String()),
  prism_id: Type.Optional(Type.String()),
};
const ListQuery = Type.Object({
  ...Scope,
  tag: Type.Optional(Type.String()),
  keyword: Type.Optional(Type.String({ maxLength: 1000 })),
  limit: Type.Optional(Type.String()),
  offset: Type.Optional(Type.String()),
});

const Tags = Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 });
const CommentIds = Type.Array(Uuid, { minItems: 1, maxItems: MAX_BULK });
const LogParams = Type.Object({ log_id: Uuid });

export async function commentRoutes(app: App, ctx: Context) {
  app.post(
    '/api/v1/comments',
    {
      config: authenticated,
      schema: {
        body: Type.Object({
          log_id: Type.String(),
          fractal_id: Type.Optional(Type.String()),
          content: Type.String({ maxLength: 100_000 }),
          tags: Type.Optional(Tags),
          timestamp: Type.Optional(Type.String({ maxLength: 64 })),
        }),
      },
    },
    async (req, reply) => reply.code(201).send(ok(await createComment(ctx, req.principal!, req.body))),
  );

  // Static paths first in the reader's eye; the router prefers them over /comments/:id anyway.
  app.get('/api/v1/comments/flat', { config: authenticated, schema: { querystring: ListQuery } }, async (req, reply) => {
    const q = req.query;
    const scope = resolveReadScope(ctx, req.principal, q);
    const { rows, total } = ctx.comments.list(scope.fractalIds, listFilter(q), pageOf(q));
    const access = accessFor(ctx, req.principal!);
    return withTotal(reply, total, rows.map((c) => view(c, access)));
  });

  app.get('/api/v1/comments/tags', { config: authenticated, schema: { querystring: Type.Object(Scope) } }, async (req) => {
    const scope = resolveReadScope(ctx, req.principal, req.query);
    return ok(ctx.comments.tagCounts(scope.fractalIds));
  });

  app.get('/api/v1/logs/commented', { config: authenticated, schema: { querystring: ListQuery } }, async (req, reply) => {
    const q = req.query;
    const scope = resolveReadScope(ctx, req.principal, q);
    const { rows, total } = ctx.comments.commentedLogs(scope.fractalIds, listFilter(q), pageOf(q));
    return withTotal(reply, total, rows);
  });

  const TagBody = Type.Object({ comment_ids: CommentIds, tag: Type.String({ maxLength: 1000 }) });
  app.post('/api/v1/comments/bulk-add-tag', { config: authenticated, schema: { body: TagBody } }, async (req) =>
    ok(bulkAddTag(ctx, req.principal!, req.body.comment_ids, req.body.tag)),
  );
  app.post('/api/v1/comments/bulk-remove-tag', { config: authenticated, schema: { body: TagBody } }, async (req) =>
    ok(bulkRemoveTag(ctx, req.principal!, req.body.comment_ids, req.body.tag)),
  );

  app.post(
    '/api/v1/comments/bulk-delete',
    { config: authenticated, schema: { body: Type.Object({ comment_ids: CommentIds }) } },
    async (req) => ok({ deleted: bulkDelete(ctx, req.principal!, req.body.comment_ids) }),
  );

  app.get('/api/v1/comments/:id', { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const access = accessFor(ctx, req.principal!);
    return ok(view(readableComment(ctx, access, req.params.id), access));
  });

  app.put(
    '/api/v1/comments/:id',
    {
      config: authenticated,
      schema: { params: IdParams, body: Type.Object({ content: Type.Optional(Type.String({ maxLength: 100_000 })), tags: Type.Optional(Tags) }) },
    },
    async (req) => ok(updateComment(ctx, req.principal!, req.params.id, req.body)),
  );

  app.delete('/api/v1/comments/:id', { config: authenticated, schema: { params: IdParams } }, async (req) => {
    deleteComment(ctx, req.principal!, req.params.id);
    return ok({ deleted: true });
  });

  app.get('/api/v1/logs/:log_id/comments', { config: authenticated, schema: { params: LogParams, querystring: Type.Object(Scope) } }, async (req) => {
    const scope = resolveReadScope(ctx, req.principal, req.query);
    const access = accessFor(ctx, req.principal!);
    return ok(ctx.comments.forLog(scope.fractalIds, req.params.log_id.toLowerCase()).map((c) => view(c, access)));
  });

  app.delete('/api/v1/logs/:log_id/comments', { config: authenticated, schema: { params: LogParams, querystring: Type.Object(Scope) } }, async (req) => {
    const fractalIds = resolveWriteScope(ctx, req.principal!, req.query);
    return ok({ deleted: deleteLogComments(ctx, req.principal!, fractalIds, req.params.log_id) });
  });
}

// /api/v1/normalizers (conventions.md "Normalizers"). Global admins create, edit and delete them;
// anyone signed in may read them, since fractal admins pick one for their tokens and analysts
// want to know why a field has the name it has. The preview runs a sample record through unsaved
// edits, as ingest would.
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { badRequest } from '../http/errors.ts';
import { Description, IdParams, Name, StringEnum, Uuid } from '../http/schemas.ts';
import { PARSER_TYPES } from '../ingest/tokens-store.ts';
import { MAX_FIELD_NAME, TRANSFORMS } from './definition.ts';
import { checkedDefinition, createNormalizer, deleteNormalizer, normalizerOr404, updateNormalizer, usersOf } from './normalizers-logic.ts';
import type { Normalizer } from './normalizers-store.ts';
import { previewRecord, PreviewError } from './preview.ts';

const FieldName = Type.String({ minLength: 1, maxLength: MAX_FIELD_NAME });
const Definition = {
  transforms: Type.Optional(Type.Array(StringEnum(TRANSFORMS), { maxItems: 20 })),
  field_mappings: Type.Optional(
    Type.Array(Type.Object({ sources: Type.Array(FieldName, { minItems: 1, maxItems: 200 }), target: FieldName }), { maxItems: 2000 }),
  ),
  value_mappings: Type.Optional(
    Type.Array(
      Type.Object({
        from_field: FieldName,
        to_field: FieldName,
        map: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 10_000 }))),
      }),
      { maxItems: 500 },
    ),
  ),
  timestamp_fields: Type.Optional(Type.Array(FieldName, { maxItems: 50 })),
};
const Body = { ...Definition, description: Type.Optional(Description), is_default: Type.Optional(Type.Boolean()) };
const admin = { access: { globalAdmin: true as const } };
const authenticated = { access: { authenticated: true as const } };

export function normalizerView(ctx: Context, n: Normalizer) {
  const { tokens, feeds } = usersOf(ctx, n.id);
  return { ...n, used_by: { ingest_tokens: tokens, feeds } };
}

export async function normalizerRoutes(app: App, ctx: Context) {
  const who = (req: { principal: { kind: string; user?: { username: string }; key?: { name: string } } | null }) =>
    req.principal?.kind === 'user' ? req.principal.user!.username : `api key ${req.principal?.key?.name ?? ''}`;

  app.get('/api/v1/normalizers', { config: authenticated }, async () => ok(ctx.normalizers.list().map((n) => normalizerView(ctx, n))));

  app.post('/api/v1/normalizers', { config: admin, schema: { body: Type.Object({ name: Name, ...Body }) } }, async (req, reply) =>
    reply.code(201).send(ok(normalizerView(ctx, createNormalizer(ctx, req.body, who(req))))),
  );

  // Before /:id, so "preview" is never read as an id.
  app.post(
    '/api/v1/normalizers/preview',
    {
      config: authenticated,
      schema: {
        body: Type.Object({
          record: Type.String({ maxLength: 1_000_000 }),
          parser_type: Type.Optional(StringEnum(PARSER_TYPES)),
          normalizer_id: Type.Optional(Uuid),
          ...Definition,
          token_timestamp_fields: Type.Optional(Type.Array(FieldName, { maxItems: 50 })),
        }),
      },
    },
    async (req) => {
      const b = req.body;
      if (!b.record.trim()) throw badRequest('The field "record" must hold a sample record.');
      const base = b.normalizer_id ? normalizerOr404(ctx, b.normalizer_id) : undefined;
      const def = checkedDefinition(b, base);
      try {
        return ok(
          previewRecord(b.record, b.parser_type ?? 'json', def, {
            token: b.token_timestamp_fields ?? [],
            settings: ctx.settings.get().timestamp_fields,
          }),
        );
      } catch (err) {
        if (err instanceof PreviewError) throw badRequest(err.message);
        throw err;
      }
    },
  );

  app.get('/api/v1/normalizers/:id', { config: authenticated, schema: { params: IdParams } }, async (req) =>
    ok(normalizerView(ctx, normalizerOr404(ctx, req.params.id))),
  );

  app.put('/api/v1/normalizers/:id', { config: admin, schema: { params: IdParams, body: Type.Object({ name: Type.Optional(Name), ...Body }) } }, async (req) =>
    ok(normalizerView(ctx, updateNormalizer(ctx, req.params.id, req.body))),
  );

  app.delete('/api/v1/normalizers/:id', { config: admin, schema: { params: IdParams } }, async (req) => {
    deleteNormalizer(ctx, req.params.id);
    return ok({ deleted: true });
  });
}

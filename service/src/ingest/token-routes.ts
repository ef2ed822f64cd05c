// Ingest tokens of a fractal, managed by its admins. The value is listed in full to them:
// shippers are configured with it. A token applies a normalizer (`normalizer_id`; with
// `normalization` on and none named, the default). An old-style rule list (`normalizers`) is
// still taken: it becomes a normalizer of the token's own (normalizers/legacy-rules.ts).
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { Name, Nullable, StringEnum, Uuid } from '../http/schemas.ts';
import type { App } from '../http/app.ts';
import { normalizerFromTokenRules } from '../normalizers/normalizers-logic.ts';
import { PARSER_TYPES, type IngestTokenRow } from './tokens-store.ts';

const admin = { access: { scope: 'fractal' as const, param: 'id', role: 'admin' as const } };
const TokenParams = Type.Object({ id: Uuid, tokenId: Uuid });
const FieldName = Type.String({ minLength: 1, maxLength: 500 });
const TokenBody = {
  parser_type: Type.Optional(StringEnum(PARSER_TYPES)),
  normalization: Type.Optional(Type.Boolean()),
  normalizer_id: Type.Optional(Nullable(Uuid)),
  normalizers: Type.Optional(Type.Array(Type.Object({}), { maxItems: 500 })),
  timestamp_fields: Type.Optional(Type.Array(FieldName, { maxItems: 50 })),
  enabled: Type.Optional(Type.Boolean()),
};

export async function ingestTokenRoutes(app: App, ctx: Context) {
  const view = (t: IngestTokenRow) => ({
    id: t.id,
    fractal_id: t.fractal_id,
    name: t.name,
    token: ctx.ingestTokens.reveal(t),
    parser_type: t.parser_type,
    normalization: t.normalization === 1,
    normalizer_id: t.normalizer_id,
    /** The normalizer applied: its own, else (normalization on) the default; null: none. */
    normalizer: applied(t),
    timestamp_fields: JSON.parse(t.timestamp_fields) as string[],
    enabled: t.enabled === 1,
    is_default: t.is_default === 1,
    created_at: t.created_at,
    updated_at: t.updated_at,
  });
  const applied = (t: IngestTokenRow) => {
    if (t.normalization !== 1) return null;
    const n = t.normalizer_id ? ctx.normalizers.get(t.normalizer_id) : ctx.normalizers.defaultOne();
    return n ? { id: n.id, name: n.name, is_default: n.is_default } : null;
  };
  const token = (fractalId: string, id: string) =>
    ctx.ingestTokens.get(fractalId, id) ?? (() => { throw notFound(`Ingest token ${id} not found on this fractal.`); })();
  /**
   * The normalizer id a body asks for: `normalizer_id` (which must exist), or a normalizer made from
   * an old-style rule list; undefined when the body names neither.
   */
  const normalizerChoice = (
    req: { principal: { kind: string; user?: { username: string } } | null },
    fractalId: string,
    b: { name?: string; normalization?: boolean; normalizer_id?: string | null; normalizers?: unknown[] },
    row?: IngestTokenRow,
  ): string | null | undefined => {
    if (b.normalizer_id) {
      if (!ctx.normalizers.get(b.normalizer_id)) throw badRequest(`The field "normalizer_id" names no normalizer (${b.normalizer_id}).`);
      return b.normalizer_id;
    }
    if (b.normalizers === undefined) return b.normalizer_id;
    if (b.normalizers.length === 0 && b.normalizer_id === undefined) return row ? null : undefined;
    return normalizerFromTokenRules(
      ctx,
      {
        fractalName: ctx.fractals.get(fractalId)?.name ?? fractalId,
        tokenName: (b.name ?? row?.name ?? '').trim(),
        currentNormalizerId: row?.normalizer_id ?? null,
        builtin: b.normalization ?? (row ? row.normalization === 1 : true),
      },
      b.normalizers,
      req.principal?.kind === 'user' ? req.principal.user!.username : 'api key',
    );
  };
  const nameTaken = (fractalId: string, name: string, except?: string) => {
    if (ctx.ingestTokens.list(fractalId).some((t) => t.name.toLowerCase() === name.toLowerCase() && t.id !== except)) {
      throw conflict(`An ingest token named "${name}" already exists on this fractal.`);
    }
  };

  app.get('/api/v1/fractals/:id/ingest-tokens', { config: admin, schema: { params: Type.Object({ id: Uuid }) } }, async (req) =>
    ok(ctx.ingestTokens.list(req.params.id).map(view)),
  );

  app.post(
    '/api/v1/fractals/:id/ingest-tokens',
    { config: admin, schema: { params: Type.Object({ id: Uuid }), body: Type.Object({ name: Name, ...TokenBody }) } },
    async (req, reply) => {
      const b = req.body;
      nameTaken(req.params.id, b.name.trim());
      const normalizerId = normalizerChoice(req, req.params.id, b) ?? null;
      const row = ctx.ingestTokens.create(req.params.id, {
        name: b.name.trim(),
        parserType: b.parser_type ?? 'json',
        // Naming a normalizer means applying it.
        normalization: normalizerId ? true : (b.normalization ?? true),
        normalizerId,
        timestampFields: b.timestamp_fields ?? [],
        enabled: b.enabled ?? true,
      });
      return reply.code(201).send(ok(view(row)));
    },
  );

  app.get('/api/v1/fractals/:id/ingest-tokens/:tokenId', { config: admin, schema: { params: TokenParams } }, async (req) =>
    ok(view(token(req.params.id, req.params.tokenId))),
  );

  app.put(
    '/api/v1/fractals/:id/ingest-tokens/:tokenId',
    { config: admin, schema: { params: TokenParams, body: Type.Object({ name: Type.Optional(Name), ...TokenBody }) } },
    async (req) => {
      const row = token(req.params.id, req.params.tokenId);
      const b = req.body;
      if (b.name) nameTaken(req.params.id, b.name.trim(), row.id);
      const normalizerId = normalizerChoice(req, req.params.id, b, row);
      return ok(
        view(
          ctx.ingestTokens.update(row, {
            name: b.name?.trim(),
            parserType: b.parser_type,
            normalization: normalizerId ? true : b.normalization,
            normalizerId,
            timestampFields: b.timestamp_fields,
            enabled: b.enabled,
          }),
        ),
      );
    },
  );

  app.delete('/api/v1/fractals/:id/ingest-tokens/:tokenId', { config: admin, schema: { params: TokenParams } }, async (req) => {
    ctx.ingestTokens.delete(token(req.params.id, req.params.tokenId).id);
    return ok({ deleted: true });
  });

  app.post('/api/v1/fractals/:id/ingest-tokens/:tokenId/toggle', { config: admin, schema: { params: TokenParams } }, async (req) => {
    const row = token(req.params.id, req.params.tokenId);
    return ok(view(ctx.ingestTokens.update(row, { enabled: row.enabled !== 1 })));
  });
}

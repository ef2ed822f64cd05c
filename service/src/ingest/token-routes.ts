// Ingest tokens of a fractal, managed by its admins. The value is listed in full to them:
// shippers are configured with it.
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { Name, StringEnum, Uuid } from '../http/schemas.ts';
import type { App } from '../http/app.ts';
import { ruleProblem } from './normalizer-rules.ts';
import { PARSER_TYPES, type IngestTokenRow } from './tokens-store.ts';

const admin = { access: { scope: 'fractal' as const, param: 'id', role: 'admin' as const } };
const TokenParams = Type.Object({ id: Uuid, tokenId: Uuid });
const FieldName = Type.String({ minLength: 1, maxLength: 500 });
const TokenBody = {
  parser_type: Type.Optional(StringEnum(PARSER_TYPES)),
  normalization: Type.Optional(Type.Boolean()),
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
    normalizers: JSON.parse(t.normalizers) as unknown[],
    timestamp_fields: JSON.parse(t.timestamp_fields) as string[],
    enabled: t.enabled === 1,
    is_default: t.is_default === 1,
    created_at: t.created_at,
    updated_at: t.updated_at,
  });
  const token = (fractalId: string, id: string) =>
    ctx.ingestTokens.get(fractalId, id) ?? (() => { throw notFound(`Ingest token ${id} not found on this fractal.`); })();
  const checkRules = (rules?: unknown[]) => {
    const problem = rules ? ruleProblem(rules) : null;
    if (problem) throw badRequest(problem);
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
      checkRules(b.normalizers);
      nameTaken(req.params.id, b.name.trim());
      const row = ctx.ingestTokens.create(req.params.id, {
        name: b.name.trim(),
        parserType: b.parser_type ?? 'json',
        normalization: b.normalization ?? true,
        normalizers: b.normalizers ?? [],
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
      checkRules(b.normalizers);
      if (b.name) nameTaken(req.params.id, b.name.trim(), row.id);
      return ok(
        view(
          ctx.ingestTokens.update(row, {
            name: b.name?.trim(),
            parserType: b.parser_type,
            normalization: b.normalization,
            normalizers: b.normalizers,
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

// Dictionaries (match()'s lookup tables). Not in the interface spec, which names only the alert
// action that fills them; these routes let people create, fill (JSON or CSV), browse and delete
// them. Access is checked in dictionaries-logic.ts from the dictionary's own scope, so every
// route here is `{authenticated: true}` for the access hook.
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { pageOf, withTotal } from '../http/paging.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { Description, IdParams, Uuid } from '../http/schemas.ts';
import { resolveReadScope } from '../auth/read-scope.ts';
import { formatCsv } from '../shared/csv.ts';
import {
  checkColumns,
  checkName,
  mayChange,
  MAX_ROWS_PER_WRITE,
  normalizeRows,
  ownerFor,
  readable,
  rowsFromCsv,
  view,
  writable,
  writeRows,
} from './dictionaries-logic.ts';

const authenticated = { access: { authenticated: true as const } };
const ColumnList = Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 });
/** A CSV import's size limit: a million rows of a few short columns. */
const MAX_CSV_BYTES = 64 * 1024 * 1024;

/** A `true`/`false` query parameter (absent: false). */
function flag(q: Record<string, string | undefined>, name: string): boolean {
  const v = q[name];
  if (v === undefined || v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw badRequest(`The query parameter "${name}" must be true or false.`);
}

export async function dictionaryRoutes(app: App, ctx: Context) {
  // CSV uploads arrive as text (text/plain too, Fastify's own parser).
  app.addContentTypeParser(['text/csv', 'application/csv'], { parseAs: 'string', bodyLimit: MAX_CSV_BYTES }, (_req, body, done) => done(null, body));

  const withCount = async (d: Parameters<typeof view>[0]) => view(d, (await ctx.dictionaries.rowCounts([d])).get(d.id) ?? 0);

  app.get(
    '/api/v1/dictionaries',
    { config: authenticated, schema: { querystring: Type.Object({ fractal_id: Type.Optional(Type.String()), prism_id: Type.Optional(Type.String()) }) } },
    async (req) => {
      const scope = resolveReadScope(ctx, req.principal, req.query);
      const ds = ctx.dictionaries.visibleTo(scope);
      const counts = await ctx.dictionaries.rowCounts(ds);
      return ok(ds.map((d) => view(d, counts.get(d.id) ?? 0)));
    },
  );

  app.post(
    '/api/v1/dictionaries',
    {
      config: authenticated,
      schema: {
        body: Type.Object({
          name: Type.String({ maxLength: 200 }),
          description: Type.Optional(Description),
          columns: ColumnList,
          key_columns: Type.Optional(ColumnList),
          fractal_id: Type.Optional(Uuid),
          prism_id: Type.Optional(Uuid),
          is_global: Type.Optional(Type.Boolean()),
        }),
      },
    },
    async (req, reply) => {
      const who = req.principal!;
      const owner = ownerFor(ctx, who, req.body);
      mayChange(ctx, who, owner);
      const name = checkName(ctx, owner, req.body.name);
      const cols = checkColumns(req.body.columns, req.body.key_columns);
      const creator = who.kind === 'user' ? who.user.username : `api key ${who.key.name}`;
      const d = ctx.dictionaries.create({ name, description: req.body.description ?? '', ...owner, ...cols, created_by: creator });
      return reply.code(201).send(ok(view(d, 0)));
    },
  );

  app.get('/api/v1/dictionaries/:id', { config: authenticated, schema: { params: IdParams } }, async (req) =>
    ok(await withCount(readable(ctx, req.principal, req.params.id))),
  );

  app.put(
    '/api/v1/dictionaries/:id',
    {
      config: authenticated,
      schema: {
        params: IdParams,
        body: Type.Object({
          name: Type.Optional(Type.String({ maxLength: 200 })),
          description: Type.Optional(Description),
          columns: Type.Optional(ColumnList),
          key_columns: Type.Optional(ColumnList),
        }),
      },
    },
    async (req) => {
      const d = writable(ctx, req.principal!, req.params.id);
      const b = req.body;
      const name = b.name === undefined ? undefined : checkName(ctx, d, b.name, d.id);
      const cols = b.columns || b.key_columns ? checkColumns(b.columns ?? d.columns, b.key_columns ?? d.key_columns) : undefined;
      // The primary key is each row's identity: changing it would re-key rows already stored.
      if (cols && cols.key_columns[0] !== d.key_columns[0]) {
        throw badRequest(`The first key column ("${d.key_columns[0]}") identifies the rows and cannot change; create a new dictionary instead.`);
      }
      const updated = ctx.dictionaries.update(d.id, {
        ...(name === undefined ? {} : { name }),
        ...(b.description === undefined ? {} : { description: b.description }),
        ...(cols ?? {}),
      });
      return ok(await withCount(updated));
    },
  );

  app.delete('/api/v1/dictionaries/:id', { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const d = writable(ctx, req.principal!, req.params.id);
    ctx.dictionaries.delete(d.id);
    void ctx.dictionaries.purgeOrphanRows().catch((err) => req.log.warn({ err: (err as Error).message }, 'could not remove a deleted dictionary’s rows'));
    return ok({ deleted: true });
  });

  app.get(
    '/api/v1/dictionaries/:id/rows',
    {
      config: authenticated,
      schema: {
        params: IdParams,
        querystring: Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()), search: Type.Optional(Type.String({ maxLength: 1000 })) }),
      },
    },
    async (req, reply) => {
      const d = readable(ctx, req.principal, req.params.id);
      const { rows, total } = await ctx.dictionaries.rows(d, { page: pageOf(req.query), search: req.query.search || undefined });
      return withTotal(reply, total, rows);
    },
  );

  app.get('/api/v1/dictionaries/:id/export', { config: authenticated, schema: { params: IdParams } }, async (req, reply) => {
    const d = readable(ctx, req.principal, req.params.id);
    const { rows } = await ctx.dictionaries.rows(d, {});
    const file = `${d.name.replace(/[^\w.-]/g, '_')}.csv`;
    reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${file}"`);
    return formatCsv([d.columns, ...rows.map((r) => d.columns.map((c) => r[c]))]);
  });

  app.post(
    '/api/v1/dictionaries/:id/rows',
    {
      config: authenticated,
      schema: {
        params: IdParams,
        body: Type.Object({
          rows: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: MAX_ROWS_PER_WRITE }),
          replace: Type.Optional(Type.Boolean()),
        }),
      },
    },
    async (req) => {
      const d = writable(ctx, req.principal!, req.params.id);
      const { rows } = normalizeRows(d, req.body.rows, { addColumns: false, where: (i) => `rows[${i}]` });
      return ok(await writeRows(ctx, d, rows, { replace: req.body.replace === true }));
    },
  );

  app.post(
    '/api/v1/dictionaries/:id/import',
    {
      config: authenticated,
      bodyLimit: MAX_CSV_BYTES,
      schema: {
        params: IdParams,
        querystring: Type.Object({ replace: Type.Optional(Type.String()), add_columns: Type.Optional(Type.String()) }),
      },
    },
    async (req) => {
      const d = writable(ctx, req.principal!, req.params.id);
      if (typeof req.body !== 'string') throw badRequest('Send the CSV as the request body with Content-Type: text/csv.');
      const q = req.query;
      const { rows, columns } = rowsFromCsv(d, req.body, flag(q, 'add_columns'));
      return ok(await writeRows(ctx, d, rows, { replace: flag(q, 'replace'), columns }));
    },
  );

  app.delete(
    '/api/v1/dictionaries/:id/rows/:key',
    { config: authenticated, schema: { params: Type.Object({ id: Uuid, key: Type.String({ maxLength: 65_536 }) }) } },
    async (req) => {
      const d = writable(ctx, req.principal!, req.params.id);
      if (!(await ctx.dictionaries.deleteRow(d, req.params.key))) throw notFound(`The dictionary "${d.name}" has no row with ${d.key_columns[0]} "${req.params.key}".`);
      return ok({ deleted: true, row_count: (await ctx.dictionaries.rowCounts([d])).get(d.id) ?? 0 });
    },
  );
}

// Notebooks (interface-spec "Notebooks"): investigation write-ups of a fractal or prism, with
// markdown, query, ai_summary and comment_context sections, variables, stored results, live
// co-editing (live/), export/import, AI summaries and generation from tagged comments.
// Every route is `{authenticated: true}` for the access hook: the scope comes from the notebook
// itself (or the body, query string or selection when creating, listing, importing, generating),
// so notebooks-logic.ts checks roles and the API key's `notebook` permission in the handler.
import type { FastifyError, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { conflict } from '../http/errors.ts';
import { pageOf, withTotal } from '../http/paging.ts';
import { Description, IdParams, Uuid } from '../http/schemas.ts';
import { liveRoutes, originOf } from '../live/routes.ts';
import { QueryInputError, asInputError } from '../query/query-service.ts';
import { QueryExecutionError, QueryTimeoutError } from '../query/run.ts';
import { exportDocument, importDocument, MAX_DOCUMENT_BYTES } from './document.ts';
import { generateFromComments } from './generate.ts';
import {
  addSection,
  createNotebook,
  deleteNotebook,
  deleteSection,
  fullView,
  LIVE_KIND,
  notebookFor,
  notebookScope,
  notebookView,
  reorderSections,
  sectionOf,
  sectionView,
  setVariables,
  storedResultsJson,
  storeResults,
  updateNotebook,
  updateSection,
} from './notebooks-logic.ts';
import { actorName, type Actor } from '../shared/documents.ts';
import { executeSection, snapshotText, type SnapshotInput } from './results.ts';
import { summarizeSection } from './summarize.ts';

const authenticated = { access: { authenticated: true as const } };

const Tags = Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 });
const Variables = Type.Array(Type.Object({ name: Type.Unknown(), value: Type.Unknown() }), { maxItems: 1000 });
const Version = Type.Integer({ minimum: 1 });
const ScopeFields = { fractal_id: Type.Optional(Type.String()), prism_id: Type.Optional(Type.String()) };
const TimeFields = {
  time_range: Type.Optional(Type.String({ maxLength: 20 })),
  start: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
  end: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
};
const SectionBody = {
  section_type: Type.Unknown(),
  title: Type.Optional(Type.String({ maxLength: 10_000 })),
  content: Type.Optional(Type.String()),
  tags: Type.Optional(Tags),
};
const SectionParams = Type.Object({ id: Uuid, section_id: Uuid });
const Snapshot = Type.Object({ results: Type.Array(Type.Unknown()) });

const actor = (req: { principal: unknown; headers: Record<string, unknown> }): Actor => ({ p: req.principal as Actor['p'], origin: originOf(req as never) });

/** A query section that could not run: §5's error fields in the error envelope. */
function queryFailure(ctx: Context, reply: FastifyReply, err: unknown) {
  const e = asInputError(err);
  if (e instanceof QueryInputError) {
    return reply.code(400).send({ success: false, error: e.message, ...(e.errorType !== 'request' ? { error_type: e.errorType } : {}), ...(e.errorPos ? { error_pos: e.errorPos } : {}) });
  }
  if (e instanceof QueryTimeoutError) return reply.code(408).send({ success: false, error: e.message, error_type: 'timeout' });
  if (e instanceof QueryExecutionError) {
    ctx.log.error({ detail: e.detail }, 'notebook query execution failed');
    return reply.code(500).send({ success: false, error: e.message, error_type: 'execution' });
  }
  throw e;
}

/** Stops the work a request started (a query, a model call) when its client goes away. */
function abortOnClose(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableEnded) controller.abort();
  });
  return controller;
}

export async function notebookRoutes(app: App, ctx: Context) {
  const base = '/api/v1/notebooks';

  app.get(
    base,
    {
      config: authenticated,
      schema: {
        querystring: Type.Object({
          ...ScopeFields,
          tag: Type.Optional(Type.String({ maxLength: 1000 })),
          q: Type.Optional(Type.String({ maxLength: 1000 })),
          limit: Type.Optional(Type.String()),
          offset: Type.Optional(Type.String()),
        }),
      },
    },
    async (req, reply) => {
      const scope = notebookScope(ctx, req.principal!, req.query, false);
      const { rows, total } = ctx.notebooks.list(scope, { tag: req.query.tag || undefined, text: req.query.q?.trim() || undefined }, pageOf(req.query));
      return withTotal(reply, total, rows.map((nb) => ({ ...notebookView(ctx, nb), section_count: nb.section_count })));
    },
  );

  app.post(
    base,
    {
      config: authenticated,
      schema: {
        body: Type.Object({
          name: Type.String({ maxLength: 10_000 }),
          description: Type.Optional(Description),
          tags: Type.Optional(Tags),
          variables: Type.Optional(Variables),
          sections: Type.Optional(Type.Array(Type.Object(SectionBody), { maxItems: 1000 })),
          ...TimeFields,
          ...ScopeFields,
        }),
      },
    },
    async (req, reply) => {
      const scope = notebookScope(ctx, req.principal!, req.body, true);
      const nb = createNotebook(ctx, actor(req), scope, req.body);
      return reply.code(201).send(ok(fullView(ctx, { nb, canEdit: true, scopeName: scope.name })));
    },
  );

  app.get(`${base}/ai-status`, { config: authenticated }, async () => ok(ctx.ai.status()));

  app.post(
    `${base}/generate-from-comments`,
    {
      config: authenticated,
      schema: { body: Type.Object({ tag: Type.String({ maxLength: 1000 }), attack_chain: Type.Optional(Type.Boolean()), ...ScopeFields }) },
    },
    async (req, reply) => {
      const scope = notebookScope(ctx, req.principal!, req.body, true);
      try {
        const g = await generateFromComments(ctx, actor(req), scope, req.body);
        const view = fullView(ctx, { nb: g.notebook, canEdit: true, scopeName: scope.name });
        return reply.code(g.replaced ? 200 : 201).send(ok({ ...view, replaced: g.replaced }, g.replaced ? `Replaced "${g.notebook.name}".` : `Created "${g.notebook.name}".`));
      } catch (err) {
        return queryFailure(ctx, reply, err);
      }
    },
  );

  app.post(
    `${base}/import`,
    {
      config: authenticated,
      bodyLimit: MAX_DOCUMENT_BYTES,
      schema: { querystring: Type.Object(ScopeFields) },
      // The contract: an oversized document is bad input like any other wrong document.
      errorHandler: (err: FastifyError, _req, reply) => {
        if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
          return reply.code(400).send({ success: false, error: `The import document is larger than ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB, the most an import takes.` });
        }
        throw err;
      },
    },
    async (req, reply) => {
      const scope = notebookScope(ctx, req.principal!, req.query, true);
      const nb = importDocument(ctx, actor(req), scope, req.body);
      return reply.code(201).send(ok(fullView(ctx, { nb, canEdit: true, scopeName: scope.name }), `Imported "${nb.name}".`));
    },
  );

  app.get(`${base}/:id`, { config: authenticated, schema: { params: IdParams } }, async (req) => ok(fullView(ctx, notebookFor(ctx, req.principal!, req.params.id))));

  app.put(
    `${base}/:id`,
    {
      config: authenticated,
      schema: {
        params: IdParams,
        body: Type.Object({
          name: Type.Optional(Type.String({ maxLength: 10_000 })),
          description: Type.Optional(Description),
          tags: Type.Optional(Tags),
          variables: Type.Optional(Variables),
          version: Type.Optional(Version),
          ...TimeFields,
        }),
      },
    },
    async (req) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      return ok(notebookView(ctx, updateNotebook(ctx, actor(req), nb, req.body)));
    },
  );

  app.delete(`${base}/:id`, { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
    deleteNotebook(ctx, actor(req), nb);
    return ok({ deleted: true });
  });

  app.post(
    `${base}/:id/sections`,
    {
      config: authenticated,
      schema: { params: IdParams, body: Type.Object({ ...SectionBody, position: Type.Optional(Type.Integer({ minimum: 0 })), version: Type.Optional(Version) }) },
    },
    async (req, reply) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      return reply.code(201).send(ok(sectionView(addSection(ctx, actor(req), nb, req.body))));
    },
  );

  app.post(
    `${base}/:id/sections/reorder`,
    {
      config: authenticated,
      schema: { params: IdParams, body: Type.Object({ section_order: Type.Array(Uuid, { maxItems: 1000 }), version: Type.Optional(Version) }) },
    },
    async (req) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      const order = reorderSections(ctx, actor(req), nb, req.body.section_order, req.body.version);
      return ok({ section_order: order, version: ctx.notebooks.get(nb.id)!.version });
    },
  );

  app.put(
    `${base}/:id/sections/:section_id`,
    {
      config: authenticated,
      schema: {
        params: SectionParams,
        body: Type.Object({ version: Version, title: Type.Optional(Type.String({ maxLength: 10_000 })), content: Type.Optional(Type.String()), tags: Type.Optional(Tags) }),
      },
    },
    async (req) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      return ok(sectionView(updateSection(ctx, actor(req), nb, req.params.section_id, req.body)));
    },
  );

  app.delete(
    `${base}/:id/sections/:section_id`,
    { config: authenticated, schema: { params: SectionParams, querystring: Type.Object({ version: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,8}$' })) }) } },
    async (req) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      deleteSection(ctx, actor(req), nb, req.params.section_id, req.query.version === undefined ? undefined : Number(req.query.version));
      return ok({ deleted: true });
    },
  );

  app.post(
    `${base}/:id/sections/:section_id/execute`,
    {
      config: authenticated,
      schema: {
        params: SectionParams,
        body: Type.Optional(Type.Object({ start: Type.Optional(Type.String({ maxLength: 64 })), end: Type.Optional(Type.String({ maxLength: 64 })), store: Type.Optional(Type.Boolean()) })),
      },
    },
    async (req, reply) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      const s = sectionOf(ctx, nb, req.params.section_id);
      const controller = abortOnClose(reply);
      try {
        const { section, result } = await executeSection(ctx, actor(req), nb, s, req.body ?? {}, controller.signal);
        return ok({ section: sectionView(section), result });
      } catch (err) {
        return queryFailure(ctx, reply, err);
      }
    },
  );

  app.put(
    `${base}/:id/sections/:section_id/results`,
    {
      config: authenticated,
      schema: { params: SectionParams, body: Type.Object({ results: Type.Union([Snapshot, Type.Null()]), results_version: Type.Optional(Type.Integer({ minimum: 0 })) }) },
    },
    async (req) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      const s = sectionOf(ctx, nb, req.params.section_id);
      const { results_version: expected, results } = req.body;
      if (expected !== undefined && expected !== s.results_version) {
        throw conflict(`The results of section "${s.title || s.id}" were stored again by ${s.updated_by} meanwhile (now version ${s.results_version}, not ${expected}); reload them first.`);
      }
      const text = results === null ? null : snapshotText(results as unknown as SnapshotInput, actorName(req.principal!));
      return ok(sectionView(storeResults(ctx, actor(req), nb, s, text)));
    },
  );

  // The rows the notebook's answer leaves out (only each section's results_summary is there): the
  // page reads them when the section comes into view. Readers of the notebook may read them.
  app.get(
    `${base}/:id/sections/:section_id/results`,
    { config: authenticated, schema: { params: SectionParams, querystring: Type.Object({ offset: Type.Optional(Type.String()), limit: Type.Optional(Type.String()) }) } },
    async (req, reply) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id);
      const s = sectionOf(ctx, nb, req.params.section_id, 'full');
      return reply.type('application/json; charset=utf-8').send(storedResultsJson(s, req.query));
    },
  );

  app.post(
    `${base}/:id/sections/:section_id/summarize`,
    { config: authenticated, schema: { params: SectionParams } },
    async (req, reply) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      const s = sectionOf(ctx, nb, req.params.section_id);
      const { section, model } = await summarizeSection(ctx, actor(req), nb, s, abortOnClose(reply).signal);
      return ok({ section: sectionView(section), model });
    },
  );

  app.put(
    `${base}/:id/variables`,
    { config: authenticated, schema: { params: IdParams, body: Type.Object({ variables: Variables, version: Type.Optional(Version) }) } },
    async (req) => {
      const { nb } = notebookFor(ctx, req.principal!, req.params.id, true);
      const updated = setVariables(ctx, actor(req), nb, req.body.variables, req.body.version);
      return ok({ variables: updated.variables, version: updated.version });
    },
  );

  app.get(`${base}/:id/tags`, { config: authenticated, schema: { params: IdParams } }, async (req) => {
    const { nb } = notebookFor(ctx, req.principal!, req.params.id);
    return ok(ctx.notebooks.sectionTags(nb.id));
  });

  app.get(`${base}/:id/export`, { config: authenticated, schema: { params: IdParams } }, async (req, reply) => {
    const { nb } = notebookFor(ctx, req.principal!, req.params.id);
    const file = `notebook-${nb.name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'export'}.json`;
    reply.header('content-disposition', `attachment; filename="${file}"`);
    return ok(exportDocument(ctx, nb));
  });

  liveRoutes(app, ctx.live, {
    kind: LIVE_KIND,
    path: `${base}/:id`,
    authorize: (req, id) => {
      notebookFor(ctx, req.principal!, id);
    },
  });
}

// The notebooks domain's rules between the routes and the store: who may read and write a
// notebook, what a notebook and a section may hold, the version checks that turn a stale write
// into a 409, and the live event each stored change sends (live/hub.ts, kind "notebook").
//
// Access (conventions.md): a notebook belongs to one fractal or one prism. Reading it needs a role
// there (viewer and up), writing it the analyst role; an API key needs the `notebook` permission
// for both (and `query` as well to run a query section). A notebook the caller may not read is
// "not found", never revealed.
//
// Versions: a section's `version` counts edits of its title, content and tags, and an update must
// carry the version it started from; its `results_version` counts stored results. The notebook's
// `version` counts its own fields, variables and the set and order of its sections; those writes
// may carry it (`version`) and are refused with 409 when it is stale.
import type { Principal } from '../auth/principal.ts';
import { normalizeTags } from '../collaboration/comments-logic.ts';
import type { Context } from '../context.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { isUuid } from '../http/schemas.ts';
import {
  actorName,
  documentAccess,
  normalizeName,
  normalizeTimeRange,
  normalizeVariables,
  requestedScope,
  scopeOf,
  type Actor,
  type Scope,
  type TimeFields,
} from '../shared/documents.ts';
import type { NewSection, Notebook, NotebookFields, NotebooksStore, ResultsRead, Section, SectionType } from './notebooks-store.ts';
import { SECTION_TYPES } from './notebooks-store.ts';

export const LIVE_KIND = 'notebook';
export const MAX_SECTIONS = 500;
export const MAX_CONTENT = 200_000;
export const MAX_TITLE = 500;
/** At most this many logs a comment_context section names itself (they become one in() filter). */
export const MAX_CONTEXT_LOGS = 200;

// ---- access ---------------------------------------------------------------------------------

const rule = (write: boolean) => ({ keyPermission: 'notebook' as const, write });

export interface NotebookAccess {
  nb: Notebook;
  /** The caller may change it. */
  canEdit: boolean;
  scopeName: string;
}

/** The notebook `id` if the caller may read it (with `write`: change it); 404 or 403 otherwise. */
export function notebookFor(ctx: Context, p: Principal, id: string, write = false): NotebookAccess {
  const nb = ctx.notebooks.get(id.toLowerCase());
  const wording = { notFound: `Notebook ${id} not found.`, needs: 'Changing a notebook needs' };
  if (!nb) throw notFound(wording.notFound);
  return { nb, ...documentAccess(ctx, p, scopeOf(nb), rule(write), wording) };
}

/**
 * The fractal or prism a list, a create or an import acts on: the one named, else the caller's
 * selection; the role (viewer to read, analyst to write) and the key's `notebook` permission checked.
 */
export function notebookScope(ctx: Context, p: Principal, requested: { fractal_id?: string; prism_id?: string }, write: boolean): Scope & { name: string } {
  return requestedScope(ctx, p, requested, { ...rule(write), needs: 'Writing notebooks needs' });
}

// ---- what a notebook and a section may hold ----------------------------------------------------

export function normalizeSectionType(raw: unknown, field = 'section_type'): SectionType {
  if (typeof raw !== 'string' || !(SECTION_TYPES as readonly string[]).includes(raw)) {
    throw badRequest(`The ${field} ${JSON.stringify(raw ?? null)} is not a section type (allowed: ${SECTION_TYPES.join(', ')}).`);
  }
  return raw as SectionType;
}

/** What a comment_context section's content names: the comments of a tag, or of chosen logs. */
export type ContextSpec = { tag: string } | { log_ids: string[] };

export function parseContextSpec(content: string, field = 'content'): ContextSpec {
  const help = `A comment_context section's "${field}" is JSON naming the comments to show: {"tag": "lateral-movement"} or {"log_ids": ["<log uuid>", …]}.`;
  let v: unknown;
  try {
    v = JSON.parse(content);
  } catch {
    throw badRequest(help);
  }
  const o = v as { tag?: unknown; log_ids?: unknown };
  if (o && typeof o === 'object' && typeof o.tag === 'string' && o.log_ids === undefined) {
    const [tag] = normalizeTags([o.tag], `${field}.tag`);
    if (!tag) throw badRequest(help);
    return { tag };
  }
  if (o && typeof o === 'object' && Array.isArray(o.log_ids) && o.tag === undefined) {
    if (o.log_ids.length === 0 || o.log_ids.length > MAX_CONTEXT_LOGS) throw badRequest(`The field "${field}.log_ids" must name from 1 to ${MAX_CONTEXT_LOGS} logs.`);
    const bad = o.log_ids.find((x) => typeof x !== 'string' || !isUuid(x));
    if (bad !== undefined) throw badRequest(`The field "${field}.log_ids" holds ${JSON.stringify(bad)}, which is not a log id (a UUID).`);
    return { log_ids: [...new Set((o.log_ids as string[]).map((x) => x.toLowerCase()))] };
  }
  throw badRequest(help);
}

function checkContent(type: SectionType, content: string, field: string): string {
  if (content.length > MAX_CONTENT) throw badRequest(`The field "${field}" must be at most ${MAX_CONTENT} characters long.`);
  if (type === 'comment_context') return JSON.stringify(parseContextSpec(content, field));
  return content;
}

function checkTitle(title: string, field = 'title'): string {
  const t = title.trim();
  if (t.length > MAX_TITLE) throw badRequest(`The field "${field}" must be at most ${MAX_TITLE} characters long.`);
  return t;
}

export interface SectionInput {
  section_type: unknown;
  title?: string;
  content?: string;
  tags?: string[];
}

/** A new section as it will be stored; `at` names the field path in error sentences (imports). */
export function newSection(input: SectionInput, at = ''): NewSection {
  const type = normalizeSectionType(input.section_type, at ? `${at}.section_type` : 'section_type');
  return {
    section_type: type,
    title: checkTitle(input.title ?? '', `${at ? `${at}.` : ''}title`),
    content: checkContent(type, input.content ?? '', `${at ? `${at}.` : ''}content`),
    tags: normalizeTags(input.tags ?? [], `${at ? `${at}.` : ''}tags`),
  };
}

// ---- views ----------------------------------------------------------------------------------

export function notebookView(ctx: Context, nb: Notebook) {
  return {
    id: nb.id,
    name: nb.name,
    description: nb.description,
    fractal_id: nb.fractal_id,
    prism_id: nb.prism_id,
    tags: nb.tags,
    variables: nb.variables,
    time_range: nb.time_range,
    start: nb.time_start,
    end: nb.time_end,
    version: nb.version,
    created_by: nb.created_by,
    updated_by: nb.updated_by,
    created_at: nb.created_at,
    updated_at: nb.updated_at,
  };
}

/**
 * A section as the API shows it. Of its stored results only the summary (`results_summary`: the
 * snapshot without its rows and comments, with `comment_count` for comment_context; null when none):
 * the rows are read with GET …/sections/{id}/results, so a notebook opens without its megabytes of
 * evidence and a page loads each section's rows when it comes into view.
 */
export function sectionView(s: Section) {
  const view: Record<string, unknown> = {
    id: s.id,
    notebook_id: s.notebook_id,
    position: s.position,
    section_type: s.section_type,
    title: s.title,
    content: s.content,
    tags: s.tags,
    version: s.version,
    results_version: s.results_version,
    created_by: s.created_by,
    updated_by: s.updated_by,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
  if (s.results_summary !== undefined) view.results_summary = s.results_summary === null ? null : JSON.parse(s.results_summary);
  return view;
}

/** The whole notebook for a reader: its fields, its sections with their results' summaries, and where its live events resume. */
export function fullView(ctx: Context, a: NotebookAccess) {
  return {
    ...notebookView(ctx, a.nb),
    scope: { ...scopeOf(a.nb), name: a.scopeName },
    can_edit: a.canEdit,
    // Read before the sections: an event stored after this point is replayed from here.
    live_event_id: ctx.live.cursor(LIVE_KIND, a.nb.id),
    sections: ctx.notebooks.sections(a.nb.id, 'summary').map(sectionView),
  };
}

/** Rows a page of GET …/results holds at most (a snapshot's whole row cap: the page's table wants them all). */
const MAX_RESULTS_PAGE = 10_000;

/**
 * GET …/sections/{id}/results: what PUT …/results takes, `{results: snapshot | null, results_version}`,
 * as the JSON text of its envelope. Without `offset` and `limit` the stored text is sent as it is (no
 * parse and print of up to 10,000 rows); with them `results.results` holds that slice of the rows
 * (`results.count` stays the number stored) and the answer says `offset`.
 */
export function storedResultsJson(s: Section, page: { offset?: string; limit?: string }): string {
  const head = `{"success":true,"data":{"section_id":${JSON.stringify(s.id)},"results_version":${s.results_version}`;
  if (s.results == null) return `${head},"results":null}}`;
  if (page.offset === undefined && page.limit === undefined) return `${head},"results":${s.results}}}`;
  const int = (name: 'offset' | 'limit', text: string | undefined, fallback: number, min: number) => {
    if (text === undefined || text === '') return fallback;
    const n = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
    if (!(n >= min && n <= (name === 'limit' ? MAX_RESULTS_PAGE : 1_000_000_000))) {
      throw badRequest(`The query parameter "${name}" must be a whole number from ${min} to ${name === 'limit' ? MAX_RESULTS_PAGE : 1_000_000_000}.`);
    }
    return n;
  };
  const offset = int('offset', page.offset, 0, 0);
  const limit = int('limit', page.limit, MAX_RESULTS_PAGE, 1);
  const snap = JSON.parse(s.results) as { results: unknown[] };
  snap.results = snap.results.slice(offset, offset + limit);
  return `${head},"offset":${offset},"results":${JSON.stringify(snap)}}}`;
}

// ---- changes --------------------------------------------------------------------------------

const publish = (ctx: Context, a: Actor, nbId: string, type: string, data: unknown) => ctx.live.publish(LIVE_KIND, nbId, type, data, a.origin);

function checkNotebookVersion(nb: Notebook, version: number | undefined): void {
  if (version !== undefined && version !== nb.version) {
    throw conflict(`Notebook "${nb.name}" was changed by ${nb.updated_by} meanwhile (it is at version ${nb.version}, not ${version}); reload it and try again.`);
  }
}

export interface NotebookInput extends TimeFields {
  name: string;
  description?: string;
  tags?: string[];
  variables?: Array<{ name: unknown; value: unknown }>;
  sections?: SectionInput[];
  /** Sections already checked (an import), with their results. */
  prepared?: NewSection[];
}

export function createNotebook(ctx: Context, a: Actor, scope: Scope, input: NotebookInput): Notebook {
  const fields: NotebookFields = {
    name: normalizeName(input.name),
    description: input.description?.trim() ?? '',
    tags: normalizeTags(input.tags ?? []),
    variables: normalizeVariables(input.variables ?? []),
    ...normalizeTimeRange(input),
  };
  const sections = input.prepared ?? (input.sections ?? []).map((s, i) => newSection(s, `sections[${i}]`));
  if (sections.length > MAX_SECTIONS) throw badRequest(`A notebook holds at most ${MAX_SECTIONS} sections.`);
  refuseTakenName(ctx.notebooks, scope, fields.name);
  return ctx.notebooks.create(scope, fields, sections, actorName(a.p));
}

function refuseTakenName(store: NotebooksStore, scope: Scope, name: string, except?: string): void {
  const other = store.findByName(scope, name);
  if (other && other.id !== except) throw conflict(`A notebook named "${other.name}" already exists here.`);
}

export function updateNotebook(ctx: Context, a: Actor, nb: Notebook, input: Partial<NotebookInput> & { version?: number }): Notebook {
  checkNotebookVersion(nb, input.version);
  const patch: Partial<NotebookFields> = {};
  if (input.name !== undefined) {
    patch.name = normalizeName(input.name);
    refuseTakenName(ctx.notebooks, scopeOf(nb), patch.name, nb.id);
  }
  if (input.description !== undefined) patch.description = input.description.trim();
  if (input.tags !== undefined) patch.tags = normalizeTags(input.tags);
  if (input.variables !== undefined) patch.variables = normalizeVariables(input.variables);
  if (input.time_range !== undefined || input.start !== undefined || input.end !== undefined) Object.assign(patch, normalizeTimeRange(input, nb));
  const updated = ctx.notebooks.update(nb.id, patch, actorName(a.p));
  publish(ctx, a, nb.id, 'notebook_updated', notebookView(ctx, updated));
  return updated;
}

export function setVariables(ctx: Context, a: Actor, nb: Notebook, variables: Array<{ name: unknown; value: unknown }>, version?: number): Notebook {
  checkNotebookVersion(nb, version);
  const updated = ctx.notebooks.update(nb.id, { variables: normalizeVariables(variables) }, actorName(a.p));
  publish(ctx, a, nb.id, 'variables_updated', { variables: updated.variables, version: updated.version });
  return updated;
}

export function deleteNotebook(ctx: Context, a: Actor, nb: Notebook): void {
  ctx.notebooks.delete(nb.id);
  ctx.live.end(LIVE_KIND, nb.id, 'notebook_deleted', { id: nb.id, by: actorName(a.p) }, a.origin);
}

/** The section `sid` of notebook `nb`: 404 when there is none, 400 when it belongs to another notebook. */
export function sectionOf(ctx: Context, nb: Notebook, sid: string, read: ResultsRead = 'none'): Section {
  const s = ctx.notebooks.section(sid.toLowerCase(), read);
  if (!s) throw notFound(`Section ${sid} not found in notebook "${nb.name}".`);
  if (s.notebook_id !== nb.id) throw badRequest(`Section ${sid} belongs to another notebook, not to "${nb.name}".`);
  return s;
}

const order = (ctx: Context, nbId: string) => ctx.notebooks.sections(nbId).map((s) => s.id);

export function addSection(ctx: Context, a: Actor, nb: Notebook, input: SectionInput & { position?: number; version?: number }): Section {
  checkNotebookVersion(nb, input.version);
  const s = newSection(input);
  if (ctx.notebooks.countSections(nb.id) >= MAX_SECTIONS) throw badRequest(`Notebook "${nb.name}" already holds ${MAX_SECTIONS} sections, the most a notebook may hold.`);
  const added = ctx.notebooks.addSection(nb.id, input.position ?? Number.MAX_SAFE_INTEGER, s, actorName(a.p));
  publish(ctx, a, nb.id, 'section_added', { section: sectionView(added), order: order(ctx, nb.id), version: ctx.notebooks.get(nb.id)!.version });
  return added;
}

export function updateSection(
  ctx: Context,
  a: Actor,
  nb: Notebook,
  sid: string,
  input: { version: number; title?: string; content?: string; tags?: string[] },
): Section {
  const s = sectionOf(ctx, nb, sid);
  if (input.version !== s.version) {
    throw conflict(`Section "${s.title || s.id}" was changed by ${s.updated_by} meanwhile (it is at version ${s.version}, not ${input.version}); reload it and apply your edit again.`);
  }
  const patch = {
    title: input.title === undefined ? undefined : checkTitle(input.title),
    content: input.content === undefined ? undefined : checkContent(s.section_type, input.content, 'content'),
    tags: input.tags === undefined ? undefined : normalizeTags(input.tags),
  };
  const updated = ctx.notebooks.updateSection(s.id, patch, actorName(a.p));
  // Results are not an edit: the event leaves them out (results_stored tells of those).
  const { results_summary: _omitted, ...withoutResults } = sectionView(updated);
  publish(ctx, a, nb.id, 'section_updated', { section: withoutResults });
  return updated;
}

export function deleteSection(ctx: Context, a: Actor, nb: Notebook, sid: string, version?: number): void {
  const s = sectionOf(ctx, nb, sid);
  if (version !== undefined && version !== s.version) {
    throw conflict(`Section "${s.title || s.id}" was changed by ${s.updated_by} meanwhile (it is at version ${s.version}, not ${version}); reload it before deleting it.`);
  }
  ctx.notebooks.deleteSection(s.id, actorName(a.p));
  publish(ctx, a, nb.id, 'section_deleted', { id: s.id, order: order(ctx, nb.id), version: ctx.notebooks.get(nb.id)!.version });
}

export function reorderSections(ctx: Context, a: Actor, nb: Notebook, ids: string[], version?: number): string[] {
  checkNotebookVersion(nb, version);
  const current = order(ctx, nb.id);
  const known = new Set(current);
  const seen = new Set<string>();
  for (const raw of ids) {
    const id = raw.toLowerCase();
    if (!known.has(id)) {
      const other = ctx.notebooks.section(id);
      throw badRequest(
        other
          ? `The field "section_order" names section ${raw}, which belongs to another notebook.`
          : `The field "section_order" names section ${raw}, which is not a section of notebook "${nb.name}".`,
      );
    }
    if (seen.has(id)) throw badRequest(`The field "section_order" names section ${raw} twice.`);
    seen.add(id);
  }
  const missing = current.filter((id) => !seen.has(id));
  if (missing.length) throw badRequest(`The field "section_order" must list every section of the notebook exactly once; it lacks ${missing.join(', ')}.`);
  const next = ids.map((i) => i.toLowerCase());
  ctx.notebooks.reorder(nb.id, next, actorName(a.p));
  publish(ctx, a, nb.id, 'sections_reordered', { order: next, version: ctx.notebooks.get(nb.id)!.version });
  return next;
}

/** Largest stored snapshot sent inside a live event; a bigger one is announced and read with GET …/results. */
const MAX_EVENT_RESULTS = 1024 * 1024;

/** Stores (or clears) a section's results snapshot (JSON text) and tells the readers. */
export function storeResults(ctx: Context, a: Actor, nb: Notebook, s: Section, results: string | null): Section {
  const updated = ctx.notebooks.storeResults(s.id, results, actorName(a.p));
  const inline = results === null || results.length <= MAX_EVENT_RESULTS;
  publish(ctx, a, nb.id, 'results_stored', {
    section_id: s.id,
    results_version: updated.results_version,
    updated_by: updated.updated_by,
    updated_at: updated.updated_at,
    results_summary: sectionView(updated).results_summary,
    ...(inline ? { results: results === null ? null : JSON.parse(results) } : { results_omitted: true }),
  });
  return updated;
}

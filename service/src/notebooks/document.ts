// The export document of a notebook (GET …/export, POST /notebooks/import): one JSON object that
// holds the notebook, its variables and its sections in order, each with its stored results, so
// the evidence travels with the write-up. Importing an exported document gives an equal notebook
// (same fields, sections, variables and results; new ids, and the importer as author).
//
//   {
//     "kind": "notebook", "format": 1, "exported_at": "2026-03-01T10:00:00.000Z",
//     "notebook": { "name", "description", "tags": [], "time_range": "24h" | … | "custom",
//                   "start": null | RFC 3339, "end": null | RFC 3339, "variables": [{ "name", "value" }] },
//     "sections": [ { "section_type", "title", "content", "tags": [], "results": null | { "results": [rows], … } } ]
//   }
import type { Context } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import { actorName, freeName, normalizeName, type Actor } from '../shared/documents.ts';
import { createNotebook, MAX_SECTIONS, newSection } from './notebooks-logic.ts';
import type { Notebook, Scope } from './notebooks-store.ts';
import { snapshotText, type SnapshotInput } from './results.ts';

export const DOCUMENT_KIND = 'notebook';
export const DOCUMENT_FORMAT = 1;
/** The largest import document accepted. */
export const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024;

export function exportDocument(ctx: Context, nb: Notebook) {
  return {
    kind: DOCUMENT_KIND,
    format: DOCUMENT_FORMAT,
    exported_at: new Date().toISOString(),
    notebook: {
      name: nb.name,
      description: nb.description,
      tags: nb.tags,
      time_range: nb.time_range,
      start: nb.time_start,
      end: nb.time_end,
      variables: nb.variables,
    },
    sections: ctx.notebooks.sections(nb.id, 'full').map((s) => ({
      section_type: s.section_type,
      title: s.title,
      content: s.content,
      tags: s.tags,
      results: s.results ? JSON.parse(s.results) : null,
    })),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function expect(cond: boolean, sentence: string): asserts cond {
  if (!cond) throw badRequest(sentence);
}

/**
 * Creates a notebook from an export document (or the envelope {success, data: document} that
 * GET …/export answers), checking all of it before anything is stored.
 */
export function importDocument(ctx: Context, a: Actor, scope: Scope, body: unknown): Notebook {
  const doc = isObject(body) && body.success === true && isObject(body.data) ? body.data : body;
  const shape = `The import document must be a notebook export: {"kind": "notebook", "format": ${DOCUMENT_FORMAT}, "notebook": {…}, "sections": […]}`;
  expect(isObject(doc), `${shape}.`);
  expect(doc.kind === DOCUMENT_KIND, `${shape}; its "kind" is ${JSON.stringify(doc.kind ?? null)}.`);
  expect(doc.format === DOCUMENT_FORMAT, `The import document has format ${JSON.stringify(doc.format ?? null)}; this appliance reads format ${DOCUMENT_FORMAT}.`);
  const n = doc.notebook;
  expect(isObject(n), `${shape}; "notebook" is missing or not an object.`);
  expect(typeof n.name === 'string', 'The field "notebook.name" of the import document must be a string.');
  for (const k of ['description', 'time_range'] as const) expect(n[k] === undefined || typeof n[k] === 'string', `The field "notebook.${k}" of the import document must be a string.`);
  for (const k of ['start', 'end'] as const) expect(n[k] == null || typeof n[k] === 'string', `The field "notebook.${k}" of the import document must be a string or null.`);
  expect(n.tags === undefined || (Array.isArray(n.tags) && n.tags.every((t) => typeof t === 'string')), 'The field "notebook.tags" of the import document must be an array of strings.');
  expect(n.variables === undefined || (Array.isArray(n.variables) && n.variables.every(isObject)), 'The field "notebook.variables" of the import document must be an array of {name, value}.');
  expect(Array.isArray(doc.sections), `${shape}; "sections" is missing or not an array.`);
  const sections = doc.sections as unknown[];
  expect(sections.length <= MAX_SECTIONS, `The import document holds ${sections.length} sections; a notebook holds at most ${MAX_SECTIONS}.`);
  const by = actorName(a.p);
  const checked = sections.map((raw, i) => {
    const at = `sections[${i}]`;
    expect(isObject(raw), `The field "${at}" of the import document must be an object.`);
    for (const k of ['title', 'content'] as const) expect(raw[k] === undefined || typeof raw[k] === 'string', `The field "${at}.${k}" of the import document must be a string.`);
    expect(raw.tags === undefined || (Array.isArray(raw.tags) && raw.tags.every((t) => typeof t === 'string')), `The field "${at}.tags" of the import document must be an array of strings.`);
    const s = newSection({ section_type: raw.section_type, title: raw.title as string, content: raw.content as string, tags: raw.tags as string[] }, at);
    if (raw.results != null) {
      expect(isObject(raw.results), `The field "${at}.results" of the import document must be an object or null.`);
      s.results = snapshotText(raw.results as unknown as SnapshotInput, by, `${at}.results`);
    }
    return s;
  });
  const wanted = normalizeName(n.name, 'notebook.name');
  const name = freeName(ctx.notebooks.namesLike(scope, wanted), wanted);
  return createNotebook(ctx, a, scope, {
    name,
    description: (n.description as string | undefined) ?? '',
    tags: n.tags as string[] | undefined,
    variables: n.variables as Array<{ name: unknown; value: unknown }> | undefined,
    time_range: n.time_range as string | undefined,
    start: n.start as string | null | undefined,
    end: n.end as string | null | undefined,
    prepared: checked,
  });
}

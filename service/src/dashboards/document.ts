// A dashboard as YAML (GET …/export, POST /dashboards/import): its fields, variables and widgets
// with their cells, nothing of the appliance it came from (no ids, authors, times or results), so
// it imports into any fractal or prism, here or on another appliance. Importing an export gives an
// equal dashboard, and exporting that gives the same text again.
//
//   kind: dashboard
//   format: 1
//   name: Web front
//   description: …
//   time_range: 24h            # or 15m 1h 4h 7d 30d all, or custom with start and end
//   refresh_interval_s: 30     # 0: no automatic refresh
//   shared_hide_queries: true
//   variables: [{name: host, value: web-01}]
//   widgets:
//     - title: Errors by host
//       query_content: status>=500 | groupBy(host)
//       chart_type: barchart   # auto, table, or a chart type
//       chart_config: {}
//       time_range: null       # null: the dashboard's
//       pos_x: 0
//       pos_y: 0
//       width: 6
//       height: 4
//
// An import is checked whole (every field, every widget's query against the target scope) before
// anything is stored; what is wrong is named with its line in the YAML.
import { Value } from 'typebox/value';
import { parseDocument, stringify, type Document } from 'yaml';
import type { Context } from '../context.ts';
import { badRequest, HttpError } from '../http/errors.ts';
import { validationSentence } from '../http/validation-message.ts';
import { freeName, type Actor, type Scope } from '../shared/documents.ts';
import {
  checkWidgetQuery,
  createDashboard,
  DashboardBody,
  DEFAULT_CELLS,
  MAX_WIDGETS,
  newContent,
  newFields,
  requestedCells,
  WidgetBody,
  type DashboardFieldsInput,
  type WidgetInput,
} from './dashboards-logic.ts';
import type { Dashboard, NewWidget, Widget } from './dashboards-store.ts';
import { freeCells, settleLayout, type Cells } from './grid.ts';

export const DOCUMENT_KIND = 'dashboard';
export const DOCUMENT_FORMAT = 1;
/** The largest YAML an import takes. */
export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;

const rangeFields = (r: { time_range: string | null; time_start: string | null; time_end: string | null }) =>
  r.time_range === 'custom' ? { time_range: r.time_range, start: r.time_start, end: r.time_end } : { time_range: r.time_range };

/** The YAML text of a dashboard and its widgets (top to bottom, left to right). */
export function exportYaml(d: Dashboard, widgets: Widget[]): string {
  const doc = {
    kind: DOCUMENT_KIND,
    format: DOCUMENT_FORMAT,
    name: d.name,
    description: d.description,
    ...rangeFields(d),
    refresh_interval_s: d.refresh_interval_s,
    shared_hide_queries: d.shared_hide_queries,
    variables: d.variables,
    widgets: widgets.map((w) => ({
      title: w.title,
      query_content: w.query_content,
      chart_type: w.chart_type,
      chart_config: w.chart_config,
      ...rangeFields(w),
      pos_x: w.pos_x,
      pos_y: w.pos_y,
      width: w.width,
      height: w.height,
    })),
  };
  return stringify(doc, { lineWidth: 0 });
}

/** The line (1-based) where the node at `path` starts, else where the nearest enclosing one does. */
function lineAt(text: string, doc: Document, path: Array<string | number>): number {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node?.range) return text.slice(0, node.range[0]).split('\n').length;
  }
  return 1;
}

/** A 400 whose sentence names the line; query errors keep their error_pos. */
function atLine(err: unknown, line: number): never {
  if (err instanceof HttpError && err.statusCode === 400) throw new HttpError(400, `Line ${line}: ${err.message}`, err.headers, err.fields);
  throw err;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What an import makes: the dashboard's fields and its widgets, checked; nothing stored yet. */
async function readDocument(ctx: Context, scope: Scope, text: string): Promise<{ fields: ReturnType<typeof newFields>; widgets: NewWidget[] }> {
  const doc = parseDocument(text);
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0];
    throw badRequest(`The YAML is not valid${pos ? ` at line ${pos.line}, column ${pos.col}` : ''}: ${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}.`);
  }
  const value = doc.toJS() as unknown;
  const shape = `a dashboard export: a mapping with "kind: ${DOCUMENT_KIND}", "format: ${DOCUMENT_FORMAT}", "name" and "widgets"`;
  if (!isObject(value)) throw badRequest(`Line ${lineAt(text, doc, [])}: the YAML is not ${shape}.`);
  if (value.kind !== DOCUMENT_KIND) throw badRequest(`Line ${lineAt(text, doc, ['kind'])}: the YAML is not ${shape}; its "kind" is ${JSON.stringify(value.kind ?? null)}.`);
  if (value.format !== DOCUMENT_FORMAT) {
    throw badRequest(`Line ${lineAt(text, doc, ['format'])}: the YAML has format ${JSON.stringify(value.format ?? null)}; this appliance reads format ${DOCUMENT_FORMAT}.`);
  }
  const { kind: _k, format: _f, widgets: rawWidgets, ...rest } = value;
  const issue = [...Value.Errors(DashboardBody, rest)][0] as { instancePath: string } | undefined;
  if (issue) throw badRequest(`Line ${lineAt(text, doc, issue.instancePath.split('/').filter(Boolean))}: ${validationSentence([issue as never], 'body')}`);
  if (typeof rest.name !== 'string') throw badRequest(`Line ${lineAt(text, doc, [])}: the field "name" is required.`);
  let fields: ReturnType<typeof newFields>;
  try {
    fields = newFields(rest as unknown as DashboardFieldsInput);
  } catch (e) {
    const message = (e as Error).message;
    const variable = /variables\[(\d+)\]/.exec(message);
    const field = /"([a-z_]+)"/.exec(message)?.[1];
    atLine(e, lineAt(text, doc, variable ? ['variables', Number(variable[1])] : field ? [field] : []));
  }
  if (rawWidgets !== undefined && !Array.isArray(rawWidgets)) throw badRequest(`Line ${lineAt(text, doc, ['widgets'])}: the field "widgets" must be a list of widgets.`);
  const list = (rawWidgets ?? []) as unknown[];
  if (list.length > MAX_WIDGETS) throw badRequest(`Line ${lineAt(text, doc, ['widgets'])}: the YAML holds ${list.length} widgets; a dashboard holds at most ${MAX_WIDGETS}.`);
  const target = { fractal_id: scope.type === 'fractal' ? scope.id : null, prism_id: scope.type === 'prism' ? scope.id : null, variables: fields.variables };
  const widgets: Array<NewWidget | (Omit<NewWidget, keyof Cells> & { cells: null })> = [];
  for (const [i, raw] of list.entries()) {
    const at = `widgets[${i}].`;
    const line = (path: Array<string | number> = []) => lineAt(text, doc, ['widgets', i, ...path]);
    if (!isObject(raw)) throw badRequest(`Line ${line()}: the field "widgets[${i}]" must be a widget (a mapping of widget fields).`);
    const wIssue = [...Value.Errors(WidgetBody, raw)][0] as { instancePath: string } | undefined;
    if (wIssue) {
      const path = wIssue.instancePath.split('/').filter(Boolean);
      throw badRequest(`Line ${line(path)}: ${validationSentence([{ ...(wIssue as object), instancePath: `/widgets/${i}${wIssue.instancePath}` } as never], 'body')}`);
    }
    try {
      const content = newContent(raw as WidgetInput, at);
      const cells = requestedCells(raw as WidgetInput, at);
      await checkWidgetQuery(ctx, target, content.query_content, `The query of "${at.slice(0, -1)}" does not compile: `);
      widgets.push(cells ? { ...content, ...cells } : { ...content, cells: null });
    } catch (e) {
      const field = /"widgets\[\d+\]\.([a-z_]+)/.exec((e as Error).message)?.[1];
      atLine(e, line(field ? [field] : e instanceof HttpError && 'error_type' in e.fields ? ['query_content'] : []));
    }
  }
  // Placed widgets keep their cells (overlaps settled as the page would); the others go where there is room.
  const placed = settleLayout(widgets.flatMap((w, i) => ('cells' in w ? [] : [{ id: String(i), pos_x: w.pos_x, pos_y: w.pos_y, width: w.width, height: w.height }])));
  const cellsOf = new Map(placed.map((b) => [b.id, b]));
  const taken: Cells[] = [...placed];
  const out = widgets.map((w, i): NewWidget => {
    if (!('cells' in w)) {
      const { id: _id, ...c } = cellsOf.get(String(i))!;
      return { ...w, ...c };
    }
    const { cells: _c, ...content } = w;
    const c = freeCells(taken, DEFAULT_CELLS.width, DEFAULT_CELLS.height);
    taken.push(c);
    return { ...content, ...c };
  });
  return { fields, widgets: out };
}

/** Creates a dashboard from YAML in `scope`; a name taken there gets " (2)" and so on. */
export async function importYaml(ctx: Context, a: Actor, scope: Scope, text: string): Promise<Dashboard> {
  const { fields, widgets } = await readDocument(ctx, scope, text);
  const name = freeName(ctx.dashboards.namesLike(scope, fields.name), fields.name);
  return createDashboard(ctx, a, scope, { ...fields, name }, widgets);
}

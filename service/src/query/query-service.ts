// The query domain's logic between the routes and the engine: time range, scope, @variables,
// compilation and the regex check; the errors a caller made, as query-language.md §5 reports them.
import type { Principal } from '../auth/principal.ts';
import type { Context } from '../context.ts';
import { compileQuery, type CompiledQuery } from './compile.ts';
import { QueryCompileError } from './plan/errors.ts';
import { resolveReadScope, type ReadScope } from '../auth/read-scope.ts';
import { checkRegexes } from './run.ts';
import { QueryParseError, type Span } from './syntax/ast.ts';
import { checkQuerySize, substituteVariables } from './syntax/variables.ts';

export interface QueryRequest {
  query: string;
  fractal_id?: string;
  prism_id?: string;
  start?: string;
  end?: string;
  variables?: Array<{ name: string; value: string }>;
  cursor?: string;
}

/** A query the caller got wrong: answered 400 with the spec's error fields. */
export class QueryInputError extends Error {
  constructor(
    message: string,
    readonly errorType: 'parse' | 'translate' | 'request',
    readonly errorPos?: Span,
  ) {
    super(message);
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})$/;

export function timeRange(req: { start?: string; end?: string }, now = new Date()): { start: Date; end: Date } {
  const parse = (s: string | undefined): Date | undefined | null => {
    if (s === undefined || s === '') return undefined;
    if (!RFC3339.test(s)) return null;
    const d = new Date(s);
    return Number.isNaN(d.getTime()) ? null : d;
  };
  const start = parse(req.start);
  const end = parse(req.end);
  if (start === null || end === null) throw new QueryInputError('Invalid time range. Use RFC3339 format.', 'request');
  const e = end ?? now;
  const s = start ?? new Date(e.getTime() - 24 * 3600 * 1000);
  if (s.getTime() > e.getTime()) throw new QueryInputError('Invalid time range. Use RFC3339 format.', 'request');
  return { start: s, end: e };
}

export interface PreparedQuery {
  text: string;
  start: Date;
  end: Date;
  compiled: CompiledQuery;
}

/** Substitutes variables and compiles, turning syntax and compile errors into QueryInputError. */
function compileText(
  ctx: Context,
  req: QueryRequest,
  scope: ReadScope,
  range: { start: Date; end: Date },
): { text: string; compiled: CompiledQuery } {
  const original = req.query ?? '';
  const text = substituteVariables(original, req.variables ?? []);
  const sizeError = checkQuerySize(original, text);
  if (sizeError) throw new QueryInputError(sizeError, 'request');
  try {
    const compiled = compileQuery(text, {
      table: ctx.ch.table('logs'),
      fractalIds: scope.fractalIds,
      start: range.start,
      end: range.end,
      maxRows: ctx.settings.get().max_query_rows,
      cursor: req.cursor || undefined,
      commentedLogIds: (fractalIds, filter) => ctx.comments.commentedLogIds(fractalIds, filter),
      dictionary: (name) => {
        const d = ctx.dictionaries.resolve(scope, name);
        return d && { name: d.name, columns: d.columns, keyColumns: d.key_columns, sql: (bind, key, include) => ctx.dictionaries.lookupSql(bind, d, key, include) };
      },
    });
    return { text, compiled };
  } catch (err) {
    throw asInputError(err);
  }
}

export function asInputError(err: unknown): unknown {
  if (err instanceof QueryParseError) {
    // Errors inside case/chain/join blocks are reported as translate errors (§6).
    return err.errorType === 'translate'
      ? new QueryInputError(`Query error: ${err.message}`, 'translate', err.span)
      : new QueryInputError(`Parse error: ${err.message}`, 'parse', err.span);
  }
  if (err instanceof QueryCompileError) return new QueryInputError(`Query error: ${err.message}`, 'translate', err.span);
  return err;
}

export async function prepareQuery(ctx: Context, principal: Principal | null, req: QueryRequest): Promise<PreparedQuery> {
  const scope = resolveReadScope(ctx, principal, req);
  const range = timeRange(req);
  const { text, compiled } = compileText(ctx, req, scope, range);
  try {
    await checkRegexes(ctx.ch, compiled.regexes);
  } catch (err) {
    throw asInputError(err);
  }
  return { text, ...range, compiled };
}

// A query that parses but cannot be compiled: answered 400 `Query error: <message>` with
// error_type "translate" (query-language.md §5), with a span only when the problem is located.
import type { Span } from '../syntax/ast.ts';

export class QueryCompileError extends Error {
  constructor(
    message: string,
    readonly span?: Span,
  ) {
    super(message);
    this.name = 'QueryCompileError';
  }
}

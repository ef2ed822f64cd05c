// Right-hand sides of `:=` (query-language.md §1.6) to SQL.
import type { Expr } from '../syntax/ast.ts';
import { asNumberOrNull, type Column } from './columns.ts';
import { isNumeric } from './conditions.ts';
import type { Params } from './params.ts';

const isArithmetic = (e: Expr): boolean => e.kind === 'binary' || (e.kind === 'paren' && isArithmetic(e.expr));

/** The column an assignment computes, given how names resolve where it is written. */
export function assignmentColumn(expr: Expr, name: string, resolve: (n: string) => Column, params: Params): Column & { arithmetic: boolean } {
  switch (expr.kind) {
    case 'string':
      return { name, sql: params.text(expr.text), type: 'text', arithmetic: false };
    case 'number':
      return { name, sql: params.text(expr.text), type: 'text', arithmetic: false };
    case 'name': {
      const c = resolve(expr.name);
      return { name, sql: c.sql, type: c.type, arithmetic: false };
    }
    case 'call':
      return { name, sql: params.text(`${expr.name}()`), type: 'text', arithmetic: false };
    default:
      if (!isArithmetic(expr)) return assignmentColumn((expr as { expr: Expr }).expr, name, resolve, params);
      return { name, sql: arithmeticSql(expr, resolve, params), type: 'number', arithmetic: true };
  }
}

/** Float arithmetic; a non-numeric operand makes the result NULL (shown empty). */
export function arithmeticSql(expr: Expr, resolve: (n: string) => Column, params: Params): string {
  switch (expr.kind) {
    case 'number':
      // A value token that is not a number (`2A`) is a non-numeric operand: null (§1.6).
      return isNumeric(expr.text) ? `toFloat64(${params.number(Number(expr.text))})` : "CAST(NULL, 'Nullable(Float64)')";
    case 'string':
      return `toFloat64OrNull(${params.text(expr.text)})`;
    case 'name':
      return asNumberOrNull(resolve(expr.name));
    case 'call':
      return 'CAST(NULL, \'Nullable(Float64)\')';
    case 'paren':
      return `(${arithmeticSql(expr.expr, resolve, params)})`;
    case 'binary': {
      const l = arithmeticSql(expr.left, resolve, params);
      const r = arithmeticSql(expr.right, resolve, params);
      // Division by zero yields NULL rather than inf, so the cell shows empty.
      if (expr.op === '/') return `if(${r} = 0, NULL, ${l} / ${r})`;
      return `(${l} ${expr.op} ${r})`;
    }
  }
}

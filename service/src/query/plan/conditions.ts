// Conditions (query-language.md §1.3–1.5, §2) to SQL boolean expressions over typed columns.
import type { Comparison, Condition, Operand } from '../syntax/ast.ts';
import { asNumberOrZero, asText, onlyStringAffix, onlyStringText, stringVariant, type Column } from './columns.ts';
import { QueryCompileError } from './errors.ts';
import type { Params } from './params.ts';

export interface ConditionScope {
  params: Params;
  resolve(name: string): Column;
  /** Condition functions (`in`, `cidr`, `comment`), looked up in the command registry. */
  callCondition(cond: Extract<Condition, { kind: 'call' }>): string;
  /** The event's full text for bare search, or undefined when rows are no longer events. */
  fullText(): Column | undefined;
  /** Regex patterns used, checked by the engine before the query runs. */
  noteRegex(pattern: string): void;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
export const isNumeric = (s: string): boolean => NUMBER.test(s);

/** RE2 pattern with the `i` flag folded in as an inline flag. */
function regexPattern(pattern: string, flags: string): string {
  return flags.includes('i') ? `(?i)${pattern}` : pattern;
}

/** The literal as the serializer writes it in the full text (§1.5): JSON string escaping. */
function serializedLiteral(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

export function conditionSql(cond: Condition, scope: ConditionScope): string {
  switch (cond.kind) {
    case 'and':
      return cond.items.map((c) => `(${conditionSql(c, scope)})`).join(' AND ');
    case 'or':
      return cond.items.map((c) => `(${conditionSql(c, scope)})`).join(' OR ');
    case 'not':
      return `NOT (${conditionSql(cond.item, scope)})`;
    case 'compare':
      return comparisonSql(cond, scope);
    case 'search': {
      const text = scope.fullText();
      if (!text) return '0';
      // The stored record is JSON text for JSON shippers (where `"` and `\` appear escaped)
      // and plain text for kv/syslog lines: match the literal as typed or as JSON escapes it.
      const escaped = serializedLiteral(cond.text);
      const find = (lit: string) => `positionCaseInsensitiveUTF8(${text.sql}, ${scope.params.text(lit)}) > 0`;
      return escaped === cond.text ? find(cond.text) : `(${find(cond.text)} OR ${find(escaped)})`;
    }
    case 'regexSearch': {
      const text = scope.fullText();
      if (!text) return '0';
      const pattern = regexPattern(cond.pattern, cond.flags);
      scope.noteRegex(pattern);
      return `match(${text.sql}, ${scope.params.text(pattern)})`;
    }
    case 'call':
      return scope.callCondition(cond);
  }
}

function operandText(op: Operand): string {
  if (op.kind === 'wildcard') return '*';
  if (op.kind === 'regex') return `/${op.pattern}/${op.flags}`;
  return op.text;
}

function comparisonSql(cmp: Comparison, scope: ConditionScope): string {
  const col = scope.resolve(cmp.field);
  const text = asText(col);
  const { params } = scope;
  const values = cmp.values;
  switch (cmp.op) {
    case '=':
    case '!=': {
      const negate = cmp.op === '!=';
      const one = values.length === 1 ? values[0] : undefined;
      let sql: string;
      if (one?.kind === 'wildcard') sql = `${text} != ''`;
      else if (one?.kind === 'regex') {
        const pattern = regexPattern(one.pattern, one.flags);
        scope.noteRegex(pattern);
        sql = `match(${text}, ${params.text(pattern)})`;
      } else {
        const items = values.map((v) => {
          if (v.kind === 'regex') throw new QueryCompileError('a regex cannot be part of a value list', v.span);
          return v.kind === 'wildcard' ? '*' : v.text;
        });
        const str = stringVariant(col);
        if (col.type === 'number' && items.every(isNumeric)) {
          sql = items.map((v) => `${col.sql} = ${params.number(Number(v))}`).join(' OR ');
        } else if (str && items.every(onlyStringText)) {
          // Only a string value can equal these texts: read the field's String variant alone
          // rather than print every value to text (`user=x` counted over ten million events:
          // 160 ms instead of 225). Absent and other values are NULL there, unequal (0, not
          // NULL, so NOT keeps them as it keeps any unequal value).
          const equal = items.length === 1 ? `${str} = ${params.text(items[0])}` : `${str} IN ${params.bind(items, 'Array(String)')}`;
          sql = `(isNotNull(${str}) AND ${equal})`;
        } else if (items.length === 1) {
          sql = `${text} = ${params.text(items[0])}`;
        } else {
          sql = `has(${params.bind(items, 'Array(String)')}, ${text})`;
        }
      }
      return negate ? `NOT (${sql})` : sql;
    }
    case '>':
    case '>=':
    case '<':
    case '<=': {
      const v = values[0];
      const raw = operandText(v);
      if (v.kind !== 'text' || !isNumeric(raw)) {
        throw new QueryCompileError(`numeric comparison: expected numeric value, got "${raw}"`, v.span);
      }
      return `${asNumberOrZero(col)} ${cmp.op} ${params.number(Number(raw))}`;
    }
    case '=~':
    case '=^':
    case '=$': {
      const terms = values.map(operandText);
      const arr = params.bind(terms, 'Array(String)');
      if (cmp.op === '=~') return `(${text} != '' AND multiSearchAnyCaseInsensitiveUTF8(${text}, ${arr}))`;
      const at = cmp.op === '=^' ? 'start' : 'end';
      const fn = at === 'start' ? 'startsWith' : 'endsWith';
      const affix = (value: string) => `(${value} != '' AND arrayExists(t -> ${fn}(lowerUTF8(${value}), lowerUTF8(t)), ${arr}))`;
      // Terms only a string value can start (end) with read the field's String variant alone, as
      // equality does (`image=$\cmd.exe` counted over ten million events: 255 ms instead of 320).
      // `=~` cannot: an array's text holds its strings.
      const str = stringVariant(col);
      if (str && terms.every((t) => onlyStringAffix(t, at))) return `(isNotNull(${str}) AND ${affix(`assumeNotNull(${str})`)})`;
      return affix(text);
    }
  }
}

// The query language for CodeMirror 6: a stream tokenizer for highlighting (query-language.md §1.1:
// commands, AND/OR/NOT, strings, regexes with the regex-or-division rule, operators, values, fields,
// @variables) and the completion source (commands with signatures from /query/reference, field names from
// /query/fields, a field's top values after `field=` from /query/fieldstats). No DOM here: the tokenizer
// and completion are unit-tested in tests/ui/search-language.test.ts.
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import type { StreamParser, StringStream } from '@codemirror/language';
import { valueLiteral } from './query-text.ts';

// ---- highlighting ---------------------------------------------------------------------------------------

type Prev = 'start' | 'operand' | 'operator' | 'open' | 'close' | 'pipe' | 'comma';

export interface TokState {
  /** Inside a string that continues on the next line. */
  quote: string | null;
  /** Inside a regex that continues on the next line. */
  regex: boolean;
  /** What the previous token was: decides whether `/` divides or starts a regex. */
  prev: Prev;
  /** The previous token was a comparison operator (a bare word after it is a value). */
  afterCompare: boolean;
}

const IDENT = /^[\p{L}_][\p{L}\p{N}_.*-]*/u;
const VALUE = /^[0-9][\p{L}\p{N}_.*-]*/u;
const KEYWORD = /^(?:and|or|not)$/i;
const COMPARE = /^(?:!=|=~|=\^|=\$|>=|<=|=|>|<)/;

function readString(stream: StringStream, state: TokState): string {
  const q = state.quote!;
  while (!stream.eol()) {
    const c = stream.next();
    if (c === '\\') stream.next();
    else if (c === q) {
      state.quote = null;
      break;
    }
  }
  return 'string';
}

function readRegex(stream: StringStream, state: TokState): string {
  let inClass = false;
  while (!stream.eol()) {
    const c = stream.next();
    if (c === '\\') stream.next();
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) {
      stream.match(/^[igm]*/);
      state.regex = false;
      break;
    }
  }
  return 'regexp';
}

export const queryStreamParser: StreamParser<TokState> = {
  name: 'log-query',
  startState: () => ({ quote: null, regex: false, prev: 'start', afterCompare: false }),
  copyState: (s) => ({ ...s }),
  token(stream, state) {
    if (state.quote) return readString(stream, state);
    if (state.regex) return readRegex(stream, state);
    if (stream.eatSpace()) return null;
    const afterCompare = state.afterCompare;
    state.afterCompare = false;
    const ch = stream.peek()!;

    if (ch === '"' || ch === "'") {
      stream.next();
      state.quote = ch;
      state.prev = 'operand';
      return readString(stream, state);
    }
    if (ch === '/') {
      stream.next();
      if (state.prev === 'operand' || state.prev === 'close') {
        state.prev = 'operator';
        return 'arithmeticOperator';
      }
      state.regex = true;
      state.prev = 'operand';
      return readRegex(stream, state);
    }
    if (ch === '@' && stream.match(/^@[A-Za-z_][A-Za-z0-9_]*/)) {
      state.prev = 'operand';
      return 'variableName.special';
    }
    if (ch === '|') {
      stream.next();
      state.prev = 'pipe';
      return 'separator';
    }
    if (stream.match(':=')) {
      state.prev = 'operator';
      return 'definitionOperator';
    }
    if (stream.match(COMPARE)) {
      state.prev = 'operator';
      state.afterCompare = true;
      return 'compareOperator';
    }
    if (ch === '!' || ch === '+' || ch === '*' || ch === '-') {
      stream.next();
      // A leading `*` is "all events"; after a comparison it is the wildcard value.
      if (ch === '*' && (state.prev === 'start' || afterCompare)) {
        state.prev = 'operand';
        return afterCompare ? 'atom' : 'operator';
      }
      if (ch === '-' && afterCompare && stream.match(VALUE)) {
        state.prev = 'operand';
        return 'number';
      }
      state.prev = 'operator';
      return ch === '!' ? 'logicOperator' : 'arithmeticOperator';
    }
    if (ch === '(' || ch === '[' || ch === '{') {
      stream.next();
      state.prev = 'open';
      return 'bracket';
    }
    if (ch === ')' || ch === ']' || ch === '}') {
      stream.next();
      state.prev = 'close';
      return 'bracket';
    }
    if (ch === ',' || ch === ';') {
      stream.next();
      state.prev = 'comma';
      // A comma list after a comparison continues the values (status=200,301).
      state.afterCompare = afterCompare || state.afterCompare;
      return 'punctuation';
    }
    if (stream.match(VALUE)) {
      state.prev = 'operand';
      if (afterCompare && stream.peek() === ',') state.afterCompare = true;
      return 'number';
    }
    const word = stream.match(IDENT) as RegExpMatchArray | null;
    if (word) {
      const text = word[0];
      state.prev = 'operand';
      if (KEYWORD.test(text) && !afterCompare) {
        state.prev = 'operator';
        return 'keyword';
      }
      if (afterCompare) {
        if (stream.peek() === ',') state.afterCompare = true;
        return 'atom';
      }
      if (stream.match(/^\s*\(/, false) || (text.toLowerCase() === 'case' && stream.match(/^\s*\{/, false))) return 'variableName.function';
      if (stream.match(/^\s*:=/, false)) return 'variableName.definition';
      if (stream.match(/^\s*(?:!=|=|>|<)/, false)) return 'propertyName';
      return 'variableName';
    }
    if (ch === ':') {
      stream.next();
      state.prev = 'operand';
      return 'atom';
    }
    stream.next();
    state.prev = 'operator';
    return 'invalid';
  },
  languageData: { closeBrackets: { brackets: ['(', '[', '{', '"', "'"] } },
};

// ---- completion -----------------------------------------------------------------------------------------

export interface CompletionData {
  commands(): Promise<Array<{ name: string; aliases?: string[]; signature: string; description: string; example?: string }>>;
  fields(): Promise<Array<{ name: string; type?: string; count?: number }>>;
  /** Top values of a field in the current scope and range, most frequent first. */
  topValues(field: string): Promise<Array<{ value: string; count: number }>>;
}

/** Unclosed `(` before `pos` on the query text: completion inside a call offers fields, not commands. */
export function parenDepth(text: string): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
  }
  return depth;
}

const VALUE_BEFORE = /([\p{L}_][\p{L}\p{N}_.*-]*)\s*(!=|=)\s*("(?:[^"\\]|\\.)*|[^\s"|(),]*)$/u;
const WORD_BEFORE = /[\p{L}_][\p{L}\p{N}_.*-]*$/u;

export function queryCompletionSource(data: CompletionData) {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const line = ctx.state.doc.lineAt(ctx.pos);
    const before = ctx.state.sliceDoc(line.from, ctx.pos);
    const textBefore = ctx.state.sliceDoc(0, ctx.pos);
    const depth = parenDepth(textBefore);

    // Values after `field=` / `field!=` (not for key=value arguments inside a call).
    const vm = VALUE_BEFORE.exec(before);
    if (vm && depth === 0) {
      const field = vm[1]!;
      const typed = vm[3]!;
      if (typed.startsWith('@')) return null; // a variable, filled in the variables bar
      const from = ctx.pos - typed.length;
      let top: Array<{ value: string; count: number }>;
      try {
        top = await data.topValues(field);
      } catch {
        return null;
      }
      if (ctx.aborted || top.length === 0) return null;
      return {
        from,
        options: top.map((t, i) => ({
          label: valueLiteral(t.value),
          displayLabel: t.value === '' ? '(empty)' : t.value,
          detail: t.count.toLocaleString('en-US'),
          type: 'text',
          boost: -i / 1000,
        })),
        filter: true,
      };
    }

    const word = ctx.matchBefore(WORD_BEFORE);
    if (!word && !ctx.explicit) {
      // Right after `|` or `(` a list is useful without typing: offer commands / fields.
      if (!/(?:\|\s*|\(\s*|,\s*)$/.test(before)) return null;
    }
    if (word && word.from > 0 && /[@"'/]/.test(ctx.state.sliceDoc(word.from - 1, word.from))) return null;
    const from = word ? word.from : ctx.pos;
    const [commands, fields] = await Promise.all([data.commands().catch(() => []), data.fields().catch(() => [])]);
    if (ctx.aborted) return null;
    const inCall = depth > 0;
    const options: Completion[] = [];
    if (!inCall) {
      for (const c of commands) {
        for (const name of [c.name, ...(c.aliases ?? [])]) {
          options.push({
            label: name,
            type: 'function',
            detail: c.signature,
            info: c.example ? `${c.description}\n\nExample: ${c.example}` : c.description,
            apply: (view, _completion, f, t) => {
              const insert = `${name}()`;
              view.dispatch({
                changes: { from: f, to: t, insert },
                selection: { anchor: f + name.length + 1 },
                userEvent: 'input.complete',
              });
            },
            boost: name === c.name ? 0 : -1,
          });
        }
      }
      for (const k of ['AND', 'OR', 'NOT']) options.push({ label: k, type: 'keyword', boost: -2 });
    }
    for (const f of fields) {
      options.push({
        label: f.name,
        type: 'property',
        detail: [f.type, f.count != null ? `${f.count.toLocaleString('en-US')}×` : ''].filter(Boolean).join(' · '),
        boost: inCall ? 1 : 0,
      });
    }
    if (options.length === 0) return null;
    return { from, options, validFor: WORD_BEFORE };
  };
}

// Go text/template's grammar over the lexer's segments: actions with pipelines (declarations,
// assignments, commands joined by `|`), if / else if / else, range (with else, break, continue),
// with (with else), define / template / block. Like Go, the parser refuses an undefined variable
// or function and a literal given arguments, so such a template is refused when it is saved.
import { TemplateError, type Source } from './errors.ts';
import { lex, type Segment, type Token } from './lexer.ts';

/** A float constant (Go distinguishes `3` from `3.0`: the float prints with %g). */
export class GoFloat {
  constructor(readonly value: number) {}
}

export type Arg =
  | { type: 'field'; idents: string[]; pos: number }
  | { type: 'variable'; name: string; idents: string[]; pos: number }
  | { type: 'identifier'; name: string; pos: number }
  | { type: 'chain'; node: Arg; idents: string[]; pos: number }
  | { type: 'pipe'; pipe: Pipe; pos: number }
  | { type: 'dot'; pos: number }
  | { type: 'nil'; pos: number }
  | { type: 'bool'; value: boolean; pos: number }
  | { type: 'string'; value: string; pos: number }
  | { type: 'number'; value: number | GoFloat; text: string; pos: number };

export interface Command {
  args: Arg[];
  pos: number;
}

export interface Pipe {
  decl: string[];
  /** `$x = …` assigns an existing variable instead of declaring it. */
  assign: boolean;
  cmds: Command[];
  pos: number;
}

export type Node =
  | { type: 'text'; text: string; pos: number }
  | { type: 'action'; pipe: Pipe; pos: number }
  | { type: 'if' | 'with' | 'range'; pipe: Pipe; list: Node[]; elseList?: Node[]; pos: number }
  | { type: 'template'; name: string; pipe?: Pipe; pos: number }
  | { type: 'break' | 'continue'; pos: number };

export interface ParsedTemplate {
  source: Source;
  root: Node[];
  /** Templates named by define and block. */
  defined: Map<string, Node[]>;
}

/** The functions a template may call: parsing fails on any other name, as in Go. */
export type FunctionNames = ReadonlySet<string>;

export function parseTemplate(src: Source, functions: FunctionNames): ParsedTemplate {
  return new Parser(src, functions).parse();
}

type Stop = { kind: 'end' | 'else'; elseTokens?: Token[]; pos: number };

class Parser {
  private segs: Segment[];
  private i = 0;
  private vars: string[][] = [['$']];
  private rangeDepth = 0;
  readonly defined = new Map<string, Node[]>();

  constructor(
    private readonly src: Source,
    private readonly functions: FunctionNames,
  ) {
    this.segs = lex(src);
  }

  private err(pos: number, msg: string): never {
    throw new TemplateError(this.src, pos, msg);
  }

  parse(): ParsedTemplate {
    const root = this.list(true);
    return { source: this.src, root, defined: this.defined };
  }

  /** Nodes up to {{end}} / {{else}} (returned as the stop), or to the end of the text at top level. */
  private list(top: boolean): Node[];
  private list(top: false, stop: (s: Stop) => void): Node[];
  private list(top: boolean, stop?: (s: Stop) => void): Node[] {
    const nodes: Node[] = [];
    while (this.i < this.segs.length) {
      const seg = this.segs[this.i++]!;
      if (seg.kind === 'text') {
        nodes.push({ type: 'text', text: seg.text, pos: seg.pos });
        continue;
      }
      if (seg.kind === 'comment') continue;
      const toks = seg.tokens.filter((t, k) => !(t.kind === 'space' && (k === 0 || k === seg.tokens.length - 1)));
      const first = toks[0];
      if (!first) this.err(seg.pos, 'missing value for command');
      if (first.kind === 'keyword') {
        switch (first.text) {
          case 'end':
          case 'else':
            if (top) this.err(first.pos, `unexpected {{${first.text}}}`);
            if (first.text === 'end' && toks.length > 1) this.err(toks[1]!.pos, `unexpected ${describe(toks[1]!)} in end`);
            stop!({ kind: first.text, elseTokens: toks.slice(1), pos: first.pos });
            return nodes;
          case 'if':
          case 'with':
          case 'range':
            nodes.push(this.control(first.text, toks.slice(1), first.pos));
            continue;
          case 'break':
          case 'continue':
            if (toks.length > 1) this.err(toks[1]!.pos, `unexpected ${describe(toks[1]!)} in {{${first.text}}}`);
            if (this.rangeDepth === 0) this.err(first.pos, `{{${first.text}}} outside {{range}}`);
            nodes.push({ type: first.text, pos: first.pos });
            continue;
          case 'template':
            nodes.push(this.templateCall(toks.slice(1), first.pos, 'template'));
            continue;
          case 'define':
          case 'block': {
            if (first.text === 'define' && !top) this.err(first.pos, 'unexpected define');
            const name = this.templateName(toks.slice(1), first.pos, first.text);
            const rest = afterName(toks.slice(1));
            const extra = rest.find((t) => t.kind !== 'space');
            let pipe: Pipe | undefined;
            if (first.text === 'block') {
              if (!extra) this.err(first.pos, 'missing pipeline in block clause');
              pipe = this.pipeline(rest, first.pos, 'block clause');
            } else if (extra) this.err(extra.pos, `unexpected ${describe(extra)} in define clause`);
            const savedVars = this.vars;
            const savedRange = this.rangeDepth;
            this.vars = [['$']];
            this.rangeDepth = 0;
            let ended: Stop | undefined;
            const body = this.list(false, (s) => (ended = s));
            this.vars = savedVars;
            this.rangeDepth = savedRange;
            if (!ended) this.err(first.pos, `unexpected EOF`);
            if (ended.kind !== 'end') this.err(ended.pos, `unexpected {{else}} in ${first.text}`);
            this.defined.set(name, body);
            if (first.text === 'block') nodes.push({ type: 'template', name, pipe, pos: first.pos });
            continue;
          }
        }
      }
      nodes.push({ type: 'action', pipe: this.pipeline(toks, seg.pos, 'command'), pos: seg.pos });
    }
    if (!top) this.err(this.src.text.length, 'unexpected EOF');
    return nodes;
  }

  private templateName(toks: Token[], pos: number, what: string): string {
    const name = toks.find((t) => t.kind !== 'space');
    if (!name || (name.kind !== 'string' && name.kind !== 'raw')) this.err(name?.pos ?? pos, `unexpected ${name ? describe(name) : 'end'} in ${what} clause`);
    return name.text;
  }

  private templateCall(toks: Token[], pos: number, what: string): Node {
    const name = this.templateName(toks, pos, what);
    const rest = afterName(toks);
    const pipe = rest.some((t) => t.kind !== 'space') ? this.pipeline(rest, pos, 'template clause') : undefined;
    return { type: 'template', name, pipe, pos };
  }

  /** if / with / range: the pipeline, the body, and an else (or `else if` / `else with`) branch. */
  private control(kind: 'if' | 'with' | 'range', toks: Token[], pos: number): Node {
    this.vars.push([]);
    const pipe = this.pipeline(toks, pos, kind, kind === 'range');
    if (kind === 'range') this.rangeDepth++;
    let stop: Stop | undefined;
    const list = this.list(false, (s) => (stop = s));
    if (kind === 'range') this.rangeDepth--;
    let elseList: Node[] | undefined;
    if (stop!.kind === 'else') {
      const rest = stop!.elseTokens!;
      const next = rest.find((t) => t.kind !== 'space');
      if (next && next.kind === 'keyword' && next.text === kind && kind !== 'range') {
        // `{{else if …}}` is `{{else}}{{if …}}…{{end}}{{end}}` sharing the one {{end}} (`else with` alike).
        elseList = [this.control(kind, rest.slice(rest.indexOf(next) + 1), next.pos)];
      } else {
        if (next) this.err(next.pos, `unexpected ${describe(next)} in else`);
        let end: Stop | undefined;
        elseList = this.list(false, (s) => (end = s));
        if (end!.kind !== 'end') this.err(end!.pos, 'expected end; found {{else}}');
      }
    }
    this.vars.pop();
    return { type: kind, pipe, list, elseList, pos };
  }

  private declared(name: string): boolean {
    return this.vars.some((scope) => scope.includes(name));
  }

  /** A pipeline: optional declaration or assignment, then commands separated by `|`. */
  private pipeline(toks: Token[], pos: number, context: string, isRange = false): Pipe {
    let k = 0;
    const skip = () => {
      while (toks[k]?.kind === 'space') k++;
    };
    skip();
    const decl: string[] = [];
    let assign = false;
    // `$x :=`, `$x =`, or in range `$i, $e :=`.
    const look = (from: number) => {
      let j = from;
      while (toks[j]?.kind === 'space') j++;
      return j;
    };
    if (toks[k]?.kind === 'variable') {
      const j = look(k + 1);
      const t = toks[j];
      if (t?.kind === 'declare' || t?.kind === 'assign') {
        decl.push(toks[k]!.text);
        assign = t.kind === 'assign';
        k = j + 1;
      } else if (t?.kind === 'comma' && isRange) {
        const v2 = look(j + 1);
        const d = look(v2 + 1);
        if (toks[v2]?.kind !== 'variable' || (toks[d]?.kind !== 'declare' && toks[d]?.kind !== 'assign')) {
          this.err(toks[v2]?.pos ?? t.pos, 'range can only initialize variables');
        }
        decl.push(toks[k]!.text, toks[v2]!.text);
        assign = toks[d]!.kind === 'assign';
        k = d + 1;
      } else if (t?.kind === 'comma') {
        this.err(t.pos, `too many declarations in ${context}`);
      }
      if (assign) {
        for (const v of decl) if (!this.declared(v)) this.err(pos, `undefined variable "${v}"`);
      }
    }
    const cmds: Command[] = [];
    const rest = toks.slice(k);
    const parts: Token[][] = [[]];
    let depth = 0;
    for (const t of rest) {
      if (t.kind === 'lparen') depth++;
      if (t.kind === 'rparen') depth--;
      if (t.kind === 'pipe' && depth === 0) parts.push([]);
      else parts[parts.length - 1]!.push(t);
    }
    for (const part of parts) {
      const at = part.find((t) => t.kind !== 'space')?.pos ?? pos;
      cmds.push(this.command(part, at, context));
    }
    // Declared only after the pipeline: `{{$x := $x}}` reads the outer one.
    if (!assign) this.vars[this.vars.length - 1]!.push(...decl);
    if (cmds.length === 0 || cmds[0]!.args.length === 0) this.err(pos, `missing value for ${context}`);
    cmds.slice(1).forEach((c, n) => {
      const a = c.args[0]!;
      if (['bool', 'dot', 'nil', 'number', 'string'].includes(a.type)) this.err(a.pos, `non executable command in pipeline stage ${n + 2}`);
    });
    return { decl, assign, cmds, pos };
  }

  /** One command: operands separated by spaces. */
  private command(toks: Token[], pos: number, context: string): Command {
    const args: Arg[] = [];
    let k = 0;
    while (k < toks.length) {
      if (toks[k]!.kind === 'space') {
        k++;
        continue;
      }
      if (args.length > 0 && toks[k - 1]?.kind !== 'space') this.err(toks[k]!.pos, `unexpected ${describe(toks[k]!)} in operand`);
      const { arg, next } = this.operand(toks, k);
      args.push(arg);
      k = next;
    }
    if (args.length === 0) this.err(pos, `missing value for ${context}`);
    const first = args[0]!;
    if (args.length > 1 && ['bool', 'dot', 'nil', 'number', 'string'].includes(first.type)) {
      this.err(first.pos, `can't give argument to non-function ${argText(first)}`);
    }
    if (first.type === 'nil' && args.length === 1 && context === 'command') this.err(first.pos, 'nil is not a command');
    return { args, pos };
  }

  /** A term followed by any fields: `.A.B`, `$x.A`, `(pipe).A`. */
  private operand(toks: Token[], k: number): { arg: Arg; next: number } {
    const t = toks[k]!;
    let arg: Arg;
    let next = k + 1;
    switch (t.kind) {
      case 'field':
        arg = { type: 'field', idents: [t.text.slice(1)], pos: t.pos };
        break;
      case 'variable':
        if (!this.declared(t.text)) this.err(t.pos, `undefined variable "${t.text}"`);
        arg = { type: 'variable', name: t.text, idents: [], pos: t.pos };
        break;
      case 'identifier':
        if (!this.functions.has(t.text)) this.err(t.pos, `function "${t.text}" not defined`);
        arg = { type: 'identifier', name: t.text, pos: t.pos };
        break;
      case 'dot':
        arg = { type: 'dot', pos: t.pos };
        break;
      case 'nil':
        arg = { type: 'nil', pos: t.pos };
        break;
      case 'bool':
        arg = { type: 'bool', value: t.text === 'true', pos: t.pos };
        break;
      case 'string':
      case 'raw':
        arg = { type: 'string', value: t.text, pos: t.pos };
        break;
      case 'char':
        arg = { type: 'number', value: t.text.codePointAt(0)!, text: `'${t.text}'`, pos: t.pos };
        break;
      case 'number':
        arg = { type: 'number', value: this.number(t), text: t.text, pos: t.pos };
        break;
      case 'lparen': {
        let depth = 0;
        let j = k;
        for (; j < toks.length; j++) {
          if (toks[j]!.kind === 'lparen') depth++;
          if (toks[j]!.kind === 'rparen' && --depth === 0) break;
        }
        if (j >= toks.length) this.err(t.pos, 'unclosed left paren');
        arg = { type: 'pipe', pipe: this.pipeline(toks.slice(k + 1, j), t.pos, 'parenthesized pipeline'), pos: t.pos };
        next = j + 1;
        break;
      }
      default:
        this.err(t.pos, `unexpected ${describe(t)} in operand`);
    }
    // Fields right after the term (no space between).
    const fields: string[] = [];
    while (toks[next]?.kind === 'field') fields.push(toks[next++]!.text.slice(1));
    if (fields.length) {
      if (arg.type === 'field' || arg.type === 'variable') arg.idents.push(...fields);
      else if (['bool', 'string', 'number', 'nil', 'dot'].includes(arg.type)) this.err(toks[k + 1]?.pos ?? t.pos, `unexpected . after term ${JSON.stringify(argText(arg))}`);
      else arg = { type: 'chain', node: arg, idents: fields, pos: arg.pos };
    }
    return { arg, next };
  }

  private number(t: Token): number | GoFloat {
    let text = t.text.replace(/_/g, '');
    if (text.endsWith('i')) this.err(t.pos, `complex numbers are not supported: ${t.text}`);
    const neg = text.startsWith('-');
    if (text.startsWith('+') || neg) text = text.slice(1);
    let v: number;
    let float = false;
    if (/^0[xX]/.test(text) && /[.pP]/.test(text)) {
      const m = /^0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?$/.exec(text);
      if (!m) this.err(t.pos, `bad number syntax: "${t.text}"`);
      const frac = m[2] ?? '';
      v = (parseInt((m[1] || '0') + frac, 16) / 16 ** frac.length) * 2 ** Number(m[3] ?? 0);
      float = true;
    } else if (/^0[xX]/.test(text)) v = parseInt(text.slice(2), 16);
    else if (/^0[oO]/.test(text)) v = parseInt(text.slice(2), 8);
    else if (/^0[bB]/.test(text)) v = parseInt(text.slice(2), 2);
    else if (/^0[0-7]+$/.test(text)) v = parseInt(text, 8);
    else {
      v = Number(text);
      float = /[.eE]/.test(text);
    }
    if (!Number.isFinite(v) || (!float && text !== '' && Number.isNaN(v))) this.err(t.pos, `bad number syntax: "${t.text}"`);
    if (neg) v = -v;
    // Go: an integral constant such as 3.0 is still an int where an int is wanted; printed it is a float.
    return float ? new GoFloat(v) : v;
  }
}

/** The tokens after a template's name (the first token that is not a space). */
const afterName = (toks: Token[]): Token[] => toks.slice(toks.findIndex((t) => t.kind !== 'space') + 1);

function describe(t: Token): string {
  switch (t.kind) {
    case 'space':
      return 'space';
    case 'string':
      return JSON.stringify(t.text);
    case 'raw':
      return `\`${t.text}\``;
    case 'keyword':
      return `<${t.text}>`;
    default:
      return JSON.stringify(t.text);
  }
}

export function argText(a: Arg): string {
  switch (a.type) {
    case 'field':
      return `.${a.idents.join('.')}`;
    case 'variable':
      return [a.name, ...a.idents].join('.');
    case 'identifier':
      return a.name;
    case 'chain':
      return `${argText(a.node)}.${a.idents.join('.')}`;
    case 'pipe':
      return `(${pipeText(a.pipe)})`;
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'bool':
      return String(a.value);
    case 'string':
      return JSON.stringify(a.value);
    case 'number':
      return a.text;
  }
}

export function pipeText(p: Pipe): string {
  const decl = p.decl.length ? `${p.decl.join(', ')} ${p.assign ? '=' : ':='} ` : '';
  return decl + p.cmds.map((c) => c.args.map(argText).join(' ')).join(' | ');
}

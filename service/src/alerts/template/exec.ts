// Runs a parsed template against data the way Go's text/template executes: dot and variables
// ($ is the data), field chains on maps (a missing key is "<no value>"), structs (an unknown
// field is an error) and times (their methods), functions with the previous command's value as
// the last argument, and/or that stop at the deciding operand, range over lists, maps (sorted
// keys) and integers with break/continue. Output is capped; so is the work a template may do.
import { TemplateExecError } from './errors.ts';
import { FuncError, FUNCS, type TemplateFunc } from './funcs.ts';
import { argText, type Arg, type Command, type Node, type ParsedTemplate, type Pipe } from './parser.ts';
import { TIME_METHOD_ARGS, TIME_METHODS } from './time.ts';
import { formatValue, GoStruct, isTrue, kindOf, mapKeys, MISSING, typeName } from './values.ts';

/** No value from a previous command (distinct from a missing key's value). */
const NONE = Symbol('none');

export class RenderLimitError extends Error {}

class Break {}
class Continue {}

const MAX_DEPTH = 1000;

export interface ExecLimits {
  /** Output characters allowed (the caller checks bytes after). */
  maxChars: number;
  /** Nodes and iterations allowed before the render is stopped. */
  maxSteps: number;
  /** Milliseconds of rendering allowed: a render runs on the service's thread, so it must not hold it. */
  maxMs: number;
  /** The clock the time budget reads (tests give their own). */
  now?: () => number;
}

/** Steps between two looks at the clock: cheap enough per step, fine enough for the budget. */
const CLOCK_EVERY = 256;

export function execute(t: ParsedTemplate, data: unknown, limits: ExecLimits, funcs: Record<string, TemplateFunc> = FUNCS): string {
  return new Exec(t, limits, funcs).run(data);
}

class Exec {
  private out: string[] = [];
  private chars = 0;
  private steps = 0;
  private vars: Array<{ name: string; value: unknown }> = [];
  private depth = 0;
  private deadline = Infinity;
  private readonly now: () => number;

  constructor(
    private readonly t: ParsedTemplate,
    private readonly limits: ExecLimits,
    private readonly funcs: Record<string, TemplateFunc>,
  ) {
    this.now = limits.now ?? (() => performance.now());
  }

  run(data: unknown): string {
    this.deadline = this.now() + this.limits.maxMs;
    this.vars = [{ name: '$', value: data }];
    this.walkList(data, this.t.root);
    return this.out.join('');
  }

  private fail(pos: number, context: string, reason: string): never {
    throw new TemplateExecError(this.t.source, pos, context, reason);
  }

  private write(s: string): void {
    this.chars += s.length;
    if (this.chars > this.limits.maxChars) throw new RenderLimitError(`the rendered output exceeds ${this.limits.maxChars.toLocaleString('en-US')} characters`);
    this.out.push(s);
  }

  private step(pos: number): void {
    if (++this.steps > this.limits.maxSteps) this.fail(pos, 'template', `stopped after ${this.limits.maxSteps.toLocaleString('en-US')} steps (a loop too long for an alert)`);
    if (this.steps % CLOCK_EVERY === 0 && this.now() > this.deadline) {
      throw new RenderLimitError(`the render took longer than ${this.limits.maxMs.toLocaleString('en-US')} ms (a template too heavy for an alert; make it loop over fewer rows or do less per row)`);
    }
  }

  private walkList(dot: unknown, nodes: Node[]): void {
    for (const n of nodes) this.walk(dot, n);
  }

  private walk(dot: unknown, n: Node): void {
    this.step(n.pos);
    switch (n.type) {
      case 'text':
        this.write(n.text);
        return;
      case 'action': {
        const v = this.pipeline(dot, n.pipe);
        if (n.pipe.decl.length === 0) this.write(v === MISSING ? '<no value>' : formatValue(v));
        return;
      }
      case 'if':
      case 'with': {
        const mark = this.vars.length;
        const v = this.pipeline(dot, n.pipe);
        if (isTrue(v)) this.walkList(n.type === 'with' ? v : dot, n.list);
        else if (n.elseList) this.walkList(dot, n.elseList);
        this.vars.length = mark;
        return;
      }
      case 'range':
        this.range(dot, n);
        return;
      case 'break':
        throw new Break();
      case 'continue':
        throw new Continue();
      case 'template': {
        const body = this.t.defined.get(n.name);
        if (!body) this.fail(n.pos, `template ${n.name}`, `no such template "${n.name}"`);
        if (++this.depth > MAX_DEPTH) this.fail(n.pos, `template ${n.name}`, `exceeded maximum template depth (${MAX_DEPTH})`);
        const newDot = n.pipe ? this.pipeline(dot, n.pipe) : null;
        const saved = this.vars;
        this.vars = [{ name: '$', value: newDot }];
        try {
          this.walkList(newDot, body);
        } finally {
          this.vars = saved;
          this.depth--;
        }
        return;
      }
    }
  }

  private range(dot: unknown, n: Extract<Node, { type: 'if' | 'with' | 'range' }>): void {
    const mark = this.vars.length;
    const v = this.pipeline(dot, { ...n.pipe, decl: [] });
    const one = (key: unknown, elem: unknown): boolean => {
      this.step(n.pos);
      const inner = this.vars.length;
      if (n.pipe.decl.length === 1) this.setOrPush(n.pipe, 0, elem);
      if (n.pipe.decl.length === 2) {
        this.setOrPush(n.pipe, 0, key);
        this.setOrPush(n.pipe, 1, elem);
      }
      try {
        this.walkList(elem, n.list);
      } catch (e) {
        if (e instanceof Break) return false;
        if (!(e instanceof Continue)) throw e;
      } finally {
        this.vars.length = inner;
      }
      return true;
    };
    let any = false;
    switch (kindOf(v)) {
      case 'slice':
        for (let i = 0; i < (v as unknown[]).length; i++) {
          any = true;
          if (!one(i, (v as unknown[])[i])) break;
        }
        break;
      case 'map':
        for (const k of mapKeys(v as Record<string, unknown>)) {
          any = true;
          if (!one(k, (v as Record<string, unknown>)[k])) break;
        }
        break;
      case 'int': {
        const count = v as number;
        if (n.pipe.decl.length > 1) this.fail(n.pos, 'range', `can't use ${count} to iterate over more than one variable`);
        for (let i = 0; i < count; i++) {
          any = true;
          if (!one(i, i)) break;
        }
        break;
      }
      case 'nil':
      case 'missing':
        break;
      default:
        this.fail(n.pos, argText(n.pipe.cmds[0]!.args[0]!), `range can't iterate over ${formatValue(v)}`);
    }
    if (!any && n.elseList) this.walkList(dot, n.elseList);
    this.vars.length = mark;
  }

  /** A range's declared variable: pushed (:=) or assigned to an outer one (=). */
  private setOrPush(pipe: Pipe, i: number, value: unknown): void {
    const name = pipe.decl[i]!;
    if (pipe.assign) this.setVar(name, value, pipe.pos);
    else this.vars.push({ name, value });
  }

  private setVar(name: string, value: unknown, pos: number): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.fail(pos, name, `undefined variable: ${name}`);
  }

  private varValue(name: string, pos: number): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    return this.fail(pos, name, `undefined variable: ${name}`);
  }

  private pipeline(dot: unknown, pipe: Pipe): unknown {
    let value: unknown = NONE;
    for (const cmd of pipe.cmds) value = this.command(dot, cmd, value);
    if (pipe.decl.length === 1) {
      if (pipe.assign) this.setVar(pipe.decl[0]!, value, pipe.pos);
      else this.vars.push({ name: pipe.decl[0]!, value });
    }
    return value;
  }

  private notAFunction(args: Arg[], final: unknown): void {
    if (args.length > 1 || final !== NONE) this.fail(args[0]!.pos, argText(args[0]!), `can't give argument to non-function ${argText(args[0]!)}`);
  }

  private command(dot: unknown, cmd: Command, final: unknown): unknown {
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'field':
        return this.fieldChain(dot, dot, first, first.idents, cmd.args, final);
      case 'chain':
        return this.fieldChain(dot, this.arg(dot, first.node), first, first.idents, cmd.args, final);
      case 'identifier':
        return this.call(dot, first, cmd.args, final);
      case 'variable': {
        const v = this.varValue(first.name, first.pos);
        if (first.idents.length === 0) {
          this.notAFunction(cmd.args, final);
          return v;
        }
        return this.fieldChain(dot, v, first, first.idents, cmd.args, final);
      }
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.pipeline(dot, first.pipe);
      case 'nil':
        return this.fail(first.pos, 'nil', 'nil is not a command');
      default:
        this.notAFunction(cmd.args, final);
        return this.arg(dot, first);
    }
  }

  /** An operand's value. */
  private arg(dot: unknown, a: Arg): unknown {
    switch (a.type) {
      case 'dot':
        return dot;
      case 'nil':
        return null;
      case 'bool':
      case 'string':
        return a.value;
      case 'number':
        return a.value;
      case 'field':
        return this.fieldChain(dot, dot, a, a.idents, [a], NONE);
      case 'variable': {
        const v = this.varValue(a.name, a.pos);
        return a.idents.length ? this.fieldChain(dot, v, a, a.idents, [a], NONE) : v;
      }
      case 'chain':
        return this.fieldChain(dot, this.arg(dot, a.node), a, a.idents, [a], NONE);
      case 'pipe':
        return this.pipeline(dot, a.pipe);
      case 'identifier':
        return this.call(dot, a, [a], NONE);
    }
  }

  /** `.A.B.C` from `receiver`: every step but the last without arguments. */
  private fieldChain(dot: unknown, receiver: unknown, node: Arg, idents: string[], args: Arg[], final: unknown): unknown {
    let r = receiver;
    for (let i = 0; i < idents.length - 1; i++) r = this.field(dot, idents[i]!, node, [node], NONE, r);
    return this.field(dot, idents[idents.length - 1]!, node, args, final, r);
  }

  private field(dot: unknown, name: string, node: Arg, args: Arg[], final: unknown, receiver: unknown): unknown {
    const hasArgs = args.length > 1 || final !== NONE;
    const ctx = argText(node);
    const k = kindOf(receiver);
    if (k === 'nil' || k === 'missing') return MISSING;
    if (k === 'time') {
      const method = TIME_METHODS[name];
      if (!method) this.fail(node.pos, ctx, `can't evaluate field ${name} in type time.Time`);
      const values = args.slice(1).map((a) => this.arg(dot, a));
      if (final !== NONE) values.push(final);
      const want = TIME_METHOD_ARGS[name] ?? 0;
      if (values.length !== want) this.fail(node.pos, ctx, `wrong number of args for ${name}: want ${want} got ${values.length}`);
      if (name === 'Format' && kindOf(values[0]) !== 'string') this.fail(node.pos, ctx, `wrong type for value; expected string; got ${typeName(values[0])}`);
      return method(receiver as Date, values);
    }
    if (k === 'struct') {
      const s = receiver as GoStruct;
      if (!(name in s.fields)) this.fail(node.pos, ctx, `can't evaluate field ${name} in type ${s.typeName}`);
      if (hasArgs) this.fail(node.pos, ctx, `${name} has arguments but cannot be invoked as function`);
      return s.fields[name];
    }
    if (k === 'map') {
      if (hasArgs) this.fail(node.pos, ctx, `${name} is not a method but has arguments`);
      const m = receiver as Record<string, unknown>;
      return Object.prototype.hasOwnProperty.call(m, name) ? m[name] : MISSING;
    }
    return this.fail(node.pos, ctx, `can't evaluate field ${name} in type ${typeName(receiver)}`);
  }

  private call(dot: unknown, ident: Extract<Arg, { type: 'identifier' }>, args: Arg[], final: unknown): unknown {
    const name = ident.name;
    const f = this.funcs[name];
    if (!f) this.fail(ident.pos, name, `"${name}" is not a defined function`);
    const operands = args.slice(1);
    const count = operands.length + (final === NONE ? 0 : 1);
    if (f.variadic ? count < f.args : count !== f.args) {
      this.fail(ident.pos, name, `wrong number of args for ${name}: want ${f.variadic ? 'at least ' : ''}${f.args} got ${count}`);
    }
    if (name === 'and' || name === 'or') {
      // Go evaluates operands only until the result is known; the value, not a bool, is returned.
      let v: unknown = null;
      const all = [...operands.map((a) => () => this.arg(dot, a)), ...(final === NONE ? [] : [() => final])];
      for (const get of all) {
        v = get();
        if (isTrue(v) === (name === 'or')) return v;
      }
      return v;
    }
    const values = operands.map((a) => this.arg(dot, a));
    if (final !== NONE) values.push(final);
    try {
      return f.fn(values);
    } catch (err) {
      if (err instanceof FuncError) this.fail(ident.pos, name, `error calling ${name}: ${err.message}`);
      throw err;
    }
  }
}


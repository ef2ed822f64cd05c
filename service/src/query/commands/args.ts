// Reading a command's arguments (query-language.md §1.8): positional values, `key=value`,
// lists, nested calls; with the errors a person can act on.
import type { Arg, ArgValue, Call } from '../syntax/ast.ts';
import { QueryCompileError } from '../plan/errors.ts';

export class Args {
  readonly positional: ArgValue[];
  readonly named = new Map<string, Arg>();
  readonly command: string;

  constructor(readonly call: Call) {
    this.command = call.name;
    this.positional = call.args.filter((a) => a.key === undefined).map((a) => a.value);
    for (const a of call.args) if (a.key !== undefined) this.named.set(a.key.toLowerCase(), a);
  }

  /** The value of the first of `keys` given by name, else positional `index`. */
  value(keys: string[], index?: number): ArgValue | undefined {
    for (const k of keys) {
      const a = this.named.get(k.toLowerCase());
      if (a) return a.value;
    }
    return index === undefined ? undefined : this.positional[index];
  }

  /** Text of a word/string value; a list's items joined by commas; a call's source. */
  text(keys: string[], index?: number): string | undefined {
    const v = this.value(keys, index);
    return v === undefined ? undefined : valueText(v);
  }

  /** A list: `[a, b]`, or one value split on commas (`"a,b"`), or several positionals from `from`. */
  list(keys: string[], from?: number): string[] | undefined {
    const v = this.value(keys);
    if (v) return listOf(v);
    if (from === undefined || this.positional.length <= from) return undefined;
    return this.positional.slice(from).flatMap(listOf);
  }

  has(key: string): boolean {
    return this.named.has(key.toLowerCase());
  }

  bool(keys: string[], fallback: boolean): boolean {
    const t = this.text(keys);
    if (t === undefined) return fallback;
    return ['true', '1', 'yes'].includes(t.toLowerCase()) ? true : ['false', '0', 'no'].includes(t.toLowerCase()) ? false : fallback;
  }

  /** A true/false argument (also 1/0, yes/no); `fallback` when absent; any other value is refused. */
  flag(key: string, fallback: boolean): boolean {
    const text = this.text([key]);
    if (text === undefined) return fallback;
    const t = text.trim().toLowerCase();
    if (['true', '1', 'yes'].includes(t)) return true;
    if (['false', '0', 'no'].includes(t)) return false;
    throw new QueryCompileError(`${this.command.toLowerCase()}(): ${key} must be true or false, got '${text}'`, this.named.get(key)?.span ?? this.call.span);
  }

  /** A non-negative integer, or `fallback` when absent or invalid. */
  int(keys: string[], index: number | undefined, fallback: number): number {
    const t = this.text(keys, index);
    if (t === undefined || !/^\d+$/.test(t)) return fallback;
    return Number(t);
  }

  /** Refuses named arguments outside `allowed`. */
  allowOnly(allowed: string[]): void {
    for (const [k, a] of this.named) {
      if (!allowed.includes(k)) {
        const list = allowed.map((x) => `${x}=`).join(', ');
        throw new QueryCompileError(
          `${this.command}(): unknown argument "${a.key}"${list ? ` (supported: ${list})` : ''}`,
          a.keySpan ?? a.span,
        );
      }
    }
  }

  /** A field name argument that must be present. */
  field(keys: string[], index: number | undefined, message: string): string {
    const t = this.text(keys, index);
    if (!t) throw new QueryCompileError(message, this.call.span);
    return t;
  }
}

export function valueText(v: ArgValue): string {
  switch (v.kind) {
    case 'word':
    case 'string':
      return v.text;
    case 'list':
      return v.items.map(valueText).join(',');
    case 'call':
      return v.text;
  }
}

export function listOf(v: ArgValue): string[] {
  if (v.kind === 'list') return v.items.flatMap(listOf);
  if (v.kind === 'call') return [v.text];
  return v.text
    .split(',')
    .map((s) => s.trim().replace(/^["']|["']$/g, ''))
    .filter((s) => s !== '');
}

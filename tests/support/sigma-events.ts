// Events made from a Sigma rule's own detection, for the tests that send them through ingest, a
// feed and the alert engine: a positive event (the condition holds) and a near-miss (the same
// event with one value changed so that it no longer holds). Each event is checked here against
// Sigma's semantics (an evaluator written from the specification, independent of the
// translator); a rule whose events cannot be made (regular expressions, field references, IPv6
// ranges) is left out and says why.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { translateCondition } from '../../service/src/feeds/sigma/condition.ts';
import type { Item } from '../../service/src/feeds/sigma/modifiers.ts';
import { search } from '../../service/src/feeds/sigma/query-ast.ts';
import { readSigmaRule, readYaml, type SigmaRule } from '../../service/src/feeds/sigma/rule.ts';
import type { Piece, SigmaString } from '../../service/src/feeds/sigma/sigma-string.ts';
import { categoryValue, translateRule } from '../../service/src/feeds/sigma/translate.ts';
import { MAX_QUERY_BYTES } from '../../service/src/query/syntax/variables.ts';
import type { Condition } from '../../service/src/query/syntax/ast.ts';

type Value = string | number;
type Env = Map<string, Value | null>; // null: the field is absent
const KEYWORDS = '__keywords__';

class Unsolvable extends Error {}

// ---- Sigma semantics ------------------------------------------------------------------------------

function patternRegex(s: SigmaString): RegExp {
  const body = s.pieces.map((p: Piece) => ('lit' in p ? p.lit.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') : 'any' in p ? '[\\s\\S]*' : '[\\s\\S]')).join('');
  return new RegExp(`^${body}$`, s.cased ? '' : 'i');
}

function ipv4(text: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.some((x) => x > 255) ? null : ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

function inCidr(value: string, range: string): boolean {
  const [net, bits] = range.split('/');
  const ip = ipv4(value);
  const base = ipv4(net!);
  if (ip === null || base === null) return false;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return ((ip & mask) >>> 0) === ((base & mask) >>> 0);
}

const rawText = (v: Item['raw'][number]) => (v === null ? '' : typeof v === 'object' ? v.text : String(v));

/** Whether an item holds for a field value (null: absent). Keywords read the whole event's text. */
function itemHolds(item: Item, value: Value | null, eventText: string): boolean {
  const text = value === null ? '' : String(value);
  let r: boolean;
  if (item.field === null) {
    const each = item.values.map((alts) => alts.some((s) => patternRegex({ ...s, pieces: [{ any: true }, ...s.pieces, { any: true }] }).test(eventText)));
    r = item.join === 'all' ? each.every(Boolean) : each.some(Boolean);
  } else {
    switch (item.kind) {
      case 'match': {
        const each = item.values.map((alts) => alts.some((s) => patternRegex(s).test(text) && (text !== '' || s.pieces.length === 0)));
        if (item.raw.some((v) => v === null)) each.push(text === '');
        r = item.join === 'all' ? each.every(Boolean) : each.some(Boolean);
        break;
      }
      case 'exists':
        r = (text !== '') === (item.raw[0] === true);
        break;
      case 'cidr':
        r = item.raw.some((v) => inCidr(text, rawText(v)));
        break;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const n = Number(text) || 0;
        const ok = (b: number) => ({ gt: n > b, gte: n >= b, lt: n < b, lte: n <= b })[item.kind as 'gt'];
        r = item.join === 'all' ? item.raw.every((v) => ok(Number(rawText(v)))) : item.raw.some((v) => ok(Number(rawText(v))));
        break;
      }
      default:
        throw new Unsolvable(`the modifier kind ${item.kind}`);
    }
  }
  return item.negate ? !r : r;
}

// ---- making values -----------------------------------------------------------------------------------

/** A value matching a Sigma string: wildcards filled in plainly. */
function example(s: SigmaString): string {
  return s.pieces.map((p) => ('lit' in p ? p.lit : 'any' in p ? '' : 'x')).join('');
}

/** A value for which the item holds, or null when absence makes it hold. */
function satisfying(item: Item): Value | null {
  if (item.negate) return 'zz-sigma-test-other-value';
  switch (item.kind) {
    case 'match': {
      if (item.values.length === 0) return null; // only null in the list
      if (item.join === 'any') {
        const raw = item.raw.find((v) => v !== null);
        const s = item.values[0]![0]!;
        if (raw && typeof raw === 'object' && s.original === raw.text && s.pieces.length === 1) return raw.number;
        return example(s) === '' ? 'x' : `${s.pieces.length && 'any' in s.pieces[0]! ? 'pre ' : ''}${example(s)}${s.pieces.length && 'any' in s.pieces[s.pieces.length - 1]! ? ' post' : ''}`;
      }
      // all: starts-with first, contains in the middle, ends-with last.
      const firsts = item.values.map((alts) => alts[0]!);
      const start = firsts.filter((s) => !('any' in s.pieces[0]!) && 'any' in s.pieces[s.pieces.length - 1]!);
      const end = firsts.filter((s) => 'any' in s.pieces[0]! && !('any' in s.pieces[s.pieces.length - 1]!));
      const mid = firsts.filter((s) => !start.includes(s) && !end.includes(s));
      return [...start, ...mid, ...end].map(example).join(' ');
    }
    case 'exists':
      return item.raw[0] === true ? 'present' : null;
    case 'cidr': {
      const [net] = rawText(item.raw[0]!).split('/');
      if (ipv4(net!) === null) throw new Unsolvable('an IPv6 range');
      return net!;
    }
    case 'gt':
      return Number(rawText(item.raw[0]!)) + 1;
    case 'gte':
    case 'lte':
      return Number(rawText(item.raw[0]!));
    case 'lt':
      return Number(rawText(item.raw[0]!)) - 1;
    default:
      throw new Unsolvable(`the modifier kind ${item.kind}`);
  }
}

// ---- the condition --------------------------------------------------------------------------------------

interface Solved {
  env: Env;
  /** Items made to hold, with the field each set (for the near-miss). */
  held: Array<{ item: Item; field: string }>;
}

export interface RuleEvents {
  positive: Record<string, Value>;
  nearMiss: Record<string, Value>;
  /** What the near-miss changed. */
  changed: string;
}

function eventText(env: Env): string {
  return JSON.stringify(Object.fromEntries([...env].filter(([, v]) => v !== null)));
}

function fieldOf(item: Item): string {
  return item.field ?? KEYWORDS;
}

/** The condition as a tree over selection names (the translator's own condition reader). */
function conditionTree(rule: SigmaRule): Condition {
  const names = new Map<string, Condition>([...rule.selections.keys()].map((n) => [n, search(n)]));
  const trees = rule.conditions.map((c) => translateCondition(c, names));
  return trees.length === 1 ? trees[0]! : { kind: 'or', items: trees, span: { start: 0, end: 0 } };
}

function holds(rule: SigmaRule, tree: Condition, env: Env): boolean {
  const text = eventText(env);
  const selectionHolds = (name: string) =>
    rule.selections.get(name)!.some((group) => group.every((item) => itemHolds(item, item.field === null ? null : (env.get(item.field) ?? null), text)));
  const walk = (c: Condition): boolean => {
    if (c.kind === 'and') return c.items.every(walk);
    if (c.kind === 'or') return c.items.some(walk);
    if (c.kind === 'not') return !walk(c.item);
    if (c.kind === 'search') return selectionHolds(c.text);
    throw new Unsolvable(`condition node ${c.kind}`);
  };
  return walk(tree);
}

function solve(rule: SigmaRule, c: Condition, want: boolean, s: Solved): Solved {
  const set = (field: string, v: Value | null, item: Item | null): Solved => {
    const cur = s.env.get(field);
    if (cur !== undefined && cur !== v) {
      if (field === KEYWORDS && v !== null && cur !== null) {
        const env = new Map(s.env).set(field, `${cur} ${v}`);
        return { env, held: item ? [...s.held, { item, field }] : s.held };
      }
      throw new Unsolvable(`field ${field} wanted twice`);
    }
    const env = new Map(s.env).set(field, v);
    return { env, held: item ? [...s.held, { item, field }] : s.held };
  };
  if (c.kind === 'not') return solve(rule, c.item, !want, s);
  if ((c.kind === 'and' && want) || (c.kind === 'or' && !want)) return c.items.reduce((acc, x) => solve(rule, x, want, acc), s);
  if (c.kind === 'and' || c.kind === 'or') {
    for (const x of c.items) {
      try {
        return solve(rule, x, want, s);
      } catch (err) {
        if (!(err instanceof Unsolvable)) throw err;
      }
    }
    throw new Unsolvable('no branch can be made to hold');
  }
  if (c.kind !== 'search') throw new Unsolvable(`condition node ${c.kind}`);
  const groups = rule.selections.get(c.text)!;
  if (want) {
    let acc = s;
    for (const item of groups[0]!) acc = set(fieldOf(item), satisfying(item), item);
    return acc;
  }
  // Every group must fail: one item of each, by a value it does not take (or by being absent).
  let acc = s;
  for (const group of groups) {
    const item = group.find((i) => !acc.env.has(fieldOf(i))) ?? group[0]!;
    const field = fieldOf(item);
    if (acc.env.has(field)) continue; // decided already; checked at the end
    acc = set(field, itemHolds(item, null, '') ? 'zz-sigma-test-other-value' : null, null);
  }
  return acc;
}

/** The positive and near-miss events of a rule, or the reason they cannot be made. */
export function ruleEvents(rule: SigmaRule): RuleEvents | { unsupported: string } {
  try {
    const tree = conditionTree(rule);
    const solved = solve(rule, tree, true, { env: new Map(), held: [] });
    if (!holds(rule, tree, solved.env)) throw new Unsolvable('the made event does not hold');
    const category = categoryValue(rule.logsource.category);
    const toEvent = (env: Env): Record<string, Value> => {
      const out: Record<string, Value> = {};
      if (category) out.sigma_category = category;
      for (const [k, v] of env) if (v !== null) out[k === KEYWORDS ? 'keyword_text' : k] = v;
      return out;
    };
    for (const { item, field } of solved.held) {
      if (item.negate || item.kind === 'exists') continue;
      const env = new Map(solved.env).set(field, field === KEYWORDS ? 'zz sigma near miss' : 'zz-sigma-near-miss');
      if (!holds(rule, tree, env)) return { positive: toEvent(solved.env), nearMiss: toEvent(env), changed: field === KEYWORDS ? 'keyword_text' : field };
    }
    throw new Unsolvable('no single changed value stops it from holding');
  } catch (err) {
    if (err instanceof Unsolvable) return { unsupported: err.message };
    throw err;
  }
}

// ---- choosing rules across log sources ---------------------------------------------------------------

export interface ChosenRule {
  file: string;
  rule: SigmaRule;
  events: RuleEvents;
}

/** Every `.yml`/`.yaml` file under a folder. */
export function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(n) ? [p] : [];
  });
}

/**
 * Up to `count` rules under `dir` whose events can be made and whose translation (field names
 * through `fieldName`) fits a query, taken round robin over their log sources (category, product,
 * service), so every source gets its first rule before any gets a second.
 */
export function chooseRules(dir: string, count: number, fieldName: (n: string) => string): { chosen: ChosenRule[]; sources: number; unsupported: number } {
  const bySource = new Map<string, ChosenRule[]>();
  let unsupported = 0;
  for (const file of yamlFiles(dir)) {
    let rule: SigmaRule;
    try {
      rule = readSigmaRule(readYaml(readFileSync(file, 'utf8')));
    } catch {
      continue;
    }
    const events = ruleEvents(rule);
    // The few rules whose translation is longer than a query may be are not imported at all.
    if ('unsupported' in events || translateRule(rule, fieldName).query.length > MAX_QUERY_BYTES) {
      unsupported++;
      continue;
    }
    const key = `${rule.logsource.category ?? ''}/${rule.logsource.product ?? ''}/${rule.logsource.service ?? ''}`;
    bySource.set(key, [...(bySource.get(key) ?? []), { file, rule, events }]);
  }
  const chosen: ChosenRule[] = [];
  for (let round = 0; chosen.length < count; round++) {
    const before = chosen.length;
    for (const list of bySource.values()) if (list[round] && chosen.length < count) chosen.push(list[round]!);
    if (chosen.length === before) break;
  }
  return { chosen, sources: new Set(chosen.map((c) => `${c.rule.logsource.category}/${c.rule.logsource.product}/${c.rule.logsource.service}`)).size, unsupported };
}

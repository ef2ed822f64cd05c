// A Sigma rule file read into what translation needs (Sigma rules specification: title, id,
// status, level, logsource, detection, …). Values keep the text they were written with: YAML
// reads `0x17` and `010` as numbers, but to the rule they are the text a log holds.
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { applyModifier, type Item, type RawValue } from './modifiers.ts';
import { parseSigmaString } from './sigma-string.ts';
import { SigmaSkip } from './skip.ts';

export const LEVELS = ['informational', 'low', 'medium', 'high', 'critical'] as const;
export const STATUSES = ['unsupported', 'deprecated', 'experimental', 'test', 'stable'] as const;

/** One search identifier: its items ANDed (a map), or several such groups ORed (a list of maps), or keywords. */
export type Selection = Item[][];

/** What a rule says about itself, read before (and whether or not) its detection translates. */
export interface RuleMeta {
  title: string;
  id: string | null;
  status: string | null;
  level: string | null;
  description: string;
  references: string[];
  tags: string[];
  falsepositives: string[];
  logsource: { category?: string; product?: string; service?: string };
}

export interface SigmaRule extends RuleMeta {
  selections: Map<string, Selection>;
  conditions: string[];
}

/** A YAML document as plain values, numbers as RawValue (with their text). */
export type Plain = RawValue | Plain[] | { [k: string]: Plain };

function plain(node: Node | null | undefined): Plain {
  if (node === null || node === undefined) return null;
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'number' || typeof v === 'bigint') return { number: Number(v), text: node.source ?? String(v) };
    if (typeof v === 'boolean' || v === null) return v;
    return String(v);
  }
  if (isSeq(node)) return node.items.map((n) => plain(n as Node));
  if (isMap(node)) {
    const out: { [k: string]: Plain } = {};
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value ?? '') : String(pair.key);
      out[key] = plain(pair.value as Node);
    }
    return out;
  }
  throw new SigmaSkip('bad_yaml', 'the file uses YAML features a rule cannot hold');
}

/** The file's YAML as plain values; `bad_yaml` when it is not YAML (one document per file). */
export function readYaml(text: string): Plain {
  const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const at = e.linePos?.[0] ? ` at line ${e.linePos[0].line}` : '';
    throw new SigmaSkip('bad_yaml', `not valid YAML${at}: ${e.message.split('\n')[0]}`);
  }
  return plain(doc.contents as Node);
}

const isObject = (v: Plain): v is { [k: string]: Plain } => typeof v === 'object' && v !== null && !Array.isArray(v) && !('number' in v && 'text' in v && Object.keys(v).length === 2);

export function asText(v: Plain | undefined): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (!Array.isArray(v) && 'number' in v && 'text' in v) return String(v.text);
  return null;
}

function textList(v: Plain | undefined): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.map(asText).filter((x): x is string => x !== null);
  const t = asText(v);
  return t === null ? [] : [t];
}

/** An item from `field|mod1|mod2: value(s)` (field empty: keywords). */
function item(key: string, value: Plain): Item {
  const [fieldPart, ...mods] = key.split('|');
  const field = fieldPart!.trim();
  const raw: RawValue[] = [];
  for (const v of Array.isArray(value) ? value : [value]) {
    if (Array.isArray(v) || isObject(v)) throw new SigmaSkip('invalid_rule', `the values of "${key}" must be plain values`);
    raw.push(v as RawValue);
  }
  if (raw.length === 0) throw new SigmaSkip('invalid_rule', `"${key}" has an empty list of values`);
  let it: Item = {
    field: field === '' ? null : field,
    raw,
    values: raw.filter((v) => v !== null).map((v) => [parseSigmaString(typeof v === 'object' ? v!.text : String(v))]),
    join: 'any',
    kind: 'match',
    reFlags: '',
    negate: false,
  };
  for (const mod of mods) it = applyModifier(it, mod.trim());
  return it;
}

function selection(name: string, value: Plain): Selection {
  if (isObject(value)) {
    const items = Object.entries(value).map(([k, v]) => item(k, v));
    if (items.length === 0) throw new SigmaSkip('invalid_rule', `the search identifier "${name}" is empty`);
    return [items];
  }
  if (Array.isArray(value)) {
    if (value.length === 0) throw new SigmaSkip('invalid_rule', `the search identifier "${name}" is an empty list`);
    if (value.every((v) => isObject(v))) return value.map((v) => Object.entries(v as { [k: string]: Plain }).map(([k, x]) => item(k, x)));
    if (value.every((v) => !Array.isArray(v) && !isObject(v))) return [[item('', value)]];
    throw new SigmaSkip('invalid_rule', `the search identifier "${name}" mixes maps and plain values`);
  }
  if (value === null) throw new SigmaSkip('invalid_rule', `the search identifier "${name}" is empty`);
  return [[item('', value)]];
}

/** Whether parsed YAML looks like a Sigma rule (it has a detection, or is a correlation or filter). */
export function looksLikeSigma(doc: Plain): boolean {
  return isObject(doc) && (doc.detection !== undefined || doc.correlation !== undefined || (doc.filter !== undefined && doc.logsource !== undefined));
}

/** A rule's title, id, status, level, tags, … (SigmaSkip when it has no title). */
export function readRuleMeta(doc: Plain): RuleMeta {
  if (!isObject(doc)) throw new SigmaSkip('not_a_rule', 'the file holds no YAML mapping');
  const title = asText(doc.title);
  if (!title) throw new SigmaSkip('invalid_rule', 'the rule has no title');
  const ls = isObject(doc.logsource) ? doc.logsource : {};
  const logsource: RuleMeta['logsource'] = {};
  for (const k of ['category', 'product', 'service'] as const) {
    const v = asText(ls[k]);
    if (v) logsource[k] = v;
  }
  return {
    title,
    id: asText(doc.id),
    status: asText(doc.status)?.toLowerCase() ?? null,
    level: asText(doc.level)?.toLowerCase() ?? null,
    description: asText(doc.description) ?? '',
    references: textList(doc.references),
    tags: textList(doc.tags),
    falsepositives: textList(doc.falsepositives),
    logsource,
  };
}

/** The whole rule, detection included; SigmaSkip naming what cannot be read or translated. */
export function readSigmaRule(doc: Plain): SigmaRule {
  const meta = readRuleMeta(doc);
  const d = doc as { [k: string]: Plain };
  if (d.correlation !== undefined) throw new SigmaSkip('unsupported_condition', 'correlation rules are not supported');
  if (d.detection === undefined && d.filter !== undefined) throw new SigmaSkip('unsupported_condition', 'Sigma filters (rule exclusions) are not supported');
  const detection = d.detection;
  if (!isObject(detection)) throw new SigmaSkip('invalid_rule', 'the rule has no detection');
  const conditions = textList(detection.condition);
  if (conditions.length === 0) throw new SigmaSkip('invalid_rule', 'the detection has no condition');
  if (detection.timeframe !== undefined) throw new SigmaSkip('unsupported_condition', 'a timeframe (Sigma 1 aggregation) is not supported; use a correlation rule');
  const selections = new Map<string, Selection>();
  for (const [name, value] of Object.entries(detection)) {
    if (name === 'condition' || name === 'timeframe') continue;
    selections.set(name, selection(name, value));
  }
  return { ...meta, selections, conditions };
}

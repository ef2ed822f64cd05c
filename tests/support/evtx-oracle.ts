// The oracle of the .evtx reader: Debian's python3-evtx, run over the same files, its XML turned
// into evtx_dump's JSON shape here (independently of the reader's own shaping), and compared with
// the reader's JSON value by value. Where python-evtx prints a value differently from evtx_dump,
// the comparison accepts exactly python-evtx's form of the same value, and counts each such rule
// (service/src/evidence/evtx/README.md, "Tested against python-evtx", lists them).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BigNumberText } from '../../service/src/shared/exact-json.ts';

export const ORACLE_SCRIPT = path.resolve(import.meta.dirname, '../evidence/evtx-oracle.py');

export interface OracleRecord {
  file: string;
  record: number;
  /** The record header's time as python prints it: `2019-04-27 15:57:27.087613`. */
  time: string;
  xml?: string;
  error?: string;
}

/** Runs python-evtx over `files` in `parallel` processes; each file's records in file order. */
export async function runOracle(files: string[], parallel = 2): Promise<Map<string, OracleRecord[]>> {
  const out = new Map<string, OracleRecord[]>(files.map((f) => [f, []]));
  const shares = Array.from({ length: parallel }, (_, i) => files.filter((_, j) => j % parallel === i)).filter((s) => s.length);
  await Promise.all(
    shares.map(
      (share) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn('/usr/bin/python3', [ORACLE_SCRIPT, ...share], { stdio: ['ignore', 'pipe', 'pipe'] });
          let rest = '';
          let stderr = '';
          child.stdout.setEncoding('utf8').on('data', (s: string) => {
            const lines = (rest + s).split('\n');
            rest = lines.pop()!;
            for (const line of lines) {
              const r = JSON.parse(line) as OracleRecord;
              out.get(r.file)!.push(r);
            }
          });
          child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
          child.on('error', reject);
          child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`python-evtx exited with ${code}: ${stderr.slice(-2000)}`))));
        }),
    ),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// python-evtx's XML

export interface OracleElement {
  name: string;
  attrs: [string, string][];
  children: (OracleElement | string)[];
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescape(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    const v = ENTITY[e];
    if (v === undefined) throw new Error(`unknown entity ${m}`);
    return v;
  });
}

/**
 * Parses one record's XML as python-evtx prints it: elements, double-quoted attributes, text,
 * CDATA, entity and character references. python-evtx writes a newline after every end tag; that
 * one newline is layout, not content, and is dropped. Line ends inside values are kept as they are.
 */
export function parseOracleXml(xml: string): OracleElement {
  let i = 0;
  const fail = (msg: string): never => {
    throw new Error(`oracle XML: ${msg} at ${i}: ${JSON.stringify(xml.slice(Math.max(0, i - 40), i + 40))}`);
  };
  const stack: OracleElement[] = [];
  let root: OracleElement | undefined;
  const text = (s: string) => {
    if (!s) return;
    const top = stack[stack.length - 1];
    if (!top) {
      if (s.trim()) fail('text outside the root element');
      return;
    }
    const last = top.children[top.children.length - 1];
    if (typeof last === 'string') top.children[top.children.length - 1] = last + s;
    else top.children.push(s);
  };
  while (i < xml.length) {
    if (xml.startsWith('<![CDATA[', i)) {
      const end = xml.indexOf(']]>', i);
      if (end < 0) fail('unterminated CDATA');
      text(unescape(xml.slice(i + 9, end))); // python-evtx escapes CDATA content too
      i = end + 3;
    } else if (xml.startsWith('</', i)) {
      const end = xml.indexOf('>', i);
      const name = xml.slice(i + 2, end);
      const el = stack.pop();
      if (!el || el.name !== name) fail(`end tag ${name} does not match`);
      i = end + 1;
      if (xml[i] === '\n') i++;
    } else if (xml[i] === '<') {
      const m = /^<([^\s/>]+)/.exec(xml.slice(i, i + 200));
      if (!m) fail('bad start tag');
      const el: OracleElement = { name: m![1]!, attrs: [], children: [] };
      i += m![0].length;
      for (;;) {
        while (xml[i] === ' ') i++;
        if (xml[i] === '>' || xml.startsWith('/>', i)) break;
        const eq = xml.indexOf('="', i);
        if (eq < 0) fail('bad attribute');
        const close = xml.indexOf('"', eq + 2);
        el.attrs.push([xml.slice(i, eq), unescape(xml.slice(eq + 2, close))]);
        i = close + 1;
      }
      const top = stack[stack.length - 1];
      if (top) top.children.push(el);
      else if (!root) root = el;
      else fail('a second root element');
      if (xml[i] === '/') i += 2;
      else {
        stack.push(el);
        i++;
      }
    } else {
      const end = xml.indexOf('<', i);
      text(unescape(xml.slice(i, end < 0 ? xml.length : end)));
      i = end < 0 ? xml.length : end;
    }
  }
  if (!root || stack.length) fail('unbalanced elements');
  return root!;
}

/** python-evtx's text of a string array: each item as `<string>item</string>` and a newline. */
const PYTHON_STRING_ARRAY = /^(<string>[^]*?<\/string>\n)+$/;

/**
 * python-evtx writes a string array substitution as one element holding `<string>a</string>\n
 * <string>b</string>\n` (as escaped text); evtx_dump repeats the element once per item
 * (MS-EVEN6 3.1.4.7.5). Puts the oracle's tree in evtx_dump's form, counting each in `rules`.
 */
export function expandStringArrays(el: OracleElement, rules: Map<string, number>): void {
  const children: (OracleElement | string)[] = [];
  for (const c of el.children) {
    if (typeof c !== 'string' && c.children.length === 1 && typeof c.children[0] === 'string' && PYTHON_STRING_ARRAY.test(c.children[0])) {
      const items = [...c.children[0].matchAll(/<string>([^]*?)<\/string>\n/g)].map((m) => m[1]!);
      for (const item of items) children.push({ name: c.name, attrs: c.attrs, children: item ? [item] : [] });
      rules.set('string array as <string> items', (rules.get('string array as <string> items') ?? 0) + 1);
      continue;
    }
    if (typeof c !== 'string') expandStringArrays(c, rules);
    children.push(c);
  }
  el.children = children;
}

// ---------------------------------------------------------------------------------------------
// The oracle's XML in evtx_dump's JSON shape (every value text)

type OracleJson = string | null | OracleJson[] | { [k: string]: OracleJson };

const elementsOf = (el: OracleElement) => el.children.filter((c): c is OracleElement => typeof c !== 'string');
const textOf = (el: OracleElement) => el.children.filter((c): c is string => typeof c === 'string').join('');
const nameOf = (el: OracleElement) => el.attrs.find(([n]) => n === 'Name')?.[1] ?? '';

/** `{"<root>": value}` by the rules of README.md "The JSON shape", applied to text-only XML. */
export function oracleEventJson(root: OracleElement): Record<string, OracleJson> {
  return { [root.name]: value(root, false) };
}

function value(el: OracleElement, container: boolean): OracleJson {
  const attrs = el.attrs.filter(([, v]) => v !== '');
  const text = textOf(el);
  const kids = elementsOf(el);
  if (!attrs.length && !kids.length) return text === '' ? null : text;
  return body(el, attrs, container, text);
}

function dataValue(el: OracleElement): OracleJson {
  const kids = elementsOf(el);
  return kids.length ? body(el, [], false, textOf(el)) : textOf(el);
}

function body(el: OracleElement, attrs: [string, string][], container: boolean, text: string): OracleJson {
  const out: { [k: string]: OracleJson } = {};
  if (attrs.length) out['#attributes'] = Object.fromEntries(attrs);
  if (text !== '') out['#text'] = text;
  const kids = elementsOf(el);
  const data = container ? kids.filter((k) => k.name === 'Data') : [];
  const named = data.some((d) => nameOf(d) !== '');
  const counts = new Map<string, number>();
  for (const k of kids) {
    if (container && k.name === 'Data') {
      if (named) {
        if (nameOf(k) !== '') out[nameOf(k)] = dataValue(k);
      } else if (!('Data' in out)) {
        out.Data = { '#text': data.length === 1 ? dataValue(k) : data.map(dataValue) };
      }
      continue;
    }
    const n = counts.get(k.name) ?? 0;
    counts.set(k.name, n + 1);
    out[n ? `${k.name}_${n}` : k.name] = value(k, k.name === 'EventData' || k.name === 'UserData');
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Comparison

/**
 * Characters python-evtx removes from the values it writes: its RESTRICTED_CHARS, of which only
 * the ASCII ones are still there when it applies them (it has turned every other character into
 * a character reference by then, so U+0080-U+009F survive).
 */
const RESTRICTED = /[\x01-\x08\x0B\x0C\x0E-\x1F\x7F]/g;
const GUID = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;
const HEX = /^0x[0-9a-f]+$/;
const ISO6 = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{6})Z$/;
const ISO7 = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{7})Z$/;
const FLOAT = /^-?(\d+\.\d+(e[+-]\d+)?|\de[+-]\d+|inf|NaN)$/;

const FILETIME_EPOCH_S = 11644473600n;

/** 100 ns ticks since 1601 of `YYYY-MM-DDTHH:MM:SS` plus `frac` ticks. */
function ticksOf(m: RegExpExecArray, fracTicks: bigint): bigint {
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return (BigInt(ms / 1000) + FILETIME_EPOCH_S) * 10_000_000n + fracTicks;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** Python's `str(datetime)` of a `YYYY-MM-DD HH:MM:SS` instant plus microseconds (no fraction when 0). */
function pythonDatetime(unixSeconds: number, micros: number): string {
  const d = new Date(unixSeconds * 1000);
  const base = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return micros ? `${base}.${pad(micros, 6)}` : base;
}

function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 ? 2 * Math.round(x / 2) : r;
}

/**
 * What python-evtx prints for a FILETIME of `ticks`: it computes float(ticks) * 1e-7 - 11644473600
 * in doubles and lets datetime.utcfromtimestamp round that to the microsecond (half to even), so
 * its value can be a microsecond or two away from the exact one.
 */
export function pythonFileTime(ticks: bigint): string {
  const t = Number(ticks) * 1e-7 - 11644473600;
  let sec = Math.trunc(t);
  let us = roundHalfEven((t - sec) * 1e6);
  if (us >= 1e6) {
    us -= 1e6;
    sec += 1;
  } else if (us < 0) {
    us += 1e6;
    sec -= 1;
  }
  return pythonDatetime(sec, us);
}

/** Our record time (7 digits, exact) as python-evtx prints the same FILETIME. */
export function pythonRecordTime(iso7: string): string {
  const m = ISO7.exec(iso7);
  if (!m) throw new Error(`not a 7-digit ISO time: ${iso7}`);
  return pythonFileTime(ticksOf(m, BigInt(m[7]!)));
}

/** The rule under which python-evtx's text `theirs` is our leaf value `ours`, or undefined when none does. */
export function valueRule(ours: unknown, theirs: string): string | undefined {
  if (typeof ours === 'number' || ours instanceof BigNumberText) return String(ours instanceof BigNumberText ? ours.text : ours) === theirs ? 'integer' : undefined;
  if (typeof ours === 'boolean') return (ours ? 'True' : 'False') === theirs ? 'boolean as True/False' : undefined;
  if (typeof ours !== 'string') return undefined;
  if (ours === theirs) return 'same text';
  if (GUID.test(ours) && theirs === `{${ours.toLowerCase()}}`) return 'GUID in braces, lower case';
  if (HEX.test(ours)) {
    if (/^0x([0-9a-f]{8}|[0-9a-f]{16})$/.test(theirs) && BigInt(theirs) === BigInt(ours)) return 'hex integer zero-padded';
    if (/^\d+$/.test(theirs) && BigInt(theirs) === BigInt(ours)) return 'size_t in decimal';
  }
  const m = ISO6.exec(ours);
  if (m) {
    const micros = BigInt(m[7]!);
    // Ours is cut to the microsecond: the FILETIME was one of these ten ticks.
    for (let t = 0n; t < 10n; t++) if (pythonFileTime(ticksOf(m, micros * 10n + t)) === theirs) return 'FILETIME via float, space, no Z';
    // python-evtx passes SYSTEMTIME's milliseconds to datetime as microseconds.
    if (micros % 1000n === 0n) {
      const unix = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) / 1000;
      if (pythonDatetime(unix, Number(micros / 1000n)) === theirs) return 'SYSTEMTIME milliseconds as microseconds';
    }
  }
  if (/^([0-9A-F]{2})+$/.test(ours) && Buffer.from(ours, 'hex').toString('base64') === theirs) return 'binary in base64';
  // python-evtx prints the exact double of a float (a Real32 widened: 0.1 → 0.10000000149011612).
  if (FLOAT.test(ours) && /^-?(\d|inf|nan)/.test(theirs)) {
    const x = Number(theirs.replace(/^(-?)inf$/, '$1Infinity').replace('nan', 'NaN'));
    if (x === Number(ours.replace(/^(-?)inf$/, '$1Infinity')) || (Math.fround(x) === x && Math.fround(Number(ours)) === x)) return 'float by repr';
  }
  if (ours.replace(RESTRICTED, '') === theirs) return 'control characters removed';
  return undefined;
}

/**
 * Differences between our event JSON and the oracle's, as `path: ours ≠ theirs` lines (empty
 * when they agree). `rules` counts the value rules that made leaves agree.
 */
export function compareEvent(ours: unknown, theirs: OracleJson, rules: Map<string, number>, at = ''): string[] {
  const show = (v: unknown) => (v instanceof BigNumberText ? v.text : JSON.stringify(v));
  if (theirs === null || typeof theirs === 'string') {
    if (theirs === null) return ours === null ? [] : [`${at}: ${show(ours)} ≠ null`];
    if (ours === null || typeof ours === 'object' && !(ours instanceof BigNumberText)) return [`${at}: ${show(ours)} ≠ ${show(theirs)}`];
    const rule = valueRule(ours, theirs);
    if (!rule) return [`${at}: ${show(ours)} ≠ ${show(theirs)}`];
    rules.set(rule, (rules.get(rule) ?? 0) + 1);
    return [];
  }
  if (Array.isArray(theirs)) {
    if (!Array.isArray(ours) || ours.length !== theirs.length) return [`${at}: ${show(ours)} ≠ ${show(theirs)}`];
    return theirs.flatMap((t, i) => compareEvent(ours[i], t, rules, `${at}[${i}]`));
  }
  if (ours === null || typeof ours !== 'object' || Array.isArray(ours) || ours instanceof BigNumberText) return [`${at}: ${show(ours)} ≠ ${show(theirs)}`];
  const ourKeys = Object.keys(ours);
  const theirKeys = Object.keys(theirs);
  if (ourKeys.join('\n') !== theirKeys.join('\n')) return [`${at}: members ${show(ourKeys)} ≠ ${show(theirKeys)}`];
  return theirKeys.flatMap((k) => compareEvent((ours as Record<string, unknown>)[k], theirs[k]!, rules, `${at}.${k}`));
}

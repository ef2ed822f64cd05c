// The event tree in evtx_dump's JSON shape (`evtx_dump -o json` of omerbenamram/evtx 0.12): the
// rules below follow its renderer one for one; README.md states them with examples.
import { BigNumberText, setOwn } from '../../shared/exact-json.ts';
import { Placeholder, XmlElement, type XmlAttr, type XmlNode } from './binxml.ts';
import { ArrayValue } from './values.ts';

export type EventJsonValue = string | number | boolean | null | BigNumberText | EventJsonValue[] | EventJsonObject;
export interface EventJsonObject {
  [key: string]: EventJsonValue;
}

/** `{"<root name>": …}`, normally `{"Event": {"#attributes": …, "System": …, "EventData": …}}`. */
export function eventJson(root: XmlElement): EventJsonObject {
  const out: EventJsonObject = {};
  setOwn(out, root.name, elementValue(root, false));
  return out;
}

type Leaf = string | number | boolean | BigNumberText | null;

/** A value that renders as a JSON number (integers) or boolean, not as text. */
const isNumeric = (n: XmlNode): n is number | boolean | BigNumberText =>
  typeof n === 'number' || typeof n === 'boolean' || n instanceof BigNumberText;

/** An empty value: the Null type, or an array without items (an empty string is empty text). */
const isEmptyValue = (n: XmlNode): boolean => n === null || (n instanceof ArrayValue && n.items.length === 0);

/** Does node n contribute text (an element does not; empty text and empty values do not)? */
function isContent(n: XmlNode): boolean {
  if (typeof n === 'string') return n !== '';
  if (n instanceof XmlElement) return false;
  return !isEmptyValue(n);
}

function hasTextContent(nodes: XmlNode[]): boolean {
  for (let i = 0; i < nodes.length; i++) if (isContent(nodes[i]!)) return true;
  return false;
}

function hasElementChild(el: XmlElement): boolean {
  const c = el.children;
  for (let i = 0; i < c.length; i++) if (c[i] instanceof XmlElement) return true;
  return false;
}

function attrsHaveText(attrs: XmlAttr[]): boolean {
  for (let i = 0; i < attrs.length; i++) if (hasTextContent(attrs[i]!.value)) return true;
  return false;
}

function unresolved(): never {
  throw new Error('a template substitution was left unresolved');
}

/** The text of the nodes: values as evtx_dump prints them, elements skipped or refused. */
function textContent(nodes: XmlNode[], skipElements: boolean): string {
  let s = '';
  for (const n of nodes) {
    if (typeof n === 'string') s += n;
    else if (n === null) continue;
    else if (typeof n === 'number' || typeof n === 'boolean') s += String(n);
    else if (n instanceof BigNumberText) s += n.text;
    else if (n instanceof ArrayValue) s += n.text();
    else if (n instanceof XmlElement) {
      if (!skipElements) throw new Error(`element ${n.name} inside text`);
    } else if (n instanceof Placeholder) unresolved();
  }
  return s;
}

/**
 * The nodes as a JSON number or boolean: only when they are exactly one integer or boolean value
 * (with `skipElements`, elements and empty text or values around it do not count). Else undefined.
 */
function asNumber(nodes: XmlNode[], skipElements: boolean): number | boolean | BigNumberText | undefined {
  let single: XmlNode | undefined;
  let taken = false;
  for (const n of nodes) {
    if (n instanceof XmlElement) {
      if (skipElements) continue;
      return undefined;
    }
    if (typeof n === 'string') {
      if (n !== '') return undefined;
      if (skipElements) continue;
      // Without skipping, even empty text takes the one place a number could have.
      if (taken) return undefined;
      single = n;
      taken = true;
      continue;
    }
    if (n instanceof Placeholder) return undefined;
    if (skipElements && isEmptyValue(n)) continue;
    if (taken) return undefined;
    single = n;
    taken = true;
  }
  return single !== undefined && isNumeric(single) ? single : undefined;
}

function contentValue(nodes: XmlNode[], skipElements: boolean): Leaf {
  return asNumber(nodes, skipElements) ?? textContent(nodes, skipElements);
}

/**
 * An element with exactly one text or value child and no element child: the value itself
 * (number, boolean or text), or `empty` when that child is empty. Undefined for any other element.
 */
function leafValue(el: XmlElement, empty: '' | null): Leaf | undefined {
  if (el.children.length !== 1) return undefined;
  const c = el.children[0]!;
  if (typeof c === 'string') return c === '' ? empty : c;
  if (c instanceof XmlElement || c instanceof Placeholder) return undefined;
  if (isEmptyValue(c)) return empty;
  if (isNumeric(c)) return c;
  return (c as ArrayValue).text();
}

/** The value of a `Data` element of EventData/UserData: as any element's, but "" when empty and without its attributes. */
function dataValue(el: XmlElement): EventJsonValue {
  const leaf = leafValue(el, '');
  if (leaf !== undefined) return leaf;
  const hasText = hasTextContent(el.children);
  const hasElements = hasElementChild(el);
  if (!hasText && !hasElements) return '';
  return hasElements ? elementBody(el, false, true, hasText) : contentValue(el.children, false);
}

/**
 * An element's value: null when it holds nothing (no text, no elements, no non-empty attribute);
 * its text or number when it holds only that; else an object of `#attributes`, `#text` and its
 * child elements.
 */
function elementValue(el: XmlElement, inDataContainer: boolean): EventJsonValue {
  if (el.attrs.length === 0) {
    const leaf = leafValue(el, null);
    if (leaf !== undefined) return leaf;
  }
  const hasText = hasTextContent(el.children);
  const hasElements = hasElementChild(el);
  const attrText = attrsHaveText(el.attrs);
  if (!hasElements && !hasText && !attrText) return null;
  if (!hasElements && !attrText) return contentValue(el.children, false);
  return elementBody(el, inDataContainer, false, hasText);
}

const nameAttr = (el: XmlElement): XmlAttr | undefined => el.attrs.find((a) => a.name === 'Name');
const isDataContainer = (name: string): boolean => name === 'EventData' || name === 'UserData';

/**
 * The object form of an element. In EventData/UserData (`inDataContainer`), `Data` elements
 * become members named by their `Name` attribute when any has one (those without are left out),
 * else one member `"Data": {"#text": value or [values…]}` where the first stood. Other repeated
 * child names get suffixes: `Header`, `Header_1`, `Header_2`…
 */
function elementBody(el: XmlElement, inDataContainer: boolean, omitAttributes: boolean, hasText: boolean): EventJsonObject {
  const out: EventJsonObject = {};
  let named = false;
  if (inDataContainer) {
    for (const c of el.children) {
      if (c instanceof XmlElement && c.name === 'Data') {
        const a = nameAttr(c);
        if (a && hasTextContent(a.value)) {
          named = true;
          break;
        }
      }
    }
  }
  if (!omitAttributes && attrsHaveText(el.attrs)) out['#attributes'] = attributes(el.attrs);
  if (hasText) out['#text'] = contentValue(el.children, true);
  let positional: XmlElement[] | undefined;
  let seen: Map<string, number> | undefined; // how many of each child name so far, made once a name repeats
  for (const c of el.children) {
    if (!(c instanceof XmlElement)) continue;
    if (inDataContainer && c.name === 'Data') {
      if (named) {
        const a = nameAttr(c);
        if (a && hasTextContent(a.value)) setOwn(out, textContent(a.value, false), dataValue(c));
      } else if (!positional) {
        positional = el.children.filter((n): n is XmlElement => n instanceof XmlElement && n.name === 'Data');
        out.Data = { '#text': positional.length === 1 ? dataValue(c) : positional.map(dataValue) };
      }
      continue;
    }
    let n = 0;
    // A sibling of the same name before this one left its name as a member.
    if (seen || Object.prototype.hasOwnProperty.call(out, c.name)) {
      seen ??= countNames(el, c, inDataContainer);
      n = seen.get(c.name) ?? 0;
      seen.set(c.name, n + 1);
    }
    setOwn(out, n ? `${c.name}_${n}` : c.name, elementValue(c, isDataContainer(c.name)));
  }
  return out;
}

/** Counts of the names of el's child elements before `upTo` (Data of a data container aside, as elementBody skips them). */
function countNames(el: XmlElement, upTo: XmlElement, container: boolean): Map<string, number> {
  const seen = new Map<string, number>();
  for (const c of el.children) {
    if (c === upTo) break;
    if (!(c instanceof XmlElement) || (container && c.name === 'Data')) continue;
    seen.set(c.name, (seen.get(c.name) ?? 0) + 1);
  }
  return seen;
}

/** `#attributes`: the attributes that hold text, each a number or boolean when it is exactly one such value. */
function attributes(attrs: XmlAttr[]): EventJsonObject {
  const out: EventJsonObject = {};
  for (const a of attrs) {
    if (!hasTextContent(a.value)) continue;
    setOwn(out, a.name, contentValue(a.value, false));
  }
  return out;
}

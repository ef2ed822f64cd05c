// Binary XML (MS-EVEN6 2.2.12-2.2.18): the token stream of an event record, its template
// definitions and template instances, turned into an element tree with the substitution values
// in place. One ChunkBinXml per chunk: names and template definitions are addressed by their
// offset in the chunk, so both are cached per chunk, and a template is parsed once per chunk.
import { ArrayValue, FIXED_SIZE, type Scalar, type Value, ValueError, ValueType, decodeValue, u16, u32, utf16 } from './values.ts';

/** An element of the event: its attributes in order, its content (text, values, elements) in order. */
export class XmlElement {
  readonly attrs: XmlAttr[] = [];
  readonly children: XmlNode[] = [];
  /** In a template definition: a substitution sits somewhere below, so instances need their own copy. */
  dynamic = false;
  constructor(readonly name: string) {}
}

/** An attribute: its value is text-like nodes only (text, values). */
export interface XmlAttr {
  readonly name: string;
  readonly value: XmlNode[];
}

/** A substitution in a template definition: replaced by value `index` of each instance. */
export class Placeholder {
  constructor(
    readonly index: number,
    readonly type: number,
    /** An optional substitution disappears when its value is empty (MS-EVEN6 2.2.16). */
    readonly optional: boolean,
  ) {}
}

/** Content of an element or attribute. Placeholders exist only inside template definitions. */
export type XmlNode = XmlElement | Value | Placeholder;

/** Binary XML that cannot be read; `offset` is where in the chunk. */
export class BinXmlError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** Real records nest templates one or two levels; the cap bounds recursion on crafted input. */
const MAX_NESTING = 16;
const MAX_DEPTH = 256;

const ENTITIES: Record<string, string> = { quot: '"', apos: "'", amp: '&', lt: '<', gt: '>' };

/** A template instance's value: a decoded value, or the element tree of embedded binary XML. */
type Substitution = Value | XmlElement;

export class ChunkBinXml {
  private readonly names = new Map<number, string>();
  private readonly templates = new Map<number, XmlElement>();

  /** `b` holds the chunk from its first byte (fewer than 64 KiB when the file ends inside it). */
  constructor(private readonly b: Buffer) {}

  /** The event element of a record whose binary XML is at b[start, end). */
  record(start: number, end: number): XmlElement {
    const root = this.parse(start, end, false, 0);
    if (!root) throw new BinXmlError('the record holds no element', start);
    return root;
  }

  /** Number of template definitions read so far in this chunk. */
  get templateCount(): number {
    return this.templates.size;
  }

  private name(offset: number): string {
    let s = this.names.get(offset);
    if (s === undefined) {
      const b = this.b;
      if (offset + 8 > b.length) throw new BinXmlError(`a name at offset ${offset} lies outside the chunk`, offset);
      const units = u16(b, offset + 6);
      if (offset + 8 + 2 * units > b.length) throw new BinXmlError(`the name at offset ${offset} runs past the end of the chunk`, offset);
      s = utf16(b, offset + 8, units);
      this.names.set(offset, s);
    }
    return s;
  }

  /** The name of the last nameRef() read. */
  private refName = '';

  /** Reads a name reference at p into refName; a name written in place (offset == p + 4) is skipped. Returns the next p. */
  private nameRef(p: number): number {
    const offset = u32(this.b, p);
    this.refName = this.name(offset);
    p += 4;
    // next-string link (4), hash (2), length (2), characters, NUL terminator (2)
    return offset === p ? p + 10 + 2 * u16(this.b, p + 6) : p;
  }

  /**
   * Parses the token stream b[start, end) into its root element. In a template definition
   * (`inTemplate`) element starts carry a dependency identifier and substitutions become
   * placeholders; in a record, template instances are instantiated where they stand.
   */
  private parse(start: number, end: number, inTemplate: boolean, nesting: number): XmlElement | undefined {
    if (nesting > MAX_NESTING) throw new BinXmlError('binary XML nested too deeply', start);
    const b = this.b;
    if (end > b.length) throw new BinXmlError(`binary XML of ${end - start} bytes runs past the end of the chunk`, start);
    let root: XmlElement | undefined;
    const stack: XmlElement[] = [];
    let open: XmlElement | undefined; // element whose start tag is being read
    let attr: XmlAttr | undefined; // attribute whose value is being read
    let p = start;
    while (p < end) {
      const at = p;
      const token = b[p]!;
      let node: XmlNode | undefined; // content to add where the stream stands
      let element: XmlElement | undefined; // a finished element to attach
      switch (token) {
        case 0x00: // end of stream
          p = end;
          break;
        case 0x0f: // fragment header: major, minor, flags
          p += 4;
          break;
        case 0x01:
        case 0x41:
          if (open) throw new BinXmlError('an element starts inside a start tag', at);
          if (stack.length >= MAX_DEPTH) throw new BinXmlError('elements nested too deeply', at);
          p = this.nameRef(p + (inTemplate ? 7 : 5)); // token, [dependency id], data size
          if (token === 0x41) p += 4; // attribute list size
          open = new XmlElement(this.refName);
          attr = undefined;
          break;
        case 0x02: // close start tag
          if (!open) throw new BinXmlError('a start tag closes that was never opened', at);
          stack.push(open);
          open = attr = undefined;
          p++;
          break;
        case 0x03: // close empty element
          if (!open) throw new BinXmlError('an empty element closes that was never opened', at);
          element = open;
          open = attr = undefined;
          p++;
          break;
        case 0x04:
          element = stack.pop();
          if (!element || open) throw new BinXmlError('an end tag without its element', at);
          p++;
          break;
        case 0x05:
        case 0x45: {
          const type = b[p + 1]!;
          if (type === ValueType.String) {
            const units = u16(b, p + 2);
            node = utf16(b, p + 4, units);
            p += 4 + 2 * units;
          } else if (type === ValueType.BinXml) {
            const size = u16(b, p + 2);
            p += 4 + size;
            if (open) throw new BinXmlError('binary XML inside an attribute value', at);
            if (size) element = this.parse(p - size, p, false, nesting + 1);
          } else {
            const size = FIXED_SIZE[type];
            if (size === undefined && type !== ValueType.Null) throw new BinXmlError(`value type 0x${type.toString(16)} cannot be an inline value`, at);
            node = this.value(type, p + 2, size ?? 0);
            p += 2 + (size ?? 0);
          }
          break;
        }
        case 0x06:
        case 0x46:
          if (!open) throw new BinXmlError('an attribute outside a start tag', at);
          p = this.nameRef(p + 1);
          attr = { name: this.refName, value: [] };
          open.attrs.push(attr);
          break;
        case 0x07:
        case 0x47: {
          // CDATA section: its text, as evtx_dump's JSON holds it
          const units = u16(b, p + 1);
          node = utf16(b, p + 3, units);
          p += 3 + 2 * units;
          break;
        }
        case 0x08:
        case 0x48: // character reference
          node = String.fromCharCode(u16(b, p + 1));
          p += 3;
          break;
        case 0x09:
        case 0x49:
          p = this.nameRef(p + 1);
          node = ENTITIES[this.refName] ?? `&${this.refName};`;
          break;
        case 0x0a: // processing instruction target: not part of the JSON
          p = this.nameRef(p + 1);
          break;
        case 0x0b: // processing instruction data
          p += 3 + 2 * u16(b, p + 1);
          break;
        case 0x0c:
          if (inTemplate) throw new BinXmlError('a template instance inside a template definition', at);
          if (open) throw new BinXmlError('a template instance inside a start tag', at);
          p = this.instance(p + 1, nesting);
          element = this.instanceRoot;
          break;
        case 0x0d:
        case 0x0e:
          if (!inTemplate) throw new BinXmlError('a substitution outside a template definition', at);
          node = new Placeholder(u16(b, p + 1), b[p + 3]!, token === 0x0e);
          p += 4;
          break;
        default:
          throw new BinXmlError(`unknown binary XML token 0x${token.toString(16).padStart(2, '0')}`, at);
      }
      if (element) {
        if (stack.length) stack[stack.length - 1]!.children.push(element);
        else if (!root) root = element; // a damaged record may hold more than one root: the first wins
      } else if (node !== undefined) {
        if (open) {
          if (!attr) throw new BinXmlError('content inside a start tag, outside an attribute', at);
          attr.value.push(node);
        } else if (stack.length) stack[stack.length - 1]!.children.push(node);
        else throw new BinXmlError('content outside of any element', at);
      }
    }
    if (p > end) throw new BinXmlError('a token runs past the end of its binary XML', end);
    if (open || stack.length) throw new BinXmlError(`element ${(open ?? stack[stack.length - 1])!.name} is never closed`, end);
    return root;
  }

  private value(type: number, p: number, size: number): Value {
    try {
      return decodeValue(this.b, type, p, size);
    } catch (e) {
      if (e instanceof ValueError) throw new BinXmlError(e.message, p);
      throw e;
    }
  }

  /** The element the last instance() built. */
  private instanceRoot: XmlElement | undefined;

  /** A template instance whose body starts at p (after its token): builds instanceRoot, returns the next p. */
  private instance(p: number, nesting: number): number {
    const b = this.b;
    const at = p - 1;
    const defOffset = u32(b, p + 5);
    p += 9; // unknown byte, template id, definition offset
    // The definition follows in place the first time the chunk uses it.
    if (defOffset === p) p += 24 + u32(b, p + 20);
    const template = this.template(defOffset, nesting);
    const count = u32(b, p);
    p += 4;
    if (p + 4 * count > b.length) throw new BinXmlError(`a template instance declares ${count} values, more than the chunk holds`, at);
    const values: Substitution[] = new Array(count);
    let v = p + 4 * count;
    for (let i = 0; i < count; i++) {
      const size = u16(b, p + 4 * i);
      const type = b[p + 4 * i + 2]!;
      values[i] = type === ValueType.BinXml ? (size ? (this.parse(v, v + size, false, nesting + 1) ?? null) : null) : this.value(type, v, size);
      v += size;
    }
    const out: XmlNode[] = [];
    resolveElement(template, values, out);
    this.instanceRoot = out[0] as XmlElement;
    return v;
  }

  private template(offset: number, nesting: number): XmlElement {
    let t = this.templates.get(offset);
    if (!t) {
      const b = this.b;
      if (offset < 512 || offset + 24 > b.length) throw new BinXmlError(`template definition offset ${offset} lies outside the chunk`, offset);
      const size = u32(b, offset + 20);
      const root = this.parse(offset + 24, offset + 24 + size, true, nesting + 1);
      if (!root) throw new BinXmlError(`the template definition at offset ${offset} holds no element`, offset);
      markDynamic(root);
      t = root;
      this.templates.set(offset, t);
    }
    return t;
  }
}

function markDynamic(el: XmlElement): boolean {
  let dynamic = false;
  for (const a of el.attrs) for (const n of a.value) if (n instanceof Placeholder) dynamic = true;
  for (const n of el.children) {
    if (n instanceof Placeholder) dynamic = true;
    else if (n instanceof XmlElement && markDynamic(n)) dynamic = true;
  }
  el.dynamic = dynamic;
  return dynamic;
}

const isEmpty = (v: Substitution): boolean => v === null || v === '' || (v instanceof ArrayValue && v.items.length === 0);

/**
 * Appends template element `t` with the instance's values in place: an optional substitution
 * with an empty value disappears, an attribute left without value is dropped, embedded binary
 * XML becomes child elements, and an array value repeats its element once per item. Elements
 * without substitutions are shared with the template, never copied.
 */
function resolveElement(t: XmlElement, values: Substitution[], out: XmlNode[]): void {
  if (!t.dynamic) {
    out.push(t);
    return;
  }
  const el = new XmlElement(t.name);
  let arrays = false;
  for (const a of t.attrs) {
    const value: XmlNode[] = [];
    for (const n of a.value) if (resolveNode(n, values, value, true)) arrays = true;
    if (value.length) el.attrs.push({ name: a.name, value });
  }
  for (const n of t.children) if (resolveNode(n, values, el.children, false)) arrays = true;
  if (arrays) expandArrays(el, out);
  else out.push(el);
}

/** Appends node n resolved; true if it appended an array of more than one item. */
function resolveNode(n: XmlNode, values: Substitution[], out: XmlNode[], inAttribute: boolean): boolean {
  if (n instanceof Placeholder) {
    if (n.index >= values.length) return false;
    const v = values[n.index]!;
    if (n.optional && isEmpty(v)) return false;
    if (v instanceof XmlElement && inAttribute) return false; // an element cannot be an attribute's value
    out.push(v);
    return v instanceof ArrayValue && v.items.length > 1;
  }
  if (n instanceof XmlElement) resolveElement(n, values, out);
  else out.push(n);
  return false;
}

/** Repeats `el` once per item of its first array of 2+ items (content first, then attributes), recursively. */
function expandArrays(el: XmlElement, out: XmlNode[]): void {
  let list: XmlNode[] | undefined;
  let at = -1;
  for (let i = 0; i < el.children.length && !list; i++) if (isMulti(el.children[i]!)) [list, at] = [el.children, i];
  for (let a = 0; a < el.attrs.length && !list; a++) {
    const value = el.attrs[a]!.value;
    for (let i = 0; i < value.length && !list; i++) if (isMulti(value[i]!)) [list, at] = [value, i];
  }
  if (!list) {
    out.push(el);
    return;
  }
  const array = list[at] as ArrayValue;
  for (const item of array.items) {
    const copy = new XmlElement(el.name);
    const replace = (nodes: XmlNode[]): XmlNode[] => {
      if (nodes !== list) return nodes;
      const r: XmlNode[] = nodes.slice(0, at);
      if (item !== '') r.push(item as Scalar); // an empty string item leaves the element empty
      for (let i = at + 1; i < nodes.length; i++) r.push(nodes[i]!);
      return r;
    };
    for (const a of el.attrs) {
      const value = replace(a.value);
      if (value.length) copy.attrs.push({ name: a.name, value });
    }
    copy.children.push(...replace(el.children));
    expandArrays(copy, out);
  }
}

const isMulti = (n: XmlNode): boolean => n instanceof ArrayValue && n.items.length > 1;

// Reads a body in the search-engine bulk format: newline-delimited JSON where each action line
// (`{"index":{…}}`, `{"create":{…}}`, `{"update":{…}}`, `{"delete":{…}}`) is followed by a
// document line (none after `delete`). Only `index` and `create` store anything; the other
// actions become refused items. A malformed action line makes the rest of the body impossible to
// pair up, so it fails the whole body (BulkSyntaxError); a bad document line fails only its item.
//
// Numbers are read without loss (shared/exact-json.ts): 2^64 + 1 is stored as 18446744073709551617.
import { jsonTypeOf, parseJson, setOwn } from '../../shared/exact-json.ts';

/** An error object in the format's response shape. */
export interface EsError {
  type: string;
  reason: string;
}

export type BulkAction = 'index' | 'create' | 'update' | 'delete';

export type BulkItem =
  | {
      ok: true;
      action: 'index' | 'create';
      /** `_index` from the action line, else the default from the path; undefined when neither. */
      index: string | undefined;
      /** The document line as received (stored as `raw`). */
      source: string;
      /** The document, with `_index` set when an index is known. */
      doc: Record<string, unknown>;
    }
  | {
      ok: false;
      action: BulkAction;
      index: string | undefined;
      /** The `_id` the action line named, echoed in the response. */
      id: string | undefined;
      status: number;
      error: EsError;
    };

/** The body cannot be read as bulk requests at all (answered with 400 for the whole request). */
export class BulkSyntaxError extends Error {
  constructor(
    message: string,
    readonly type = 'illegal_argument_exception',
  ) {
    super(message);
  }
}

const ACTIONS = new Set<string>(['index', 'create', 'update', 'delete']);
const NEWLINE = 0x0a;

/**
 * Splits a bulk body into items, in order. `defaultIndex` is the index named in the path
 * (`/{index}/_bulk`); an action line's own `_index` takes precedence.
 */
export function parseBulk(body: Buffer | string, defaultIndex?: string): BulkItem[] {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const lines = new LineReader(buf);
  const items: BulkItem[] = [];
  let line: Line | null;
  while ((line = lines.next()) !== null) {
    if (isBlank(line.text)) continue; // blank lines between requests are tolerated
    const { action, meta } = readActionLine(line);
    const index = stringParam(meta, '_index', line.no) ?? defaultIndex;
    const id = stringParam(meta, '_id', line.no);

    if (action === 'delete') {
      items.push(refused(action, index, id, 'delete'));
      continue;
    }
    const docLine = lines.next();
    if (action === 'update') {
      items.push(refused(action, index, id, 'update'));
      continue;
    }
    if (docLine === null) {
      items.push(docError(action, index, id, `the ${action} action on line ${line.no} has no document line after it`));
      continue;
    }
    if (isBlank(docLine.text)) {
      items.push(docError(action, index, id, `the document on line ${docLine.no} is empty`));
      continue;
    }
    let doc: unknown;
    try {
      doc = parseJson(docLine.text);
    } catch (e) {
      items.push(docError(action, index, id, `failed to parse the document on line ${docLine.no}: ${(e as Error).message}`));
      continue;
    }
    const type = jsonTypeOf(doc);
    if (type !== 'object') {
      const kind = type === 'null' ? 'null' : type === 'array' ? 'an array' : `a ${type}`;
      items.push(docError(action, index, id, `the document on line ${docLine.no} must be a JSON object, not ${kind}`));
      continue;
    }
    const fields = doc as Record<string, unknown>;
    if (index !== undefined) setOwn(fields, '_index', index);
    items.push({ ok: true, action, index, source: docLine.text, doc: fields });
  }
  if (items.length === 0) {
    throw new BulkSyntaxError('Validation Failed: 1: no requests added;', 'action_request_validation_exception');
  }
  return items;
}

function refused(action: 'update' | 'delete', index: string | undefined, id: string | undefined, what: string): BulkItem {
  return {
    ok: false,
    action,
    index,
    id,
    status: 400,
    error: {
      type: 'illegal_argument_exception',
      reason: `${what} is not supported here: this log store only appends; use index or create`,
    },
  };
}

function docError(action: 'index' | 'create', index: string | undefined, id: string | undefined, reason: string): BulkItem {
  return { ok: false, action, index, id, status: 400, error: { type: 'mapper_parsing_exception', reason } };
}

function readActionLine(line: Line): { action: BulkAction; meta: Record<string, unknown> } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.text);
  } catch (e) {
    throw new BulkSyntaxError(
      `Malformed action/metadata line [${line.no}]: ${(e as Error).message}`,
      'x_content_parse_exception',
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BulkSyntaxError(`Malformed action/metadata line [${line.no}], expected a JSON object`);
  }
  const keys = Object.keys(parsed);
  if (keys.length !== 1) {
    throw new BulkSyntaxError(
      `Malformed action/metadata line [${line.no}], expected exactly one action (index, create, update or delete) but found ${keys.length}`,
    );
  }
  const action = keys[0]!;
  if (!ACTIONS.has(action)) {
    throw new BulkSyntaxError(`Action/metadata line [${line.no}] contains an unknown action [${action}]`);
  }
  const meta = (parsed as Record<string, unknown>)[action];
  if (meta === null) return { action: action as BulkAction, meta: {} };
  if (typeof meta !== 'object' || Array.isArray(meta)) {
    throw new BulkSyntaxError(`Malformed action/metadata line [${line.no}], the value of [${action}] must be an object`);
  }
  // Other metadata (_id, _type from older shippers, routing, pipeline, require_alias…) is ignored.
  return { action: action as BulkAction, meta: meta as Record<string, unknown> };
}

function stringParam(meta: Record<string, unknown>, key: string, lineNo: number): string | undefined {
  const v = meta[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new BulkSyntaxError(`Action/metadata line [${lineNo}]: [${key}] must be a string`);
}

function isBlank(s: string): boolean {
  return s.trim() === '';
}

interface Line {
  text: string;
  /** 1-based line number, as the format's error messages count. */
  no: number;
}

/** Lines of a UTF-8 buffer, decoded one at a time (a large body never becomes one string). */
class LineReader {
  private pos = 0;
  private no = 0;
  constructor(private readonly buf: Buffer) {
    // A UTF-8 byte order mark is not part of the first line.
    if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) this.pos = 3;
  }
  next(): Line | null {
    if (this.pos >= this.buf.length) return null;
    let end = this.buf.indexOf(NEWLINE, this.pos);
    const nextPos = end === -1 ? this.buf.length : end + 1;
    if (end === -1) end = this.buf.length;
    if (end > this.pos && this.buf[end - 1] === 0x0d) end--; // CRLF
    const text = this.buf.toString('utf8', this.pos, end);
    this.pos = nextPos;
    this.no++;
    return { text, no: this.no };
  }
}

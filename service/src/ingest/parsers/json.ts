// The default parser: one JSON object per record. Integers beyond 2^53 keep their exact text.
import { jsonTypeOf, parseJson } from '../../shared/exact-json.ts';
import { ParseError } from './parse-error.ts';

export function parseJsonRecord(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = parseJson(text);
  } catch (err) {
    throw new ParseError(`invalid JSON (${(err as Error).message.replace(/^Unexpected/, 'unexpected')})`);
  }
  const type = jsonTypeOf(v);
  if (type !== 'object') throw new ParseError(`expected a JSON object, got ${type === 'array' ? 'an array' : type}`);
  return v as Record<string, unknown>;
}

/**
 * parseJsonRecord for a text that verbatim.ts found plain: JSON.parse alone is exact for it. A text
 * that fails is parsed again the ordinary way, so the refusal reads the same.
 */
export function parsePlainJsonRecord(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return parseJsonRecord(text);
  }
}

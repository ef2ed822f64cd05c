// A Sigma string value with its wildcards (Sigma rules specification, "String Wildcard" and
// "Escape Character"): `*` any run of characters, `?` exactly one; a backslash escapes `*`, `?`
// and itself, and is a plain backslash before anything else (`C:\Windows` needs no doubling).

export type Piece = { lit: string } | { any: true } | { one: true };

export interface SigmaString {
  pieces: Piece[];
  /** Compare case-sensitively: the `cased` modifier, or text an encoding modifier produced. */
  cased: boolean;
  /** The value as written in the rule (what `re` reads as a regular expression). */
  original: string;
  /**
   * The literal is bytes held one per character (latin1) rather than text: an utf16 modifier made
   * it, and base64 encodes those bytes as they are.
   */
  binary: boolean;
}

const ANY: Piece = { any: true };
const ONE: Piece = { one: true };

/** Appends literal text, merging with a literal before it. */
function pushLit(pieces: Piece[], text: string): void {
  if (text === '') return;
  const last = pieces[pieces.length - 1];
  if (last && 'lit' in last) pieces[pieces.length - 1] = { lit: last.lit + text };
  else pieces.push({ lit: text });
}

export function parseSigmaString(text: string): SigmaString {
  const pieces: Piece[] = [];
  let lit = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === '*' || next === '?' || next === '\\') {
        lit += next;
        i++;
      } else lit += c;
    } else if (c === '*' || c === '?') {
      pushLit(pieces, lit);
      lit = '';
      pieces.push(c === '*' ? ANY : ONE);
    } else lit += c;
  }
  pushLit(pieces, lit);
  return { pieces, cased: false, original: text, binary: false };
}

/** A literal (no wildcards) of the given text. */
export function literal(text: string, from: SigmaString): SigmaString {
  return { ...from, pieces: text === '' ? [] : [{ lit: text }] };
}

export const isAny = (p: Piece | undefined): boolean => p !== undefined && 'any' in p;
export const isLit = (p: Piece | undefined): p is { lit: string } => p !== undefined && 'lit' in p;

/** The text when the value has no wildcard, else null. */
export function plainText(s: SigmaString): string | null {
  if (s.pieces.length === 0) return '';
  return s.pieces.length === 1 && isLit(s.pieces[0]) ? s.pieces[0].lit : null;
}

export function hasWildcard(s: SigmaString): boolean {
  return s.pieces.some((p) => !isLit(p));
}

/** `*` added in front unless one is there already. */
export function withLeadingAny(s: SigmaString): SigmaString {
  return isAny(s.pieces[0]) ? s : { ...s, pieces: [ANY, ...s.pieces] };
}

/** `*` added at the end unless one is there already. */
export function withTrailingAny(s: SigmaString): SigmaString {
  return isAny(s.pieces[s.pieces.length - 1]) ? s : { ...s, pieces: [...s.pieces, ANY] };
}

/** The shape a value has for the query language: the literal middle and which ends are open. */
export interface Shape {
  /** `*` at the start and/or end (a value of only `*` is both, with an empty middle). */
  openStart: boolean;
  openEnd: boolean;
  /** The pieces between the open ends. */
  middle: Piece[];
}

export function shapeOf(s: SigmaString): Shape {
  let from = 0;
  let to = s.pieces.length;
  while (from < to && isAny(s.pieces[from])) from++;
  while (to > from && isAny(s.pieces[to - 1])) to--;
  return { openStart: from > 0, openEnd: to < s.pieces.length, middle: s.pieces.slice(from, to) };
}

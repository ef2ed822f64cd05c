// Regular expressions for translated rules. The query language's regexes are RE2 (no
// look-around, no back-references), written between slashes: a `/` outside a character class
// must be escaped there, which RE2 reads as a plain `/`.

/** RE2 text matching exactly `text` (every metacharacter escaped, `/` too). */
export function escapeRegex(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$/]/g, (c) => '\\' + c);
}

/** A Sigma `re` pattern made safe between slashes: each unescaped `/` outside a class escaped. */
export function slashSafe(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
      // A `]` first in a class (or after `^`) is a literal, not its end.
      if (pattern[i + 1] === '^') out += pattern[++i];
      if (pattern[i + 1] === ']') out += pattern[++i];
    } else out += c === '/' ? '\\/' : c;
  }
  return out;
}

const UNSUPPORTED_SYNTAX: Array<[RegExp, string]> = [
  [/\(\?[=!]/, 'look-ahead'],
  [/\(\?<[=!]/, 'look-behind'],
  [/\(\?>/, 'atomic groups'],
  [/[*+?}][+]/, 'possessive quantifiers'],
];
const UNSUPPORTED_ESCAPES: Array<[RegExp, string]> = [
  [/^\\[1-9]$/, 'back-references'],
  [/^\\[ZGK]$/, 'the anchors \\Z, \\G or \\K'],
];

/** What in a pattern RE2 does not support (named for the skip reason), or null. */
export function re2Gap(pattern: string): string | null {
  // Escapes and character classes hold none of the constructs looked for; set them aside.
  const escapes: string[] = [];
  const bare = pattern.replace(/\\.|\[(?:\\.|[^\]\\])*\]/gs, (m) => {
    if (m.startsWith('\\')) escapes.push(m);
    return 'x';
  });
  for (const [re, what] of UNSUPPORTED_SYNTAX) if (re.test(bare)) return what;
  for (const e of escapes) for (const [re, what] of UNSUPPORTED_ESCAPES) if (re.test(e)) return what;
  return null;
}

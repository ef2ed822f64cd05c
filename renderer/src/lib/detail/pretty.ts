// The original record as an investigator reads it: JSON objects and arrays re-indented, every other
// text exactly as stored. Re-indenting works on the text itself (strings and numbers are copied
// character for character), so a 20-digit id or 1.10 is never rewritten by a JavaScript number.
// Pure: tests/ui/detail.test.ts.

export interface PrettyRecord {
  kind: 'json' | 'text';
  text: string;
}

export function prettyRecord(raw: string): PrettyRecord {
  const trimmed = raw.trim();
  if (!(trimmed.startsWith('{') || trimmed.startsWith('['))) return { kind: 'text', text: raw };
  try {
    JSON.parse(trimmed);
  } catch {
    return { kind: 'text', text: raw };
  }
  return { kind: 'json', text: reindentJson(trimmed) };
}

/** Re-indents valid JSON text by `indent` spaces without parsing its values. */
export function reindentJson(json: string, indent = 2): string {
  const pad = (depth: number) => '\n' + ' '.repeat(depth * indent);
  let out = '';
  let depth = 0;
  let i = 0;
  const n = json.length;
  const nextSignificant = (from: number) => {
    let j = from;
    while (j < n && /\s/.test(json[j]!)) j++;
    return json[j];
  };
  while (i < n) {
    const c = json[i]!;
    if (c === '"') {
      // A string, escapes included, copied as is.
      let j = i + 1;
      while (j < n && json[j] !== '"') j += json[j] === '\\' ? 2 : 1;
      out += json.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      if (nextSignificant(i + 1) === close) {
        out += c + close;
        i = json.indexOf(close, i + 1) + 1;
        continue;
      }
      depth++;
      out += c + pad(depth);
    } else if (c === '}' || c === ']') {
      depth--;
      out += pad(depth) + c;
    } else if (c === ',') {
      out += ',' + pad(depth);
    } else if (c === ':') {
      out += ': ';
    } else {
      out += c;
    }
    i++;
  }
  return out;
}

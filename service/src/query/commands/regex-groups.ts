// Capture groups of an RE2 pattern, in order: which are named `(?<name>…)` and their 1-based
// index, so `regex()` can extract each named group with regexpExtract(…, index).
export interface CaptureGroup {
  index: number;
  name?: string;
}

export function captureGroups(pattern: string): CaptureGroup[] {
  const groups: CaptureGroup[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === ']') i++;
      continue;
    }
    if (c !== '(') continue;
    if (pattern[i + 1] !== '?') {
      groups.push({ index: groups.length + 1 });
      continue;
    }
    const named = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(pattern.slice(i));
    if (named) groups.push({ index: groups.length + 1, name: named[1] });
  }
  return groups;
}

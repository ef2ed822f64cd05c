// Single-key shortcuts of a page (`/` filter, `n` new, `a` add…): a key counts only when pressed on
// its own and not typed into a field, so typing a name never triggers one. Pure.

/** The key when it is meant for the page's shortcuts, else null. */
export function pageKey(e: KeyboardEvent): string | null {
  const t = e.target as HTMLElement | null;
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  if (t && (/^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName) || t.isContentEditable)) return null;
  return e.key;
}

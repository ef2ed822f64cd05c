// Pure part of the router (no DOM), unit-tested in tests/ui/format.test.ts.

export interface ParsedRoute {
  path: string;
  query: Record<string, string>;
}

export function parseHash(hash: string): ParsedRoute {
  const raw = hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  let path = q === -1 ? raw : raw.slice(0, q);
  const search = q === -1 ? '' : raw.slice(q + 1);
  if (!path.startsWith('/')) path = `/${path}`;
  path = path.replace(/\/{2,}/g, '/');
  if (path.length > 1) path = path.replace(/\/+$/, '');
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(search)) query[k] = v;
  return { path, query };
}

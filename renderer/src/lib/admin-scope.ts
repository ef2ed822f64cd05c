// Which fractal (or prism) a scoped admin page works on. It lives in the address ("?fractal=<id>" or
// "?prism=<id>") so a page can be reloaded, shared, and returned to after signing in again.
import type { ScopeType } from './admin-api.ts';

export interface Scope {
  type: ScopeType;
  id: string;
}

export function scopeFromQuery(query: Record<string, string>, allowPrisms: boolean): Scope | null {
  if (query.fractal) return { type: 'fractal', id: query.fractal };
  if (allowPrisms && query.prism) return { type: 'prism', id: query.prism };
  return null;
}

export function scopeQuery(scope: Scope | null): string {
  return scope ? `?${scope.type}=${encodeURIComponent(scope.id)}` : '';
}

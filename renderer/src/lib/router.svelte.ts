// Tiny hash router: "#/search?q=x" → path "/search". Hash routing keeps deep links working on any static
// server (no fallback needed) and leaves the route in the address bar while the sign-in view is shown,
// so signing in returns the user to where they were.
import { parseHash } from './route.ts';

export const route = $state(parseHash(location.hash));

function sync(): void {
  const r = parseHash(location.hash);
  route.path = r.path;
  route.query = r.query;
}

window.addEventListener('hashchange', sync);

/** "#/path" for href attributes. */
export function href(path: string): string {
  return `#${path.startsWith('/') ? path : `/${path}`}`;
}

export function navigate(path: string): void {
  location.hash = href(path);
}

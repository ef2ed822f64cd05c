// The pages of the shell, each loaded on first visit as a chunk of its own: a full page load of
// one address (a notebook, say) then parses only that page's code, not every page's (CodeMirror,
// uPlot and the admin pages stay out of the entry chunk). Vite splits at each `import()`.
import type { Component } from 'svelte';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type PageModule = { default: Component<any> };

export const pageLoaders = {
  search: () => import('../components/search/SearchWorkspace.svelte'),
  overview: () => import('../components/overview/Home.svelte'),
  notebookList: () => import('../components/notebooks/NotebookList.svelte'),
  notebook: () => import('../components/notebooks/NotebookPage.svelte'),
  dashboardList: () => import('../components/dashboards/DashboardList.svelte'),
  dashboard: () => import('../components/dashboards/DashboardPage.svelte'),
  evidence: () => import('../components/evidence/EvidencePage.svelte'),
  alerts: () => import('../components/alerts/Alerts.svelte'),
  admin: () => import('../components/admin/Admin.svelte'),
} satisfies Record<string, () => Promise<PageModule>>;

export type PageName = keyof typeof pageLoaders;

/** Pages already loaded: shown again without a wait (and without a blank frame). */
export const loadedPages = new Map<PageName, PageModule['default']>();

export async function loadPage(name: PageName): Promise<PageModule['default']> {
  const have = loadedPages.get(name);
  if (have) return have;
  const mod = (await pageLoaders[name]()) as PageModule;
  loadedPages.set(name, mod.default);
  return mod.default;
}

/** The page Shell.svelte shows at a route path (null: none of these, e.g. the not-found page). */
export function pageForPath(path: string): PageName | null {
  if (path === '/' || path === '/search') return 'search';
  if (path === '/overview') return 'overview';
  if (path === '/notebooks') return 'notebookList';
  if (path.startsWith('/notebooks/')) return 'notebook';
  if (path === '/dashboards') return 'dashboardList';
  if (path.startsWith('/dashboards/')) return 'dashboard';
  if (path === '/evidence') return 'evidence';
  if (path === '/alerts' || path.startsWith('/alerts/')) return 'alerts';
  if (path === '/admin' || path.startsWith('/admin/')) return 'admin';
  return null;
}

/** Starts loading the page of the address the app opened at, while the session is still being read. */
export function preloadPageFor(path: string): void {
  const name = pageForPath(path);
  if (name) loadPage(name).catch(() => {}); // a failure is shown when the page is drawn
}

/** A while after the shell's first page is loaded and drawn, when the browser is idle, the other
 * pages load too: moving between sections then never waits for a chunk. Started sooner, their
 * parsing competes with the first page's drawing (a full page load of a notebook took twice as long). */
export function preloadAllPagesWhenIdle(first: PageName | null): () => void {
  let stopped = false;
  let timer: number | undefined;
  const firstLoaded = first ? loadPage(first).catch(() => {}) : Promise.resolve();
  firstLoaded.then(() => {
    if (stopped) return;
    timer = window.setTimeout(() => {
      const idle = window.requestIdleCallback ?? ((f: () => void) => window.setTimeout(f, 0));
      idle(() => {
        if (stopped) return;
        for (const name of Object.keys(pageLoaders) as PageName[]) loadPage(name).catch(() => {});
      });
    }, 2000);
  });
  return () => {
    stopped = true;
    window.clearTimeout(timer);
  };
}

import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { applyTheme, storedTheme } from './lib/theme.ts';
import { preloadPageFor } from './lib/pages.ts';
import { parseHash } from './lib/route.ts';

applyTheme(storedTheme());

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
// A shared dashboard's public page (/shared/<token>) is a page of its own: no session, no shell.
const shared = /^\/shared\/([^/]+)\/?$/.exec(location.pathname);
// Its code (charts included) is a chunk of its own, loaded only there.
if (shared) {
  const token = decodeURIComponent(shared[1]!);
  import('./components/dashboards/SharedDashboard.svelte').then(({ default: SharedDashboard }) =>
    mount(SharedDashboard, { target, props: { token } }),
  );
} else {
  // The page's chunk loads alongside the session check rather than after it.
  preloadPageFor(parseHash(location.hash).path);
  mount(App, { target });
}

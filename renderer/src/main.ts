import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import SharedDashboard from './components/dashboards/SharedDashboard.svelte';
import { applyTheme, storedTheme } from './lib/theme.ts';

applyTheme(storedTheme());

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
// A shared dashboard's public page (/shared/<token>) is a page of its own: no session, no shell.
const shared = /^\/shared\/([^/]+)\/?$/.exec(location.pathname);
if (shared) mount(SharedDashboard, { target, props: { token: decodeURIComponent(shared[1]!) } });
else mount(App, { target });

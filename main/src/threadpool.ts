// Imported first by index.ts: libuv's thread pool takes its size from UV_THREADPOOL_SIZE when it
// starts, and the embedded engine's inserts and queries hold its threads while they run (why:
// bundled-config/service.env, bundled here as text by scripts/build-main.mjs). `npm run app` puts
// that file's variables in Electron's environment; a packaged app starts without them, so they are
// set here (a variable already set wins), which counts only where Electron has not started the pool
// before the bundle runs (not seen here: no Electron binary on this machine).
import { parseEnv } from 'node:util';
import serviceEnv from '../../bundled-config/service.env';

for (const [name, value] of Object.entries(parseEnv(serviceEnv))) process.env[name] ??= value;

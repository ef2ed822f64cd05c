// The desktop shell's behaviour, free of Electron: index.ts passes the real Electron pieces,
// tests pass fakes. Order of events:
//   single-instance lock -> ready -> config -> start service -> wait for health
//   -> window + tray (+ first-start credentials notice)
// and on any quit request: stop the service exactly once, then exit.
import path from 'node:path';
import type { Appliance } from '../../service/src/appliance.ts';
import type { Config } from '../../service/src/config.ts';
import type { AppLike, DialogLike, MenuEntry, TrayLike, WindowLike } from './electron-types.ts';
import { waitForHealth } from './health.ts';
import { ingestAddress, type Interfaces } from './ingest-address.ts';
import { trayMenuTemplate } from './tray-menu.ts';
import { TrayStatus } from './tray-status.ts';

/** The part of the service's Appliance the shell relies on (keeps fakes honest and small). */
export type ShellAppliance = Pick<Appliance, 'url' | 'port' | 'firstStart' | 'stop' | 'activity'>;

export interface ShellDeps {
  app: AppLike;
  /** Environment the service config is read from (SVC_*). */
  env: Record<string, string | undefined>;
  loadConfig: (env: Record<string, string | undefined>, defaults: { dataDir?: string }) => Config;
  startAppliance: (config: Config, opts?: { log?: boolean }) => Promise<ShellAppliance>;
  /** Creates the (hidden until ready) main window. */
  createWindow: () => WindowLike;
  /** Creates the tray icon with this context menu and tooltip. */
  createTray: (menu: MenuEntry[], tooltip: string) => TrayLike;
  clipboard: { writeText(text: string): void };
  dialog: DialogLike;
  networkInterfaces: () => Interfaces;
  fetch?: typeof globalThis.fetch;
  health?: { timeoutMs?: number; intervalMs?: number };
  /** A service that will not stop must not keep the app from exiting forever. */
  stopTimeoutMs?: number;
  /** How often the tray's ingest rate and imports are read again (ms). */
  trayIntervalMs?: number;
  log?: (line: string) => void;
}

export type ShellResult =
  | { status: 'refused' } // another instance holds the lock; it was asked to show itself
  | { status: 'failed'; message: string } // reported in a dialog, app exited with 1
  | { status: 'quit' } // the user quit while the service was starting
  | {
      status: 'running';
      appliance: ShellAppliance;
      ingestAddress: string;
      window: WindowLike;
      tray: TrayLike;
      menu: MenuEntry[];
    };

const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0];

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runShell(deps: ShellDeps): Promise<ShellResult> {
  const { app, dialog } = deps;
  const log = deps.log ?? ((line: string) => console.log(`[shell] ${line}`));

  // Two instances would fight over the data dir (SQLite + embedded engine) and the port.
  // Electron delivers 'second-instance' to the holder, which shows its window.
  if (!app.requestSingleInstanceLock()) {
    log('Log Appliance is already running; showing that window instead');
    app.quit();
    return { status: 'refused' };
  }

  let window: WindowLike | null = null;
  let tray: TrayLike | null = null;
  let appliance: ShellAppliance | null = null;
  let starting: Promise<unknown> = Promise.resolve();
  let shutdown: Promise<void> | null = null;
  let trayTimer: NodeJS.Timeout | null = null;
  const quitting = new AbortController(); // cancels the health wait when the user quits early

  const showWindow = () => {
    if (!window || window.isDestroyed()) return; // still starting: nothing to show yet
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
  };

  // The one exit path. Memoised so a second quit request (tray twice, Cmd+Q during the
  // stop) waits for the same stop instead of stopping twice or exiting before the drain.
  const stopAndExit = (code: number): Promise<void> => {
    shutdown ??= (async () => {
      quitting.abort(new Error('quit requested'));
      if (trayTimer) clearInterval(trayTimer);
      await starting.catch(() => {}); // a start still in flight must finish before it can be stopped
      if (appliance) {
        try {
          await withTimeout(appliance.stop(), deps.stopTimeoutMs ?? 20_000, 'stopping the service');
        } catch (e) {
          log(`stop failed: ${firstLine(e)}`);
          code ||= 1;
        }
      }
      tray?.destroy();
      app.exit(code); // exit, not quit: quit would emit 'before-quit' again
    })();
    return shutdown;
  };

  app.on('second-instance', showWindow);
  app.on('activate', showWindow); // macOS: click on the dock icon
  // Listening at all stops Electron's default quit-on-last-window: the tray keeps the app alive.
  app.on('window-all-closed', () => {});
  // Tray "Quit", Cmd+Q, app.quit() from SIGINT: hold the quit until the service has drained.
  app.on('before-quit', (e) => {
    e.preventDefault();
    void stopAndExit(0);
  });

  const fail = async (title: string, err: unknown): Promise<ShellResult> => {
    if (shutdown) {
      await shutdown; // the user quit meanwhile; the failure is a consequence, not news
      return { status: 'quit' };
    }
    const message = firstLine(err);
    log(`${title}: ${message}`);
    dialog.showError(title, message);
    await stopAndExit(1);
    return { status: 'failed', message };
  };

  await app.whenReady();
  if (shutdown) {
    await shutdown; // quit before ready: nothing was started, nothing to stop
    return { status: 'quit' };
  }

  let config: Config;
  try {
    // The desktop app keeps its data in the per-user app folder; SVC_DATA_DIR still wins.
    config = deps.loadConfig(deps.env, { dataDir: app.getPath('userData') });
  } catch (e) {
    return fail('Log Appliance: configuration error', e);
  }

  // Assigned in the same tick as the call, so a quit from here on waits for this start.
  const started = deps.startAppliance(config, { log: true }).then((a) => (appliance = a));
  starting = started;
  let svc: ShellAppliance;
  try {
    svc = await started;
    await waitForHealth(svc.url, { ...deps.health, fetch: deps.fetch, signal: quitting.signal });
  } catch (e) {
    return fail('Log Appliance could not start', e);
  }
  if (shutdown) {
    await shutdown;
    return { status: 'quit' };
  }

  const address = ingestAddress({ host: config.host, port: svc.port, baseUrl: config.baseUrl }, deps.networkInterfaces());

  const win = deps.createWindow();
  window = win;
  // Closing the window hides it to the tray (Windows/Linux convention; macOS keeps the
  // app in the dock). The service keeps ingesting; only Quit stops it.
  win.on('close', (e) => {
    if (shutdown) return;
    e.preventDefault();
    win.hide();
  });
  win.loadURL(svc.url).catch((e) => log(`loading ${svc.url} failed: ${firstLine(e)}`));

  const actions = {
    open: showWindow,
    copyIngestAddress: () => deps.clipboard.writeText(address),
    quit: () => app.quit(),
  };
  const menu = trayMenuTemplate(actions);
  const trayIcon = deps.createTray(menu, `Log Appliance: ingest at ${address}`);
  tray = trayIcon;
  tray.on('click', showWindow);
  // The tray keeps the ingest rate and any import in progress current; redrawn only on a change.
  const status = new TrayStatus(address, () => svc.activity());
  let shown = '';
  const refresh = async () => {
    try {
      const view = await status.sample();
      if (shutdown || view.tooltip === shown) return;
      shown = view.tooltip;
      trayIcon.update(trayMenuTemplate(actions, view.lines), view.tooltip);
    } catch (e) {
      log(`tray status: ${firstLine(e)}`);
    }
  };
  void refresh();
  trayTimer = setInterval(() => void refresh(), deps.trayIntervalMs ?? 2_000);
  trayTimer.unref?.();

  if (svc.firstStart) {
    // The headless service prints these once to stdout; a desktop user has no terminal.
    const f = svc.firstStart;
    const password =
      f.adminPassword === null
        ? 'the password set in SVC_ADMIN_PASSWORD'
        : `password ${f.adminPassword}\n(also saved in ${path.join(config.dataDir, 'initial-admin-password')})`;
    dialog.showInfo(
      'Log Appliance is set up',
      'Log Appliance is set up',
      `Sign in as "${f.adminUsername}" with ${password}\n\nIngest address: ${address}\nIngest token: ${f.ingestToken}`,
    );
  }

  log(`running at ${svc.url}; ingest address ${address}; data in ${config.dataDir}`);
  return { status: 'running', appliance: svc, ingestAddress: address, window: win, tray, menu };
}

// Electron entry point: only adapts the real Electron objects to the shell's interfaces.
// All decisions live in shell.ts (tested without Electron). Bundled by
// scripts/build-main.mjs into main/dist/index.cjs, which is package.json "main".
import './threadpool.ts';
import os from 'node:os';
import path from 'node:path';
// @ts-ignore -- `electron` is an optional dependency and is absent where its binary cannot be
// downloaded; this file is only ever built and run when it is installed.
import { app, BrowserWindow, clipboard, dialog, Menu, nativeImage, shell, Tray } from 'electron';
import { loadConfig } from '../../service/src/config.ts';
import { linkPolicy } from './links.ts';
import { installPermissionPolicy } from './permissions.ts';
import { runShell } from './shell.ts';
import type { MenuEntry, WindowLike } from './electron-types.ts';

// In the CJS bundle __dirname is main/dist, where build-main.mjs writes the icons
// (tray.png and tray@2x.png, which Electron picks on high-DPI screens).
const TRAY_ICON = path.join(__dirname, 'tray.png');
const APP_ICON = path.join(__dirname, 'icon.png');

function createWindow(appUrl: () => string): WindowLike {
  const win = new BrowserWindow({
    width: 1280,
    height: 820,
    show: false, // shown on ready-to-show: no white flash
    title: 'Log Appliance',
    icon: APP_ICON,
    autoHideMenuBar: true,
    webPreferences: { contextIsolation: true, sandbox: true, nodeIntegration: false },
  });
  installPermissionPolicy(win.webContents.session, appUrl);
  win.once('ready-to-show', () => win.show());
  win.webContents.setWindowOpenHandler(({ url }: { url: string }) => {
    const policy = linkPolicy(url, appUrl());
    if (policy === 'external') void shell.openExternal(url);
    return { action: policy === 'in-app' ? 'allow' : 'deny' };
  });
  win.webContents.on('will-navigate', (e: { preventDefault(): void }, url: string) => {
    const policy = linkPolicy(url, appUrl());
    if (policy === 'in-app') return;
    e.preventDefault();
    if (policy === 'external') void shell.openExternal(url);
  });
  return win;
}

let appUrl = '';

// Ctrl+C in the `npm run app` terminal / a service manager's SIGTERM: take the same
// graceful path as the tray's Quit instead of dying with the service mid-write.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => app.quit());

runShell({
  app,
  env: process.env,
  loadConfig,
  startAppliance: async (config, opts) => {
    // Loaded on first use, not at the top: a native module that cannot load on this OS
    // (chDB on Windows) then ends in the start-up error dialog instead of killing the
    // process before any window exists.
    const { startAppliance } = await import('../../service/src/appliance.ts');
    const a = await startAppliance(config, opts);
    appUrl = a.url;
    return a;
  },
  createWindow: () => createWindow(() => appUrl),
  createTray: (menu: MenuEntry[], tooltip: string) => {
    const tray = new Tray(nativeImage.createFromPath(TRAY_ICON));
    const update = (m: MenuEntry[], t: string) => {
      tray.setToolTip(t);
      tray.setContextMenu(Menu.buildFromTemplate(m));
    };
    update(menu, tooltip);
    return {
      on: (event: 'click', listener: () => void) => tray.on(event, listener),
      update,
      destroy: () => tray.destroy(),
    };
  },
  clipboard,
  dialog: {
    showError: (title, message) => dialog.showErrorBox(title, message),
    showInfo: (title, message, detail) => {
      void dialog.showMessageBox({ type: 'info', title, message, detail, buttons: ['OK'] });
    },
  },
  networkInterfaces: () => os.networkInterfaces(),
  fetch: globalThis.fetch,
}).catch((e: unknown) => {
  // runShell reports expected failures itself; this is a bug, but still exit visibly.
  console.error('[shell] unexpected error:', e);
  app.exit(1);
});

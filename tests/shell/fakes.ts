// Small stand-ins for the Electron objects the shell drives (Electron is outside our
// stack and absent here). The service side is NOT faked away entirely: fakeAppliance
// runs a real loopback HTTP server so the shell's real health wait is exercised.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApplianceActivity, FirstStartInfo } from '../../service/src/appliance.ts';
import type { ShellAppliance } from '../../main/src/shell.ts';
import type { AppLike, MenuEntry, PreventableEvent, TrayLike, WindowLike } from '../../main/src/electron-types.ts';

export class Preventable implements PreventableEvent {
  prevented = false;
  preventDefault() {
    this.prevented = true;
  }
}

type Listener = (...args: any[]) => void;

export class FakeApp implements AppLike {
  lock = true;
  quitCalls = 0;
  exitCodes: number[] = [];
  listeners = new Map<string, Listener[]>();
  constructor(
    public userData: string,
    public events: string[] = [],
  ) {}
  requestSingleInstanceLock() {
    return this.lock;
  }
  ready: Promise<unknown> = Promise.resolve();
  whenReady() {
    return this.ready;
  }
  getPath(_name: 'userData') {
    return this.userData;
  }
  on(event: string, listener: Listener) {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  emit(event: string, ...args: unknown[]) {
    for (const l of this.listeners.get(event) ?? []) l(...args);
  }
  /** Like Electron: 'before-quit' first; only an unprevented quit goes ahead. */
  quit() {
    this.quitCalls++;
    this.events.push('quit-requested');
    const e = new Preventable();
    this.emit('before-quit', e);
    if (!e.prevented) this.events.push('quit-went-ahead');
  }
  exit(code: number) {
    this.exitCodes.push(code);
    this.events.push(`exit:${code}`);
  }
}

export class FakeWindow implements WindowLike {
  loaded: string[] = [];
  shown = 0;
  hidden = 0;
  focused = 0;
  restored = 0;
  minimized = false;
  closeListeners: Array<(e: PreventableEvent) => void> = [];
  async loadURL(url: string) {
    this.loaded.push(url);
  }
  on(_event: 'close', listener: (e: PreventableEvent) => void) {
    this.closeListeners.push(listener);
    return this;
  }
  /** The user clicks the window's close button; returns whether the close was prevented. */
  userClose(): boolean {
    const e = new Preventable();
    for (const l of this.closeListeners) l(e);
    return e.prevented;
  }
  show() {
    this.shown++;
  }
  hide() {
    this.hidden++;
  }
  focus() {
    this.focused++;
  }
  restore() {
    this.restored++;
    this.minimized = false;
  }
  isMinimized() {
    return this.minimized;
  }
  isDestroyed() {
    return false;
  }
}

export class FakeTray implements TrayLike {
  clickListeners: Array<() => void> = [];
  destroyed = false;
  updates = 0;
  constructor(
    public menu: MenuEntry[],
    public tooltip: string,
  ) {}
  on(_event: 'click', listener: () => void) {
    this.clickListeners.push(listener);
    return this;
  }
  update(menu: MenuEntry[], tooltip: string) {
    this.menu = menu;
    this.tooltip = tooltip;
    this.updates++;
  }
  destroy() {
    this.destroyed = true;
  }
}

export function clickMenu(menu: MenuEntry[], label: string) {
  const item = menu.find((m) => 'label' in m && m.label === label);
  if (!item || !('click' in item)) throw new Error(`no menu item "${label}"`);
  item.click();
}

/**
 * A stand-in appliance with a real HTTP listener on 127.0.0.1 whose health answer the
 * test controls. stop() is slow on purpose so "exit before stop finished" would show.
 */
export async function fakeAppliance(
  events: string[],
  opts: { healthy?: () => boolean; firstStart?: FirstStartInfo | null; stopError?: Error; activity?: () => ApplianceActivity } = {},
) {
  const healthy = opts.healthy ?? (() => true);
  let healthRequests = 0;
  const server = http.createServer((req, res) => {
    if (req.url === '/api/v1/health') {
      healthRequests++;
      const ok = healthy();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ok ? 'healthy' : 'unhealthy' }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  let stopCalls = 0;
  const appliance: ShellAppliance = {
    url: `http://127.0.0.1:${port}`,
    port,
    firstStart: opts.firstStart ?? null,
    activity: async () => opts.activity?.() ?? { logsStored: 0, imports: [] },
    async stop() {
      stopCalls++;
      events.push('stop-begin');
      await new Promise((r) => setTimeout(r, 40));
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      events.push('stop-end');
      if (opts.stopError) throw opts.stopError;
    },
  };
  return {
    appliance,
    get stopCalls() {
      return stopCalls;
    },
    get healthRequests() {
      return healthRequests;
    },
    /** For tests that never stop it through the shell. */
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

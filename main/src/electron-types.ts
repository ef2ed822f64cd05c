// The few Electron pieces the shell uses, described structurally so the shell's logic
// compiles and runs without the `electron` package (an optional dependency that is absent
// on machines that cannot download its binary). index.ts adapts the real objects to these;
// tests hand in small fakes.

/** What Electron passes to 'before-quit' and a window's 'close'. */
export interface PreventableEvent {
  preventDefault(): void;
}

export interface AppLike {
  requestSingleInstanceLock(): boolean;
  whenReady(): Promise<unknown>;
  getPath(name: 'userData'): string;
  on(event: 'before-quit', listener: (e: PreventableEvent) => void): unknown;
  on(event: 'second-instance' | 'activate' | 'window-all-closed', listener: () => void): unknown;
  /** Graceful: emits 'before-quit' (which the shell intercepts) and then closes windows. */
  quit(): void;
  /** Immediate: no 'before-quit', windows closed without 'close'. */
  exit(code: number): void;
}

export interface WindowLike {
  loadURL(url: string): Promise<unknown>;
  on(event: 'close', listener: (e: PreventableEvent) => void): unknown;
  show(): void;
  hide(): void;
  focus(): void;
  restore(): void;
  isMinimized(): boolean;
  isDestroyed(): boolean;
}

/** A plain menu template entry; index.ts turns the array into a native menu. */
export type MenuEntry =
  | { label: string; click: () => void; enabled?: boolean }
  | { type: 'separator' };

export interface TrayLike {
  on(event: 'click', listener: () => void): unknown;
  /** Shows new status: index.ts sets the tooltip and builds the native menu from the template. */
  update(menu: MenuEntry[], tooltip: string): void;
  destroy(): void;
}

export interface DialogLike {
  /** Blocking error box: used when the shell cannot start and is about to exit. */
  showError(title: string, message: string): void;
  /** Non-blocking notice (first-start credentials). */
  showInfo(title: string, message: string, detail: string): void;
}

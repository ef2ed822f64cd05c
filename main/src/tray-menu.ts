// The tray menu as a plain template array (Electron's Menu.buildFromTemplate input),
// so tests can read labels and click items without a native menu.
import type { MenuEntry } from './electron-types.ts';

export const LABEL_OPEN = 'Open Log Appliance';
export const LABEL_COPY = 'Copy ingest address';
export const LABEL_QUIT = 'Quit';

/** `status`: lines shown first, greyed out (the ingest rate and imports, tray-status.ts). */
export function trayMenuTemplate(actions: {
  open: () => void;
  copyIngestAddress: () => void;
  quit: () => void;
}, status: string[] = []): MenuEntry[] {
  const noop = () => {};
  return [
    ...status.map((label): MenuEntry => ({ label, click: noop, enabled: false })),
    ...(status.length > 0 ? [{ type: 'separator' } as const] : []),
    { label: LABEL_OPEN, click: actions.open },
    { label: LABEL_COPY, click: actions.copyIngestAddress },
    { type: 'separator' },
    { label: LABEL_QUIT, click: actions.quit },
  ];
}

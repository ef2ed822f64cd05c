// The tray menu as a plain template array (Electron's Menu.buildFromTemplate input),
// so tests can read labels and click items without a native menu.
import type { MenuEntry } from './electron-types.ts';

export const LABEL_OPEN = 'Open Log Appliance';
export const LABEL_COPY = 'Copy ingest address';
export const LABEL_QUIT = 'Quit';

export function trayMenuTemplate(actions: {
  open: () => void;
  copyIngestAddress: () => void;
  quit: () => void;
}): MenuEntry[] {
  return [
    { label: LABEL_OPEN, click: actions.open },
    { label: LABEL_COPY, click: actions.copyIngestAddress },
    { type: 'separator' },
    { label: LABEL_QUIT, click: actions.quit },
  ];
}

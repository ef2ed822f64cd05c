// What the window's web content may ask of the machine. Electron grants every permission request
// (camera, microphone, location, notifications, screen capture, USB/HID/serial devices, ...) unless
// the app says otherwise; the appliance's pages need one thing only: writing to the clipboard (the
// copy buttons), and only from its own origin. Everything else, and anything asked by another
// origin, is refused, so a page that somehow got into the window gains nothing by asking.
import { linkPolicy } from './links.ts';

/** The permissions the appliance's own pages use. */
export const GRANTED_PERMISSIONS: ReadonlySet<string> = new Set(['clipboard-sanitized-write']);

export function permissionAllowed(permission: string, requestingUrl: string | undefined, appUrl: string): boolean {
  if (!GRANTED_PERMISSIONS.has(permission) || !requestingUrl || !appUrl) return false;
  return linkPolicy(requestingUrl, appUrl) === 'in-app';
}

/** The part of Electron's `Session` the policy is installed on. */
export interface PermissionSession {
  setPermissionRequestHandler(
    handler: (webContents: unknown, permission: string, callback: (granted: boolean) => void, details: { requestingUrl?: string }) => void,
  ): void;
  setPermissionCheckHandler(handler: (webContents: unknown, permission: string, requestingOrigin: string) => boolean): void;
  setDevicePermissionHandler?(handler: () => boolean): void;
}

export function installPermissionPolicy(session: PermissionSession, appUrl: () => string): void {
  session.setPermissionRequestHandler((_wc, permission, callback, details) => callback(permissionAllowed(permission, details?.requestingUrl, appUrl())));
  session.setPermissionCheckHandler((_wc, permission, origin) => permissionAllowed(permission, origin, appUrl()));
  // USB, HID and serial devices: never.
  session.setDevicePermissionHandler?.(() => false);
}

// The window shows only the appliance's own UI. Links elsewhere (docs, alert targets)
// open in the user's browser, where they get its address bar and security UI; anything
// else (file:, javascript:, custom schemes) is refused rather than handed to the OS.

export type LinkPolicy = 'in-app' | 'external' | 'deny';

export function linkPolicy(target: string, appUrl: string): LinkPolicy {
  let t: URL;
  try {
    t = new URL(target);
  } catch {
    return 'deny';
  }
  if (t.origin === new URL(appUrl).origin) return 'in-app';
  return t.protocol === 'http:' || t.protocol === 'https:' || t.protocol === 'mailto:' ? 'external' : 'deny';
}

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linkPolicy } from '../../main/src/links.ts';
import { installPermissionPolicy, type PermissionSession } from '../../main/src/permissions.ts';
import { trayMenuTemplate } from '../../main/src/tray-menu.ts';

test('tray menu: open, copy ingest address, separator, quit, each wired to its action', () => {
  const calls: string[] = [];
  const menu = trayMenuTemplate({
    open: () => calls.push('open'),
    copyIngestAddress: () => calls.push('copy'),
    quit: () => calls.push('quit'),
  });
  assert.deepEqual(
    menu.map((m) => ('label' in m ? m.label : m.type)),
    ['Open Log Appliance', 'Copy ingest address', 'separator', 'Quit'],
  );
  for (const m of menu) if ('click' in m) m.click();
  assert.deepEqual(calls, ['open', 'copy', 'quit']);
});

test('links: own origin stays in the window, web links go to the browser, the rest is refused', () => {
  const app = 'http://127.0.0.1:8080';
  assert.equal(linkPolicy('http://127.0.0.1:8080/search?q=x', app), 'in-app');
  assert.equal(linkPolicy('http://127.0.0.1:9090/metrics', app), 'external'); // other port = other origin
  assert.equal(linkPolicy('https://docs.example.com/', app), 'external');
  assert.equal(linkPolicy('mailto:ops@example.com', app), 'external');
  assert.equal(linkPolicy('file:///etc/passwd', app), 'deny');
  assert.equal(linkPolicy('javascript:alert(1)', app), 'deny');
  assert.equal(linkPolicy('not a url', app), 'deny');
});

test('permissions: the window grants its own pages clipboard writes and nothing else; other origins nothing', () => {
  const app = 'http://127.0.0.1:8080';
  let request: Parameters<PermissionSession['setPermissionRequestHandler']>[0] | undefined;
  let check: Parameters<PermissionSession['setPermissionCheckHandler']>[0] | undefined;
  let device: (() => boolean) | undefined;
  installPermissionPolicy(
    {
      setPermissionRequestHandler: (h) => (request = h),
      setPermissionCheckHandler: (h) => (check = h),
      setDevicePermissionHandler: (h) => (device = h),
    },
    () => app,
  );
  const asked = (permission: string, requestingUrl?: string) => {
    let granted: boolean | undefined;
    request!({}, permission, (g) => (granted = g), { requestingUrl });
    return granted;
  };
  assert.equal(asked('clipboard-sanitized-write', `${app}/#/search`), true);
  assert.equal(check!({}, 'clipboard-sanitized-write', app), true);
  for (const p of ['media', 'geolocation', 'notifications', 'display-capture', 'clipboard-read', 'openExternal', 'fullscreen', 'midiSysex', 'unknown']) {
    assert.equal(asked(p, `${app}/`), false, p);
    assert.equal(check!({}, p, app), false, p);
  }
  assert.equal(asked('clipboard-sanitized-write', 'https://evil.example/'), false);
  assert.equal(asked('clipboard-sanitized-write', 'http://127.0.0.1:9090/'), false, 'another port is another origin');
  assert.equal(asked('clipboard-sanitized-write', undefined), false);
  assert.equal(check!({}, 'clipboard-sanitized-write', 'https://evil.example'), false);
  assert.equal(device!(), false);
});

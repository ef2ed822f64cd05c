import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linkPolicy } from '../../main/src/links.ts';
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

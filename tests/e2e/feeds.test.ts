// Normalizers, feeds and ATT&CK coverage in a real browser (Debian's Chromium via playwright-core)
// against a real appliance: an administrator writes a normalizer for Windows events while its live
// preview shows what a pasted record becomes; points a feed at a git repository made here from the
// Feeds page, watches its first sync, syncs again after a new commit, reads the skipped rules with
// their reasons and filters them; and opens the ATT&CK coverage view, whose cells count the enabled
// alerts and whose drawer shows what covers a technique and the rule that would have. Screenshots go
// to test-artifacts/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestAppliance } from '../support/appliance.ts';
import { screenshot, signedInPage, startBrowserTest, stopBrowserTest } from '../support/browser.ts';

let a: TestAppliance;
let browser: Browser;
const work = mkdtempSync(path.join(tmpdir(), 'svc-e2e-feed-'));
const repo = path.join(work, 'rules-repo');
const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: repo });
const write = (rel: string, text: string) => {
  mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
  writeFileSync(path.join(repo, rel), text);
};
const rule = (id: string, title: string, tag: string, level: string, detection: string) =>
  `title: ${title}\nid: ${id}\nstatus: test\ntags:\n    - ${tag}\nlogsource:\n    product: windows\n    category: process_creation\ndetection:\n${detection}\nlevel: ${level}\n`;

before(async () => {
  mkdirSync(repo, { recursive: true });
  git('init', '-q');
  write('windows/powershell.yml', rule('a1a1a1a1-0000-4000-8000-000000000001', 'Encoded PowerShell', 'attack.t1059.001', 'high', "    selection:\n        CommandLine|contains: ' -enc '\n    condition: selection"));
  write('windows/whoami.yml', rule('a1a1a1a1-0000-4000-8000-000000000002', 'Whoami', 'attack.t1033', 'medium', "    selection:\n        Image|endswith: '\\whoami.exe'\n    condition: selection"));
  write('windows/noisy.yml', rule('a1a1a1a1-0000-4000-8000-000000000003', 'Noisy discovery', 'attack.t1087', 'low', "    selection:\n        Image|endswith: '\\net.exe'\n    condition: selection"));
  write('windows/broken.yml', 'title: [not yaml\n');
  git('add', '.');
  git('commit', '-q', '-m', 'rules');
  ({ a, browser } = await startBrowserTest());
});
after(async () => {
  await stopBrowserTest(a, browser);
  rmSync(work, { recursive: true, force: true });
});

const shot = (page: Page, name: string) => screenshot(page, name, { fullPage: true });
const tableRows = (page: Page, table: string, text?: string) => {
  const all = page.getByRole('table', { name: table, exact: true }).locator('tbody > tr');
  return text === undefined ? all : all.filter({ has: page.locator('td:first-child', { hasText: text }) });
};
/** Waits until the preview shows the stored field `field` with this value (it follows edits a moment later). */
async function previewShows(page: Page, field: string, value: string): Promise<void> {
  const row = page
    .getByRole('table', { name: 'Normalized fields' })
    .locator('tbody > tr')
    .filter({ has: page.locator('td:first-child', { hasText: new RegExp(`^${field.replace(/[.]/g, '\\.')}$`) }) })
    .filter({ has: page.locator('td:nth-child(2)', { hasText: value }) });
  await row.waitFor();
}

test('normalizers: the editor previews a pasted record live, and the saved one is listed', async () => {
  const { page, pageErrors } = await signedInPage(browser, `${a.url}/#/admin/normalizers`);
  await page.getByRole('heading', { name: 'Normalizers' }).first().waitFor();
  await tableRows(page, 'Normalizers', 'Default').waitFor();
  await page.getByRole('button', { name: 'New normalizer' }).click();
  const form = page.getByRole('form', { name: 'New normalizer' });
  await form.getByLabel('Name', { exact: true }).fill('Windows events (evtx_dump)');
  const sample = JSON.stringify({ Event: { System: { EventID: 1, TimeCreated: { '#attributes': { SystemTime: '2024-05-01T10:00:00Z' } } }, EventData: { Image: 'C:\\Windows\\cmd.exe' } } });
  await form.getByLabel('Sample record').fill(sample);
  // Before any rule: the flattened names as they arrive.
  await previewShows(page, 'Event.EventData.Image', 'C:\\Windows\\cmd.exe');
  await form.getByLabel('Add a transform').selectOption('flatten_leaf');
  await previewShows(page, 'Image', 'C:\\Windows\\cmd.exe'); // the preview follows the transform
  await form.getByRole('button', { name: 'Add value mapping' }).click();
  await form.getByLabel('Value mapping 1: from field').fill('EventID');
  await form.getByLabel('Value mapping 1: to field').fill('sigma_category');
  await form.getByLabel('Value mapping 1: value=result, one per line').fill('1=process_creation');
  await previewShows(page, 'sigma_category', 'process_creation');
  await form.getByLabel('Timestamp fields').fill('SystemTime');
  await page.getByTestId('preview-time').filter({ hasText: 'from SystemTime' }).waitFor();
  assert.match(await page.getByTestId('preview-time').innerText(), /2024-05-01T10:00:00.000Z from SystemTime/);
  await shot(page, 'normalizer-editor.png');
  await form.getByRole('button', { name: 'Create normalizer' }).click();
  await tableRows(page, 'Normalizers', 'Windows events (evtx_dump)').waitFor();
  const saved = a.context.normalizers.byName('Windows events (evtx_dump)')!;
  assert.deepEqual(saved.transforms, ['flatten_leaf']);
  assert.deepEqual(saved.value_mappings, [{ from_field: 'EventID', to_field: 'sigma_category', map: { '1': 'process_creation' } }]);
  assert.deepEqual(saved.timestamp_fields, ['SystemTime']);
  assert.deepEqual(pageErrors, []);
  await page.close();
});

test('feeds: a feed made on the page syncs, shows its counts, syncs again, lists skipped rules with reasons; coverage', async () => {
  const { page, pageErrors } = await signedInPage(browser, `${a.url}/#/alerts/feeds`);
  await page.getByRole('heading', { name: /Feeds of default/ }).waitFor();
  await page.getByRole('button', { name: 'New feed' }).click();
  const form = page.getByRole('form', { name: 'New feed' });
  await form.getByLabel('Name', { exact: true }).fill('team rules');
  await form.getByLabel('Repository').fill(repo);
  await form.getByLabel('Minimum severity').selectOption('medium');
  await form.getByRole('button', { name: 'Create feed' }).click();
  const row = tableRows(page, 'Feeds', 'team rules');
  await row.getByTestId('sync-state').filter({ hasText: '2 imported, 2 skipped' }).waitFor();
  await shot(page, 'feeds.png');

  // A new commit, then "Sync now".
  write('windows/rundll.yml', rule('a1a1a1a1-0000-4000-8000-000000000004', 'Rundll32 no args', 'attack.t1218.011', 'high', "    selection:\n        Image|endswith: '\\rundll32.exe'\n    condition: selection"));
  git('add', '.');
  git('commit', '-q', '-m', 'one more');
  await row.getByRole('button', { name: 'Sync team rules now' }).click();
  await page.getByRole('status').filter({ hasText: /synced in .*: 3 imported \(1 new, 0 updated, 0 removed\), 2 skipped/ }).waitFor();

  // The skipped rules, with their reasons, filtered.
  await row.getByRole('link', { name: 'Skipped rules of team rules' }).click();
  const skipped = page.getByRole('table', { name: 'Skipped rules' });
  await skipped.locator('tbody > tr').nth(1).waitFor();
  const text = await skipped.innerText();
  assert.match(text, /Noisy discovery[\s\S]*below the feed's minimum severity[\s\S]*level low is below the feed's minimum severity medium/);
  assert.match(text, /broken\.yml[\s\S]*not valid YAML/);
  await page.getByLabel('Filter by reason').selectOption({ label: 'not valid YAML' });
  await page.getByRole('status').filter({ hasText: /^1 rule$/ }).waitFor();
  assert.doesNotMatch(await skipped.innerText(), /Noisy discovery/);
  await shot(page, 'feeds-skipped.png');

  // ATT&CK coverage: T1059 (PowerShell's parent) counts one enabled alert; T1087 has a rule not imported.
  await page.getByRole('link', { name: 'ATT&CK coverage' }).click();
  const matrix = page.getByRole('region', { name: 'ATT&CK matrix' });
  const t1059 = matrix.getByRole('button', { name: /^T1059 Command and Scripting Interpreter: 1 enabled alert$/ }).first();
  await t1059.waitFor();
  await t1059.click();
  const drawer = page.getByRole('complementary', { name: 'Coverage of T1059' });
  assert.match(await drawer.innerText(), /Encoded PowerShell[\s\S]*via T1059\.001/);
  await page.getByLabel('Show').selectOption('fixable');
  const t1087 = matrix.getByRole('button', { name: /^T1087 Account Discovery: 0 enabled alerts, 1 rule not imported$/ }).first();
  await t1087.click();
  assert.match(await page.getByRole('complementary', { name: 'Coverage of T1087' }).innerText(), /Noisy discovery[\s\S]*level low is below/);
  await shot(page, 'attack-coverage.png');
  assert.deepEqual(pageErrors, []);
  await page.close();
});

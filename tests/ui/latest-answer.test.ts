// Loads answering out of order (renderer/src/lib/latest-answer.ts, behind every admin list, the
// scope catalog, the feeds page and the search workspace): the newest load's answer is what shows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LatestAnswer } from '../../renderer/src/lib/latest-answer.ts';

/** A page's load: asks the "service" (a promise it resolves by hand) and shows what is current. */
function page() {
  const latest = new LatestAnswer();
  const shown: string[] = [];
  const load = async (answer: Promise<string>) => {
    const current = latest.begin();
    const text = await answer;
    if (current()) shown.push(text);
  };
  return { latest, shown, load };
}

function deferred() {
  let resolve!: (s: string) => void;
  const promise = new Promise<string>((r) => (resolve = r));
  return { promise, resolve };
}

test('an older load answering after a newer one is dropped', async () => {
  const p = page();
  const fractalA = deferred();
  const fractalB = deferred();
  const first = p.load(fractalA.promise); // the list of fractal A is asked for…
  const second = p.load(fractalB.promise); // …then the analyst switches to fractal B
  fractalB.resolve('B');
  await second;
  fractalA.resolve('A'); // A's slow answer arrives last
  await first;
  assert.deepEqual(p.shown, ['B']);
});

test('answers in order all show, and drop() stales whatever is pending', async () => {
  const p = page();
  await p.load(Promise.resolve('one'));
  await p.load(Promise.resolve('two'));
  const slow = deferred();
  const pending = p.load(slow.promise);
  p.latest.drop(); // the scope was cleared: nothing to show any more
  slow.resolve('three');
  await pending;
  assert.deepEqual(p.shown, ['one', 'two']);
});

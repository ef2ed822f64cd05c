// Chart drawing benchmark. Prints figures; asserts nothing.
//
//   npm run bench:charts [-- --runs 7]
//
// Opens the chart harness of tests/e2e/charts.test.ts in Debian's Chromium and draws its two large
// results, each `runs` times: a 500-link mesh (of 720 links) and a world map of 5,000 points. A run is
// timed in the page, from handing ChartView the response to the frame in which the drawing is there.
// Target printed next to the figures: each drawn within 4 s (the machine's load average is printed
// too: other work on a shared machine stretches these times).
import { rmSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { launchChromium, prepareBrowserTest } from '../../tests/support/browser.ts';
import { buildHarness, largeMesh, manyPlaces, openHarness } from '../../tests/e2e/fixtures/chart-harness/harness.ts';
import { median } from './support.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(args.runs);

/**
 * In the page: hands ChartView the response and resolves with the ms until the frame in which the
 * drawing (`selector`) is there. A string, so the bundler's helpers stay out of the page.
 */
const DRAW = `([response, selector]) => new Promise((resolve) => {
  const t0 = performance.now();
  window.renderChart(response, {});
  const look = () => (document.querySelector(selector) ? resolve(performance.now() - t0) : requestAnimationFrame(look));
  look();
})`;

prepareBrowserTest({ ui: false });
const outDir = await buildHarness();
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1040, height: 520 } });
  await openHarness(page, outDir);
  for (const [name, response, drawn] of [
    ['mesh, 500 links', largeMesh(), 'svg.graph[data-edges]'],
    ['world map, 5,000 points', manyPlaces(), 'svg.map[data-count]'],
  ] as const) {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      times.push((await page.evaluate(`(${DRAW})(${JSON.stringify([response, drawn])})`)) as number);
    }
    console.log(`${name.padEnd(24)} median ${median(times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms over ${RUNS} runs (target: within 4000 ms)`);
  }
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.cpus().length} cores`);
} finally {
  await browser.close();
  rmSync(outDir, { recursive: true, force: true });
}

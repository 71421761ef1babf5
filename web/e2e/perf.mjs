#!/usr/bin/env node
// Times the browser path on one large trace: from choosing the file to the report on the page,
// in headless Chromium, plus the longest gap between animation frames while it ran (how long
// the page was unresponsive at worst). Not a test: the figures go in the README.
//
//   node web/e2e/perf.mjs FILE [RUNS]      (after web/build.sh; serves dist/ itself)

import path from 'node:path';

import { dist, launch, serve, watchFrameGaps } from './harness.mjs';

const file = path.resolve(process.argv[2] ?? '');
const runs = Number(process.argv[3] ?? 3);

const server = await serve(dist);
const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const times = [];
const inPage = [];
for (let i = 0; i < runs; i += 1) {
  const page = await context.newPage();
  page.setDefaultTimeout(300_000);
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('#file', { state: 'attached' });
  await page.evaluate(() => {
    // The moment the page learns of the file: what a user's choice costs, minus the harness.
    document.addEventListener('change', () => performance.mark('loadproof:file-chosen'), true);
  });
  await watchFrameGaps(page, 'loadproofReport');
  const t0 = Date.now();
  await page.setInputFiles('#file', file);
  await page.waitForFunction(
    (name) => window.loadproofReport?.source === name || document.querySelector('#error'),
    path.basename(file),
    { polling: 10 },
  );
  const seconds = (Date.now() - t0) / 1000;
  const { gap, emitted } = await page.evaluate(() => ({
    gap: window.__maxGap,
    emitted: window.loadproofReport?.emitted,
  }));
  // The page's marks, and the worker's (absolute ms, put on the page's clock), in time order.
  const marks = await page.evaluate(() => {
    const own = performance.getEntriesByType('mark').filter((m) => m.name.startsWith('loadproof:')).map((m) => [m.name.slice(10), m.startTime]);
    const worker = (window.loadproofWorkerMarks ?? []).map(([n, t]) => [`worker:${n}`, t - performance.timeOrigin]);
    return [...own, ...worker].sort((a, b) => a[1] - b[1]);
  });
  const first = marks.find(([n]) => n === 'file-chosen')?.[1] ?? marks.find(([n]) => n === 'read-start')?.[1] ?? 0;
  const stages = marks.filter(([, t]) => t >= first).map(([n, t]) => `${n} +${(t - first).toFixed(0)}ms`);
  const published = marks.filter(([n]) => n === 'report-published').map(([, t]) => t).pop();
  if (published !== undefined) inPage.push((published - first) / 1000);
  times.push(seconds);
  console.log(`  stages: ${stages.join(', ')}`);
  console.log(`run ${i + 1}: ${seconds.toFixed(2)} s to the report, ${emitted} emitted, longest frame gap ${gap.toFixed(0)} ms`);
  await page.close();
}
console.log(
  `browser: best ${Math.min(...inPage).toFixed(2)} s from the page's change event to the report, ` +
    `${Math.min(...times).toFixed(2)} s including the harness's upload, over ${runs} runs (${path.basename(file)})`,
);
await browser.close();
server.close();

#!/usr/bin/env node
// Times the browser path on one large trace: from choosing the file to the report on the page,
// in headless Chromium, plus the longest gap between animation frames while it ran (how long
// the page was unresponsive at worst). Not a test: the figures go in the README.
//
//   [SETTLE_MS=2000] node web/e2e/perf.mjs FILE [RUNS] [--one-worker]   (after web/build.sh; serves dist/ itself)
//
// Files from 8 MiB are parsed in two halves on two workers where the machine has 2 cores or
// more; these runs ask for the halves on any machine (window.loadproofHalves = true), and
// --one-worker also times each run with one worker (window.loadproofHalves = false),
// alternated with the two, so both are measured on one machine in one run.

import path from 'node:path';

import { dist, launch, serve, watchFrameGaps } from './harness.mjs';

const settleMs = Number(process.env.SETTLE_MS ?? 2000);

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const file = path.resolve(args[0] ?? '');
const runs = Number(args[1] ?? 3);
const variants = process.argv.includes('--one-worker') ? ['two workers', 'one worker'] : ['two workers'];

const server = await serve(dist);
const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const best = Object.fromEntries(variants.map((v) => [v, { inPage: [], times: [] }]));
for (let i = 0; i < runs; i += 1) {
  for (const variant of variants) {
    const page = await context.newPage();
    page.setDefaultTimeout(300_000);
    await page.addInitScript((halves) => { window.loadproofHalves = halves; }, variant === 'two workers');
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForSelector('#file', { state: 'attached' });
    // A person picks a file a while after the page is ready; by then the hot paths are warm
    // (web/src/warm.rs). SETTLE_MS=0 picks it at once: no warm-up, the first large call cold.
    await page.waitForTimeout(settleMs);
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
    // The page's marks, the parsing worker's and the second half's (absolute ms, put on the
    // page's clock), in time order.
    const marks = await page.evaluate(() => {
      const own = performance.getEntriesByType('mark').filter((m) => m.name.startsWith('loadproof:')).map((m) => [m.name.slice(10), m.startTime]);
      const worker = (window.loadproofWorkerMarks ?? []).map(([n, t]) => [`worker:${n}`, t - performance.timeOrigin]);
      const half = (window.loadproofHalfMarks ?? []).map(([n, t]) => [`half:${n}`, t - performance.timeOrigin]);
      return [...own, ...worker, ...half].sort((a, b) => a[1] - b[1]);
    });
    const first = marks.find(([n]) => n === 'file-chosen')?.[1] ?? marks.find(([n]) => n === 'read-start')?.[1] ?? 0;
    const stages = marks.filter(([, t]) => t >= first).map(([n, t]) => `${n} +${(t - first).toFixed(0)}ms`);
    const published = marks.filter(([n]) => n === 'report-published').map(([, t]) => t).pop();
    if (published !== undefined) best[variant].inPage.push((published - first) / 1000);
    best[variant].times.push(seconds);
    console.log(`  stages: ${stages.join(', ')}`);
    console.log(`run ${i + 1} (${variant}): ${seconds.toFixed(2)} s to the report, ${emitted} emitted, longest frame gap ${gap.toFixed(0)} ms`);
    await page.close();
  }
}
for (const variant of variants) {
  const { inPage, times } = best[variant];
  console.log(
    `browser (${variant}): best ${Math.min(...inPage).toFixed(2)} s from the page's change event to the report, ` +
      `${Math.min(...times).toFixed(2)} s including the harness's upload, over ${runs} runs (${path.basename(file)})`,
  );
}
if (variants.length === 2) {
  const [two, one] = variants.map((v) => Math.min(...best[v].inPage));
  console.log(`one worker / two workers: ${(one / two).toFixed(2)}x`);
}
await browser.close();
server.close();

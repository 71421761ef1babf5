#!/usr/bin/env node
// Times the Receipt view on one large receipt in headless Chromium: from choosing the file to
// the verdict on the page (sent ahead of the report) and to the whole report, the worker's own
// share (reading the file into the worker; parse + digests + audit + series in wasm), and the
// longest gap between animation frames meanwhile (how long the page was unresponsive at
// worst). Not a test: the figures go in the README.
//
//   [SETTLE_MS=2000] node web/e2e/perf_receipt.mjs RECEIPT [RUNS]   (after web/build.sh; serves dist/ itself)
//   e.g. bench/out/audit/receipt_sim_10000_600.json from bash bench/audit.sh

import path from 'node:path';

import { dist, launch, serve, watchFrameGaps } from './harness.mjs';

const settleMs = Number(process.env.SETTLE_MS ?? 2000);

const file = path.resolve(process.argv[2] ?? '');
const runs = Number(process.argv[3] ?? 3);
const input = process.env.RECEIPT_INPUT ?? '#receipt-file';

const server = await serve(dist);
const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const rows = [];
for (let i = 0; i < runs; i += 1) {
  const page = await context.newPage();
  page.setDefaultTimeout(300_000);
  await page.goto(`http://127.0.0.1:${server.address().port}/#/receipt`);
  await page.waitForSelector(input, { state: 'attached' });
  // A person picks a file a while after the page is ready; by then the hot paths are warm
  // (web/src/warm.rs). SETTLE_MS=0 picks it at once: no warm-up, the first large call cold.
  await page.waitForTimeout(settleMs);
  await page.evaluate(() => {
    document.addEventListener('change', () => { window.__chosen = performance.now(); }, true);
  });
  // Frames are watched for 2 s after the report too: its charts and tables render then.
  await watchFrameGaps(page, 'loadproofAudit', 2000);
  await page.setInputFiles(input, file);
  await page.waitForFunction(() => window.loadproofAudit != null);
  const total = await page.evaluate(() => performance.now() - window.__chosen);
  await page.waitForFunction(() => window.__gapsDone);
  const r = await page.evaluate((t) => ({
    total: t,
    maxGap: window.__maxGap,
    longFrames: window.__longFrames.map(([at, ms]) => [Math.round(at - window.__chosen), ms]),
    worker: window.loadproofWorkerTiming ?? null,
    marks: Object.fromEntries(
      performance.getEntriesByType('mark')
        .filter((m) => m.name.startsWith('loadproof:'))
        .map((m) => [m.name.slice(10), Math.round(m.startTime - window.__chosen)]),
    ),
  }), total);
  rows.push(r);
  const w = r.worker ? `worker read ${r.worker.read_ms.toFixed(0)} ms, build ${r.worker.build_ms.toFixed(0)} ms` : 'no worker timing (ran on the page thread)';
  r.verdict = r.marks['verdict-published'] ?? null;
  const early = r.verdict == null ? 'no early verdict' : `verdict on the page at ${r.verdict} ms`;
  console.log(`run ${i + 1}: ${early}, the whole report at ${r.total.toFixed(0)} ms from change; ${w}; longest frame ${r.maxGap.toFixed(0)} ms (to 2 s after the report)`);
  console.log(`  marks after change, ms: ${JSON.stringify(r.marks)}`);
  if (r.longFrames.length) console.log(`  frames over 50 ms [starting at, ms]: ${JSON.stringify(r.longFrames)}`);
  if (r.worker?.stage_ms) console.log(`  worker stages [stage, ms into the build]: ${JSON.stringify(r.worker.stage_ms)} (0 read, 1-2 digests and audit in one pass, the verdict posted, 3 the model, then its JSON)`);
  await page.close();
}
const best = rows.reduce((a, b) => (a.total <= b.total ? a : b));
const verdicts = rows.map((r) => r.verdict).filter((v) => v != null);
const firstVerdict = verdicts.length ? `verdict ${Math.min(...verdicts)} ms, ` : '';
console.log(`best: ${firstVerdict}whole report ${best.total.toFixed(0)} ms (${path.basename(file)}); longest frame ${Math.max(...rows.map((r) => r.maxGap)).toFixed(0)} ms over all runs`);
await browser.close();
server.close();

#!/usr/bin/env node
// Browser test of the quick start's own site: every view works from what command 1 produced.
//
// Why: the README promises that after `bash tools/quickstart.sh` the page shows the trace view,
// the receipt the job fired (audited in the page), the comparison of its two arms and the
// playbook — offline, with every number equal to the CLI's. `tools/test.sh` runs the quick
// start with SERVE=0, then this script serves `target/quickstart/site`, blocks every request
// to any other host, visits each view, compares the page with the CLI, and saves the README's
// screenshots (docs/*-view.png) and copies under target/screenshots/.
//
//   SERVE=0 bash tools/quickstart.sh && node web/e2e/site.mjs
// Environment: LOADPROOF_BIN (default target/release/loadproof), QUICKSTART_OUT (default
// target/quickstart), LOADPROOF_SHARED (default ../shared), CHROMIUM (default /usr/bin/chromium).
// Prints one line per check, then `N passed, M failed`; exits 1 if any failed.

import { deepStrictEqual } from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  TIMEOUT_MS, bail, bailOnCrash, check, cleanUp, cliJson, collectErrors, expectEqual, finish, fromRoot, openSite, shared,
  shots,
} from './harness.mjs';

bailOnCrash();

const out = fromRoot(process.env.QUICKSTART_OUT ?? 'target/quickstart');
const site = path.join(out, 'site');
const docs = fromRoot('docs');
const realTrace = path.join(shared, 'traces/burstgpt/BurstGPT_1.first400.csv');

for (const f of ['index.html', 'playbook.json', 'receipts.json', 'site.sha256']) {
  if (!fs.existsSync(path.join(site, f))) bail(`${site}/${f} is missing: run SERVE=0 bash tools/quickstart.sh first`);
}
const baseline = path.join(out, 'baseline.receipt');
const treatment = path.join(out, 'treatment.receipt');

const { server, base, browser, context, blocked } = await openSite(site, {
  allowed: (url, host) => url.host === host || url.protocol === 'data:' || url.protocol === 'blob:',
});
fs.mkdirSync(shots, { recursive: true });
fs.mkdirSync(docs, { recursive: true });
const pageErrors = [];

async function open(hash) {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  collectErrors(page, pageErrors, { prefix: `${hash}: ` });
  await page.goto(base + hash);
  return page;
}

/** A screenshot of one part of a view (`selector`'s element) for the README, and a copy under target/. */
async function shootPart(page, selector, name) {
  const el = await page.waitForSelector(selector);
  await el.scrollIntoViewIfNeeded();
  await page.waitForTimeout(300);
  await el.screenshot({ path: path.join(shots, `site-${name}.png`) });
  fs.copyFileSync(path.join(shots, `site-${name}.png`), path.join(docs, `${name}.png`));
}

/** A screenshot of the view at 1280×800 for the README, and a copy under target/. */
async function shoot(page, name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = `${name}-view.png`;
  await page.screenshot({ path: path.join(shots, `site-${file}`), fullPage: false });
  fs.copyFileSync(path.join(shots, `site-${file}`), path.join(docs, file));
}

try {
  await check('trace view: the real BurstGPT_1 prefix (or the sample) equals `trace inspect --json`', async () => {
    const page = await open('#/trace');
    if (fs.existsSync(realTrace)) {
      const expected = cliJson(['trace', 'inspect', realTrace, '--json']);
      await page.setInputFiles('#file', realTrace);
      await page.waitForFunction((name) => window.loadproofReport?.source === name, path.basename(realTrace));
      deepStrictEqual(await page.evaluate(() => window.loadproofReport), expected);
    } else {
      await page.click('#sample');
      await page.waitForFunction(() => window.loadproofReport?.source === 'synthetic-burstgpt.csv');
    }
    await shoot(page, 'trace');
    // Mooncake's 3 s recording grid: same-timestamp arrivals apart, gaps binned on the grid.
    const mooncake = path.join(shared, 'traces/mooncake/conversation_trace.jsonl');
    if (fs.existsSync(mooncake)) {
      await page.setInputFiles('#file', mooncake);
      await page.waitForFunction((name) => window.loadproofReport?.source === name, path.basename(mooncake));
      await shootPart(page, 'section[aria-labelledby="gaps-heading"]', 'trace-gaps-mooncake');
    }
    await page.close();
  });

  await check('receipt view: the bundled baseline is audited in the page exactly as `receipt audit --json`', async () => {
    const expected = cliJson(['receipt', 'audit', baseline, '--json']);
    const page = await open('#/receipt');
    await page.waitForFunction(() => window.loadproofAudit != null);
    deepStrictEqual(await page.evaluate(() => window.loadproofAudit), expected);
    const banner = await page.innerText('#receipt-banner');
    const word = expected.qualified ? /\bQUALIFIED\b/ : /UNQUALIFIED/;
        if (!word.test(banner)) throw new Error(`banner reads ${JSON.stringify(banner)}`);
    // The quick start fires over https with a private CA and scrapes a (simulated) DCGM exporter:
    // the page says how certificates were checked and draws the GPU telemetry.
    const tls = await page.innerText('#protocol-tls');
    if (!/private CA/.test(tls)) throw new Error(`protocol TLS reads ${JSON.stringify(tls)}`);
    if (!expected.gpu) throw new Error('the quick start receipt has no GPU telemetry');
    await page.waitForSelector('#receipt-gpu canvas');
    const gpuRows = await page.$$eval('#gpu-table tbody tr', (rows) => rows.length);
    if (gpuRows !== expected.gpu.exporters.length) throw new Error(`GPU table has ${gpuRows} rows`);
    await shoot(page, 'receipt');
    await shootPart(page, '#receipt-over-time', 'receipt-over-time');
    await page.close();
  });

  await check('receipt view in the dark colour scheme: the page and its charts are dark', async () => {
    const dark = await browser.newContext({ colorScheme: 'dark', viewport: { width: 1280, height: 800 } });
    await dark.route('**/*', (route) => (new URL(route.request().url()).host === new URL(base).host ? route.continue() : route.abort()));
    const page = await dark.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    collectErrors(page, pageErrors, { prefix: 'dark: ' });
    await page.goto(base + '#/receipt');
    await page.waitForFunction(() => window.loadproofAudit != null);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const [r, g, b] = bg.match(/\d+/g).map(Number);
    if (r + g + b > 200) throw new Error(`body background in dark mode is ${bg}`);
    await shootPart(page, '#receipt-over-time', 'receipt-over-time-dark');
    await dark.close();
  });

  const aiperf = path.join(out, 'aiperf.receipt');
  if (fs.existsSync(aiperf)) {
    await check('receipt view: the bundled AIPerf arm (when the peers are installed) equals the CLI and names the tool', async () => {
      const expected = cliJson(['receipt', 'audit', aiperf, '--json']);
      const page = await open('#/receipt');
      await page.waitForFunction(() => window.loadproofAudit != null);
      await page.click('#bundled-receipts button[data-name="aiperf.receipt"]');
      await page.waitForFunction(() => /AIPerf/.test(window.loadproofAudit?.standings?.implementation?.reason ?? ''));
      deepStrictEqual(await page.evaluate(() => window.loadproofAudit), expected);
      const client = await page.innerText('#protocol-client');
      if (!/AIPerf /.test(client)) throw new Error(`#protocol-client reads ${JSON.stringify(client)}`);
      await page.close();
    });
  }

  const ragpulse = path.join(out, 'ragpulse.receipt');
  if (fs.existsSync(ragpulse)) {
    await check('receipt view: the bundled RAGPulse run (prompts built from blocks.jsonl) equals the CLI and lists the blocks it embeds', async () => {
      const expected = cliJson(['receipt', 'audit', ragpulse, '--json']);
      expectEqual(expected.inconsistencies.length, 0, 'the CLI finds nothing inconsistent');
      const page = await open('#/receipt');
      await page.waitForFunction(() => window.loadproofAudit != null);
      await page.click('#bundled-receipts button[data-name="ragpulse.receipt"]');
      await page.waitForFunction(() => window.loadproofAudit?.ledger?.completed === 40);
      deepStrictEqual(await page.evaluate(() => window.loadproofAudit), expected);
      const text = await page.innerText('body');
      if (!text.includes('plan/blocks.jsonl')) throw new Error('the page does not list plan/blocks.jsonl');
      await page.close();
    });
  }

  await check('compare view: the two bundled arms compare exactly as `receipt compare --json`', async () => {
    // Run beside the files: the comparison names each source as given, and the page knows
    // only the file name.
    const expected = cliJson(
      ['receipt', 'compare', path.basename(baseline), path.basename(treatment), '--json'],
      { cwd: out },
    );
    const page = await open('#/compare');
    await page.waitForFunction(() => window.loadproofComparison != null);
    deepStrictEqual(await page.evaluate(() => window.loadproofComparison), expected);
    await page.waitForSelector('#compare-verdict');
    await shoot(page, 'compare');
    await shootPart(page, '.compare-overlay[data-metric="ttft"]', 'compare-cdfs');
    await page.close();
  });

  await check('playbook view: every example row is listed', async () => {
    const book = JSON.parse(fs.readFileSync(path.join(site, 'playbook.json'), 'utf8'));
    const page = await open('#/playbook');
    await page.waitForFunction(
      (n) => document.querySelectorAll('#playbook-rows tbody tr').length >= n,
      book.rows.length,
    );
    await shoot(page, 'playbook');
    await page.close();
  });

  await check("playbook view: the quick start's measured row applies to its baseline receipt as `playbook match --receipt --json` says; \"Use as query\" charts it", async () => {
    const bookPath = path.join(site, 'playbook.json');
    const book = JSON.parse(fs.readFileSync(bookPath, 'utf8'));
    const measured = book.rows.filter((r) => r.evidence === 'measured');
    expectEqual(measured.length, 1, 'measured rows in the quick start playbook');
    const row = measured[0];
    const id = row.identity;
    const query = [
      '--model', id.model, '--model-revision', id.model_revision, '--gpu-sku', id.gpu_sku,
      '--engine', id.engine, '--engine-version', id.engine_version,
      '--concurrency', id.concurrency === 'uncapped' ? 'uncapped' : String(id.concurrency.max),
      ...Object.entries(id.knobs).flatMap(([k, v]) => ['--knob', `${k}=${v}`]),
    ];
    // Beside the files: the report names the receipt as given, and the page knows its name.
    const expected = cliJson(['playbook', 'match', bookPath, '--receipt', path.basename(baseline), ...query, '--json'], { cwd: out });
    deepStrictEqual(expected.selected.map((s) => s.row.id), [row.id], 'the CLI selects the measured row');
    expectEqual(expected.selected[0].exact, true, 'at distance 0');
    expectEqual(expected.rejected.length, book.rows.length - 1, 'every other row refused');
    for (const r of expected.rejected) {
      if (!String(JSON.stringify(r.reason)).includes('illustrative')) throw new Error(`${r.row.id} refused for ${JSON.stringify(r.reason)}`);
    }
    const page = await open('#/playbook');
    await page.waitForFunction((n) => document.querySelectorAll('#playbook-rows tbody tr[data-row-id]').length >= n, book.rows.length);
    const badge = await page.innerText(`#playbook-rows tr[data-row-id="${row.id}"] .badge`);
    expectEqual(badge, 'MEASURED', 'the row\'s badge');
    // The form starts from the first (illustrative) row: nothing applies until the measured row is the query.
    await page.setInputFiles('#live-file', baseline);
    await page.waitForFunction(() => window.loadproofMatch != null || document.querySelector('#match-error, #live-error'));
    const error = await page.$('#match-error, #live-error');
    if (error) throw new Error(`page shows an error: ${await error.innerText()}`);
    await page.click(`button.use-row[data-row-id="${row.id}"]`);
    await page.waitForFunction((rid) => window.loadproofMatch?.selected?.[0]?.row?.id === rid, row.id);
    deepStrictEqual(await page.evaluate(() => window.loadproofMatch), expected);
    await page.waitForSelector(`#distance-panel[data-row-id="${row.id}"]`);
    expectEqual(await page.innerText('#match-summary'), `1 of ${book.rows.length} row(s) apply`, '#match-summary');
    await page.close();
  });

  await check('no request left 127.0.0.1 and the pages logged no error', async () => {
    if (blocked.length) throw new Error(`requests to other hosts: ${blocked.join(', ')}`);
    if (pageErrors.length) throw new Error(pageErrors.join('\n'));
  });
} finally {
  await cleanUp({ browser, server });
}
finish();

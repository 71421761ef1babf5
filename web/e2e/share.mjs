#!/usr/bin/env node
// Browser test of what a reviewer hands a colleague: the audit JSON saved from the page, the
// page printed as a report, links that open a bundled receipt or a compare pair, and the
// single-file site (`playbook publish --single-file`) opened from disk with no network.
//
// Why (issue 17, point 5): the download must be the bytes `receipt audit --json` writes; the
// printout must carry no controls; a link must open exactly what it names, and a hostile name
// in it must open (and fetch) nothing; the one file must show every view with no request at
// all, its numbers equal to the CLI's.
//
// Run from the repo root after `web/build.sh` and `cargo build --release -p loadproof_cli`:
//   node web/e2e/share.mjs
// Environment: LOADPROOF_BIN, LOADPROOF_DIST, CHROMIUM (see harness.mjs).
// Prints one line per check, then `N passed, M failed`; exits 1 if any failed.

import { deepStrictEqual } from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  TIMEOUT_MS, bail, bailOnCrash, blockRequests, check, cleanUp, cliJson, collectErrors, dist, finish, fromRoot,
  launch, mustRun, noErrors, openSite, shots,
} from './harness.mjs';

bailOnCrash();

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadproof-share-'));
const fixture = fromRoot('core/tests/data/receipt/native_sim.json');
const examples = fromRoot('fixtures/playbook/examples.json');
const names = ['baseline.json', 'treatment.json', 'odd name #1.json'];
const receipts = names.map((n) => path.join(tmp, n));
for (const r of receipts) fs.copyFileSync(fixture, r);
const site = path.join(tmp, 'site');
const published = mustRun([
  'playbook', 'publish', examples, '--out', site, '--app', dist, ...receipts.flatMap((r) => ['--receipt', r]),
]);
if (!fs.existsSync(path.join(site, 'sw.js'))) bail(`no sw.js in the published site: ${published.stdout}`);
const expectedAudit = mustRun(['receipt', 'audit', receipts[0], '--json']).stdout;
const expectedCompare = cliJson(['receipt', 'compare', names[0], names[1], '--json'], { cwd: tmp });

const { server, base, browser, context, blocked } = await openSite(site, {
  allowed: (url, host) => url.host === host || url.protocol === 'data:' || url.protocol === 'blob:',
});
fs.mkdirSync(shots, { recursive: true });
const errors = [];

async function open(hash, ctx = context) {
  const page = await ctx.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  collectErrors(page, errors, { prefix: `${hash}: ` });
  await page.goto(base + hash);
  return page;
}
const hashOf = (page) => page.evaluate(() => location.hash);

try {
  await check('Download audit JSON saves exactly the bytes `receipt audit --json` writes', async () => {
    const page = await open('#/receipt');
    await page.waitForSelector('#receipt-download-audit');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#receipt-download-audit')]);
    if (download.suggestedFilename() !== 'baseline.audit.json') {
      throw new Error(`saved as ${download.suggestedFilename()}`);
    }
    const saved = path.join(tmp, 'saved.audit.json');
    await download.saveAs(saved);
    if (fs.readFileSync(saved, 'utf8') !== expectedAudit) throw new Error('the saved file differs from the CLI output');
    await page.close();
  });

  await check('the first bundled receipt is named in the address bar; choosing another names it', async () => {
    const page = await open('#/receipt');
    await page.waitForFunction(() => location.hash === '#/receipt/baseline.json');
    await page.click('#bundled-receipts button[data-name="odd name #1.json"]');
    await page.waitForFunction(() => location.hash === '#/receipt/odd%20name%20%231.json');
    await page.waitForFunction(() => document.querySelector('#bundled-receipts button[aria-pressed="true"]')?.dataset.name === 'odd name #1.json');
    // A local file has no link.
    await page.setInputFiles('#receipt-file', fixture);
    await page.waitForFunction(() => location.hash === '#/receipt');
    await page.close();
  });

  await check('#/receipt/NAME opens that bundled receipt (a name with a space and a #)', async () => {
    const page = await open('#/receipt/odd%20name%20%231.json');
    await page.waitForFunction(() => window.loadproofAuditSource === 'odd name #1.json');
    if ((await hashOf(page)) !== '#/receipt/odd%20name%20%231.json') throw new Error(await hashOf(page));
    await page.close();
  });

  await check('#/compare/BASELINE/TREATMENT opens that pair, in that order, and equals `receipt compare --json`', async () => {
    const page = await open('#/compare/baseline.json/treatment.json');
    await page.waitForFunction(() => window.loadproofComparison != null);
    deepStrictEqual(await page.evaluate(() => window.loadproofComparison), expectedCompare);
    const chosen = await page.$$eval('select', (s) => s.map((e) => e.value));
    deepStrictEqual(chosen, ['0', '1']);
    await page.close();
    const swapped = await open('#/compare/treatment.json/baseline.json');
    await swapped.waitForFunction(() => window.loadproofComparison != null);
    deepStrictEqual(await swapped.$$eval('select', (s) => s.map((e) => e.value)), ['1', '0']);
    await swapped.close();
    const plain = await open('#/compare');
    await plain.waitForFunction(() => location.hash === '#/compare/baseline.json/treatment.json');
    await plain.close();
  });

  await check('a hostile or unknown name in the link opens nothing, fetches nothing and injects nothing', async () => {
    const before = new Set();
    const hostile = ['<img src=x onerror="window.pwned=1">', '../../etc/passwd', 'https://example.com/r.json', 'nope.json'];
    for (const name of hostile) {
      const requests = [];
      const page = await context.newPage();
      page.setDefaultTimeout(TIMEOUT_MS);
      page.on('request', (r) => requests.push(r.url()));
      await page.goto(`${base}#/receipt/${encodeURIComponent(name)}`);
      await page.waitForFunction(() => /bundles no receipt of that name/.test(document.querySelector('#receipt-error')?.textContent ?? ''));
      const text = await page.innerText('#receipt-error');
      if (!text.includes(JSON.stringify(name))) throw new Error(`the message does not name ${name}: ${text}`);
      if (await page.evaluate(() => window.pwned === 1 || document.querySelector('#receipt-error img') !== null)) {
        throw new Error('markup from the link was injected');
      }
      const off = requests.filter((u) => !u.startsWith(base) && !u.startsWith('blob:') && !u.startsWith('data:'));
      const outside = requests.filter((u) => u.startsWith(base) && !/\/(receipts\/(baseline|treatment|odd%20name%20%231)\.json|receipts\.json|playbook\.json|sw\.js|[^/]*\.(js|wasm|css)|index\.html)?$/.test(u.split('#')[0]));
      if (off.length || outside.length) throw new Error(`fetched ${[...off, ...outside].join(', ')}`);
      if (await page.evaluate(() => window.loadproofAudit != null)) throw new Error('a receipt was opened');
      await page.close();
      before.add(name);
    }
    const pair = await open(`#/compare/baseline.json/${encodeURIComponent('<b>x</b>')}`);
    await pair.waitForFunction(() => /bundles no receipt of that name/.test(document.querySelector('#compare-site-error')?.textContent ?? ''));
    if (await pair.evaluate(() => document.querySelector('#compare-site-error b') !== null)) throw new Error('markup injected');
    await pair.close();
  });

  await check('printed, the receipt view is one column with no navigation, controls or drop zones', async () => {
    const page = await open('#/receipt/baseline.json');
    await page.waitForSelector('#receipt-download-audit');
    await page.emulateMedia({ media: 'print' });
    const shown = await page.evaluate(() => {
      const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
      return ['nav', 'button', 'input', 'select', '.dropzone', '.policy', '#receipt-toc', 'progress']
        .flatMap((sel) => [...document.querySelectorAll(sel)].filter(visible).map(() => sel));
    });
    if (shown.length) throw new Error(`still shown in print: ${[...new Set(shown)].join(', ')}`);
    const columns = await page.evaluate(() => getComputedStyle(document.querySelector('main')).display);
    if (columns !== 'block') throw new Error(`main is display:${columns} in print`);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    if (bg !== 'rgb(255, 255, 255)') throw new Error(`print background ${bg}`);
    const pdf = await page.pdf({ format: 'A4' });
    fs.writeFileSync(path.join(shots, 'share-receipt-print.pdf'), pdf);
    if (pdf.length < 1000) throw new Error('empty PDF');
    await page.close();
  });

  await check('printed from a dark screen, the charts are drawn on white paper, and dark again after', async () => {
    const page = await open('#/receipt/baseline.json');
    await page.waitForSelector('#receipt-download-audit');
    // The charts are drawn after the banner's buttons: wait for the first one.
    await page.waitForSelector('main canvas');
    await page.emulateMedia({ colorScheme: 'dark' });
    // The paper's colour: a corner pixel of the first chart's canvas (none while it is redrawn).
    const paper = () => page.evaluate(() => {
      const c = document.querySelector('main canvas');
      if (c == null) return 'no canvas';
      const [r, g, b] = c.getContext('2d').getImageData(1, 1, 1, 1).data;
      return `${r},${g},${b}`;
    });
    const until = async (want, what) => {
      for (let i = 0; i < 100; i += 1) {
        if ((await paper()) === want) return;
        await page.waitForTimeout(20);
      }
      throw new Error(`${what}: paper ${await paper()}, not ${want}`);
    };
    await until('22,27,34', 'on the dark screen');
    await page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
    await until('255,255,255', 'in print');
    await page.evaluate(() => window.dispatchEvent(new Event('afterprint')));
    await until('22,27,34', 'after printing');
    await page.close();
  });

  await check('the single file opens from disk with every request blocked: playbook and audit equal the CLI', async () => {
    const single = path.join(tmp, 'report.html');
    mustRun(['playbook', 'publish', examples, '--single-file', single, '--app', dist, '--receipt', receipts[0], '--receipt', receipts[1]]);
    const offline = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const refused = await blockRequests(offline, (url) => url.protocol === 'blob:' || url.protocol === 'data:' || url.href === `file://${single}`);
    await offline.setOffline(true);
    const page = await offline.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    collectErrors(page, errors, { prefix: 'single file: ' });
    await page.goto(`file://${single}#/playbook`);
    const book = JSON.parse(fs.readFileSync(examples, 'utf8'));
    await page.waitForFunction((n) => document.querySelectorAll('#playbook-rows tbody tr').length >= n, book.rows.length);
    const source = await page.innerText('#playbook-source');
    if (!source.includes('playbook.json (this site)')) throw new Error(`#playbook-source reads ${source}`);
    await page.click('#nav-receipt');
    await page.waitForFunction(() => window.loadproofAudit != null);
    deepStrictEqual(await page.evaluate(() => window.loadproofAudit), JSON.parse(expectedAudit));
    await page.click('#nav-compare');
    await page.waitForFunction(() => window.loadproofComparison != null);
    deepStrictEqual(await page.evaluate(() => window.loadproofComparison), expectedCompare);
    await page.click('#nav-trace');
    await page.click('#sample');
    await page.waitForFunction(() => window.loadproofReport?.source === 'synthetic-burstgpt.csv');
    await page.goto(`file://${single}#/receipt/treatment.json`);
    await page.waitForFunction(() => window.loadproofAuditSource === 'treatment.json');
    if (refused.length) throw new Error(`requests: ${refused.join(', ')}`);
    await page.screenshot({ path: path.join(shots, 'share-single-file.png') });
    await offline.close();
  });

  await check('no request left 127.0.0.1 and the pages logged no error', async () => {
    if (blocked.length) throw new Error(`requests to other hosts: ${blocked.join(', ')}`);
    noErrors(errors);
  });
} finally {
  await cleanUp({ browser, server, tmp });
}
finish();

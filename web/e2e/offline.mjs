#!/usr/bin/env node
// Browser test of a published site offline: loaded once, then the network gone, every view
// still works — without a reload (the site's files were fetched at load, not on first visit
// of their view) and after one (the site's service worker, `sw.js`, serves its own files).
//
// Why (issue 17, point 8): a reviewer opens the site, then loses the network (a train, a
// plane); the Playbook, Receipt and Compare views used to fetch their files when first opened,
// and a reload offline showed nothing.
//
// Run from the repo root after `web/build.sh` and `cargo build --release -p loadproof_cli`:
//   node web/e2e/offline.mjs
// Environment: LOADPROOF_BIN, LOADPROOF_DIST, CHROMIUM (see harness.mjs).
// Prints one line per check, then `N passed, M failed`; exits 1 if any failed.

import { deepStrictEqual } from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  TIMEOUT_MS, bailOnCrash, check, cleanUp, cliJson, collectErrors, dist, finish, fromRoot, mustRun, noErrors,
  openSite,
} from './harness.mjs';

bailOnCrash();

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadproof-offline-'));
const fixture = fromRoot('core/tests/data/receipt/native_sim.json');
const examples = fromRoot('fixtures/playbook/examples.json');
const receipts = ['baseline.json', 'treatment.json'].map((n) => path.join(tmp, n));
for (const r of receipts) fs.copyFileSync(fixture, r);
const site = path.join(tmp, 'site');
mustRun(['playbook', 'publish', examples, '--out', site, '--app', dist, ...receipts.flatMap((r) => ['--receipt', r])]);
const audit = cliJson(['receipt', 'audit', receipts[0], '--json']);
const comparison = cliJson(['receipt', 'compare', 'baseline.json', 'treatment.json', '--json'], { cwd: tmp });
const rows = JSON.parse(fs.readFileSync(examples, 'utf8')).rows.length;

// No request routing here: Playwright's routing takes the service worker's requests over
// (its cache stays empty). The site is on 127.0.0.1 only, and `setOffline` blocks the rest.
const { server, base, browser, context } = await openSite(site);
const errors = [];
let offline = false;

/** Every view, opened by its link: each must show what the CLI says. */
async function everyView(page) {
  await page.click('#nav-playbook');
  await page.waitForFunction((n) => document.querySelectorAll('#playbook-rows tbody tr').length >= n, rows);
  await page.click('#nav-receipt');
  await page.waitForFunction(() => window.loadproofAudit != null);
  deepStrictEqual(await page.evaluate(() => window.loadproofAudit), audit);
  await page.click('#nav-compare');
  await page.waitForFunction(() => window.loadproofComparison != null);
  deepStrictEqual(await page.evaluate(() => window.loadproofComparison), comparison);
  await page.click('#nav-trace');
  await page.click('#sample');
  await page.waitForFunction(() => window.loadproofReport?.source === 'synthetic-burstgpt.csv');
}

try {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  collectErrors(page, errors, { quiet: () => offline });

  await check('loaded on the trace view, the site asks for its files and installs its service worker', async () => {
    await page.goto(`${base}#/trace`);
    // `waitForFunction` takes a promise as truthy: poll the registration by hand.
    const deadline = Date.now() + TIMEOUT_MS;
    while (!(await page.evaluate(async () => (await navigator.serviceWorker?.getRegistration())?.active?.state === 'activated'))) {
      if (Date.now() > deadline) throw new Error('the service worker never activated');
      await page.waitForTimeout(200);
    }
    // The worker's cache holds every file the manifest lists, under the site's version.
    const cached = await page.evaluate(async () => {
      const keys = await caches.keys();
      const cache = await caches.open(keys.find((k) => k.startsWith('loadproof ')));
      return (await cache.keys()).map((r) => new URL(r.url).pathname);
    });
    const listed = fs.readFileSync(path.join(site, 'site.sha256'), 'utf8').trim().split('\n')
      .map((l) => l.split('  ')[1]).filter((n) => n !== 'sw.js' && n !== 'site.sha256');
    for (const name of listed) {
      if (!cached.includes(`/${name}`)) throw new Error(`${name} is not cached: ${cached.join(', ')}`);
    }
  });

  await check('offline without a reload: every view (never opened before) still works', async () => {
    offline = true;
    await context.setOffline(true);
    await everyView(page);
  });

  await check('offline, the site reloads and every view works', async () => {
    await page.reload();
    await everyView(page);
    await page.goto(`${base}#/receipt/treatment.json`);
    await page.waitForFunction(() => window.loadproofAuditSource === 'treatment.json');
  });

  await check('the service worker answers only for the site: another origin is not cached', async () => {
    const other = await page.evaluate(async () => (await caches.keys()).filter((k) => !k.startsWith('loadproof ')));
    if (other.length) throw new Error(`other caches: ${other}`);
    offline = false;
    await context.setOffline(false);
  });

  await check('the page logged no error', async () => noErrors(errors));
} finally {
  await cleanUp({ browser, server, tmp });
}
finish();

#!/usr/bin/env node
// Browser test of a published playbook site: the Playbook view must say what the CLI says.
//
// Why: `loadproof playbook publish` promises a static site that works from any path on any
// static server, offline, with the matcher's verdicts equal to `loadproof playbook match`.
// This test publishes fixtures/playbook/examples.json, serves the site under a sub-path on
// 127.0.0.1, blocks every request to any other host, and compares the page with the CLI.
// It also makes a measured row for real (trace synth → plan → four fires at `loadproof sim`
// → playbook row, appended to a copy of the examples), then checks the row filters, the
// per-axis distance chart's table against `playbook match --json`, and a dropped receipt
// matched as `playbook match --receipt … --json` matches it; screenshots at 1400×900 (full
// page), 400×900 (narrow) and 1280×800 (docs/playbook-view.png).
//
// Run from the repo root after `web/build.sh` and `cargo build --release -p loadproof_cli`:
//   node web/e2e/playbook.mjs
// Environment: LOADPROOF_SHARED (default ../shared), LOADPROOF_BIN (default
// target/release/loadproof), LOADPROOF_DIST (default dist), CHROMIUM (default /usr/bin/chromium).
// Prints one line per check, then `N passed, M failed`; exits 1 if any failed.

import { execFileSync } from 'node:child_process';
import { deepStrictEqual } from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  FAST_SIM, TIMEOUT_MS, bail, bailOnCrash, check, cleanUp, collectErrors, dist, expectEqual, expectIncludes, finish,
  fromRoot, mustRun, noErrors, openSite, run, shared, shots, startSim, sweepReadout,
} from './harness.mjs';

bailOnCrash();

const examples = fromRoot('fixtures/playbook/examples.json');
const site = fromRoot('target/site-examples');
const liveTrace = path.join(shared, 'traces/burstgpt/BurstGPT_1.first400.csv');
const PREFIX = '/published/under/a/path/'; // not the server root: asset URLs must be relative

/**
 * The page's readable form of `x` (web/src/widgets/number.rs `readable`): at most 4 significant digits
 * beyond the integer part, thousands separated by commas, and within rounding of `x`.
 */
function expectReadable(text, x, what) {
  if (!/^-?\d{1,3}(,\d{3})*(\.\d+)?$/.test(text)) throw new Error(`${what}: ${JSON.stringify(text)} is not a grouped decimal`);
  const digits = text.replace(/[^0-9]/g, '').replace(/^0+/, '');
  const intDigits = text.split('.')[0].replace(/[^0-9]/g, '').replace(/^0+/, '').length;
  if (digits.length > Math.max(4, intDigits)) throw new Error(`${what}: ${text} has more than 4 significant digits`);
  const shown = Number(text.replace(/,/g, ''));
  if (Math.abs(shown - x) > Math.abs(x) * 6e-4 + 1e-12) throw new Error(`${what}: ${text} is not ${x} rounded`);
}

// --- the site, as the CLI publishes it --------------------------------------------------------
const published = run(['playbook', 'publish', examples, '--out', site, '--app', dist]);
if (published.status !== 0) bail(`loadproof playbook publish exited ${published.status}\n     ${published.stderr}`);
const book = JSON.parse(fs.readFileSync(examples, 'utf8'));
const first = book.rows[0].identity;
const identityArgs = [
  '--model', first.model,
  '--model-revision', first.model_revision,
  '--gpu-sku', first.gpu_sku,
  '--engine', first.engine,
  '--engine-version', first.engine_version,
  '--concurrency', first.concurrency === 'uncapped' ? 'uncapped' : String(first.concurrency.max),
  ...Object.entries(first.knobs).flatMap(([k, v]) => ['--knob', `${k}=${v}`]),
];
function cliMatch(extra) {
  const args = ['playbook', 'match', examples, '--trace', liveTrace, ...identityArgs, ...extra];
  return mustRun(args, { allow: [0, 1] }).stdout;
}

/**
 * A measured row made for real: `trace synth`, `plan --max-requests 60 --time-scale 20`, four
 * fires at `loadproof sim` on one port (baseline max_num_seqs=64, treatment max_num_seqs=2; the
 * sim restarted per fire, as cli/tests/playbook.rs does), `playbook row` appended to a copy of
 * the examples. Returns the playbook, a baseline receipt and its request count.
 */
async function makeMeasured() {
  const dir = path.join(tmp, 'measured');
  fs.mkdirSync(dir, { recursive: true });
  const trace = path.join(dir, 'synth.csv');
  mustRun(['trace', 'synth', '--out', trace, '--rows', '400', '--input-p50', '40', '--input-p95', '200',
    '--output-p50', '4', '--output-p95', '12']);
  const plan = path.join(dir, 'plan');
  mustRun(['plan', trace, '--out', plan, '--max-requests', '60', '--time-scale', '20', '--window', '0.1']);
  let port = 0;
  // On a busy machine a dispatch can fall behind: past the fire's own bound the run is invalid
  // (exit 1); past the policy's tighter bound the receipt is written but does not qualify
  // (`receipt qualify` exits 1). Either way fire again, up to four times.
  const fire = async (name, seqs, knob) => {
    const out = path.join(dir, `${name}.json`);
    let last = null;
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const sim = await startSim({ port, args: ['--max-num-seqs', seqs, ...FAST_SIM] });
      port = sim.port;
      try {
        last = run(['fire', plan, '--endpoint', `http://127.0.0.1:${port}`, '--engine', 'native',
          '--acquire-lease', '120', '--scrape-interval-ms', '100', '--lag-bound-ms', '100',
          '--knob', knob, '--out', out]);
      } finally {
        await sim.stop();
      }
      if (last.status === 0) {
        last = run(['receipt', 'qualify', out]);
        if (last.status === 0) return out;
      }
    }
    throw new Error(`loadproof fire (${name}) did not qualify in four fires: ${last.status}: ${last.stdout}${last.stderr}`);
  };
  const b = [await fire('b1', '64', 'max_num_seqs=64'), await fire('b2', '64', 'max_num_seqs=64')];
  const t = [await fire('t1', '2', 'max_num_seqs=2'), await fire('t2', '2', 'max_num_seqs=2')];
  const book = path.join(dir, 'examples-and-measured.json');
  fs.copyFileSync(examples, book);
  mustRun(['playbook', 'row', '--baseline', ...b, '--treatment', ...t, '--knob', 'max_num_seqs=2',
    '--id', 'sim-max-num-seqs-2', '--playbook', book, '--window', '0.1']);
  return { book, receipt: b[0], requests: 60 };
}

const { server, base, browser, context, blocked } = await openSite(site, {
  prefix: PREFIX,
  viewport: { width: 1400, height: 900 },
  allowed: (url, host) => url.host === host || url.protocol === 'data:',
});
fs.mkdirSync(shots, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadproof-e2e-playbook-'));
const pageErrors = [];

async function freshPage(hash) {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  collectErrors(page, pageErrors);
  await page.goto(base + hash);
  return page;
}

try {
  await check('site.sha256 lists every file and verifies with sha256sum -c', async () => {
    const out = execFileSync('sha256sum', ['-c', 'site.sha256'], { cwd: site, encoding: 'utf8' });
    const listed = out.trim().split('\n').map((l) => l.replace(/: OK$/, '')).sort();
    const onDisk = fs.readdirSync(site).filter((f) => f !== 'site.sha256').sort();
    deepStrictEqual(listed, onDisk);
  });

  await check('published playbook.json is byte-identical to the input', async () => {
    if (!fs.readFileSync(path.join(site, 'playbook.json')).equals(fs.readFileSync(examples))) {
      throw new Error('bytes differ');
    }
  });

  const page = await freshPage('#/playbook');
  await check('#/playbook loads playbook.json from the site and shows every row', async () => {
    await page.waitForSelector('#playbook-rows tbody tr[data-row-id]');
    const ids = await page.$$eval('#playbook-rows > tbody > tr[data-row-id]', (trs) =>
      trs.map((tr) => tr.dataset.rowId),
    );
    deepStrictEqual(ids, book.rows.map((r) => r.id));
    expectEqual(ids.length, 7, 'rows');
    const source = await page.innerText('#playbook-source');
    if (!source.includes('playbook.json (this site)')) throw new Error(`#playbook-source reads ${source}`);
  });

  await check('page says files never leave the machine', async () => {
    const text = await page.innerText('body');
    if (!text.includes('Files never leave this machine')) throw new Error('privacy sentence missing');
  });

  await check('the trace view is hidden on #/playbook; the nav marks Playbook current', async () => {
    expectEqual(await page.isVisible('#view-trace'), false, '#view-trace visible');
    expectEqual(await page.getAttribute('#nav-playbook', 'aria-current'), 'page', 'aria-current');
  });

  for (const row of book.rows) {
    const tr = `#playbook-rows > tbody > tr[data-row-id="${row.id}"]`;
    await check(`${row.id}: labelled ${row.evidence}, digests and medians as in the file`, async () => {
      const badge = await page.$eval(`${tr} .badge`, (b) => ({ ev: b.dataset.evidence, text: b.innerText }));
      expectEqual(badge.ev, row.evidence, 'evidence');
      if (!/ILLUSTRATIVE/.test(badge.text)) throw new Error(`badge reads ${badge.text}`);
      const trace = await page.$eval(`${tr} .provenance > div:first-child details.digest`, (d) => ({
        title: d.title,
        full: d.querySelector('code').textContent,
        summary: d.querySelector('summary').innerText,
      }));
      expectEqual(trace.title, row.provenance.trace_sha256, 'trace digest title');
      expectEqual(trace.full, row.provenance.trace_sha256, 'trace digest (expanded)');
      expectEqual(trace.summary, `${row.provenance.trace_sha256.slice(0, 12)}…`, 'trace digest (abbreviated)');
      for (const arm of ['baseline', 'treatment']) {
        const shown = await page.$$eval(`${tr} .receipts[data-arm="${arm}"] details.digest`, (ds) =>
          ds.map((d) => d.title),
        );
        deepStrictEqual(shown, row.provenance[`${arm}_receipts`]);
        if (shown.length === 0) {
          const text = await page.innerText(`${tr} .receipts[data-arm="${arm}"]`);
          if (!text.includes('none')) throw new Error(`${arm} receipts cell reads ${text}`);
        }
      }
      for (const metric of ['throughput_tok_s', 'ttft_p50_ms', 'ttft_p99_ms', 'itl_p50_ms', 'itl_p99_ms']) {
        const cells = await page.$$eval(`${tr} table.delta tr[data-metric="${metric}"] td`, (tds) =>
          tds.map((td) => ({ text: td.innerText, title: td.title })),
        );
        expectEqual(cells[0].title, String(row.delta.baseline[metric].median), `${metric} baseline median`);
        expectEqual(cells[1].title, String(row.delta.treatment[metric].median), `${metric} treatment median`);
        expectReadable(cells[0].text, row.delta.baseline[metric].median, `${metric} baseline median (readable)`);
        expectEqual(cells[2].title, String(row.delta.change[metric]), `${metric} change`);
      }
      const identity = await page.innerText(`${tr} .identity-cell`);
      const id = row.identity;
      for (const part of [`${id.model}@${id.model_revision}`, id.gpu_sku, `${id.engine}@${id.engine_version}`]) {
        if (!identity.includes(part)) throw new Error(`identity cell lacks ${part}: ${identity}`);
      }
      for (const [k, v] of Object.entries(id.knobs)) {
        if (!identity.includes(`${k}=${v}`)) throw new Error(`identity cell lacks ${k}=${v}`);
      }
      for (const axis of ['rate_rps', 'burstiness', 'input_p50', 'input_p95', 'output_p50', 'output_p95', 'window_s']) {
        const cell = await page.$eval(`${tr} .regime-cell [data-axis="${axis}"] .n`, (n) => ({
          value: n.dataset.value,
          title: n.title,
          text: n.innerText,
        }));
        expectEqual(cell.value, String(row.regime[axis]), `${axis} exact value`);
        expectEqual(cell.title, String(row.regime[axis]), `${axis} title`);
        expectReadable(cell.text, row.regime[axis], `${axis} readable`);
      }
    });
  }

  await check('the form is prefilled from the first row', async () => {
    expectEqual(await page.inputValue('#q-model'), first.model, '#q-model');
    expectEqual(await page.inputValue('#q-revision'), first.model_revision, '#q-revision');
    expectEqual(await page.inputValue('#q-gpu'), first.gpu_sku, '#q-gpu');
    expectEqual(await page.inputValue('#q-engine'), first.engine, '#q-engine');
    expectEqual(await page.inputValue('#q-version'), first.engine_version, '#q-version');
  });

  let report = null;
  await check('live trace BurstGPT_1 prefix: window.loadproofMatch deep-equals `playbook match --json`', async () => {
    const expected = JSON.parse(cliMatch(['--json']));
    await page.setInputFiles('#live-file', liveTrace);
    await page.waitForFunction(
      () => window.loadproofMatch || document.querySelector('#match-error, #live-error'),
      null,
      { timeout: TIMEOUT_MS },
    );
    const error = await page.$('#match-error, #live-error');
    if (error) throw new Error(`page shows an error: ${await error.innerText()}`);
    report = await page.evaluate(() => window.loadproofMatch);
    deepStrictEqual(report, expected);
    expectEqual(expected.selected.length, 0, 'CLI selected rows');
    expectEqual(expected.rejected.length, 7, 'CLI rejected rows');
  });

  await check('every row rejected, each reason text equal to the CLI text output', async () => {
    const text = cliMatch([]);
    const after = text.split('\nDOES NOT APPLY\n')[1] ?? '';
    const cliReasons = Object.fromEntries(
      after
        .split('\n')
        .filter((l) => l.startsWith('  '))
        .map((l) => {
          const m = /^ {2}(\S+) {2}(.*)$/.exec(l);
          return [m[1], m[2]];
        }),
    );
    const shown = await page.$$eval('#match-results tbody tr', (trs) =>
      trs.map((tr) => ({ id: tr.dataset.rowId, verdict: tr.dataset.verdict, reason: tr.querySelector('.reason').innerText })),
    );
    expectEqual(shown.length, 7, 'result rows');
    for (const s of shown) {
      expectEqual(s.verdict, 'rejected', `${s.id} verdict`);
      expectEqual(s.reason, cliReasons[s.id], `${s.id} reason`);
    }
    const summary = await page.innerText('#match-summary');
    expectEqual(summary, '0 of 7 row(s) apply', '#match-summary');
    if (!text.includes('0 of 7 row(s) apply')) throw new Error('CLI summary differs');
  });
  await page.screenshot({ path: path.join(shots, 'playbook.png'), fullPage: true });

  await check('editing the identity recomputes: --knob enable_prefix_caching=false equals the CLI', async () => {
    await page.fill('#q-knobs', 'enable_prefix_caching=false');
    const args = identityArgs.map((a) => (a === 'enable_prefix_caching=true' ? 'enable_prefix_caching=false' : a));
    const r = run(['playbook', 'match', examples, '--trace', liveTrace, ...args, '--json']);
    const fromCli = JSON.parse(r.stdout);
    expectEqual(fromCli.query.identity.knobs.enable_prefix_caching, 'false', 'CLI query knob');
    await page.waitForFunction(
      () => window.loadproofMatch?.query?.identity?.knobs?.enable_prefix_caching === 'false',
    );
    deepStrictEqual(await page.evaluate(() => window.loadproofMatch), fromCli);
  });

  await check('a bad knob line shows an error naming the field and line', async () => {
    await page.fill('#q-knobs', 'enable_prefix_caching=true\nnot a pair');
    await page.waitForSelector('#match-error');
    const text = await page.innerText('#match-error');
    if (!text.includes('Knobs, line 2')) throw new Error(`#match-error reads ${text}`);
    expectEqual(await page.evaluate(() => window.loadproofMatch), null, 'window.loadproofMatch');
  });

  await check('an invalid playbook file shows #playbook-error (file, line, field)', async () => {
    const bad = path.join(tmp, 'bad-playbook.json');
    const broken = JSON.parse(fs.readFileSync(examples, 'utf8'));
    delete broken.rows[2].provenance.trace_sha256;
    fs.writeFileSync(bad, JSON.stringify(broken, null, 2));
    const cli = run(['playbook', 'publish', bad, '--out', path.join(tmp, 'site'), '--app', dist]);
    expectEqual(cli.status, 1, 'publish exit code for the invalid playbook');
    await page.setInputFiles('#playbook-file', bad);
    await page.waitForSelector('#playbook-error');
    const text = await page.innerText('#playbook-error');
    for (const part of ['bad-playbook.json', 'line', 'trace_sha256']) {
      if (!text.includes(part)) throw new Error(`#playbook-error reads ${JSON.stringify(text)}; lacks ${part}`);
    }
    if (!cli.stderr.includes(text.replace(/^bad-playbook\.json: /, ''))) {
      throw new Error(`CLI says ${cli.stderr.trim()}, page says ${text}`);
    }
  });
  await check('drop zone: a dropped playbook file replaces the one shown', async () => {
    await page.evaluate(
      ({ text }) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], 'dropped-playbook.json', { type: 'application/json' }));
        const zone = document.querySelector('.dropzone[data-for="playbook-file"]');
        zone.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt }));
        zone.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
      },
      { text: fs.readFileSync(examples, 'utf8') },
    );
    await page.waitForFunction(() => document.querySelector('#playbook-source')?.innerText.startsWith('dropped-playbook.json'));
    expectEqual(await page.$('#playbook-error'), null, '#playbook-error after a valid drop');
    expectEqual(await page.$$eval('#playbook-rows > tbody > tr[data-row-id]', (t) => t.length), 7, 'rows');
  });
  await page.close();

  // --- a measured row, made for real, beside the examples ------------------------------------
  let made = null;
  await check('a measured row made for real (synth, plan, 4 fires at loadproof sim, playbook row)', async () => {
    made = await makeMeasured();
  });
  if (made === null) throw new Error('no measured row: the checks that need it cannot run');
  const bookPath = made.book;
  const book8 = JSON.parse(fs.readFileSync(bookPath, 'utf8'));
  const measuredRow = book8.rows.find((r) => r.evidence === 'measured');
  const mid = measuredRow.identity;
  const measuredArgs = [
    '--model', mid.model,
    '--model-revision', mid.model_revision,
    '--gpu-sku', mid.gpu_sku,
    '--engine', mid.engine,
    '--engine-version', mid.engine_version,
    '--concurrency', mid.concurrency === 'uncapped' ? 'uncapped' : String(mid.concurrency.max),
    ...Object.entries(mid.knobs).flatMap(([k, v]) => ['--knob', `${k}=${v}`]),
    '--window', String(measuredRow.regime.window_s),
  ];
  function cliMatchBook(live, extra) {
    const r = run(['playbook', 'match', bookPath, ...live, ...measuredArgs, ...extra, '--json']);
    if (r.status !== 0 && r.status !== 1) throw new Error(`playbook match exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  }
  const p2 = await freshPage('#/playbook');
  await p2.waitForSelector('#playbook-rows tbody tr[data-row-id]');
  await p2.setInputFiles('#playbook-file', bookPath);
  await p2.waitForFunction(() => document.querySelector('#playbook-count')?.innerText === '8');

  const visibleIds = () =>
    p2.$$eval('#playbook-rows > tbody > tr[data-row-id]', (trs) => trs.filter((t) => !t.hidden).map((t) => t.dataset.rowId));
  async function expectShowing(ids, what) {
    await p2.waitForFunction(
      (n) => document.querySelector('#playbook-showing')?.innerText === `Showing ${n} of 8 rows`,
      ids.length,
    ).catch(() => {});
    expectEqual(await p2.innerText('#playbook-showing'), `Showing ${ids.length} of 8 rows`, `${what}: count`);
    deepStrictEqual(await visibleIds(), ids);
  }
  const idsWhere = (pred) => book8.rows.filter(pred).map((r) => r.id);

  await check('filters: evidence measured / illustrative, with "showing N of M rows"', async () => {
    expectEqual(await p2.innerText('#playbook-showing'), 'Showing 8 of 8 rows', 'unfiltered');
    await p2.selectOption('#f-evidence', 'measured');
    await expectShowing([measuredRow.id], 'measured');
    await p2.selectOption('#f-evidence', 'illustrative');
    await expectShowing(idsWhere((r) => r.evidence === 'illustrative'), 'illustrative');
    await p2.click('#f-clear');
    await expectShowing(book8.rows.map((r) => r.id), 'cleared');
  });

  await check('filters: model, GPU, engine and knob narrow the rows as the file says', async () => {
    const example = book8.rows[1].identity;
    await p2.selectOption('#f-model', example.model);
    await expectShowing(idsWhere((r) => r.identity.model === example.model), 'model');
    await p2.selectOption('#f-gpu', example.gpu_sku);
    await expectShowing(
      idsWhere((r) => r.identity.model === example.model && r.identity.gpu_sku === example.gpu_sku),
      'model + GPU',
    );
    await p2.click('#f-clear');
    const engine = `${mid.engine} ${mid.engine_version}`;
    await p2.selectOption('#f-engine', engine);
    await expectShowing(idsWhere((r) => `${r.identity.engine} ${r.identity.engine_version}` === engine), 'engine');
    await p2.click('#f-clear');
    const knob = Object.keys(book8.rows[0].identity.knobs)[0];
    await p2.selectOption('#f-knob', knob);
    await expectShowing(idsWhere((r) => knob in r.identity.knobs), 'knob');
    await p2.click('#f-clear');
  });

  await check('filters: free text by keyboard (every word must appear; Escape clears), no-match message', async () => {
    await p2.focus('#f-text');
    const digest = measuredRow.provenance.baseline_receipts[0].slice(0, 16);
    await p2.keyboard.type(digest);
    await expectShowing([measuredRow.id], 'a receipt digest');
    await p2.keyboard.press('Escape');
    await expectShowing(book8.rows.map((r) => r.id), 'after Escape');
    await p2.keyboard.type('example nosuchword');
    await expectShowing([], 'no match');
    await p2.waitForSelector('#playbook-none');
    await p2.keyboard.press('Escape');
    await p2.focus('#f-evidence');
    await p2.keyboard.press('ArrowDown');
    const chosen = await p2.inputValue('#f-evidence');
    expectEqual(chosen, 'measured', '#f-evidence after ArrowDown');
    await expectShowing([measuredRow.id], 'evidence chosen by keyboard');
    await p2.click('#f-clear');
    await expectShowing(book8.rows.map((r) => r.id), 'cleared');
  });

  await check('"Use as query" fills the form with the measured row', async () => {
    await p2.click(`button.use-row[data-row-id="${measuredRow.id}"]`);
    expectEqual(await p2.inputValue('#q-model'), mid.model, '#q-model');
    expectEqual(await p2.inputValue('#q-version'), mid.engine_version, '#q-version');
    expectEqual(await p2.inputValue('#q-knobs'), Object.entries(mid.knobs).map(([k, v]) => `${k}=${v}`).join('\n'), '#q-knobs');
    expectEqual(await p2.inputValue('#q-window'), String(measuredRow.regime.window_s), '#q-window');
    expectEqual(await p2.inputValue('#q-traffic'), mid.source_kind.traffic, '#q-traffic');
  });

  async function matchedOnPage(file, predicate) {
    await p2.setInputFiles('#live-file', file);
    await p2.waitForFunction(predicate, null, { timeout: TIMEOUT_MS });
    const error = await p2.$('#match-error, #live-error');
    if (error) throw new Error(`page shows an error: ${await error.innerText()}`);
    return p2.evaluate(() => window.loadproofMatch);
  }
  async function expectChartEquals(entry, what) {
    await p2.waitForSelector(`#distance-panel[data-row-id="${entry.row.id}"]`);
    const shown = await p2.$$eval('#distance-table tbody tr', (trs) =>
      trs.map((tr) => ({
        axis: tr.dataset.axis,
        limiting: tr.dataset.limiting === 'true',
        row: tr.querySelector('td:nth-of-type(1) .n').dataset.value,
        query: tr.querySelector('td:nth-of-type(2) .n').dataset.value,
        distance: tr.querySelector('td.distance').dataset.value,
        text: tr.querySelector('td.distance').innerText,
      })),
    );
    deepStrictEqual(
      shown.map((s) => s.axis),
      entry.distance.axes.map((a) => a.axis),
      `${what}: axes`,
    );
    for (const [i, a] of entry.distance.axes.entries()) {
      expectEqual(shown[i].distance, String(a.distance), `${what}: ${a.axis} distance`);
      expectEqual(shown[i].text, a.distance.toFixed(3), `${what}: ${a.axis} distance (3 decimals)`);
      expectEqual(shown[i].row, String(a.row), `${what}: ${a.axis} row value`);
      expectEqual(shown[i].query, String(a.query), `${what}: ${a.axis} query value`);
      expectEqual(shown[i].limiting, a.axis === entry.distance.limiting, `${what}: ${a.axis} limiting`);
    }
    expectEqual(
      await p2.getAttribute('#distance-linf strong', 'data-value'),
      String(entry.distance.linf),
      `${what}: L∞`,
    );
  }

  let traceReport = null;
  await check('live BurstGPT_1 vs the measured row: window.loadproofMatch deep-equals `playbook match --json`', async () => {
    // The form says synthetic (the measured row's traffic); a trace without a sidecar reads as
    // recorded to the CLI unless told.
    const expected = cliMatchBook(['--trace', liveTrace], ['--traffic', 'synthetic']);
    traceReport = await matchedOnPage(
      liveTrace,
      () => window.loadproofMatch?.query?.identity?.model === 'sim' || document.querySelector('#match-error, #live-error'),
    );
    deepStrictEqual(traceReport, expected);
    const mine = expected.rejected.find((r) => r.row.id === measuredRow.id);
    expectEqual(mine?.reason?.kind, 'uncalibrated', 'the measured row is judged on distance');
  });

  await check('distance chart: the table beside it equals the CLI distances, limiting axis highlighted, the bar under the pointer reads as its row', async () => {
    const mine = traceReport.rejected.find((r) => r.row.id === measuredRow.id);
    const entry = { row: mine.row, distance: mine.reason.distances };
    expectEqual(await p2.getAttribute('#distance-panel', 'data-source'), 'matcher', 'data-source');
    await expectChartEquals(entry, 'BurstGPT_1 vs measured');
    expectEqual(await p2.innerText('#distance-limiting'), entry.distance.limiting, '#distance-limiting');
    const linfCell = await p2.$eval(`#match-results tr[data-row-id="${measuredRow.id}"] td.num`, (td) => td.dataset.value);
    expectEqual(linfCell, String(entry.distance.linf), 'L∞ in the results table');
    // The canvas is drawn, with the limiting bar in its highlight colour.
    const colours = await p2.$eval('#distance-chart', (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let orange = 0;
      let blue = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] === 217 && d[i + 1] === 119 && d[i + 2] === 6) orange += 1;
        if (d[i] === 37 && d[i + 1] === 99 && d[i + 2] === 235) blue += 1;
      }
      return { orange, blue };
    });
    if (colours.orange < 50) throw new Error(`limiting bar not drawn: ${JSON.stringify(colours)}`);
    const label = await p2.getAttribute('#distance-chart', 'aria-label');
    if (!label.includes('table beside it')) throw new Error(`canvas aria-label reads ${label}`);
    // The bar under the pointer reads back as its table row writes it.
    const read = await sweepReadout(p2, 'distance', 0.45, [0.3, 0.9]);
    const r = /^(\S+): row (\S+) · query (\S+) · distance (\S+)( \(limiting\))? · tolerance (\S+): (.+)$/.exec(read);
    if (!r) throw new Error(`distance readout: ${JSON.stringify(read)}`);
    const cells = await p2.$eval(`#distance-table tbody tr[data-axis="${r[1]}"]`, (tr) => [...tr.cells].map((c) => c.innerText));
    deepStrictEqual([r[2], r[3], r[4], r[6]], cells.slice(1, 5), `readout of ${r[1]} vs its table row`);
    expectEqual(Boolean(r[5]), r[1] === entry.distance.limiting, `${r[1]} limiting in the readout`);
    expectIncludes(cells[5], r[7], `${r[1]} standing`);
    await p2.mouse.move(0, 0);
  });

  await check('distance chart of an illustrative row (at its 1 s window): labelled reference, query values as the CLI', async () => {
    const other = book8.rows[0];
    expectEqual(other.regime.window_s, 1, 'the example row window');
    const noChart = await p2.innerText(`#match-results tr[data-row-id="${other.id}"] td:last-child`);
    if (!noChart.includes('windows differ')) throw new Error(`at 0.1 s the example row reads ${noChart}`);
    await p2.fill('#q-window', '1');
    const atOne = run(['playbook', 'match', bookPath, '--trace', liveTrace,
      ...measuredArgs.slice(0, -2), '--window', '1', '--traffic', 'synthetic', '--json']);
    const cliAtOne = JSON.parse(atOne.stdout);
    await p2.waitForFunction(() => window.loadproofMatch?.query?.regime?.window_s === 1);
    deepStrictEqual(await p2.evaluate(() => window.loadproofMatch), cliAtOne);
    await p2.click(`button.show-distances[data-row-id="${other.id}"]`);
    await p2.waitForSelector(`#distance-panel[data-row-id="${other.id}"][data-source="reference"]`);
    expectEqual(
      await p2.getAttribute(`button.show-distances[data-row-id="${other.id}"]`, 'aria-pressed'),
      'true',
      'aria-pressed',
    );
    const queryValues = await p2.$$eval('#distance-table tbody tr', (trs) =>
      trs.map((tr) => [tr.dataset.axis, tr.querySelector('td:nth-of-type(2) .n').dataset.value]),
    );
    for (const [axis, value] of queryValues) {
      expectEqual(value, String(cliAtOne.query.regime[axis]), `${axis} query value`);
    }
    await p2.fill('#q-window', String(measuredRow.regime.window_s));
    await p2.waitForFunction((w) => window.loadproofMatch?.query?.regime?.window_s === w, measuredRow.regime.window_s);
    await p2.click(`button.show-distances[data-row-id="${measuredRow.id}"]`);
    await p2.waitForSelector(`#distance-panel[data-row-id="${measuredRow.id}"]`);
  });
  await p2.evaluate(() => document.querySelector('#match-heading').scrollIntoView());
  await p2.setViewportSize({ width: 1280, height: 800 });
  await p2.evaluate(() => document.querySelector('#distance-panel').scrollIntoView({ block: 'end' }));
  await p2.screenshot({ path: path.join(shots, 'playbook-distances.png') });
  await p2.screenshot({ path: fromRoot('docs/playbook-view.png') });
  await p2.setViewportSize({ width: 1400, height: 900 });

  await check('a dropped receipt is matched as `playbook match --receipt … --json` matches it', async () => {
    const expected = cliMatchBook(['--receipt', made.receipt], []);
    const report = await matchedOnPage(
      made.receipt,
      () => (window.loadproofMatch && window.loadproofMatch.selected.length > 0) || document.querySelector('#match-error, #live-error'),
    );
    deepStrictEqual(report, expected);
    expectEqual(expected.selected[0]?.row?.id, measuredRow.id, 'CLI selects the measured row');
    expectEqual(expected.selected[0]?.exact, true, 'at distance 0');
    deepStrictEqual(expected.query.regime, measuredRow.regime, 'the receipt regime is the row regime');
    const regimeText = await p2.innerText('#match-regime');
    if (!regimeText.includes(`${path.basename(made.receipt)} (a receipt: the schedule it fired, ${made.requests} requests)`)) {
      throw new Error(`#match-regime reads ${regimeText}`);
    }
    expectEqual(await p2.innerText('#match-summary'), '1 of 8 row(s) apply', '#match-summary');
    await expectChartEquals(expected.selected[0], 'receipt vs measured');
  });

  await check('narrow screen 400×900: no horizontal page scroll, filters and chart laid out in one column', async () => {
    await p2.setViewportSize({ width: 400, height: 900 });
    await p2.waitForTimeout(200);
    const widths = await p2.evaluate(() => ({
      doc: document.documentElement.scrollWidth,
      view: window.innerWidth,
      chart: document.querySelector('#distance-chart').getBoundingClientRect().width,
    }));
    if (widths.doc > widths.view + 1) {
      const wide = await p2.evaluate(() =>
        [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.scroll, .numbers'))
          .slice(0, 8)
          .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${[...e.classList].join('.')} ${Math.round(e.getBoundingClientRect().right)}`),
      );
      throw new Error(`page scrolls sideways: ${JSON.stringify(widths)}; ${wide.join(', ')}`);
    }
    if (widths.chart > widths.view) throw new Error(`chart wider than the screen: ${JSON.stringify(widths)}`);
    await p2.evaluate(() => document.querySelector('#playbook-heading').scrollIntoView());
    await p2.screenshot({ path: path.join(shots, 'playbook-narrow.png') });
    await p2.evaluate(() => document.querySelector('#distance-panel').scrollIntoView());
    await p2.screenshot({ path: path.join(shots, 'playbook-narrow-chart.png') });
    await p2.setViewportSize({ width: 1400, height: 900 });
  });
  await p2.close();

  await check('keyboard: Tab to the Playbook link and Enter switches from the trace view', async () => {
    const p = await freshPage('');
    await p.waitForSelector('#file', { state: 'attached' });
    expectEqual(await p.isVisible('#view-playbook'), false, '#view-playbook visible at #/');
    let focused = '';
    for (let i = 0; i < 10 && focused !== 'nav-playbook'; i += 1) {
      await p.keyboard.press('Tab');
      focused = await p.evaluate(() => document.activeElement?.id ?? '');
    }
    expectEqual(focused, 'nav-playbook', 'focused element after Tab');
    await p.keyboard.press('Enter');
    await p.waitForSelector('#playbook-rows tbody tr');
    expectEqual(await p.isVisible('#view-trace'), false, '#view-trace visible at #/playbook');
    await p.goBack();
    await p.waitForFunction(() => !document.querySelector('#view-trace').hidden);
    await p.close();
  });

  await check('no request left 127.0.0.1', async () => {
    if (blocked.length > 0) throw new Error(blocked.join('\n'));
  });
  await check('no page errors or console errors', () => noErrors(pageErrors));
} finally {
  await cleanUp({ browser, server, tmp });
}

finish();

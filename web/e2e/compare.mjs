#!/usr/bin/env node
// Browser test of the Compare view: the page must say what `loadproof receipt compare` says.
//
// Why: the comparison in the browser is core's `compare` on two audits computed in the page;
// a reviewer must get the same verdict, the same named differences and the same numbers as the
// CLI, offline. This test makes real receipts with the CLI (a synthetic trace, planned, fired
// with the native client at `loadproof sim` under its lease: `--max-num-seqs 64` for the
// baseline, `2` for the treatment, stated as `--knob max_num_seqs=N`; one sim at a time on one
// port, so both receipts name one endpoint and run one protocol), publishes them beside the app
// as `receipts.json`, and checks the preloaded comparison, then blocks all network and loads
// files through the inputs: a not-one-protocol pair (another plan), the pair again, the pair
// under a reviewer's audit policy set in the page's panel (`#compare-policy`: the comparison
// deep-equals `receipt compare --json --policy P.json`), a bad file.
//
// Run from the repo root after `web/build.sh` and `cargo build --release -p loadproof_cli`:
//   node web/e2e/compare.mjs
// Environment: LOADPROOF_BIN (default target/release/loadproof), LOADPROOF_DIST (default
// dist), CHROMIUM (default /usr/bin/chromium).
// Prints one line per check, then `N passed, M failed`; exits 1 if any failed.

import { deepStrictEqual } from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  FAST_SIM, TIMEOUT_MS, bailOnCrash, check, cleanUp, collectErrors, dist, expectEqual, expectIncludes, finish,
  freePort, fromRoot, mustRun, noErrors, openSite, run, shots, startSim, waitForEqual,
} from './harness.mjs';

bailOnCrash();

const docShot = fromRoot('docs/compare-view.png');

/** Fires `plan` at a fresh fast sim on `port` (`--max-num-seqs N`, stated as a knob). */
async function fire(port, plan, out, maxNumSeqs) {
  const sim = await startSim({ port, args: ['--max-num-seqs', String(maxNumSeqs), ...FAST_SIM] });
  try {
    mustRun([
      'fire', plan, '--endpoint', `http://127.0.0.1:${port}`, '--engine', 'native',
      '--acquire-lease', '120', '--scrape-interval-ms', '100', '--lag-bound-ms', '50',
      '--knob', `max_num_seqs=${maxNumSeqs}`, '--out', out,
    ]);
  } finally {
    await sim.stop();
  }
}

// --- receipts, made for real ------------------------------------------------------------------
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadproof-e2e-compare-'));
const work = path.join(tmp, 'work');
const site = path.join(tmp, 'site');
const published = path.join(site, 'receipts');
fs.mkdirSync(work);
fs.cpSync(dist, site, { recursive: true });
fs.mkdirSync(published);

const trace = path.join(work, 'x.csv');
mustRun(['trace', 'synth', '--out', trace, '--output-p50', '8', '--output-p95', '16', '--rows', '400']);
mustRun(['plan', trace, '--out', path.join(work, 'plan'), '--max-requests', '60', '--time-scale', '20']);
mustRun(['plan', trace, '--out', path.join(work, 'plan2'), '--max-requests', '40', '--time-scale', '20']);
const port = await freePort();
const names = { baseline: 'baseline.receipt', treatment: 'treatment.receipt', other: 'other-plan.receipt' };
const at = (n) => path.join(published, n);
await fire(port, path.join(work, 'plan'), at(names.baseline), 64);
await fire(port, path.join(work, 'plan'), at(names.treatment), 2);
await fire(port, path.join(work, 'plan2'), at(names.other), 64);
const bad = path.join(work, 'not-a-receipt.json');
fs.writeFileSync(bad, '{"schema": "loadproof.receipt/v0", "hello": 1}\n');

const listing = {
  schema: 'loadproof.site-receipts/v1',
  receipts: [names.baseline, names.treatment, names.other].map((name) => {
    const bytes = fs.readFileSync(at(name));
    return {
      name,
      path: `receipts/${name}`,
      sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
      bytes: bytes.length,
    };
  }),
};
fs.writeFileSync(path.join(site, 'receipts.json'), JSON.stringify(listing, null, 2));

// The reviewer's policy: a send-lag bound no real send meets (arrival refused on both sides).
const STRICT_POLICY = {
  schema: 'loadproof.audit-policy/v1', max_send_lag_ms: 0.000001, max_scrape_gap_ms: 1000, max_waiting_scrapes: 2,
};
const strictPolicy = path.join(work, 'strict-policy.json');
fs.writeFileSync(strictPolicy, JSON.stringify(STRICT_POLICY, null, 2));

/** `loadproof receipt compare` run where the receipts are, so its sources are the bare names. */
function cli(b, t, policy = null) {
  const r = run(['receipt', 'compare', b, t, '--json', ...(policy ? ['--policy', policy] : [])], { cwd: published });
  if (r.status !== 0 && r.status !== 1) throw new Error(`receipt compare exited ${r.status}: ${r.stderr}`);
  return { status: r.status, json: JSON.parse(r.stdout) };
}
const pair = cli(names.baseline, names.treatment);
/** `loadproof receipt audit --json` of a published receipt. */
function audited(name) {
  const r = run(['receipt', 'audit', name, '--json'], { cwd: published });
  if (r.status !== 0 && r.status !== 1) throw new Error(`receipt audit exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
const audits = { baseline: audited(names.baseline), treatment: audited(names.treatment) };
const twoPlans = cli(names.baseline, names.other);
const strictPair = cli(names.baseline, names.treatment, strictPolicy);

// --- the page -------------------------------------------------------------------------------
let offline = false;
const { server, base, browser, context, blocked } = await openSite(site, {
  allowed: (url, host) => !offline && (url.host === host || url.protocol === 'data:'),
});
fs.mkdirSync(shots, { recursive: true });
const pageErrors = [];
const page = await context.newPage();
page.setDefaultTimeout(TIMEOUT_MS);
collectErrors(page, pageErrors);

async function shown() {
  return page.evaluate(() => window.loadproofComparison ?? null);
}
async function waitFor(b, t) {
  await page.waitForFunction(
    ([b, t]) => {
      const c = window.loadproofComparison;
      return (c && c.baseline.source === b && c.treatment.source === t) ||
        document.querySelector('#baseline-error, #treatment-error');
    },
    [b, t],
    { timeout: TIMEOUT_MS },
  );
  const error = await page.$('#baseline-error, #treatment-error');
  if (error) throw new Error(`page shows an error: ${await error.innerText()}`);
}

/** `text` (a readable number: grouped digits, maybe a sign and a `%`) read back as a number,
 * and half a unit of its last shown digit: how far from the exact value rounding may put it. */
function readBack(text, what) {
  if (!/^[+-]?\d{1,3}(,\d{3})*(\.\d+)?%?$/.test(text)) throw new Error(`${what}: ${JSON.stringify(text)} is not a grouped decimal`);
  const decimals = (text.replace('%', '').split('.')[1] ?? '').length;
  return { read: Number(text.replace(/[,%+]/g, '')), slack: 0.5 * 10 ** -decimals + 1e-9 };
}

/** The table against the CLI's metrics: exact values in data-value and title, the text that
 * value rounded to the precision its row shows, one precision per row; named metrics. */
async function checkTable(expected) {
  const rows = await page.$$eval('#compare-table tbody tr', (trs) =>
    trs.map((tr) => ({
      metric: tr.dataset.metric,
      name: tr.querySelector('th').innerText,
      cells: [...tr.querySelectorAll('td')].map((td) => ({ value: td.dataset.value, title: td.title, text: td.innerText })),
    })),
  );
  deepStrictEqual(rows.map((r) => r.metric), expected.metrics.map((m) => m.metric));
  for (const [i, m] of expected.metrics.entries()) {
    const name = rows[i].name;
    if (name.includes('_') || name.includes(m.metric)) throw new Error(`${m.metric} is shown as a raw key: ${name}`);
    if (!name.endsWith(`(${m.unit})`)) throw new Error(`${m.metric} shows no unit: ${name}`);
    const shown = rows[i].cells.slice(0, 3).map((c) => c.text).filter((t) => t !== '—');
    const places = new Set(shown.map((t) => (t.split('.')[1] ?? '').length));
    if (places.size > 1) throw new Error(`${m.metric}: one row, several precisions: ${shown.join(' | ')}`);
  }
  for (const [i, m] of expected.metrics.entries()) {
    const fields = ['baseline', 'treatment', 'change', 'relative_change'];
    for (const [j, field] of fields.entries()) {
      const cell = rows[i].cells[j];
      const v = m[field];
      expectEqual(cell.value, v === null ? '' : String(v), `${m.metric} ${field} data-value`);
      if (v === null) {
        expectEqual(cell.text, '—', `${m.metric} ${field} text`);
        continue;
      }
      expectEqual(cell.title, String(v), `${m.metric} ${field} title`);
      const { read, slack } = readBack(cell.text, `${m.metric} ${field}`);
      const want = field === 'relative_change' ? v * 100 : v;
      if (!(Math.abs(read - want) <= slack)) {
        throw new Error(`${m.metric} ${field}: cell reads ${cell.text}, value ${want}`);
      }
    }
  }
}

try {
  await check('the CLI: the 64 vs 2 pair exits 0 (comparable), two plans exit 1', async () => {
    expectEqual(pair.status, 0, `exit code (reasons: ${JSON.stringify(pair.json.reasons)})`);
    expectEqual(pair.json.comparable, true, 'comparable');
    expectEqual(twoPlans.status, 1, 'exit code for two plans');
    expectEqual(twoPlans.json.same_protocol, false, 'same_protocol for two plans');
  });

  await page.goto(`${base}#/compare`);
  await check('#/compare preloads the first two receipts of receipts.json; the comparison deep-equals the CLI', async () => {
    await waitFor(names.baseline, names.treatment);
    deepStrictEqual(await shown(), pair.json);
    expectEqual(await page.inputValue('#baseline-site'), '0', '#baseline-site');
    expectEqual(await page.inputValue('#treatment-site'), '1', '#treatment-site');
    const options = await page.$$eval('#baseline-site option', (os) => os.map((o) => o.textContent));
    deepStrictEqual(options, ['—', ...listing.receipts.map((r) => r.name)]);
  });

  // Everything from here on works with the network blocked.
  offline = true;

  await check('banners, verdict, knobs and caveat say what the CLI says', async () => {
    for (const arm of ['baseline', 'treatment']) {
      const q = await page.getAttribute(`#${arm}-banner`, 'data-qualified');
      expectEqual(q, String(pair.json[arm].qualified), `#${arm}-banner data-qualified`);
      const text = await page.innerText(`#${arm}-banner`);
      if (!text.includes(pair.json[arm].qualified ? 'QUALIFIED' : 'UNQUALIFIED')) throw new Error(text);
      if (!text.includes(pair.json[arm].source)) throw new Error(`banner lacks the file name: ${text}`);
    }
    expectEqual(await page.getAttribute('#compare-verdict', 'data-comparable'), 'true', 'data-comparable');
    const verdict = await page.innerText('#compare-verdict');
    if (!verdict.startsWith('Comparable')) throw new Error(verdict);
    const knobs = await page.innerText('#compare-knobs');
    expectEqual(knobs.trim(), 'Changed: max_num_seqs 64 → 2', '#compare-knobs');
    const caveat = await page.innerText('#compare-caveat');
    if (!caveat.includes(pair.json.caveat)) throw new Error(`#compare-caveat reads ${caveat}`);
    if (!caveat.includes('not a measured effect')) throw new Error(caveat);
    expectEqual(await page.getAttribute('#compare-protocol', 'data-same'), 'true', '#compare-protocol');
  });

  await check('#compare-table: every metric, exact values in data-value, readable text equal to them', async () => {
    await checkTable(pair.json);
  });

  await check('one line on top: the headline changes as the JSON has them, and "an observation, not a measured effect"', async () => {
    const line = (await page.innerText('#compare-summary')).trim();
    if (!line.startsWith('Treatment vs baseline: ')) throw new Error(line);
    if (!line.endsWith('one receipt each: an observation, not a measured effect.')) throw new Error(line);
    // As the page writes a change: one decimal, `+` when positive, and a tiny negative that
    // rounds to zero read as 0.0% (never "-0.0%").
    const pct = (r) => {
      const text = (r * 100).toFixed(1);
      return `${r > 0 ? '+' : ''}${text === '-0.0' ? '0.0' : text}%`;
    };
    const r = pair.json.metrics.find((m) => m.metric === 'throughput_tok_s').relative_change;
    expectIncludes(line, `output throughput ${pct(r)}`, '#compare-summary');
    for (const key of ['ttft_p50_ms', 'ttft_p99_ms', 'e2el_p99_ms']) {
      const rc = pair.json.metrics.find((m) => m.metric === key).relative_change;
      if (rc !== null) expectIncludes(line, pct(rc), `#compare-summary ${key}`);
    }
  });

  await check('metric names, not raw keys: no key of the JSON is shown anywhere in the view', async () => {
    const text = await page.innerText('#view-compare');
    for (const m of pair.json.metrics) {
      if (text.includes(m.metric)) throw new Error(`raw key ${m.metric} shown`);
    }
    for (const name of ['Output throughput', 'TTFT p99', 'E2E latency p50', 'Requests completed']) {
      expectIncludes(text, name, 'the compare view');
    }
  });

  await check('overlaid CDFs of TTFT and E2E latency: drawn, and their tables equal `receipt audit --json` latency of each side', async () => {
    const quantiles = { count: 'count', mean: 'mean_ms', p50: 'p50_ms', p90: 'p90_ms', p99: 'p99_ms', max: 'max_ms' };
    for (const metric of ['ttft', 'e2el']) {
      const rows = await page.$$eval(`#compare-quantiles-${metric} tbody tr`, (trs) =>
        trs.map((tr) => ({
          q: tr.dataset.quantile,
          cells: [...tr.querySelectorAll('td')].map((td) => ({ value: td.dataset.value, title: td.title, text: td.innerText })),
        })),
      );
      deepStrictEqual(rows.map((r) => r.q), Object.keys(quantiles), `${metric} quantile rows`);
      const places = [new Set(), new Set()];
      for (const row of rows) {
        for (const [j, arm] of ['baseline', 'treatment'].entries()) {
          const facts = audits[arm].latency.find((l) => l.metric === metric);
          const v = facts[quantiles[row.q]];
          const cell = row.cells[j];
          expectEqual(cell.value, v === null ? '' : String(v), `${metric} ${row.q} ${arm} data-value`);
          if (v === null) continue;
          expectEqual(cell.title, String(v), `${metric} ${row.q} ${arm} title`);
          const { read, slack } = readBack(cell.text, `${metric} ${row.q} ${arm}`);
          if (!(Math.abs(read - v) <= slack)) throw new Error(`${metric} ${row.q} ${arm}: ${cell.text} is not ${v}`);
          if (row.q !== 'count') places[j].add((cell.text.split('.')[1] ?? '').length);
        }
      }
      for (const p of places) if (p.size > 1) throw new Error(`${metric}: a column at several precisions: ${[...p]}`);
      const drawn = await page.$eval(`#compare-cdf-${metric}`, (c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let blue = 0;
        let orange = 0;
        for (let i = 0; i < d.length; i += 4) {
          if (d[i] < 90 && d[i + 1] < 140 && d[i + 2] > 200) blue += 1;
          if (d[i] > 190 && d[i + 1] > 90 && d[i + 1] < 150 && d[i + 2] < 60) orange += 1;
        }
        return { blue, orange, label: c.getAttribute('aria-label') };
      });
      if (drawn.blue < 100 || drawn.orange < 100) throw new Error(`${metric}: curves not both drawn (${JSON.stringify(drawn)})`);
      expectIncludes(drawn.label, 'baseline and treatment', `#compare-cdf-${metric} aria-label`);
    }
  });

  await check('hover over each overlaid CDF reads both arms\' shares at or below the latency under the pointer', async () => {
    for (const metric of ['ttft', 'e2el']) {
      const id = `compare-cdf-${metric}`;
      await page.$eval(`#${id}`, (c) => c.scrollIntoView({ block: 'center' }));
      const box = await page.locator(`#${id}`).boundingBox();
      let shown = '';
      for (let x = box.x + box.width * 0.2; x < box.x + box.width * 0.9 && !shown; x += 4) {
        await page.mouse.move(x, box.y + box.height * 0.5);
        shown = await page.$eval(`#${id}-readout`, (r) => (r.hidden ? '' : r.textContent));
      }
      const m = /^(\S+) ms: baseline (\S+) · treatment (\S+) at or below$/.exec(shown);
      if (!m) throw new Error(`${metric} readout: ${JSON.stringify(shown)}`);
      for (const share of [m[2], m[3]]) if (!(Number(share) >= 0 && Number(share) <= 1)) throw new Error(`${metric}: share ${share}`);
    }
    await page.mouse.move(0, 0);
  });

  await check('1280×800: the quantile tables and every table stay inside their card', async () => {
    const over = await page.evaluate(() => {
      const card = document.querySelector('.compare-result').getBoundingClientRect();
      return [...document.querySelectorAll('.compare-result table, .compare-result td, .compare-result canvas')]
        .filter((e) => !e.closest('.scroll') && e.getBoundingClientRect().right > card.right + 1)
        .map((e) => `${e.tagName.toLowerCase()}#${e.id} right ${Math.round(e.getBoundingClientRect().right)} > ${Math.round(card.right)}`);
    });
    if (over.length > 0) throw new Error(over.slice(0, 8).join('\n'));
    await page.screenshot({ path: path.join(shots, 'compare-view-overlay.png'), fullPage: true });
  });

  await check('the chart is drawn beside the table (a canvas with pixels, its text alternative the table)', async () => {
    const drawn = await page.$eval('#compare-chart', (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) ink += 1;
      return { ink, label: c.getAttribute('aria-label') };
    });
    if (drawn.ink < 500) throw new Error(`canvas nearly blank (${drawn.ink} dark pixels)`);
    if (!drawn.label.includes('table')) throw new Error(drawn.label);
  });

  await page.screenshot({ path: path.join(shots, 'compare-view.png'), fullPage: true });
  fs.mkdirSync(path.dirname(docShot), { recursive: true });
  fs.copyFileSync(path.join(shots, 'compare-view.png'), docShot);

  await check('400 px wide: every compare card fits the viewport (wide tables scroll inside their card)', async () => {
    await page.setViewportSize({ width: 400, height: 900 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(shots, 'compare-view-400.png'), fullPage: true });
    const over = await page.evaluate(() =>
      [...document.querySelectorAll('#view-compare *')]
        .filter((e) => !e.closest('.scroll') && e.getBoundingClientRect().right > window.innerWidth + 1)
        .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className} right ${Math.round(e.getBoundingClientRect().right)}`),
    );
    await page.setViewportSize({ width: 1280, height: 800 });
    if (over.length > 0) throw new Error(`overflowing at 400 px:\n${over.slice(0, 8).join('\n')}`);
  });

  await check('offline, via the file input: another plan as treatment is not one protocol, every differing field named', async () => {
    await page.setInputFiles('#treatment-file', at(names.other));
    await waitFor(names.baseline, names.other);
    deepStrictEqual(await shown(), twoPlans.json);
    expectEqual(await page.getAttribute('#compare-verdict', 'data-comparable'), 'false', 'data-comparable');
    expectEqual(await page.getAttribute('#compare-protocol', 'data-same'), 'false', '#compare-protocol data-same');
    const fields = await page.$$eval('#compare-protocol tr[data-field]', (trs) => trs.map((t) => t.dataset.field));
    deepStrictEqual(fields, twoPlans.json.protocol_differences.map((d) => d.field));
    for (const f of ['plan_sha256', 'timed_trace_sha256', 'requests']) {
      if (!fields.includes(f)) throw new Error(`${f} not named: ${fields}`);
    }
    const cells = await page.$$eval('#compare-protocol tr[data-field="requests"] td', (tds) => tds.map((t) => t.innerText));
    const want = twoPlans.json.protocol_differences.find((d) => d.field === 'requests');
    deepStrictEqual(cells, [want.baseline, want.treatment]);
    const rules = await page.$$eval('#compare-reasons li', (lis) => lis.map((l) => l.dataset.rule));
    deepStrictEqual(rules, twoPlans.json.reasons.map((r) => r.rule));
    // A short refusal: the first reason in one sentence, every reason in full folded below it.
    const sentence = (await page.innerText('#compare-verdict-line')).trim();
    if (!/^Not comparable: the two receipts ran different work \(\d+ protocol field\(s\) differ: [^.;]+\)(; \d+ more reasons? below)?\.$/.test(sentence)) {
      throw new Error(`#compare-verdict-line reads ${sentence}`);
    }
    expectEqual(await page.$eval('#compare-reasons-fold', (d) => d.tagName === 'DETAILS' && !d.open), true, 'reasons folded');
    const verdict = await page.innerText('#compare-verdict');
    if (/[0-9a-f]{16}/.test(verdict)) throw new Error(`the folded verdict shows hashes: ${verdict}`);
    expectEqual(await page.$('#compare-summary'), null, 'no summary line when not comparable');
    await page.click('#compare-reasons-fold summary');
    const full = await page.$$eval('#compare-reasons li', (lis) => lis.map((l) => l.innerText));
    deepStrictEqual(full, twoPlans.json.reasons.map((r) => `${r.rule}: ${r.message}`));
    expectEqual(await page.inputValue('#treatment-site'), '', '#treatment-site after a file');
    await checkTable(twoPlans.json);
  });
  await page.screenshot({ path: path.join(shots, 'compare-view-two-plans.png'), fullPage: true });

  await check('offline, via both file inputs: the pair again deep-equals the CLI', async () => {
    await page.setInputFiles('#baseline-file', at(names.baseline));
    await page.setInputFiles('#treatment-file', at(names.treatment));
    await waitFor(names.baseline, names.treatment);
    deepStrictEqual(await shown(), pair.json);
  });

  await check('the audit policy set in the Compare view judges both sides: the comparison deep-equals `receipt compare --json --policy P.json`', async () => {
    expectEqual(strictPair.json.baseline.qualified, false, 'the CLI: baseline qualified under the strict policy');
    expectEqual(await page.getAttribute('#compare-policy', 'data-whose'), 'defaults', '#compare-policy data-whose');
    expectIncludes(await page.innerText('#baseline-policy'), "Judged against loadproof's defaults: send lag ≤ 10 ms", '#baseline-policy');
    await page.fill('#compare-policy-max_send_lag_ms', '0.000001');
    await page.click('#compare-policy-apply');
    await waitForEqual(page, () => window.loadproofComparison ?? null, strictPair.json);
    expectEqual(await page.getAttribute('#compare-policy', 'data-whose'), 'yours', '#compare-policy data-whose');
    for (const arm of ['baseline', 'treatment']) {
      expectIncludes(await page.innerText(`#${arm}-policy`), 'Judged against your policy: send lag ≤ 0.000001 ms', `#${arm}-policy`);
      expectEqual(await page.getAttribute(`#${arm}-banner`, 'data-qualified'), 'false', `#${arm}-banner data-qualified`);
    }
    expectEqual(await page.getAttribute('#compare-verdict', 'data-comparable'), String(strictPair.json.comparable), 'data-comparable');
    await page.screenshot({ path: path.join(shots, 'compare-view-policy.png'), fullPage: true });
    await page.click('#compare-policy-reset');
    await waitForEqual(page, () => window.loadproofComparison ?? null, pair.json);
    expectEqual(await page.getAttribute('#compare-policy', 'data-whose'), 'defaults', 'data-whose after Reset');
  });

  await check('a file that is not a receipt: an error naming it, no comparison, no blank page', async () => {
    await page.setInputFiles('#treatment-file', bad);
    await page.waitForSelector('#treatment-error');
    const text = await page.innerText('#treatment-error');
    if (!text.includes('not-a-receipt.json')) throw new Error(`#treatment-error reads ${text}`);
    expectEqual(await shown(), null, 'window.loadproofComparison');
    if (!(await page.isVisible('#baseline-banner'))) throw new Error('the baseline slot went blank');
    const cli2 = run(['receipt', 'compare', at(names.baseline), bad]);
    expectEqual(cli2.status, 2, 'CLI exit code for the same file');
  });

  await check('Cancel stops an audit in progress: its result never arrives', async () => {
    // The file is set and Cancel pressed in one task of the page, before the file is read.
    const outcome = await page.evaluate(async ([bytes, name]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(bytes)], name));
      const input = document.querySelector('#treatment-file');
      input.files = dt.files;
      input.dispatchEvent(new Event('change', { bubbles: true }));
      await new Promise((r) => setTimeout(r, 0));
      const button = document.querySelector('#treatment-cancel');
      if (!button) return `no #treatment-cancel; slot reads ${document.querySelector('[data-arm=treatment]').innerText}`;
      const progress = document.querySelector('#treatment-progress') !== null;
      button.click();
      return progress ? 'clicked' : 'no #treatment-progress beside the button';
    }, [Array.from(fs.readFileSync(at(names.treatment))), names.treatment]);
    expectEqual(outcome, 'clicked', 'cancel');
    await page.waitForSelector('#treatment-status');
    const status = await page.innerText('#treatment-status');
    if (!status.startsWith(`Cancelled ${names.treatment}`)) throw new Error(`#treatment-status reads ${status}`);
    await page.waitForTimeout(1_500);
    expectEqual(await page.$('#treatment-banner'), null, '#treatment-banner after a cancel');
    expectEqual(await page.$('#treatment-progress'), null, '#treatment-progress after a cancel');
    expectEqual(await shown(), null, 'window.loadproofComparison after a cancel');
  });

  await check('the selects pick other published receipts, offline too (the page fetched them as it loaded)', async () => {
    await page.selectOption('#treatment-site', '1');
    await page.waitForSelector('#treatment-banner');
    const text = (await page.$('#treatment-error')) ? await page.innerText('#treatment-error') : '';
    if (text.trim() !== '') throw new Error(`#treatment-error reads ${text}`);
  });

  await check('keyboard: Tab reaches both file inputs', async () => {
    const seen = new Set();
    await page.focus('#nav-compare');
    for (let i = 0; i < 20 && seen.size < 2; i += 1) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate(() => document.activeElement?.id ?? '');
      if (id === 'baseline-file' || id === 'treatment-file') seen.add(id);
    }
    expectEqual(seen.size, 2, `file inputs reached by Tab (${[...seen]})`);
  });

  await check('no request left 127.0.0.1 before the block, and none was needed after it', async () => {
    const outside = blocked.filter((u) => !u.startsWith(base));
    if (outside.length > 0) throw new Error(outside.join('\n'));
    const after = blocked.filter((u) => u.startsWith(base) && !u.includes('/receipts/'));
    if (after.length > 0) throw new Error(`requests after the block: ${after.join('\n')}`);
  });
  await check('no page errors or console errors', () =>
    noErrors(pageErrors.filter((e) => !/Failed to load resource|ERR_FAILED/.test(e))));
} finally {
  await cleanUp({ browser, server, tmp });
}

finish();

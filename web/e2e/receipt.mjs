#!/usr/bin/env node
// Browser test of the receipt view: the page must say exactly what `loadproof receipt audit`
// says about the same file, and must say it offline.
//
// Why: the page and the CLI share loadproof_core's `audit()`; this test keeps them equal in
// practice on receipts made for real. It plans a replay of loadproof's seeded synthetic
// trace (BurstGPT layout), fires it with the native client at
// `loadproof sim` twice (clean, and with `--fault http500:5` stating three knobs: one the sim
// reads back, one it contradicts, one it does not name), serves a copy of dist/ that
// bundles both receipts in a `receipts.json` (as a published site would), and checks:
// the bundled receipts are listed and the first opens by itself; `window.loadproofAudit`
// deep-equals `receipt audit --json`; the banner, standings, ledger, timeline, the policy the
// standings were judged against and the claimant's statements and knobs (`#statements`) show
// what the CLI says; then, with every further network request blocked, a chosen receipt, a
// tampered one (one byte of the event log changed: that block is named as failed) and a
// file that is not a receipt (an error naming the file). The charts: backed at
// devicePixelRatio (also at 2×, in the dark scheme: a dark page and chart), latency on a log
// axis by default, /metrics counters as rates equal to the scrapes' Δ/Δt and summing to the
// CLI's token delta, hover readouts that say what the tables beside them say.
//
// The reviewer's audit policy (the "Audit policy" panel, `#receipt-policy`): a send-lag bound
// of 0.000001 ms typed into the page refuses arrival, and the page's audit deep-equals
// `receipt audit --json --policy P.json` of the same policy; numbers core refuses are named by
// field and never applied; a bad policy file is refused with core's message, changing nothing;
// after a reload the stored policy is still in force, a policy file loads, Reset restores
// loadproof's defaults, and a stored policy that no longer reads is ignored with a note.
//
// The keys the reviewer trusts (issue 19, the panel's "Trusted keys"): a receipt fired at a sim
// that signs its leases (`sim --signing-key`, keys from `loadproof key new`) is self-attested
// while no key is trusted; the sim's .pub line pasted makes it signed and the audit deep-equals
// `receipt audit --json --trust KEY.pub` (and the policy the panel offers as a file audits the
// same under `--policy`); a malformed line is refused by its line number, changing nothing;
// another key only (its .pub file chosen, the sim's removed) refuses the window, as the CLI's
// `--trust OTHER.pub` does; after a reload the key is still trusted.
//
// Run from the repo root after `web/build.sh` and `cargo build --release -p loadproof_cli`:
//   node web/e2e/receipt.mjs
// Environment: LOADPROOF_BIN (default
// target/release/loadproof), LOADPROOF_DIST (default dist), CHROMIUM (default /usr/bin/chromium).
// Prints one line per check, then `N passed, M failed`; exits 1 if any failed.
// Screenshots: target/screenshots/receipt-view*.png, and docs/receipt-view.png (1280×800).

import { execFileSync } from 'node:child_process';
import { deepStrictEqual } from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  TIMEOUT_MS, bailOnCrash, check, cleanUp, cliJson, collectErrors, dist, expectEqual, expectIncludes, finish,
  fromRoot, mustRun, noErrors, openSite, run, shots, startSim, sweepReadout, waitForEqual,
} from './harness.mjs';

/**
 * Opens the `<details>` `#id` (a long table whose rows the page builds on first opening) and
 * waits for its rows: the `toggle` that builds them fires after the click returns.
 */
async function openTable(page, id) {
  if (!(await page.$eval(`#${id}`, (d) => d.open))) await page.click(`#${id} > summary`);
  await page.waitForFunction((i) => document.querySelector(`#${i}`)?.open && document.querySelector(`#${i} tbody tr`), id);
}

bailOnCrash();

const docs = fromRoot('docs');
const EVENTS = 'native/events.jsonl';


const STORAGE_KEY = 'loadproof.auditPolicy';
const DEFAULT_POLICY = { schema: 'loadproof.audit-policy/v1', max_send_lag_ms: 10, max_scrape_gap_ms: 1000, max_waiting_scrapes: 2 };
/** A send-lag bound no real send meets: arrival is refused. */
const STRICT_POLICY = { ...DEFAULT_POLICY, max_send_lag_ms: 0.000001 };

/** `--policy FILE` when a policy file is given. */
const policyArgs = (policy) => (policy ? ['--policy', policy] : []);
const cliAudit = (file, policy = null) =>
  cliJson(['receipt', 'audit', '--json', ...policyArgs(policy), file], { allow: policy ? [0, 1] : [0] });
const cliVerdict = (file, policy = null) =>
  mustRun(['receipt', 'qualify', ...policyArgs(policy), file], { allow: [0, 1] }).stdout.trimEnd().split('\n');

/** Fires `plan` at a fresh sim started with `simArgs` (`fireArgs`: more for fire); returns the receipt path. */
async function fire(plan, simArgs, out, fireArgs = []) {
  const sim = await startSim({ args: simArgs });
  try {
    // A run with failed requests is still a receipt (fire may exit 1 for it).
    const engine = fireArgs.includes('--engine') ? [] : ['--engine', 'native'];
    const r = run(['fire', plan, '--endpoint', sim.url, ...engine, '--acquire-lease', '120', ...fireArgs, '--out', out]);
    if (!fs.existsSync(out)) throw new Error(`fire wrote no receipt (exit ${r.status}): ${r.stderr}`);
  } finally {
    await sim.stop();
  }
  return out;
}

// --- receipts, made for real ------------------------------------------------------------------
const t0 = Date.now();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadproof-e2e-receipt-'));
// The synthetic trace (seeded, BurstGPT layout) at 20×: 60 requests fire in about 6 s. A real
// BurstGPT prefix would do as well but spans minutes at any readable speed-up.
const trace = path.join(tmp, 'synthetic-burstgpt.csv');
mustRun(['trace', 'synth', '--out', trace]);
const plan = path.join(tmp, 'plan');
mustRun(['plan', trace, '--out', plan, '--max-requests', '60', '--time-scale', '20']);
const good = await fire(plan, [], path.join(tmp, 'baseline.receipt'));
// Three knobs: the sim states max_num_seqs (256 by default: read back) and decode_step_ms (2 by
// default: 5 is contradicted); it names no `scheduler` (stated only).
const faulty = await fire(plan, ['--fault', 'http500:5'], path.join(tmp, 'faulty.receipt'), [
  '--knob', 'max_num_seqs=256', '--knob', 'decode_step_ms=5', '--knob', 'scheduler=fcfs',
]);
// Two key pairs: the sim's, which signs every lease it grants, and one no lessor here holds.
const simKey = path.join(tmp, 'sim.key');
mustRun(['key', 'new', '--out', simKey, '--comment', 'sim at e2e']);
const otherKey = path.join(tmp, 'other.key');
mustRun(['key', 'new', '--out', otherKey, '--comment', 'someone else']);
const signed = await fire(plan, ['--signing-key', simKey], path.join(tmp, 'signed.receipt'));
/** A public key line's id as core computes it: the first 16 hex digits of its bytes' sha256. */
const keyId = (line) => crypto.createHash('sha256').update(Buffer.from(line.trim().split(/\s+/)[1], 'base64')).digest('hex').slice(0, 16);
const simLine = fs.readFileSync(`${simKey}.pub`, 'utf8');
const otherLine = fs.readFileSync(`${otherKey}.pub`, 'utf8');
// A key file whose second line is not a key: the CLI refuses it, naming that line.
const badKeys = path.join(tmp, 'bad-keys.pub');
fs.writeFileSync(badKeys, `${otherLine.trim()}\nloadproof-ed25519 not-a-key!\n`);

// The peer load generators (tools/peers/install.sh; tools/test.sh sets PEERS_*_PYTHON): the same
// plan fired by real AIPerf and GuideLLM, their own records read by the audit.
const peers = [];
for (const [tool, label] of [['aiperf', 'AIPerf'], ['guidellm', 'GuideLLM']]) {
  const python = process.env[`PEERS_${tool.toUpperCase()}_PYTHON`];
  const tokenizer = process.env.VLLM_LAB_TOKENIZER;
  if (!python || !tokenizer) {
    console.log(`(no PEERS_${tool.toUpperCase()}_PYTHON / VLLM_LAB_TOKENIZER: the ${label} receipt is not checked)`);
    continue;
  }
  const out = path.join(tmp, `${tool}.receipt`);
  await fire(plan, [], out, ['--engine', tool, '--python', python, '--tokenizer', tokenizer]);
  peers.push({ tool, label, file: out });
}

// The same receipt as a v1 JSON document (`receipt upgrade --form json`) with one digit of the
// event log changed (inside the block's content, where the JSON string escapes quotes): only
// that block's digest fails.
const goodJson = path.join(tmp, 'baseline-v1.json');
mustRun(['receipt', 'upgrade', good, '--form', 'json', '--out', goodJson]);
const tampered = path.join(tmp, 'tampered.json');
{
  const text = fs.readFileSync(goodJson, 'utf8');
  const marker = '{\\"index\\":';
  const at = text.indexOf(marker);
  if (at < 0) throw new Error('no event log record in the receipt');
  const digit = at + marker.length;
  const flipped = text[digit] === '1' ? '2' : '1';
  fs.writeFileSync(tampered, text.slice(0, digit) + flipped + text.slice(digit + 1));
}
// The record stream cut short, as a writer killed mid-run leaves it: read up to its last whole
// record, unsealed.
const unsealed = path.join(tmp, 'unsealed.receipt');
{
  const bytes = fs.readFileSync(good);
  fs.writeFileSync(unsealed, bytes.subarray(0, Math.floor(bytes.length * 0.7)));
}
const notReceipt = path.join(tmp, 'not-a-receipt.json');
fs.writeFileSync(notReceipt, '{"hello": "world"}\n');
// The reviewer's policies: one that refuses arrival, and one that is not a policy (a field
// missing), each as the CLI's --policy reads it.
const strictPolicy = path.join(tmp, 'strict-policy.json');
fs.writeFileSync(strictPolicy, JSON.stringify(STRICT_POLICY, null, 2));
const badPolicy = path.join(tmp, 'bad-policy.json');
fs.writeFileSync(badPolicy, JSON.stringify({ schema: 'loadproof.audit-policy/v1', max_send_lag_ms: 5 }));

// A copy of the app that bundles both receipts, as a published site would.
const site = path.join(tmp, 'site');
fs.cpSync(dist, site, { recursive: true });
fs.mkdirSync(path.join(site, 'receipts'));
const bundledFiles = [good, faulty].map((file) => {
  const bytes = fs.readFileSync(file);
  const name = path.basename(file);
  fs.writeFileSync(path.join(site, 'receipts', name), bytes);
  return {
    name,
    path: `receipts/${name}`,
    sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
    bytes: bytes.length,
  };
});
fs.writeFileSync(
  path.join(site, 'receipts.json'),
  JSON.stringify({ schema: 'loadproof.site-receipts/v1', receipts: bundledFiles }, null, 2),
);
console.log(`# receipts fired and site prepared in ${((Date.now() - t0) / 1000).toFixed(1)} s (${tmp})`);

const expected = {
  good: cliAudit(good),
  faulty: cliAudit(faulty),
  tampered: cliAudit(tampered),
  goodJson: cliAudit(goodJson),
  unsealed: cliAudit(unsealed),
  strictGood: cliAudit(good, strictPolicy),
  signed: cliAudit(signed),
  signedTrusted: cliJson(['receipt', 'audit', '--json', '--trust', `${simKey}.pub`, signed]),
  signedOther: cliJson(['receipt', 'audit', '--json', '--trust', `${otherKey}.pub`, signed]),
  goodOther: cliJson(['receipt', 'audit', '--json', '--trust', `${otherKey}.pub`, good]),
};

// --- the browser ----------------------------------------------------------------------------
let offline = false;
const { server, base, browser, context, blocked } = await openSite(site, {
  allowed: (url, host) => !offline && (url.host === host || url.protocol === 'data:' || url.protocol === 'blob:'),
});
fs.mkdirSync(shots, { recursive: true });
const pageErrors = [];
const page = await context.newPage();
page.setDefaultTimeout(TIMEOUT_MS);
collectErrors(page, pageErrors, { quiet: () => offline });

/** Waits until the page published the audit of `name` (or shows an error); returns it. */
async function waitForAudit(name) {
  await page.waitForFunction(
    (n) => window.loadproofAuditSource === n || document.querySelector('#receipt-error'),
    name,
    { timeout: TIMEOUT_MS },
  );
  const error = await page.$('#receipt-error');
  if (error) throw new Error(`page shows an error: ${await error.innerText()}`);
  await page.waitForSelector('#receipt-banner');
  return page.evaluate(() => window.loadproofAudit);
}

/** Chooses `file` with the file input and waits for its audit. */
async function choose(file) {
  await page.evaluate(() => {
    window.loadproofAudit = undefined;
    window.loadproofAuditSource = undefined;
    window.loadproofVerdict = undefined;
  });
  await page.setInputFiles('#receipt-file', file);
  return waitForAudit(path.basename(file));
}

/** Names compared with runs of digits by value (the page's `natural_cmp`), ties by text. */
function naturalCmp(a, b) {
  const chunks = (s) => s.match(/\d+|\D+/g) ?? [];
  const x = chunks(a);
  const y = chunks(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] === undefined) return -1;
    if (y[i] === undefined) return 1;
    let order;
    if (/^\d/.test(x[i]) && /^\d/.test(y[i])) {
      const p = x[i].replace(/^0+/, '');
      const q = y[i].replace(/^0+/, '');
      order = p.length - q.length || (p < q ? -1 : p > q ? 1 : 0);
    } else {
      order = x[i] < y[i] ? -1 : x[i] > y[i] ? 1 : 0;
    }
    if (order !== 0) return order;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Opens the digests table (its rows are put in the page when first opened) and waits for them. */
async function openDigests(page) {
  if (!(await page.$eval('#digests-every', (d) => d.open))) await page.click('#digests-every > summary');
  await page.waitForFunction(() => {
    const every = document.querySelector('#digests-every summary')?.textContent ?? '';
    const n = Number(/\((\d+)\)/.exec(every)?.[1]);
    return document.querySelectorAll('#digests-table tbody tr').length === n;
  });
}

/** The checks every loaded receipt gets: the page against the CLI's audit and verdict (both
 *  judged against `policy`, a file, or loadproof's defaults when null). */
async function checkReceipt(label, file, audit, cli, policy = null) {
  await check(`${label}: window.loadproofAudit deep-equals \`receipt audit --json\``, async () => {
    deepStrictEqual(audit, cli);
  });
  await check(`${label}: the banner says the CLI's verdict`, async () => {
    const lines = cliVerdict(file, policy);
    expectEqual(await page.innerText('#receipt-verdict'), lines[0], '#receipt-verdict');
    expectEqual(await page.getAttribute('#receipt-banner', 'data-qualified'), String(cli.qualified), 'data-qualified');
    if (!cli.qualified) {
      const shown = await page.$$eval('#receipt-banner-refusals li', (lis) => lis.map((li) => li.innerText));
      deepStrictEqual(shown, lines.slice(1).map((l) => l.replace(/^ {2}\* /, '')));
    }
    expectEqual(!!(await page.$('#receipt-simulator')), cli.simulator, '#receipt-simulator present');
  });
  await check(`${label}: all 8 standings with the CLI's verdict, reason and settle`, async () => {
    const names = Object.keys(cli.standings);
    expectEqual(names.length, 8, 'standings in the CLI');
    for (const name of names) {
      const s = cli.standings[name];
      const el = `#standing-${name}`;
      expectEqual(await page.getAttribute(el, 'data-positive'), String(s.positive), `${el} data-positive`);
      const text = await page.innerText(el);
      expectIncludes(text, s.positive ? 'positive' : 'refused', el);
      expectIncludes(text, s.reason, el);
      if (s.settle) expectIncludes(text, s.settle, el);
    }
  });
  await check(`${label}: the summary under the verdict: a chip per standing, the CLI's headline numbers`, async () => {
    const chips = await page.$$eval('#summary-standings .chip', (bs) =>
      bs.map((b) => ({ id: b.id, positive: b.dataset.positive, title: b.title })),
    );
    // In the standings card's order (the eight in reading order), each as the CLI judged it.
    const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    deepStrictEqual(
      [...chips].sort(byId),
      Object.entries(cli.standings)
        .map(([name, s]) => ({ id: `chip-${name}`, positive: String(s.positive), title: s.reason }))
        .sort(byId),
    );
    const cards = await page.$$eval('#receipt-standings li.standing', (lis) => lis.map((li) => li.id.replace(/^standing-/, 'chip-')));
    deepStrictEqual(chips.map((c) => c.id), cards, 'chips in the standings card order');
    const title = async (sel) => page.getAttribute(sel, 'title');
    const exact = (x) => (x == null ? null : String(x));
    expectEqual(await title('#summary-throughput'), exact(cli.client?.output_tokens_per_s), '#summary-throughput title');
    expectEqual(await title('#summary-lag'), exact(cli.arrival?.lag_p99_ms), '#summary-lag title');
    for (const metric of ['ttft', 'e2el']) {
      const l = cli.latency.find((x) => x.metric === metric);
      const want = `p50 ${l?.p50_ms ?? '—'} ms, p99 ${l?.p99_ms ?? '—'} ms`;
      expectEqual(await title(`#summary-${metric}`), want, `#summary-${metric} title`);
    }
    const failed = (await page.innerText('#summary-failed')).replaceAll(',', '');
    expectEqual(failed, `${cli.ledger.failed} of ${cli.ledger.offered}`, '#summary-failed');
    // A chip opens its reason: the standing scrolls into view.
    const first = Object.keys(cli.standings)[0];
    await page.click(`#chip-${first}`);
    await page.waitForFunction((id) => {
      const r = document.getElementById(id).getBoundingClientRect();
      return r.top > -2 && r.top < window.innerHeight;
    }, `standing-${first}`);
    await page.evaluate(() => window.scrollTo(0, 0));
    // The contents strip names only cards the report has, and stays in view.
    const targets = await page.$$eval('#receipt-toc button', (bs) => bs.map((b) => b.dataset.target));
    const missing = await page.evaluate((ids) => ids.filter((id) => !document.getElementById(id)), targets);
    deepStrictEqual(missing, [], 'contents entries without a card');
    await page.click('#receipt-toc button[data-target="receipt-evidence"]');
    await page.waitForFunction(() => {
      const toc = document.getElementById('receipt-toc').getBoundingClientRect();
      return window.scrollY > 0 && toc.top >= -1 && toc.top < 2;
    });
    await page.evaluate(() => window.scrollTo(0, 0));
  });
  await check(`${label}: one digest row per block, each ok as the CLI says`, async () => {
    // Rows are put in the page when the table is first opened (open already for a few blocks).
    await openDigests(page);
    const rows = await page.$$eval('#digests-table tbody tr', (trs) =>
      trs.map((tr) => ({ block: tr.dataset.block, ok: tr.dataset.ok === 'true' })),
    );
    // In a reader's order: metrics/2 before metrics/10.
    const natural = [...cli.digests].sort((a, b) => naturalCmp(a.block, b.block));
    deepStrictEqual(rows, natural.map((d) => ({ block: d.block, ok: d.ok })));
  });
  await check(`${label}: ledger, client and engine numbers as in the CLI`, async () => {
    const l = cli.ledger;
    expectEqual(await page.innerText('#ledger-offered'), String(l.offered), '#ledger-offered');
    expectEqual(await page.innerText('#ledger-completed'), String(l.completed), '#ledger-completed');
    expectEqual(await page.innerText('#ledger-failed'), String(l.failed), '#ledger-failed');
    expectEqual(
      await page.getAttribute('#client-output', 'title'),
      String(cli.client.output_tokens),
      '#client-output title',
    );
    expectEqual(await page.getAttribute('#client-rate', 'title'), String(cli.client.output_tokens_per_s), '#client-rate title');
    const gen = await page.innerText('#engine-generation');
    expectEqual(gen.replaceAll(',', ''), String(cli.engine.generation_tokens_delta), '#engine-generation');
    expectEqual(await page.innerText('#foreign-reason'), cli.foreign_work.reason, '#foreign-reason');
  });
  await check(`${label}: latency table: 4 metrics, exact values in titles, readable text`, async () => {
    const rows = await page.$$eval('#latency-table tbody tr', (trs) =>
      trs.map((tr) => ({
        metric: tr.dataset.metric,
        titles: [...tr.querySelectorAll('td.num')].slice(1).map((td) => td.title),
        texts: [...tr.querySelectorAll('td.num')].map((td) => td.innerText),
      })),
    );
    deepStrictEqual(rows.map((r) => r.metric), cli.latency.map((l) => l.metric));
    rows.forEach((r, i) => {
      const l = cli.latency[i];
      deepStrictEqual(r.titles, [l.mean_ms, l.p50_ms, l.p90_ms, l.p99_ms, l.max_ms].map((v) => (v === null ? '' : String(v))));
      for (const t of r.texts) {
        if (/\d\.\d{5,}/.test(t)) throw new Error(`${r.metric}: unreadable number ${t}`);
      }
    });
  });
  await check(`${label}: charts drawn (histograms, CDFs, timeline, /metrics) with no drawing error`, async () => {
    for (const id of ['histograms-chart', 'cdfs-chart', 'timeline-chart', 'metrics-chart']) {
      const painted = await page.$eval(`#${id}`, (c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let ink = 0;
        for (let i = 0; i < d.length; i += 16) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) ink += 1;
        return ink;
      });
      if (painted < 50) throw new Error(`#${id} looks blank (${painted} inked samples)`);
    }
    const problems = await page.$$eval('.receipt-figure p.error', (ps) => ps.map((p) => p.innerText));
    if (problems.length > 0) throw new Error(problems.join('\n'));
    const hist = await page.$$eval('#receipt-histograms details[id^="hist-"]', (ds) => ds.map((d) => d.id));
    deepStrictEqual(hist, cli.latency.filter((l) => l.count > 0).map((l) => `hist-${l.metric}`));
  });
  await check(`${label}: over time: the slice table equals \`receipt audit --json\`'s over_time, every slice and value; each panel's hover readout equals its slice's row; the contents entry scrolls to it`, async () => {
    const o = cli.over_time;
    if (!o) throw new Error('the CLI audit has no over_time');
    if (o.slices.length < 1 || o.slices.length > 30) throw new Error(`${o.slices.length} slices`);
    const keys = ['start_s', 'end_s', 'started', 'completed', 'started_per_s', 'completed_per_s', 'output_tokens',
      'output_tokens_per_s', 'ttft_p50_ms', 'ttft_p99_ms', 'e2e_p50_ms', 'e2e_p99_ms'];
    const rows = await page.$$eval('#over-time-table tbody tr', (trs) =>
      trs.map((tr) => ({
        slice: tr.dataset.slice,
        titles: [...tr.querySelectorAll('td.num')].map((td) => td.title),
        texts: [...tr.querySelectorAll('td.num')].map((td) => td.innerText),
      })),
    );
    expectEqual(rows.length, o.slices.length, '#over-time-table rows');
    rows.forEach((r, k) => {
      expectEqual(r.slice, String(k), 'data-slice');
      deepStrictEqual(r.titles, keys.map((key) => (o.slices[k][key] === null ? '' : String(o.slices[k][key]))), `slice ${k}`);
      for (const t of r.texts) {
        // Readable: at most 4 significant digits after the point (0.0001188 is readable).
        if (/\d\.0*[1-9]\d{4,}/.test(t)) throw new Error(`slice ${k}: unreadable number ${t}`);
      }
    });
    const sum = (key) => o.slices.reduce((n, s) => n + s[key], 0);
    expectEqual(sum('started'), o.requests, 'started over the slices');
    expectEqual(sum('completed'), o.requests, 'completed over the slices');
    expectEqual(o.requests, cli.latency.find((l) => l.metric === 'e2el').count, 'sliced requests = the E2E population');
    expectIncludes(await page.innerText('#over-time-method'), o.axis, '#over-time-method');
    const painted = await page.$eval('#over-time-chart', (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      for (let i = 0; i < d.length; i += 16) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) ink += 1;
      return ink;
    });
    if (painted < 50) throw new Error(`#over-time-chart looks blank (${painted} inked samples)`);
    // Each panel reads back the slice under the pointer as the table's row writes it.
    const column = { started: 4, completed: 5, 'client: output tokens': 7, 'TTFT p50': 8, 'TTFT p99': 9, 'E2E p50': 10, 'E2E p99': 11 };
    for (const [y, panel] of [[0.2, 'requests'], [0.53, 'tokens'], [0.86, 'latency']]) {
      const read = await sweepReadout(page, 'over-time', y, [0.2, 0.9]);
      const m = /^(\S+)–(\S+) s: (.+)$/.exec(read);
      if (!m) throw new Error(`over-time readout (${panel}): ${JSON.stringify(read)}`);
      const row = rows.find((r) => r.texts[0] === m[1] && r.texts[1] === m[2]);
      if (!row) throw new Error(`${panel}: no slice ${m[1]}–${m[2]} in #over-time-table`);
      let named = 0;
      for (const part of m[3].split(' · ')) {
        const v = /^(.+?) (\S+)( ms)?$/.exec(part);
        if (!v) throw new Error(`${panel}: readout part ${JSON.stringify(part)}`);
        if (!(v[1] in column)) continue; // the engine's own count: not a column of the table
        expectEqual(v[2], row.texts[column[v[1]]], `${panel} readout ${v[1]} in slice ${m[1]}–${m[2]}`);
        named += 1;
      }
      if (named === 0) throw new Error(`${panel}: the readout names no column: ${read}`);
    }
    await page.mouse.move(0, 0);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.click('#receipt-toc button[data-target="receipt-over-time"]');
    await page.waitForFunction(() => {
      const r = document.getElementById('receipt-over-time').getBoundingClientRect();
      return window.scrollY > 0 && r.top > -2 && r.top < window.innerHeight;
    });
    await page.evaluate(() => window.scrollTo(0, 0));
  });
  await check(`${label}: timeline has one row per request, failures as in the ledger`, async () => {
    expectEqual(await page.innerText('#timeline-summary tbody tr:first-child td'), String(cli.ledger.offered), 'requests');
    expectEqual(await page.innerText('#timeline-failed'), String(cli.ledger.failed), '#timeline-failed');
    await openTable(page, 'timeline-every');
    const rows = await page.$$eval('#timeline-table tbody tr', (trs) => trs.length);
    expectEqual(rows, cli.ledger.offered, '#timeline-table rows');
  });
  await check(`${label}: the policy judged against, and the receipt's own bound as the claimant's intent`, async () => {
    const whose = policy ? 'your policy' : "loadproof's defaults";
    const bound = String(cli.policy.max_send_lag_ms);
    expectIncludes(await page.innerText('#arrival-judged'), `send lag ≤ ${bound} ms (${whose})`, '#arrival-judged');
    const standings = await page.innerText('#standings-policy');
    expectIncludes(standings, `Judged against ${whose}: send lag ≤ ${bound} ms · scrape gap ≤ ${cli.policy.max_scrape_gap_ms} ms · a queue across ${cli.policy.max_waiting_scrapes} consecutive scrapes refuses`, '#standings-policy');
    const claimed = cli.arrival.claimed_bound_ms;
    if (claimed === null || claimed === undefined) throw new Error('the CLI names no claimed bound for a native receipt');
    expectEqual(await page.getAttribute('#arrival-claimed', 'title'), String(claimed), '#arrival-claimed title');
    expectIncludes(await page.innerText('#arrival-claimed'), "the claimant's intent", '#arrival-claimed');
    expectIncludes(standings, `own send-lag bound, ${claimed} ms, is the claimant's intent`, '#standings-policy');
    expectEqual(await page.getAttribute('#occupancy-gap-bound td', 'title'), String(cli.policy.max_scrape_gap_ms), '#occupancy-gap-bound title');
    expectEqual(await page.innerText('#occupancy-waiting-bound td'), String(cli.policy.max_waiting_scrapes), '#occupancy-waiting-bound');
  });
  await check(`${label}: #statements lists the audit's statements and knobs, as the CLI's JSON does`, async () => {
    expectIncludes(await page.innerText('#statements-heading'), "claimant's statements", '#statements-heading');
    expectIncludes(await page.innerText('#statements'), 'never used to make a standing positive', '#statements');
    const rows = await page.$$eval('#statements-table tbody tr[data-field]', (trs) =>
      trs.map((tr) => ({ field: tr.dataset.field, cells: [...tr.querySelectorAll('th, td')].map((c) => c.innerText) })),
    );
    deepStrictEqual(rows.map((r) => r.field), cli.statements.map((s) => s.field));
    rows.forEach((r, i) => deepStrictEqual(r.cells, [cli.statements[i].field, cli.statements[i].value, cli.statements[i].why]));
    const knobs = await page.$$eval('#knobs-table tbody tr', (trs) =>
      trs.map((tr) => ({ name: tr.dataset.knob, status: tr.dataset.status, text: tr.innerText })),
    );
    deepStrictEqual(knobs.map(({ name, status }) => ({ name, status })), cli.knobs.map(({ name, status }) => ({ name, status })));
    knobs.forEach((k, i) => {
      const c = cli.knobs[i];
      expectIncludes(k.text, c.stated, `${k.name} stated`);
      if (c.status === 'read_back') expectIncludes(k.text, `read back from ${c.source}`, k.name);
      if (c.status === 'contradicted') expectIncludes(k.text, `contradicted: ${c.source} says ${c.read_back}`, k.name);
      if (c.status === 'stated') expectIncludes(k.text, 'stated only', k.name);
    });
    expectEqual(!!(await page.$('#knobs-none')), cli.knobs.length === 0, '#knobs-none present');
  });
  await check(`${label}: raw evidence: ${EVENTS} opens to its text`, async () => {
    const sel = `details.evidence[data-block="${EVENTS}"]`;
    await page.click(`${sel} summary`);
    const text = await page.innerText(`${sel} pre.preview`);
    expectIncludes(text, '{"index":', 'preview'); // records in the order requests ended
    // The fixed blocks, then the scrape bodies (in their own group, filled when first opened).
    const scrape = (b) => /^metrics\/[0-9]+$/.test(b);
    const all = cli.digests.map((d) => d.block);
    const group = await page.$('#evidence-scrapes');
    expectEqual(!!group, all.some(scrape), '#evidence-scrapes present');
    if (group) {
      expectEqual(await page.$$eval('#evidence-scrapes details.evidence', (ds) => ds.length), 0, 'bodies before opening');
      await page.click('#evidence-scrapes > summary');
      const count = all.filter(scrape).length;
      expectEqual(await page.getAttribute('#evidence-scrapes', 'data-count'), String(count), 'data-count');
      // The toggle event is queued: the bodies are put in the page just after the click, a
      // page of 200 at a time.
      const pages = Math.ceil(count / 200);
      for (let p = 1; p <= pages; p++) {
        await page.waitForFunction((n) => document.querySelectorAll('#evidence-scrapes details.evidence').length === n, Math.min(count, p * 200));
        if (p < pages) await page.click('#evidence-scrapes-more');
      }
      expectEqual(!!(await page.$('#evidence-scrapes-more')), false, 'no more pages');
    }
    const blocks = await page.$$eval('details.evidence', (ds) => ds.map((d) => d.dataset.block));
    deepStrictEqual(blocks, [...all.filter((b) => !scrape(b)), ...all.filter(scrape).sort(naturalCmp)]);
  });
}

/** The backing store of every chart against its laid-out size: CSS width × devicePixelRatio. */
async function backingMatches(page) {
  return page.$$eval('canvas[id$="-chart"]', (cs) =>
    cs
      .filter((c) => c.clientWidth > 0)
      .map((c) => ({ id: c.id, width: c.width, height: c.height, want: Math.round(c.clientWidth * devicePixelRatio), wantH: Math.round(c.clientHeight * devicePixelRatio) })),
  );
}

/** A cheap fingerprint of a canvas's pixels (to see it redrawn). */
const pixelsOf = (page, id) =>
  page.$eval(`#${id}`, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let h = 0;
    for (let i = 0; i < d.length; i += 12) h = (h * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) % 1000000007;
    return h;
  });

/** The charts a reviewer reads: sharp, on a log axis by default, counters as rates that equal
 *  the scrapes' own values and the CLI's token delta, and a readout under the pointer that
 *  says what the tables say. */
async function checkCharts(label, cli) {
  await check(`${label}: every chart's backing store is its CSS size × devicePixelRatio`, async () => {
    const sizes = await backingMatches(page);
    if (sizes.length < 4) throw new Error(`only ${sizes.length} charts laid out`);
    for (const s of sizes) {
      expectEqual(s.width, s.want, `${s.id} backing width`);
      expectEqual(s.height, s.wantH, `${s.id} backing height`);
    }
  });
  await check(`${label}: latency charts on a log axis by default; unticking redraws them linear`, async () => {
    expectEqual(await page.$eval('#latency-log', (i) => i.checked), true, '#latency-log checked');
    const before = await pixelsOf(page, 'histograms-chart');
    const redrawn = async (from) => {
      for (let i = 0; i < 40; i++) {
        const now = await pixelsOf(page, 'histograms-chart');
        if (now !== from) return now;
        await page.waitForTimeout(50);
      }
      throw new Error('the histograms were not redrawn');
    };
    await page.click('#latency-log');
    const linear = await redrawn(before);
    await page.click('#latency-log');
    expectEqual(await redrawn(linear), before, 'log again draws the same picture');
  });
  await check(`${label}: /metrics counters drawn as rates: each rate is Δ/Δt of the scrapes, Σ Δ equals the CLI's token delta`, async () => {
    await openTable(page, 'metrics-every');
    const rows = await page.$$eval('#metrics-table tbody tr', (trs) =>
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll('td')];
        const title = (k) => (cells[k].getAttribute('title') === null ? null : Number(cells[k].getAttribute('title')));
        return { url: tr.dataset.url, phase: cells[0].textContent, t: title(1), gen: title(5), rate: title(7), reset: cells[7].dataset.reset === 'true', text: cells[7].textContent };
      }),
    );
    const one = rows.filter((r) => r.url === '0');
    if (one.length < 3) throw new Error(`${one.length} scrapes of the first URL`);
    let rated = 0;
    for (let i = 1; i < one.length; i++) {
      const [a, b] = [one[i - 1], one[i]];
      if (a.t === null || b.t === null || a.gen === null || b.gen === null || !(b.t > a.t)) continue;
      const want = (b.gen >= a.gen ? b.gen - a.gen : b.gen) / (b.t - a.t);
      if (b.rate === null || Math.abs(b.rate - want) > 1e-9 * Math.max(1, Math.abs(want))) throw new Error(`scrape ${i}: rate ${b.rate}, Δ/Δt ${want}`);
      expectEqual(b.reset, b.gen < a.gen, `scrape ${i} reset`);
      if (b.rate < 0) throw new Error(`scrape ${i}: negative rate ${b.rate}`);
      rated += 1;
    }
    if (rated === 0) throw new Error('no rate to check');
    const lastBefore = one.map((r) => r.phase).lastIndexOf('before');
    const firstAfter = one.findIndex((r) => r.phase === 'after');
    let sum = 0;
    for (let i = lastBefore + 1; i <= firstAfter; i++) sum += one[i].rate * (one[i].t - one[i - 1].t);
    const delta = cli.engine.generation_tokens_delta;
    if (Math.abs(sum - delta) > 1e-6 * Math.max(1, delta)) throw new Error(`Σ rate×Δt ${sum}, CLI generation_tokens_delta ${delta}`);
  });
  await check(`${label}: hover readouts say what the tables say (histogram bin, CDF point, /metrics rate, the timeline's request)`, async () => {
    const hist = await sweepReadout(page, 'histograms', 0.38, [0.08, 0.5]);
    const m = /^([A-Z0-9]+) (.+?) ms: ([\d,]+) samples?$/.exec(hist);
    if (!m) throw new Error(`histogram readout: ${JSON.stringify(hist)}`);
    const bins = await page.$$eval(`#hist-${m[1].toLowerCase()} tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const [lo, hi] = m[2].includes('–') ? m[2].split('–') : [m[2], m[2]];
    if (!bins.some((b) => b[0] === lo && b[1] === hi && b[2] === m[3])) throw new Error(`no bin ${lo}–${hi} of ${m[3]} in #hist-${m[1].toLowerCase()}`);
    const cdf = await sweepReadout(page, 'cdfs', 0.3, [0.1, 0.5]);
    const c = /^([A-Z0-9]+) (\S+) ms: (\S+) at or below$/.exec(cdf);
    if (!c) throw new Error(`CDF readout: ${JSON.stringify(cdf)}`);
    const points = await page.$$eval(`#cdf-${c[1].toLowerCase()} tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((x) => x.textContent)));
    if (!points.some((p) => p[0] === c[2] && p[1] === c[3])) throw new Error(`no CDF point ${c[2]}, ${c[3]} in #cdf-${c[1].toLowerCase()}`);
    const series = await sweepReadout(page, 'metrics', 0.8, [0.2, 0.9]);
    const r = /generated (\S+)/.exec(series);
    if (!r) throw new Error(`/metrics readout: ${JSON.stringify(series)}`);
    await openTable(page, 'metrics-every');
    const rates = await page.$$eval('#metrics-table tbody tr td:nth-child(9)', (tds) => tds.map((td) => td.textContent));
    if (!rates.includes(r[1])) throw new Error(`rate ${r[1]} not in the table's generated tok/s column`);
    // The timeline reads the request on the row under the pointer, as its table row writes it.
    const line = await sweepReadout(page, 'timeline', 0.5, [0.3, 0.7]);
    const t = /^request (\d+): scheduled (\S+) · sent (\S+) · first token (\S+) · end (\S+) ms · (\S+)$/.exec(line);
    if (!t) throw new Error(`timeline readout: ${JSON.stringify(line)}`);
    await openTable(page, 'timeline-every');
    const row = await page.$eval(`#timeline-table tbody tr[data-index="${t[1]}"]`, (tr) => [...tr.cells].slice(1, 6).map((c) => c.textContent));
    deepStrictEqual(row, t.slice(2, 7), `request ${t[1]} in #timeline-table`);
    await page.mouse.move(0, 0);
  });
}

/** The same site at 2× and in the dark scheme: sharp canvases, a dark page, dark charts. */
async function checkSharpDark() {
  const dark = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 2, colorScheme: 'dark' });
  try {
    const p2 = await dark.newPage();
    p2.setDefaultTimeout(TIMEOUT_MS);
    await p2.goto(`${base}#/receipt`);
    await p2.waitForFunction(() => window.loadproofAuditSource === 'baseline.receipt');
    await p2.waitForSelector('#histograms-chart');
    await check('2× and dark: a chart\'s backing width is its client width × devicePixelRatio (2)', async () => {
      const s = await p2.$eval('#histograms-chart', (c) => ({ width: c.width, client: c.clientWidth, dpr: devicePixelRatio }));
      expectEqual(s.dpr, 2, 'devicePixelRatio');
      expectEqual(s.width, Math.round(s.client * 2), '#histograms-chart backing width');
    });
    await check('2× and dark: the body is dark and a chart\'s background pixel is dark', async () => {
      const bg = await p2.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [r, g, b] = bg.match(/\d+/g).map(Number);
      if (r + g + b > 150) throw new Error(`body background ${bg}`);
      const px = await p2.$eval('#metrics-chart', (c) => [...c.getContext('2d').getImageData(3, 3, 1, 1).data]);
      if (px[0] + px[1] + px[2] > 150) throw new Error(`#metrics-chart corner pixel ${px}`);
    });
    await p2.screenshot({ path: path.join(shots, 'receipt-view-dark.png') });
  } finally {
    await dark.close();
  }
}

try {
  await page.goto(`${base}#/receipt`);

  await check('bundled receipts from receipts.json are listed, and the first opens by itself', async () => {
    await page.waitForSelector('#bundled-receipts[data-state="listed"]');
    const names = await page.$$eval('#bundled-receipts button', (bs) => bs.map((b) => b.dataset.name));
    deepStrictEqual(names, bundledFiles.map((b) => b.name));
  });
  let audit = null;
  try {
    audit = await waitForAudit('baseline.receipt');
  } catch (err) {
    await check('baseline.json (bundled) loads', () => Promise.reject(err));
  }
  if (audit) {
    await page.screenshot({ path: path.join(shots, 'receipt-view.png') });
    await page.screenshot({ path: path.join(shots, 'receipt-view-full.png'), fullPage: true });
    fs.mkdirSync(docs, { recursive: true });
    fs.copyFileSync(path.join(shots, 'receipt-view.png'), path.join(docs, 'receipt-view.png'));
    await checkReceipt('baseline.json (bundled)', good, audit, expected.good);
    await check('baseline.json: qualified, of loadproof sim, a simulator', async () => {
      expectEqual(expected.good.qualified, true, 'CLI qualified');
      expectIncludes(await page.innerText('#receipt-verdict'), 'QUALIFIED (of loadproof sim, a simulator)', 'banner');
    });
    await check('page says files never leave the machine', async () => {
      expectIncludes(await page.innerText('body'), 'Files never leave this machine', 'body');
    });
    await checkCharts('baseline.json', expected.good);
    await checkSharpDark();
  }

  await check('faulty.json (bundled button): loads when its button is pressed', async () => {
    await page.evaluate(() => {
      window.loadproofAudit = undefined;
      window.loadproofAuditSource = undefined;
    });
    await page.click('#bundled-1');
    audit = await waitForAudit('faulty.receipt');
    expectEqual(await page.getAttribute('#bundled-1', 'aria-pressed'), 'true', '#bundled-1 aria-pressed');
  });
  await checkReceipt('faulty.json (sim --fault http500:5)', faulty, audit, expected.faulty);
  await check('faulty.json: its knobs are read back, contradicted and only stated, as the CLI says', async () => {
    const statuses = Object.fromEntries(expected.faulty.knobs.map((k) => [k.name, k.status]));
    deepStrictEqual(statuses, { decode_step_ms: 'contradicted', max_num_seqs: 'read_back', scheduler: 'stated' });
    expectEqual(await page.getAttribute('#knobs-table tr[data-knob="decode_step_ms"]', 'data-status'), 'contradicted', 'decode_step_ms');
  });
  await check('faulty.json: failures in the ledger and marked in the timeline', async () => {
    const f = expected.faulty.ledger.failed;
    if (!(f > 0)) throw new Error(`the CLI counts ${f} failures: the fault did not fire`);
    expectEqual(await page.innerText('#ledger-dispositions tr[data-kind="http"] td'), String(expected.faulty.ledger.dispositions.http), 'http dispositions');
    const rows = await page.$$eval('#timeline-failures tbody tr', (trs) =>
      trs.map((tr) => ({ d: tr.dataset.disposition, text: tr.innerText })),
    );
    expectEqual(rows.length, f, '#timeline-failures rows');
    for (const r of rows) {
      expectEqual(r.d, 'http', 'disposition');
      expectIncludes(r.text, 'HTTP 500', 'failure detail');
    }
    expectEqual(await page.getAttribute('#standing-ledger', 'data-positive'), 'false', 'ledger standing');
  });

  // From here on the network is gone: the page must work from what it has loaded.
  offline = true;
  const blockedBefore = blocked.length;

  for (const p of peers) {
    await check(`offline: the ${p.label} receipt equals the CLI, names the tool, reads its records`, async () => {
      const cli = cliAudit(p.file);
      const a = await choose(p.file);
      deepStrictEqual(a, cli);
      expectIncludes(await page.innerText('#protocol-client'), `${p.label} `, '#protocol-client');
      expectEqual(cli.execution_gate.read, true, 'records read');
      expectEqual(await page.innerText('#ledger-completed'), String(cli.ledger.completed), '#ledger-completed');
      expectEqual(await page.innerText('#ledger-offered'), String(cli.ledger.offered), '#ledger-offered');
      // One timeline row per record the tool wrote; a request it wrote no record of (GuideLLM
      // can lose its last one) is named by the audit, not drawn.
      await openTable(page, 'timeline-every');
      const rows = await page.$$eval('#timeline-table tbody tr', (trs) => trs.length);
      const lost = cli.inconsistencies.map((i) => /(\d+) offered requests have no record/.exec(i)).find(Boolean);
      expectEqual(rows, cli.ledger.offered - (lost ? Number(lost[1]) : 0), '#timeline-table rows');
      const hist = await page.$$eval('#receipt-histograms details[id^="hist-"]', (ds) => ds.map((d) => d.id));
      deepStrictEqual(hist, cli.latency.filter((l) => l.count > 0).map((l) => `hist-${l.metric}`));
    });
  }

  await check('offline: a chosen receipt (file input) equals the CLI again', async () => {
    const again = await choose(good);
    deepStrictEqual(again, expected.good);
    expectEqual(await page.innerText('#receipt-source'), 'baseline.receipt', '#receipt-source');
  });

  await check(`offline: tampered receipt names ${EVENTS} as failed in #receipt-digests`, async () => {
    const a = await choose(tampered);
    deepStrictEqual(a, expected.tampered);
    const bad = expected.tampered.digests.filter((d) => !d.ok).map((d) => d.block);
    deepStrictEqual(bad, [EVENTS]);
    expectEqual(await page.getAttribute('#receipt-digests', 'data-ok'), 'false', '#receipt-digests data-ok');
    const failure = await page.innerText(`#digest-failures li[data-block="${EVENTS}"]`);
    expectIncludes(failure, EVENTS, 'failure line');
    expectIncludes(failure, 'sha256', 'failure line');
    await openDigests(page);
    expectEqual(await page.getAttribute(`#digests-table tr[data-block="${EVENTS}"]`, 'data-ok'), 'false', 'table row');
    expectIncludes(await page.innerText('#digests-summary'), EVENTS, '#digests-summary');
    expectIncludes(await page.innerText('#receipt-verdict'), 'UNQUALIFIED', 'banner');
    const sel = `details.evidence[data-block="${EVENTS}"]`;
    await page.click(`${sel} summary`);
    expectEqual(await page.$(`${sel} pre.preview`), null, 'preview of a failed block');
    expectIncludes(await page.innerText(`${sel} .error`), 'sha256', 'error of a failed block');
  });
  await page.evaluate(() => document.querySelector('#receipt-banner')?.scrollIntoView());
  await page.screenshot({ path: path.join(shots, 'receipt-view-tampered.png') });

  await check('offline: the record stream and its v1 JSON document audit the same in the page', async () => {
    // Every value the page publishes as loadproofVerdict, recorded as it is set.
    await page.evaluate(() => {
      let held = null;
      window.__verdicts = [];
      Object.defineProperty(window, 'loadproofVerdict', {
        configurable: true,
        get: () => held,
        set: (v) => { held = v; window.__verdicts.push(v); },
      });
    });
    expectIncludes(await (async () => { await choose(good); return page.innerText('#receipt-form'); })(),
      'record stream, sealed', '#receipt-form');
    // The verdict went ahead of the report: the same audit, for this file; null once the
    // report is in, and its card gone.
    const verdicts = await page.evaluate(() => window.__verdicts.filter((v) => v !== undefined));
    const sent = verdicts.filter((v) => v !== null);
    expectEqual(sent.length, 1, 'verdicts sent ahead');
    deepStrictEqual(sent[0], {
      source: path.basename(good),
      file_sha256: crypto.createHash('sha256').update(fs.readFileSync(good)).digest('hex'),
      audit: expected.good,
    });
    expectEqual(verdicts.at(-1), null, 'loadproofVerdict once the report is in');
    expectEqual(await page.$('#receipt-early'), null, '#receipt-early after the report');
    await page.evaluate(() => { delete window.loadproofVerdict; });
    const a = await choose(goodJson);
    deepStrictEqual(a, expected.goodJson);
    deepStrictEqual(a, expected.good);
    expectEqual(await page.innerText('#receipt-form'), 'v1 JSON document', '#receipt-form');
  });

  await check('offline: an unsealed record stream (a writer killed mid-run) is read as far as it got, never qualified', async () => {
    const a = await choose(unsealed);
    deepStrictEqual(a, expected.unsealed);
    expectEqual(a.sealed, false, 'sealed');
    expectEqual(a.qualified, false, 'qualified');
    if (!(a.unsealed.records > 1)) throw new Error(`only ${a.unsealed.records} records read`);
    expectIncludes(await page.innerText('#receipt-form'), 'UNSEALED', '#receipt-form');
    expectIncludes(await page.innerText('#receipt-verdict'), 'UNSEALED', 'banner');
  });

  await check('offline: a file that is not a receipt shows an error naming the file', async () => {
    await page.setInputFiles('#receipt-file', notReceipt);
    await page.waitForSelector('#receipt-error');
    const text = await page.innerText('#receipt-error');
    const cli = run(['receipt', 'audit', notReceipt]);
    expectEqual(cli.status, 2, 'CLI exit code');
    expectIncludes(text, 'not-a-receipt.json: not a loadproof receipt', '#receipt-error');
    const detail = text.replace(/^not-a-receipt\.json: /, '');
    expectIncludes(cli.stderr, detail, 'CLI stderr');
    expectEqual(await page.evaluate(() => window.loadproofAudit), null, 'window.loadproofAudit');
    expectEqual(await page.$('#receipt-banner'), null, 'banner of a non-receipt');
  });

  await check('keyboard: Tab reaches the receipt file input', async () => {
    await page.focus('#nav-receipt');
    let focused = '';
    for (let i = 0; i < 8 && focused !== 'receipt-file'; i += 1) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.id ?? '');
    }
    expectEqual(focused, 'receipt-file', 'focused element');
  });

  await check('narrow screen (400×900): the receipt view fits the width (wide tables scroll inside their card)', async () => {
    await page.setViewportSize({ width: 400, height: 900 });
    await choose(faulty);
    await page.evaluate(() => window.scrollTo(0, 0));
    const widths = await page.evaluate(() => {
      const main = document.querySelector('main');
      return { main: main.scrollWidth, client: main.clientWidth, page: document.documentElement.scrollWidth };
    });
    if (widths.main > widths.client) {
      throw new Error(`the view is ${widths.main} px wide in a ${widths.client} px column`);
    }
    if (widths.page > 400) console.log(`     note: the page (header navigation) is ${widths.page} px wide at 400 px`);
    await page.screenshot({ path: path.join(shots, 'receipt-view-narrow.png') });
    await page.screenshot({ path: path.join(shots, 'receipt-view-narrow-full.png'), fullPage: true });
  });

  await check('offline: Cancel stops an audit: no verdict, no published audit, a status line', async () => {
    const text = Array.from(fs.readFileSync(faulty));
    const state = await page.evaluate(async (t) => {
      const input = document.querySelector('#receipt-file');
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(t)], 'to-cancel.receipt'));
      input.files = dt.files;
      input.dispatchEvent(new Event('change', { bubbles: true }));
      for (let i = 0; i < 50 && !document.querySelector('#receipt-cancel'); i += 1) {
        await new Promise((r) => setTimeout(r, 0));
      }
      const button = document.querySelector('#receipt-cancel');
      const progress = !!document.querySelector('progress#receipt-progress');
      button?.click();
      await new Promise((r) => setTimeout(r, 1500));
      return {
        clicked: !!button,
        progress,
        banner: !!document.querySelector('#receipt-banner'),
        audit: window.loadproofAudit,
        status: document.querySelector('#receipt-status')?.innerText ?? null,
      };
    }, text);
    expectEqual(state.clicked, true, 'Cancel button shown while auditing');
    expectEqual(state.progress, true, 'progress bar shown while auditing');
    expectEqual(state.banner, false, 'banner after Cancel');
    expectEqual(state.audit, null, 'window.loadproofAudit after Cancel');
    expectEqual(state.status, 'Cancelled: to-cancel.receipt was not audited.', '#receipt-status');
  });

  await check('offline: after a Cancel, the next receipt still audits', async () => {
    deepStrictEqual(await choose(good), expected.good);
  });

  // --- the reviewer's audit policy (still offline: the page needs nothing to apply one) ------
  await page.setViewportSize({ width: 1280, height: 800 });
  const auditNow = () => window.loadproofAudit;
  const stored = (key) => localStorage.getItem(key);

  await check("policy: the panel shows loadproof's defaults, and the audit was judged against them", async () => {
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'defaults', '#receipt-policy data-whose');
    expectEqual(await page.innerText('#receipt-policy-whose'), "loadproof's defaults", '#receipt-policy-whose');
    deepStrictEqual(expected.good.policy, DEFAULT_POLICY);
    deepStrictEqual(await page.evaluate(auditNow), expected.good);
    for (const [field, value] of Object.entries(DEFAULT_POLICY).slice(1)) {
      expectEqual(await page.inputValue(`#receipt-policy-${field}`), String(value), `#receipt-policy-${field}`);
    }
    expectEqual(await page.evaluate(stored, STORAGE_KEY), null, `localStorage ${STORAGE_KEY}`);
  });

  await check('keyboard: Tab reaches the policy fields, Apply, Reset and the policy file input', async () => {
    const want = ['max_send_lag_ms', 'max_scrape_gap_ms', 'max_waiting_scrapes', 'apply', 'reset', 'file'].map((w) => `receipt-policy-${w}`);
    const seen = [];
    await page.focus('#receipt-file');
    for (let i = 0; i < 20 && seen.length < want.length; i += 1) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate(() => document.activeElement?.id ?? '');
      if (want.includes(id) && !seen.includes(id)) seen.push(id);
    }
    deepStrictEqual(seen, want);
  });

  await check('policy: a send lag of 0.000001 ms typed in the page refuses arrival; the audit deep-equals `receipt audit --json --policy P.json`', async () => {
    const cli = expected.strictGood;
    deepStrictEqual(cli.policy, STRICT_POLICY);
    expectEqual(cli.standings.arrival.positive, false, 'the CLI: arrival positive under the strict policy');
    await page.fill('#receipt-policy-max_send_lag_ms', '0.000001');
    // Every frame until the new audit is published: the new verdict on screen must never sit
    // beside the old policy's audit in window.loadproofAudit (a report being built publishes
    // none).
    await page.evaluate(() => {
      window.__stale = 0;
      window.__staleDone = false;
      // The report on screen before: a new report is a new banner element.
      const before = document.querySelector('#receipt-verdict');
      const tick = () => {
        const shown = document.querySelector('#receipt-verdict');
        if (shown && shown !== before && window.loadproofAudit?.policy?.max_send_lag_ms === 10) window.__stale += 1;
        if (!window.__staleDone) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await page.press('#receipt-policy-max_send_lag_ms', 'Enter');
    const a = await waitForEqual(page, auditNow, cli);
    expectEqual(await page.evaluate(() => { window.__staleDone = true; return window.__stale; }), 0, 'frames showing the new verdict beside the old audit');
    expectEqual(await page.evaluate(() => window.loadproofAuditSource), 'baseline.receipt', 'loadproofAuditSource');
    deepStrictEqual(a.policy, STRICT_POLICY);
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'yours', '#receipt-policy data-whose');
    expectEqual(await page.innerText('#receipt-policy-whose'), 'yours', '#receipt-policy-whose');
    expectEqual(await page.getAttribute('#standing-arrival', 'data-positive'), 'false', '#standing-arrival');
    expectIncludes(await page.innerText('#standing-arrival'), cli.standings.arrival.reason, '#standing-arrival');
    expectIncludes(await page.innerText('#receipt-verdict'), 'UNQUALIFIED', '#receipt-verdict');
    deepStrictEqual(JSON.parse(await page.evaluate(stored, STORAGE_KEY)), STRICT_POLICY);
  });
  await page.screenshot({ path: path.join(shots, 'receipt-view-policy.png') });
  await checkReceipt('baseline.json under your policy', good, await page.evaluate(auditNow), expected.strictGood, strictPolicy);

  await check('policy: numbers core refuses are named by field and never applied', async () => {
    await page.fill('#receipt-policy-max_send_lag_ms', 'fast');
    await page.fill('#receipt-policy-max_waiting_scrapes', '0');
    await page.click('#receipt-policy-apply');
    await page.waitForSelector('#receipt-policy-max_waiting_scrapes-error');
    expectIncludes(await page.innerText('#receipt-policy-max_send_lag_ms-error'), '"fast" is not a number', 'lag error');
    expectIncludes(await page.innerText('#receipt-policy-max_waiting_scrapes-error'), 'max_waiting_scrapes: 0 is not a whole number of scrapes ≥ 1', 'waiting error');
    expectEqual(await page.$('#receipt-policy-max_scrape_gap_ms-error'), null, 'an error under the gap, which is fine');
    expectEqual(await page.getAttribute('#receipt-policy-max_waiting_scrapes', 'aria-invalid'), 'true', 'aria-invalid');
    expectEqual(
      await page.getAttribute('#receipt-policy-max_waiting_scrapes', 'aria-describedby'),
      'receipt-policy-max_waiting_scrapes-error',
      'aria-describedby',
    );
    expectIncludes(await page.innerText('#receipt-policy-status'), 'Not applied', '#receipt-policy-status');
    await page.waitForTimeout(500);
    deepStrictEqual(await page.evaluate(auditNow), expected.strictGood);
    expectEqual(await page.$('#receipt-progress'), null, 'an audit in progress');
    deepStrictEqual(JSON.parse(await page.evaluate(stored, STORAGE_KEY)), STRICT_POLICY);
  });
  await page.screenshot({ path: path.join(shots, 'receipt-view-policy-errors.png') });

  await check("policy: a bad policy file is refused with core's message (the CLI's), and nothing changes", async () => {
    const cli = run(['receipt', 'audit', '--policy', badPolicy, good]);
    expectEqual(cli.status, 2, 'CLI exit code');
    const at = cli.stderr.indexOf(`${badPolicy}: `);
    if (at < 0) throw new Error(`the CLI's error does not name the file: ${cli.stderr}`);
    const message = cli.stderr.slice(at + badPolicy.length + 2).trim().split('\n')[0];
    expectIncludes(message, 'missing field', "the CLI's message");
    await page.setInputFiles('#receipt-policy-file', badPolicy);
    await page.waitForSelector('#receipt-policy-error');
    expectIncludes(await page.innerText('#receipt-policy-error'), `bad-policy.json: ${message}`, '#receipt-policy-error');
    await page.waitForTimeout(500);
    deepStrictEqual(await page.evaluate(auditNow), expected.strictGood);
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'yours', 'data-whose');
    deepStrictEqual(JSON.parse(await page.evaluate(stored, STORAGE_KEY)), STRICT_POLICY);
  });

  await check('offline: no request was made after the app loaded', async () => {
    const after = blocked.slice(blockedBefore);
    if (after.length > 0) throw new Error(after.join('\n'));
  });

  // --- a reload: the page comes back with the policy this browser kept --------------------
  offline = false;
  await check('reload: the stored policy is still in force for the receipt that opens by itself', async () => {
    await page.reload();
    const a = await waitForAudit('baseline.receipt');
    deepStrictEqual(a, expected.strictGood);
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'yours', 'data-whose');
    expectEqual(await page.inputValue('#receipt-policy-max_send_lag_ms'), '0.000001', 'the lag field');
    expectIncludes(await page.innerText('#arrival-judged'), 'send lag ≤ 0.000001 ms (your policy)', '#arrival-judged');
  });

  await check("reset: loadproof's defaults again, the audit deep-equals `receipt audit --json`, nothing stored", async () => {
    await page.click('#receipt-policy-reset');
    await waitForEqual(page, auditNow, expected.good);
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'defaults', 'data-whose');
    expectEqual(await page.inputValue('#receipt-policy-max_send_lag_ms'), '10', 'the lag field');
    expectEqual(await page.evaluate(stored, STORAGE_KEY), null, `localStorage ${STORAGE_KEY}`);
    expectEqual(await page.getAttribute('#standing-arrival', 'data-positive'), 'true', '#standing-arrival');
  });

  await check('a policy file (the one given to the CLI) puts that policy in force', async () => {
    await page.setInputFiles('#receipt-policy-file', strictPolicy);
    await waitForEqual(page, auditNow, expected.strictGood);
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'yours', 'data-whose');
    expectEqual(await page.$('#receipt-policy-error'), null, '#receipt-policy-error');
    deepStrictEqual(JSON.parse(await page.evaluate(stored, STORAGE_KEY)), STRICT_POLICY);
    await page.click('#receipt-policy-reset');
    await waitForEqual(page, auditNow, expected.good);
  });

  await check('a stored policy that no longer reads is ignored with a note; the defaults are in force', async () => {
    await page.evaluate((key) => localStorage.setItem(key, '{"schema":"loadproof.audit-policy/v0"}'), STORAGE_KEY);
    await page.reload();
    deepStrictEqual(await waitForAudit('baseline.receipt'), expected.good);
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'defaults', 'data-whose');
    const note = await page.innerText('#receipt-policy-note');
    expectIncludes(note, 'no longer reads as a policy', '#receipt-policy-note');
    expectIncludes(note, 'not an audit policy', '#receipt-policy-note');
    await page.click('#receipt-policy-reset');
    expectEqual(await page.evaluate(stored, STORAGE_KEY), null, `localStorage ${STORAGE_KEY} after Reset`);
    expectEqual(await page.$('#receipt-policy-note'), null, '#receipt-policy-note after Reset');
  });

  // --- the keys the reviewer trusts (issue 19) ----------------------------------------------
  const simId = keyId(simLine);
  const otherId = keyId(otherLine);
  const heldKeys = () => page.$$eval('#receipt-policy-keys-list li', (lis) =>
    lis.map((li) => ({ id: li.dataset.keyId, comment: li.querySelector('.key-comment').textContent })));
  const attestation = async () => ({
    level: await page.getAttribute('#receipt-attestation', 'data-level'),
    text: await page.innerText('#receipt-attestation-text'),
    summary: await page.getAttribute('#summary-attestation', 'data-level'),
  });

  await check('trusted keys: none held, so a lease the sim signed is self-attested, as `receipt audit --json` says', async () => {
    const cli = expected.signed;
    expectEqual(cli.attestation.level, 'self_attested', 'the CLI without --trust');
    expectEqual(cli.attestation.lease_key?.key_id, simId, "the CLI: the signer's key id");
    deepStrictEqual(await choose(signed), cli);
    expectEqual(await page.getAttribute('#receipt-policy-keys', 'data-count'), '0', 'data-count');
    expectIncludes(await page.$eval('#receipt-policy-keys-none', (p) => p.textContent), 'self-attested', '#receipt-policy-keys-none');
    // Folded while no key is held: the verdict stays near the top.
    expectEqual(await page.$eval('#receipt-policy-keys', (d) => d.open), false, '#receipt-policy-keys open');
    expectIncludes(await page.innerText('#receipt-policy-keys-heading'), 'Trusted keys: none', '#receipt-policy-keys-heading');
    deepStrictEqual(await attestation(), { level: 'self_attested', text: cli.attestation.reason, summary: 'self_attested' });
    expectIncludes(await page.innerText('#receipt-attestation-meaning'), "the claimant's word", '#receipt-attestation-meaning');
    expectEqual(await page.innerText('#receipt-verdict'), cliVerdict(signed)[0], '#receipt-verdict');
    // Only a qualified verdict names its attestation (a loaded machine may refuse arrival).
    if (cli.qualified) expectIncludes(await page.innerText('#receipt-verdict'), 'self-attested', '#receipt-verdict');
  });

  await check("trusted keys: the sim's .pub line pasted makes the lease signed; the audit deep-equals `receipt audit --json --trust KEY.pub`; the lessor's account as the CLI reads it", async () => {
    const cli = expected.signedTrusted;
    expectEqual(cli.attestation.level, 'signed', 'the CLI with --trust');
    await page.click('#receipt-policy-keys-heading');
    await page.fill('#receipt-policy-keys-text', simLine);
    await page.click('#receipt-policy-keys-add');
    deepStrictEqual(await waitForEqual(page, auditNow, cli), cli);
    deepStrictEqual(await attestation(), { level: 'signed', text: `signed by key ${simId} (sim at e2e), which you trust`, summary: 'signed' });
    // The lessor's account, as the CLI reads it: every number and its reason.
    const account = cli.attestation.lease_account;
    if (!account) throw new Error('the CLI read no lessor account');
    const shown = await page.$$eval('#receipt-lessor-account dd.num-dd', (dds) => Object.fromEntries(dds.map((d) => [d.id, d.dataset.value ?? null])));
    const want = (n) => (n === undefined || n === null ? null : String(n));
    deepStrictEqual(shown, {
      'lessor-requests': want(account.requests),
      'lessor-prompt-tokens': want(account.prompt_tokens),
      'lessor-completion-tokens': want(account.completion_tokens),
      'lessor-uncounted': want(account.uncounted_requests),
      'lessor-scrapes': want(account.scrapes),
    }, '#receipt-lessor-account');
    expectEqual(await page.$eval('#lessor-account-reason', (p) => p.textContent), account.reason, '#lessor-account-reason');
    expectEqual(await page.getAttribute('#receipt-lessor-account', 'data-agrees'), String(account.agrees), 'data-agrees');
    expectIncludes(await page.$eval('#receipt-lessor-account summary', (s) => s.textContent), `signed by key ${account.key.key_id} (sim at e2e), which you trust`, 'the account summary');
    if (account.vouches_for_scrapes) {
      expectIncludes(await page.$eval('#lessor-scrapes-kept', (d) => d.textContent), 'its one signature vouches for them all', '#lessor-scrapes-kept');
    }
    const qualify = mustRun(['receipt', 'qualify', '--trust', `${simKey}.pub`, signed], { allow: [0, 1] }).stdout.split('\n')[0];
    expectEqual(await page.innerText('#receipt-verdict'), qualify, '#receipt-verdict');
    deepStrictEqual(await heldKeys(), [{ id: simId, comment: 'sim at e2e' }]);
    expectEqual(await page.inputValue('#receipt-policy-keys-text'), '', 'the box, emptied');
    expectIncludes(await page.innerText('#receipt-policy-keys-status'), `Trusted key ${simId} (sim at e2e)`, '#receipt-policy-keys-status');
    deepStrictEqual(JSON.parse(await page.evaluate(stored, STORAGE_KEY)), cli.policy);
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'yours', 'data-whose');
    // The policy the panel offers as a file is the same audit under the CLI's --policy.
    const asFile = path.join(tmp, 'trusting-policy.json');
    fs.writeFileSync(asFile, await page.$eval('#receipt-policy-json', (pre) => pre.textContent));
    deepStrictEqual(cliAudit(signed, asFile), cli);
  });
  await page.screenshot({ path: path.join(shots, 'receipt-view-trusted-key.png') });

  await check('trusted keys: a malformed line is refused naming its line (as the CLI names it), and nothing changes', async () => {
    const r = run(['receipt', 'audit', '--trust', badKeys, signed]);
    expectEqual(r.status, 2, 'CLI exit code');
    const m = /bad-keys\.pub: (line 2: .*)/.exec(r.stderr);
    if (!m) throw new Error(`the CLI's error does not name the line: ${r.stderr}`);
    const before = await page.evaluate(stored, STORAGE_KEY);
    await page.fill('#receipt-policy-keys-text', fs.readFileSync(badKeys, 'utf8'));
    await page.click('#receipt-policy-keys-add');
    await page.waitForSelector('#receipt-policy-keys-error');
    const error = await page.innerText('#receipt-policy-keys-error');
    expectIncludes(error, `Not trusted: ${m[1].trim()}`, '#receipt-policy-keys-error');
    expectIncludes(error, 'the keys you trust are unchanged', '#receipt-policy-keys-error');
    expectEqual(await page.getAttribute('#receipt-policy-keys-text', 'aria-invalid'), 'true', 'aria-invalid');
    expectEqual(await page.inputValue('#receipt-policy-keys-text'), fs.readFileSync(badKeys, 'utf8'), 'the box keeps the text');
    await page.waitForTimeout(500);
    deepStrictEqual(await page.evaluate(auditNow), expected.signedTrusted);
    expectEqual(await page.$('#receipt-progress'), null, 'an audit in progress');
    expectEqual(await page.evaluate(stored, STORAGE_KEY), before, `localStorage ${STORAGE_KEY}`);
    deepStrictEqual(await heldKeys(), [{ id: simId, comment: 'sim at e2e' }]);
    // The same file chosen is refused the same way, naming the file.
    await page.setInputFiles('#receipt-policy-keys-file', badKeys);
    await page.waitForFunction(() => document.querySelector('#receipt-policy-keys-error')?.textContent.startsWith('bad-keys.pub: not trusted: line 2:'));
    await page.fill('#receipt-policy-keys-text', '');
  });

  await check("trusted keys: another key only (its .pub file chosen, the sim's removed) refuses the window, as `--trust OTHER.pub` does", async () => {
    const cli = expected.signedOther;
    expectEqual(cli.standings.window.positive, false, 'the CLI: window under another key');
    expectEqual(cli.attestation.level, 'self_attested', 'the CLI: attestation under another key');
    await page.setInputFiles('#receipt-policy-keys-file', `${otherKey}.pub`);
    await page.waitForFunction((id) => document.querySelector(`#receipt-policy-key-${id}`), otherId);
    expectEqual(await page.$('#receipt-policy-keys-error'), null, '#receipt-policy-keys-error');
    await page.click(`#receipt-policy-key-${simId}-remove`);
    deepStrictEqual(await waitForEqual(page, auditNow, cli), cli);
    deepStrictEqual(await heldKeys(), [{ id: otherId, comment: 'someone else' }]);
    deepStrictEqual(await attestation(), { level: 'self_attested', text: cli.attestation.reason, summary: 'self_attested' });
    expectIncludes(cli.attestation.reason, 'not among the 1 key(s) you trust', "the CLI's reason");
    expectIncludes(await page.innerText('#receipt-attestation-meaning'), 'window and subject are refused', '#receipt-attestation-meaning');
    expectEqual(await page.getAttribute('#standing-window', 'data-positive'), 'false', '#standing-window');
    expectIncludes(await page.innerText('#standing-window'), cli.standings.window.reason, '#standing-window');
    deepStrictEqual(JSON.parse(await page.evaluate(stored, STORAGE_KEY)), cli.policy);
  });

  await check('trusted keys: after a reload the key is still trusted (the receipt that opens by itself and a chosen one equal the CLI)', async () => {
    await page.reload();
    deepStrictEqual(await waitForAudit('baseline.receipt'), expected.goodOther);
    deepStrictEqual(await heldKeys(), [{ id: otherId, comment: 'someone else' }]);
    expectEqual(await page.$eval('#receipt-policy-keys', (d) => d.open), true, '#receipt-policy-keys open, a key held');
    expectEqual(await page.innerText('#receipt-policy-keys-heading'), 'Trusted keys: 1', '#receipt-policy-keys-heading');
    deepStrictEqual(await choose(signed), expected.signedOther);
  });

  await check("trusted keys: the last key removed leaves loadproof's defaults, nothing stored", async () => {
    await page.click(`#receipt-policy-key-${otherId}-remove`);
    deepStrictEqual(await waitForEqual(page, auditNow, expected.signed), expected.signed);
    expectEqual(await page.getAttribute('#receipt-policy', 'data-whose'), 'defaults', 'data-whose');
    expectEqual(await page.evaluate(stored, STORAGE_KEY), null, `localStorage ${STORAGE_KEY}`);
    expectEqual(await page.getAttribute('#receipt-policy-keys', 'data-count'), '0', 'data-count');
  });

  await check("a bundled copy whose sha256 is not the index's is refused, its verdict never shown", async () => {
    const listed = JSON.parse(fs.readFileSync(path.join(site, 'receipts.json'), 'utf8'));
    listed.receipts[0].sha256 = '0'.repeat(64);
    await page.route('**/receipts.json', (route) => route.fulfill({ contentType: 'application/json', body: JSON.stringify(listed) }));
    await page.reload();
    await page.waitForSelector('#receipt-error');
    expectIncludes(await page.innerText('#receipt-error'), `lists ${'0'.repeat(64)}: not shown`, '#receipt-error');
    expectEqual(await page.$('#receipt-early'), null, '#receipt-early');
    expectEqual(await page.$('#receipt-banner'), null, '#receipt-banner');
    expectEqual(await page.evaluate(() => window.loadproofVerdict ?? null), null, 'window.loadproofVerdict');
    await page.unroute('**/receipts.json');
  });

  await check('no page errors or console errors', () => noErrors(pageErrors));
} finally {
  await cleanUp({ browser, server, tmp });
}

finish(` (${((Date.now() - t0) / 1000).toFixed(1)} s)`);

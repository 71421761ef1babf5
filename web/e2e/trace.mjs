#!/usr/bin/env node
// Browser test of the trace view: the page must say exactly what the CLI says.
//
// Why: the page and `loadproof trace inspect --json` share loadproof_core, and this test is
// what keeps them equal in practice (same bytes in, same JSON out, same digits on screen).
// It serves dist/ itself on 127.0.0.1, drives the Debian Chromium through playwright-core,
// and compares every real trace in the shared directory against the CLI's JSON.
//
// Run from the repo root after `web/build.sh` and `cargo build --release -p loadproof_cli`:
//   node web/e2e/trace.mjs
// Environment: LOADPROOF_SHARED (default ../shared), LOADPROOF_BIN (default
// target/release/loadproof), LOADPROOF_DIST (default dist), CHROMIUM (default /usr/bin/chromium).
// Prints one line per check, then `N passed, M failed`; exits 1 if any failed.

import { deepStrictEqual } from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import {
  TIMEOUT_MS, bailOnCrash, check, cleanUp, cliJson, collectErrors, dist, expectEqual, finish, mustRun, noErrors,
  fromRoot, openSite, run, shared, shots, startSim, sweepReadout,
} from './harness.mjs';

bailOnCrash();

const ABSENT = '—'; // what the page shows where the JSON holds null

const TRACES = [
  'traces/burstgpt/BurstGPT_1.first400.csv',
  'traces/burstgpt/BurstGPT_3.first400.csv',
  'traces/mooncake/conversation_trace.jsonl',
  'traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv',
].map((p) => path.join(shared, p));

// Page element id -> where its value sits in the report JSON.
const FIELDS = {
  'rows-read': (r) => r.rows_read,
  emitted: (r) => r.emitted,
  'dropped-total': (r) => r.dropped_total,
  'filtered-total': (r) => r.filtered_total,
  sha256: (r) => r.source_sha256,
  rate: (r) => r.regime?.rate_rps,
  burstiness: (r) => r.regime?.burstiness,
  window: (r) => r.regime?.window_s,
  resolution: (r) => r.regime?.timestamp_resolution_s,
  'in-p50': (r) => r.regime?.input_tokens.p50,
  'in-p95': (r) => r.regime?.input_tokens.p95,
  'out-p50': (r) => r.regime?.output_tokens.p50,
  'out-p95': (r) => r.regime?.output_tokens.p95,
  'io-ratio': (r) => r.regime?.io_ratio,
  'session-share': (r) => r.regime?.session_share,
};
const asText = (v) => (v === null ? ABSENT : String(v));

/** The exact value an element holds: its title (as JSON writes the number), or its text. */
const exactOf = (page, sel) => page.$eval(sel, (el) => el.title || el.innerText);

/** The page's readable text for `value`: four significant digits, grouped — so it reads back
 * within half a unit of the fourth digit (an integer part is never rounded). */
function readableMatches(text, value) {
  if (value === null) return text === ABSENT;
  if (typeof value !== 'number') return text === String(value);
  const shown = Number(text.replaceAll(',', ''));
  if (!Number.isFinite(shown)) return false;
  const tol = Math.max(Math.abs(value) * 5e-4, Number.isInteger(value) ? 0 : 1e-12);
  return Math.abs(shown - value) <= tol;
}

function cli(file, extra = []) {
  return cliJson(['trace', 'inspect', file, '--json', ...extra], { allow: [0] });
}

// Waits until the page has published the report for `source` (or an error appeared).
async function waitForReport(page, source) {
  await page.waitForFunction(
    (name) =>
      (window.loadproofReport && window.loadproofReport.source === name) ||
      document.querySelector('#error'),
    source,
    { timeout: TIMEOUT_MS },
  );
  const error = await page.$('#error');
  if (error) throw new Error(`page shows an error: ${await error.innerText()}`);
  await page.waitForSelector('#emitted', { timeout: TIMEOUT_MS });
  return page.evaluate(() => window.loadproofReport);
}

async function checkDomAgainst(page, expected, label) {
  for (const [id, pick] of Object.entries(FIELDS)) {
    const value = pick(expected);
    if (value === undefined) continue; // no regime (empty trace): fields absent
    await check(`${label}: #${id} holds ${asText(value)}, readable`, async () => {
      expectEqual(await exactOf(page, `#${id}`), asText(value), `#${id} exact`);
      const text = await page.innerText(`#${id}`);
      if (!readableMatches(text, value)) throw new Error(`#${id} reads ${JSON.stringify(text)} for ${value}`);
    });
  }
  await check(`${label}: #drops has one row per drop reason`, async () => {
    const rows = await page.$$eval('#drops tbody tr', (trs) => trs.map((tr) => tr.innerText));
    const reasons = Object.keys(expected.dropped);
    if (reasons.length === 0) {
      expectEqual(rows.length, 1, 'rows of an empty drop table');
      return;
    }
    expectEqual(rows.length, reasons.length, 'drop table rows');
    reasons.forEach((reason, i) => {
      const grouped = expected.dropped[reason].toLocaleString('en-US');
      if (!rows[i].startsWith(reason) || !rows[i].includes(grouped)) {
        throw new Error(`row ${i} is ${JSON.stringify(rows[i])}, expected ${reason} ${expected.dropped[reason]}`);
      }
      for (const ex of expected.drop_examples[reason] ?? []) {
        if (!rows[i].includes(`line ${ex.line}`)) throw new Error(`row ${i} lacks example line ${ex.line}`);
      }
    });
  });
}

// The inter-arrival table: same-timestamp arrivals in their own labelled row, then one labelled
// row per bin, each count exactly the JSON's `arrival_gaps` (in `title`), readable as text.
async function checkGaps(page, expected, label) {
  const gaps = expected.arrival_gaps;
  await check(`${label}: inter-arrival table equals arrival_gaps (grid ${gaps.grid_s}, ${gaps.zero_gaps} zero gaps)`, async () => {
    const rows = await page.$$eval('#gaps-table tbody tr', (trs) =>
      trs.map((tr) => ({ label: tr.querySelector('th').innerText, exact: tr.querySelector('td').title, text: tr.querySelector('td').innerText })));
    expectEqual(rows.length, 1 + gaps.bins.length, 'rows: same timestamp + bins');
    expectEqual(rows[0].label, 'same timestamp', 'first row label');
    expectEqual(rows[0].exact, String(gaps.zero_gaps), 'zero gaps');
    expectEqual(rows[0].text, gaps.zero_gaps.toLocaleString('en-US'), 'zero gaps, readable');
    gaps.bins.forEach((bin, i) => {
      const row = rows[i + 1];
      expectEqual(row.exact, String(bin.gaps), `bin ${i} gaps`);
      if (!/ s$/.test(row.label) || row.label.length < 3) throw new Error(`bin ${i} is labelled ${JSON.stringify(row.label)}`);
    });
    const grid = await page.$eval('#gap-grid', (el) => el.dataset.grid);
    expectEqual(grid, gaps.grid_s === null ? 'none' : String(gaps.grid_s), '#gap-grid data-grid');
  });
}

async function canvasPainted(page, id) {
  return page.$eval(`#${id}`, (canvas) => {
    const { width, height } = canvas;
    const data = canvas.getContext('2d').getImageData(0, 0, width, height).data;
    let painted = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200) painted += 1;
    }
    return painted;
  });
}

const { server, base, browser, context } = await openSite(dist);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadproof-e2e-'));
fs.mkdirSync(shots, { recursive: true });
const pageErrors = [];

// `quiet`: while true, console errors are not collected (a routed-to view asks this bare site
// for its receipts.json / playbook.json and the server answers 404, as it should).
// `halves`: read files from 8 MiB in two halves whatever the machine's cores (the page does
// so from 2 cores on).
async function freshPage({ quiet = () => false, halves = undefined } = {}) {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  if (halves !== undefined) await page.addInitScript((h) => { window.loadproofHalves = h; }, halves);
  collectErrors(page, pageErrors, { quiet });
  await page.goto(base);
  await page.waitForSelector('#file', { state: 'attached' });
  return page;
}

try {
  await check('page says files never leave the machine', async () => {
    const page = await freshPage();
    const text = await page.innerText('body');
    await page.close();
    if (!text.includes('Files never leave this machine: everything is computed in your browser.')) {
      throw new Error('privacy sentence missing');
    }
  });

  for (const file of TRACES) {
    const name = path.basename(file);
    const label = name;
    if (!fs.existsSync(file)) {
      await check(`${label}: trace exists`, () => {
        throw new Error(`missing ${file}`);
      });
      continue;
    }
    const expected = cli(file);
    const page = await freshPage();
    let report = null;
    await check(`${label}: upload via #file produces a report`, async () => {
      await page.setInputFiles('#file', file);
      report = await waitForReport(page, name);
    });
    if (report === null) {
      await page.close();
      continue;
    }
    await check(`${label}: window.loadproofReport deep-equals the CLI JSON`, async () => {
      deepStrictEqual(report, expected);
    });
    await checkDomAgainst(page, expected, label);
    await checkGaps(page, expected, label);
    await check(`${label}: charts are painted`, async () => {
      for (const id of ['counts-chart', 'gaps-chart', 'cdf-chart']) {
        const painted = await canvasPainted(page, id);
        if (painted < 500) throw new Error(`#${id} has only ${painted} painted pixels`);
      }
    });
    await check(`${label}: hover readouts say what the tables beside the charts say`, async () => {
      const bar = await sweepReadout(page, 'counts', 0.75, [0.1, 0.9]);
      const b = /^(\S+) s: (\S+) requests$/.exec(bar);
      if (!b) throw new Error(`counts readout: ${JSON.stringify(bar)}`);
      const bars = await page.$$eval('#counts-table + details tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
      if (!bars.some((r) => r[0] === b[1] && r[1] === b[2])) throw new Error(`no bar ${b[1]} s of ${b[2]} in the counts table`);
      const gap = await sweepReadout(page, 'gaps', 0.75, [0.1, 0.9]);
      const g = /^(.+): (\S+) gaps$/.exec(gap);
      if (!g) throw new Error(`gaps readout: ${JSON.stringify(gap)}`);
      const gaps = await page.$$eval('#gaps-table tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]));
      if (!gaps.some((r) => r[0] === g[1] && r[1] === g[2])) throw new Error(`no gaps row ${g[1]} of ${g[2]}`);
      const cdf = await sweepReadout(page, 'cdf', 0.5, [0.2, 0.8]);
      const c = /^input (\S+) tokens: (\S+) · output (\S+) tokens: (\S+) at or below$/.exec(cdf);
      if (!c) throw new Error(`CDF readout: ${JSON.stringify(cdf)}`);
      for (const share of [c[2], c[4]]) if (!(Number(share) >= 0 && Number(share) <= 1)) throw new Error(`share ${share}`);
      await page.mouse.move(0, 0);
    });
    const stem = name.replace(/\.[^.]+$/, '');
    await page.screenshot({ path: path.join(shots, `trace-${stem}.png`) });
    await page.screenshot({ path: path.join(shots, `trace-${stem}.full.png`), fullPage: true });

    if (name === 'conversation_trace.jsonl') {
      await check(`${label}: recorded on a 3 s grid; 10,851 same-timestamp arrivals, labelled`, async () => {
        expectEqual(expected.arrival_gaps.grid_s, 3, 'CLI grid_s');
        expectEqual(expected.arrival_gaps.zero_gaps, 10851, 'CLI zero_gaps');
        const line = await page.innerText('#gap-grid');
        for (const part of ['3 s', '10,851 of 12,030', '30 s']) {
          if (!line.includes(part)) throw new Error(`#gap-grid reads ${JSON.stringify(line)}; lacks ${JSON.stringify(part)}`);
        }
        const rows = await page.$$eval('#gaps-table tbody tr', (trs) => trs.map((tr) => tr.innerText.replace(/\s+/g, ' ').trim()));
        expectEqual(rows[0], 'same timestamp 10,851', 'first row');
        expectEqual(rows[1], `3 s ${expected.arrival_gaps.bins[0].gaps.toLocaleString('en-US')}`, 'second row');
      });
      const at30 = cli(file, ['--window', String(expected.arrival_gaps.suggested_window_s)]);
      await check(`${label}: #use-window sets the suggested 30 s window; the report equals the CLI's --window 30`, async () => {
        expectEqual(expected.arrival_gaps.suggested_window_s, 30, 'CLI suggested_window_s');
        await page.click('#use-window');
        await page.waitForFunction(() => window.loadproofReport?.regime?.window_s === 30, null, { timeout: 10_000 });
        expectEqual(await page.inputValue('#window-input'), '30', '#window-input');
        expectEqual(await exactOf(page, '#window'), '30', '#window');
        expectEqual(await exactOf(page, '#burstiness'), asText(at30.regime.burstiness), '#burstiness');
        deepStrictEqual(await page.evaluate(() => window.loadproofReport), at30);
        if (!(await page.$eval('#use-window', (b) => b.disabled))) throw new Error('#use-window still enabled at 30 s');
      });
      await page.screenshot({ path: path.join(shots, `trace-mooncake-gaps.png`) });
    }

    if (name === 'BurstGPT_1.first400.csv') {
      const at3 = cli(file, ['--window', '3']);
      await check(`${label}: #window-input 3 recomputes #burstiness to the CLI's --window 3 value`, async () => {
        if (asText(at3.regime.burstiness) === asText(expected.regime.burstiness)) {
          throw new Error('burstiness at 3 s equals burstiness at 1 s: the check would prove nothing');
        }
        await page.fill('#window-input', '3');
        await page.waitForFunction(
          (want) => {
            const el = document.querySelector('#burstiness');
            return (el?.title || el?.innerText) === want;
          },
          asText(at3.regime.burstiness),
          { timeout: 10_000 },
        ).catch(async () => {
          expectEqual(await exactOf(page, '#burstiness'), asText(at3.regime.burstiness), '#burstiness');
        });
        expectEqual(await exactOf(page, '#window'), '3', '#window');
        deepStrictEqual(await page.evaluate(() => window.loadproofReport), at3);
      });
    }
    await page.close();
  }

  await check('synthetic sample: #sample equals the CLI on `trace synth` output', async () => {
    const synthFile = path.join(tmp, 'synthetic-burstgpt.csv');
    mustRun(['trace', 'synth', '--out', synthFile]);
    // The CLI notes a synth sidecar beside the file; the page only ever sees the file.
    fs.rmSync(synthFile + '.synth.json', { force: true });
    const expected = cli(synthFile);
    const page = await freshPage();
    await page.click('#sample');
    const report = await waitForReport(page, 'synthetic-burstgpt.csv');
    deepStrictEqual(report, expected);
    expectEqual(await exactOf(page, '#emitted'), String(expected.emitted), '#emitted');
    const note = await page.innerText('#synthetic-note');
    if (!/synthetic/i.test(note)) throw new Error(`synthetic note reads ${JSON.stringify(note)}`);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(shots, 'trace-synthetic-narrow.png'), fullPage: false });
    await page.close();
  });

  // Compressed traces (issue 18): a gzip file, known by its first bytes, is read through the
  // browser's DecompressionStream, and the report equals the CLI's --json of the same file —
  // the content's sha256 as the trace's, the file's in `compression`, both on the page.
  for (const rel of ['traces/burstgpt/BurstGPT_3.first400.csv', 'traces/mooncake/conversation_trace.jsonl']) {
    const src = path.join(shared, rel);
    const name = `${path.basename(src)}.gz`;
    const gz = path.join(tmp, name);
    fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(src), { level: 6 }));
    await check(`${name}: read through DecompressionStream, the report deep-equals the CLI's --json, both sha256s shown`, async () => {
      const expected = cli(gz);
      expectEqual(expected.compression?.codec, 'gzip', 'CLI compression.codec');
      const page = await freshPage();
      await page.setInputFiles('#file', gz);
      deepStrictEqual(await waitForReport(page, name), expected);
      expectEqual(await exactOf(page, '#sha256'), expected.source_sha256, '#sha256 (the content)');
      expectEqual(await exactOf(page, '#file-sha256'), expected.compression.file_sha256, '#file-sha256');
      expectEqual(await exactOf(page, '#file-bytes'), String(expected.compression.file_bytes), '#file-bytes');
      expectEqual(await exactOf(page, '#file-codec'), 'gzip', '#file-codec');
      await page.close();
    });
  }

  // What browsers' DecompressionStream does not read, the page reads through its wasm decoders
  // (web/src/unpack.rs): a zstd trace (written by the zstd CLI when present), and a gzip file
  // of two members (`cat a.gz b.gz`), which browsers stop reading after the first. Each report
  // deep-equals the CLI's --json of the same file, `compression` and both sha256s included.
  const src400 = path.join(shared, 'traces/burstgpt/BurstGPT_1.first400.csv');
  const plain400 = fs.readFileSync(src400);
  const zstdCli = spawnSync('zstd', ['--version']).status === 0;
  const zstdOf = (from, to, args = []) => {
    const r = spawnSync('zstd', ['-q', '-f', ...args, '-o', to, from]);
    if (r.status !== 0) throw new Error(`zstd ${args.join(' ')} failed: ${r.stderr}`);
    return fs.readFileSync(to);
  };
  const twoMembers = Buffer.concat([zlib.gzipSync(plain400.subarray(0, 1000)), zlib.gzipSync(plain400.subarray(1000))]);
  const readWhole = [['two-members.csv.gz', () => twoMembers, 'gzip']];
  if (zstdCli) {
    readWhole.push(['BurstGPT_1.first400.csv.zst', () => zstdOf(src400, path.join(tmp, 'z.tmp')), 'zstd']);
    // Two frames, the second at another level, with no checksum: every frame is read.
    readWhole.push(['two-frames.jsonl.zst', () => {
      const moon = path.join(shared, 'traces/mooncake/conversation_trace.jsonl');
      const text = fs.readFileSync(moon);
      const half = path.join(tmp, 'half.tmp');
      fs.writeFileSync(half, text.subarray(0, 4096));
      const a = zstdOf(half, path.join(tmp, 'a.tmp'), ['-1']);
      fs.writeFileSync(half, text.subarray(4096));
      const b = zstdOf(half, path.join(tmp, 'b.tmp'), ['-19', '--no-check']);
      return Buffer.concat([a, b]);
    }, 'zstd']);
  } else {
    console.log('note: no zstd CLI here; the .zst checks are skipped');
  }
  for (const [name, bytes, codec] of readWhole) {
    await check(`${name}: read in the page, the report deep-equals the CLI's --json, both sha256s shown`, async () => {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, bytes());
      const expected = cli(file);
      expectEqual(expected.compression?.codec, codec, 'CLI compression.codec');
      const page = await freshPage();
      await page.setInputFiles('#file', file);
      deepStrictEqual(await waitForReport(page, name), expected);
      expectEqual(await exactOf(page, '#sha256'), expected.source_sha256, '#sha256 (the content)');
      expectEqual(await exactOf(page, '#file-sha256'), expected.compression.file_sha256, '#file-sha256');
      expectEqual(await exactOf(page, '#file-codec'), codec, '#file-codec');
      await page.close();
    });
  }

  // What the page does not read whole is refused by name, never read short, as the CLI refuses
  // it: a truncated gzip, garbage after a gzip member, a truncated zstd, garbage after a zstd
  // frame.
  await check('truncated gzip or zstd, and garbage after a gzip member or a zstd frame, are refused by name as by the CLI', async () => {
    const whole = zlib.gzipSync(plain400);
    const cases = [
      ['truncated.csv.gz', whole.subarray(0, whole.length - 5), 'not a whole gzip file'],
      ['garbage.csv.gz', Buffer.concat([whole, Buffer.from('garbage after the member\n')]), 'not a whole gzip file'],
    ];
    if (zstdCli) {
      const zst = zstdOf(src400, path.join(tmp, 'refused.tmp'));
      cases.push(['truncated.csv.zst', zst.subarray(0, zst.length - 7), 'not a whole zstd file']);
      cases.push(['garbage.csv.zst', Buffer.concat([zst, Buffer.from('garbage after the frame\n')]), 'not a whole zstd file']);
    }
    for (const [name, bytes, says] of cases) {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, bytes);
      const cliRun = run(['trace', 'inspect', file, '--json']);
      expectEqual(cliRun.status, 2, `CLI exit on ${name}`);
      if (!cliRun.stderr.includes(says)) throw new Error(`CLI on ${name}: ${cliRun.stderr}`);
      const page = await freshPage();
      await page.setInputFiles('#file', file);
      await page.waitForSelector('#error');
      const text = await page.innerText('#error');
      for (const part of [name, says]) {
        if (!text.includes(part)) throw new Error(`#error reads ${JSON.stringify(text)}; lacks ${JSON.stringify(part)}`);
      }
      if ((await page.$('#emitted')) !== null) throw new Error(`${name}: a report is shown beside the error`);
      await page.close();
    }
  });

  // Files from 8 MiB are read in two halves on two workers and joined (web/src/halves.rs),
  // asked for here whatever the cores: the worker's marks say the second half's rows were
  // joined, and the report is the CLI's.
  const readInHalves = async (page) => {
    const marks = await page.evaluate(() => (window.loadproofWorkerMarks ?? []).map(([n]) => n));
    if (!marks.includes('shard-joined')) throw new Error(`not read in halves: worker marks ${marks.join(', ')}`);
  };

  await check('multi-chunk file (over 8 MiB) read in two halves equals the CLI', async () => {
    const bigFile = path.join(tmp, 'big-synthetic.csv');
    mustRun(['trace', 'synth', '--out', bigFile, '--rows', '250000', '--seed', '7']);
    const size = fs.statSync(bigFile).size;
    if (size <= 8 << 20) throw new Error(`test file is only ${size} bytes`);
    fs.rmSync(bigFile + '.synth.json', { force: true });
    const expected = cli(bigFile);
    const page = await freshPage({ halves: true });
    await page.setInputFiles('#file', bigFile);
    deepStrictEqual(await waitForReport(page, 'big-synthetic.csv'), expected);
    await readInHalves(page);
    await page.close();
  });

  // A gzip file over 8 MiB (stored, level 0, so it stays that large) is read as one stream even
  // where halves are asked for: a stream cannot be cut at its middle.
  await check('a gzip file over 8 MiB is read as one stream, never in halves, and equals the CLI', async () => {
    const name = 'big-synthetic.csv.gz';
    const gz = path.join(tmp, name);
    fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(path.join(tmp, 'big-synthetic.csv')), { level: 0 }));
    if (fs.statSync(gz).size <= 8 << 20) throw new Error('test file is not over 8 MiB');
    const expected = cli(gz);
    const page = await freshPage({ halves: true });
    await page.setInputFiles('#file', gz);
    deepStrictEqual(await waitForReport(page, name), expected);
    const marks = await page.evaluate(() => (window.loadproofWorkerMarks ?? []).map(([n]) => n));
    if (marks.includes('shard-joined')) throw new Error(`read in halves: worker marks ${marks.join(', ')}`);
    await page.close();
  });

  await check('defects on both sides of the halves\' cut: every count, example and line number equals the CLI', async () => {
    const clean = path.join(tmp, 'halves-clean.csv');
    mustRun(['trace', 'synth', '--out', clean, '--rows', '250000', '--seed', '11', '--failure-share', '0.05']);
    const text = fs.readFileSync(clean, 'utf8');
    const lines = text.split('\n');
    const header = lines[0];
    // Broken rows, a repeated header, a blank line, CRLF and an arrival from the past, placed
    // around the middle (where the cut falls) and late in the second half.
    const dirt = (at) => [
      'not,a,row',
      header,
      '',
      `${lines[at].split(',')[0]},ChatGPT,12,3,15,Conversation log\r`,
      '0.5,ChatGPT,10,4,14,Conversation log',
      '12.5,ChatGPT,x,4,14,Conversation log',
    ];
    const mid = Math.floor(lines.length / 2);
    const late = Math.floor(lines.length * 0.9);
    const dirty = [...lines.slice(0, mid), ...dirt(mid), ...lines.slice(mid, late), ...dirt(late), ...lines.slice(late)];
    const file = path.join(tmp, 'halves-dirty.csv');
    fs.writeFileSync(file, dirty.join('\n'));
    const expected = cli(file);
    for (const reason of ['malformed_row', 'duplicate_header', 'non_monotonic_arrival', 'non_numeric', 'zero_input_tokens']) {
      if (!(expected.dropped[reason] > 0)) throw new Error(`the test file lacks ${reason}: ${JSON.stringify(expected.dropped)}`);
    }
    const page = await freshPage({ halves: true });
    await page.setInputFiles('#file', file);
    deepStrictEqual(await waitForReport(page, 'halves-dirty.csv'), expected);
    await readInHalves(page);
    await page.close();
  });

  await check('a second half that cannot be read (its worker finds no header in the file\'s first MiB) is read by the first worker: the report still equals the CLI', async () => {
    const src = path.join(tmp, 'big-synthetic.csv');
    const file = path.join(tmp, 'halves-late-header.csv');
    fs.writeFileSync(file, Buffer.concat([Buffer.alloc(1_200_000, 0x0a), fs.readFileSync(src)]));
    const expected = cli(file);
    if (expected.blank_lines < 1_200_000) throw new Error(`blank lines: ${expected.blank_lines}`);
    const page = await freshPage({ halves: true });
    await page.setInputFiles('#file', file);
    deepStrictEqual(await waitForReport(page, 'halves-late-header.csv'), expected);
    const marks = await page.evaluate(() => (window.loadproofWorkerMarks ?? []).map(([n]) => n));
    if (!marks.includes('shard-not-used')) throw new Error(`the second half was used: worker marks ${marks.join(', ')}`);
    await page.close();
  });

  await check('Mooncake prefix blocks read in two halves equal the CLI', async () => {
    const file = path.join(tmp, 'halves-mooncake.jsonl');
    mustRun(['trace', 'synth', '--layout', 'mooncake', '--out', file, '--rows', '120000', '--seed', '3', '--prefix-share', '0.5']);
    fs.rmSync(file + '.synth.json', { force: true });
    const size = fs.statSync(file).size;
    if (size <= 8 << 20) throw new Error(`test file is only ${size} bytes`);
    const expected = cli(file);
    const page = await freshPage({ halves: true });
    await page.setInputFiles('#file', file);
    deepStrictEqual(await waitForReport(page, 'halves-mooncake.jsonl'), expected);
    await readInHalves(page);
    await page.close();
  });

  // RAGPulse: the CLI finds the five companion files beside the trace; the page is given them
  // with it (chosen or dropped together), and reads what the CLI reads.
  const ragpulseDir = path.join(shared, 'traces/ragpulse');
  const ragpulse = path.join(ragpulseDir, '0_trace.first400.jsonl');
  const companionFiles = ['1_sys_prompt.jsonl', '2_passages.jsonl', '3_history.jsonl', '4_user_input.jsonl', '5_web_search.jsonl']
    .map((f) => path.join(ragpulseDir, f));
  await check('RAGPulse given with its five companion files: the report deep-equals the CLI (segment tokens known, companions\' sha256s)', async () => {
    const expected = cli(ragpulse);
    expectEqual(Object.keys(expected.segments?.companions ?? {}).length, 5, 'the CLI read five companion files');
    const page = await freshPage();
    await page.setInputFiles('#file', [ragpulse, ...companionFiles]);
    deepStrictEqual(await waitForReport(page, path.basename(ragpulse)), expected);
    await page.close();
  });
  await check('RAGPulse alone reads without lengths, as the CLI reads a lone copy; with four of five companions it is refused naming the missing one', async () => {
    const lone = path.join(tmp, 'ragpulse-alone.jsonl');
    fs.copyFileSync(ragpulse, lone);
    const expected = cli(lone);
    expectEqual(expected.segments?.undescribed_tokens ?? null, null, 'the CLI read it without lengths');
    let page = await freshPage();
    await page.setInputFiles('#file', lone);
    deepStrictEqual(await waitForReport(page, 'ragpulse-alone.jsonl'), expected);
    await page.close();
    page = await freshPage();
    await page.setInputFiles('#file', [ragpulse, ...companionFiles.slice(0, 4)]);
    await page.waitForSelector('#error', { timeout: TIMEOUT_MS });
    const text = await page.innerText('#error');
    if (!text.includes('5_web_search.jsonl missing')) throw new Error(`#error reads ${JSON.stringify(text)}`);
    await page.close();
  });

  await check('broken file (header a,b,c) shows #error naming the columns seen', async () => {
    const broken = path.join(tmp, 'broken.csv');
    fs.writeFileSync(broken, 'a,b,c\n1,2,3\n');
    const page = await freshPage();
    await page.setInputFiles('#file', broken);
    await page.waitForSelector('#error');
    const text = await page.innerText('#error');
    for (const part of ['broken.csv', 'line 1', 'a, b, c']) {
      if (!text.includes(part)) throw new Error(`#error reads ${JSON.stringify(text)}; lacks ${JSON.stringify(part)}`);
    }
    if ((await page.$('#emitted')) !== null) throw new Error('a report is shown beside the error');
    const published = await page.evaluate(() => window.loadproofReport);
    if (published !== null) throw new Error('window.loadproofReport is not null after an error');
    await page.close();
  });

  await check('drop zone: a dropped File is read like an uploaded one', async () => {
    const file = TRACES[1];
    const name = path.basename(file);
    const expected = cli(file);
    const page = await freshPage();
    await page.evaluate(
      ({ name, text }) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], name, { type: 'text/csv' }));
        const zone = document.querySelector('.dropzone');
        zone.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt }));
        zone.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
      },
      { name, text: fs.readFileSync(file, 'utf8') },
    );
    deepStrictEqual(await waitForReport(page, name), expected);
    await page.close();
  });

  // A receipt or a playbook dropped on the Trace view opens in the view that reads it.
  await check('a receipt chosen on the Trace view opens in the Receipt view', async () => {
    const trace = path.join(tmp, 'synthetic-burstgpt.csv');
    mustRun(['trace', 'synth', '--out', trace]);
    const plan = path.join(tmp, 'plan');
    mustRun(['plan', trace, '--out', plan, '--max-requests', '20', '--time-scale', '50']);
    const receipt = path.join(tmp, 'routed.receipt');
    const sim = await startSim({ args: [] });
    try {
      const r = run(['fire', plan, '--endpoint', sim.url, '--engine', 'native', '--acquire-lease', '120', '--out', receipt]);
      if (!fs.existsSync(receipt)) throw new Error(`fire wrote no receipt (exit ${r.status}): ${r.stderr}`);
    } finally {
      await sim.stop();
    }
    const magic = fs.readFileSync(receipt).subarray(0, 4).toString('hex');
    expectEqual(magic, '28b52ffd', 'the receipt is a zstd record stream');
    const expected = cliJson(['receipt', 'audit', '--json', receipt], { allow: [0] });
    const page = await freshPage({ quiet: () => true });
    await page.setInputFiles('#file', receipt);
    await page.waitForFunction(() => window.loadproofAuditSource === 'routed.receipt', null, { timeout: TIMEOUT_MS });
    expectEqual(await page.evaluate(() => location.hash), '#/receipt', 'hash');
    deepStrictEqual(await page.evaluate(() => window.loadproofAudit), expected);
    const traceError = await page.$eval('#error', (el) => el.innerText).catch(() => null);
    if (traceError !== null) throw new Error(`the Trace view shows an error: ${traceError}`);
    await page.close();
  });

  await check('a playbook chosen on the Trace view opens in the Playbook view', async () => {
    const book = path.join(tmp, 'dropped-playbook.json');
    fs.copyFileSync(fromRoot('fixtures/playbook/examples.json'), book);
    const page = await freshPage({ quiet: () => true });
    await page.setInputFiles('#file', book);
    await page.waitForFunction(() => document.querySelector('#playbook-source')?.innerText.startsWith('dropped-playbook.json'), null, { timeout: TIMEOUT_MS });
    expectEqual(await page.evaluate(() => location.hash), '#/playbook', 'hash');
    await page.close();
  });

  await check('no page errors or console errors', () => noErrors(pageErrors));
} finally {
  await cleanUp({ browser, server, tmp });
}

finish();

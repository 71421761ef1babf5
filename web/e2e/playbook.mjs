#!/usr/bin/env node
// Browser test of a published playbook site: the Playbook view must say what the CLI says.
//
// Why: `loadproof playbook publish` promises a static site that works from any path on any
// static server, offline, with the matcher's verdicts equal to `loadproof playbook match`.
// This test publishes fixtures/playbook/examples.json, serves the site under a sub-path on
// 127.0.0.1, blocks every request to any other host, and compares the page with the CLI.
//
// Run from the repo root after `web/build.sh` and `cargo build --release -p loadproof_cli`:
//   node web/e2e/playbook.mjs
// Environment: LOADPROOF_SHARED (default ../shared), LOADPROOF_BIN (default
// target/release/loadproof), LOADPROOF_DIST (default dist), CHROMIUM (default /usr/bin/chromium).
// Prints one line per check, then `N passed, M failed`; exits 1 if any failed.

import { execFileSync, spawnSync } from 'node:child_process';
import { deepStrictEqual } from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { fromRoot, launch } from './harness.mjs';

const shared = fromRoot(process.env.LOADPROOF_SHARED ?? '../shared');
const bin = fromRoot(process.env.LOADPROOF_BIN ?? 'target/release/loadproof');
const dist = fromRoot(process.env.LOADPROOF_DIST ?? 'dist');
const examples = fromRoot('fixtures/playbook/examples.json');
const site = fromRoot('target/site-examples');
const shots = fromRoot('target/screenshots');
const liveTrace = path.join(shared, 'traces/burstgpt/BurstGPT_1.first400.csv');
const PREFIX = '/published/under/a/path/'; // not the server root: asset URLs must be relative
const TIMEOUT_MS = 60_000;

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed += 1;
    const msg = String(err?.message ?? err).split('\n').slice(0, 14).join('\n     ');
    console.log(`FAIL ${name}\n     ${msg}`);
  }
}
function expectEqual(actual, expected, what) {
  if (actual !== expected) {
    throw new Error(`${what}: page shows ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }
}

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
};

/** A static server for `dir` mounted at PREFIX on 127.0.0.1 (everything else is 404). */
function serveUnder(dir) {
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = null;
    if (urlPath.startsWith(PREFIX)) {
      const rel = urlPath.slice(PREFIX.length) || 'index.html';
      const candidate = path.resolve(dir, rel);
      if (candidate.startsWith(dir + path.sep) && fs.existsSync(candidate) && fs.statSync(candidate).isFile()) {
        file = candidate;
      }
    }
    if (file === null) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, {
      'content-type': MIME[path.extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// --- the site, as the CLI publishes it --------------------------------------------------------
const published = spawnSync(bin, ['playbook', 'publish', examples, '--out', site, '--app', dist], {
  encoding: 'utf8',
});
if (published.status !== 0) {
  console.log(`FAIL loadproof playbook publish exited ${published.status}\n     ${published.stderr}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
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
  const r = spawnSync(bin, ['playbook', 'match', examples, '--trace', liveTrace, ...identityArgs, ...extra], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0 && r.status !== 1) throw new Error(`playbook match exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

const server = await serveUnder(site);
const host = `127.0.0.1:${server.address().port}`;
const base = `http://${host}${PREFIX}`;
fs.mkdirSync(shots, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadproof-e2e-playbook-'));
const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const blocked = [];
await context.route('**/*', (route) => {
  const url = new URL(route.request().url());
  if (url.host === host || url.protocol === 'data:') return route.continue();
  blocked.push(url.href);
  return route.abort();
});
const pageErrors = [];

async function freshPage(hash) {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(msg.text());
  });
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
        expectEqual(cells[0].text, String(row.delta.baseline[metric].median), `${metric} baseline median`);
        expectEqual(cells[1].text, String(row.delta.treatment[metric].median), `${metric} treatment median`);
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
    const r = spawnSync(bin, ['playbook', 'match', examples, '--trace', liveTrace, ...args, '--json'], { encoding: 'utf8' });
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
    const cli = spawnSync(bin, ['playbook', 'publish', bad, '--out', path.join(tmp, 'site'), '--app', dist], {
      encoding: 'utf8',
    });
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
  await check('no page errors or console errors', async () => {
    if (pageErrors.length > 0) throw new Error(pageErrors.join('\n'));
  });
} finally {
  await browser.close();
  server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);

// What every browser script shares, so that each holds only its own checks:
//   * the tally: `check` prints `ok   name` or `FAIL name` (and why), `finish` prints
//     `N passed, M failed` and exits 1 on any failure, `bail` stops early as one more failure,
//     and `bailOnCrash` makes a throw outside any check do the same; `waitForEqual` waits for a
//     page value to deep-equal an expected one;
//   * the CLI the page is compared with (`bin`, `run`, `mustRun`, `cliJson`) and
//     `loadproof sim` (`startSim`, `freePort`);
//   * the page: serve a directory on 127.0.0.1 (`serve`), launch the Debian Chromium with the
//     flags this offline machine needs (`launch`), block requests to other hosts
//     (`blockRequests`), all three at once (`openSite`), collect page and console errors
//     (`collectErrors`, `noErrors`), and close it all (`cleanUp`).

import { spawn, spawnSync } from 'node:child_process';
import { deepStrictEqual } from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(path.join(root, 'tools', 'package.json'));
const { chromium } = require('playwright-core');

export const fromRoot = (p) => path.resolve(root, p);

/** The CLI (`$LOADPROOF_BIN`, default target/release/loadproof). */
export const bin = fromRoot(process.env.LOADPROOF_BIN ?? 'target/release/loadproof');
/** The built app (`$LOADPROOF_DIST`, default dist). */
export const dist = fromRoot(process.env.LOADPROOF_DIST ?? 'dist');
/** The shared data directory (`$LOADPROOF_SHARED`, default ../shared). */
export const shared = fromRoot(process.env.LOADPROOF_SHARED ?? '../shared');
/** Where screenshots go. */
export const shots = fromRoot('target/screenshots');
/** How long a page may take to show what a check waits for. */
export const TIMEOUT_MS = 60_000;

// --- the tally ---------------------------------------------------------------------------------

let passed = 0;
let failed = 0;

/** Runs one check: `ok   name`, or `FAIL name` and the first lines of why. */
export async function check(name, fn) {
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

export function expectEqual(actual, expected, what) {
  if (actual !== expected) {
    throw new Error(`${what}: page shows ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }
}

export function expectIncludes(text, part, what) {
  if (!text.includes(part)) throw new Error(`${what}: ${JSON.stringify(text)} lacks ${JSON.stringify(part)}`);
}

/**
 * Waits until `read()`, evaluated in `page`, deep-equals `expected` (a value that changes when
 * the page's work lands, as an audit redone under another policy); throws the last difference
 * after `TIMEOUT_MS`.
 */
export async function waitForEqual(page, read, expected, arg = undefined) {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const value = await page.evaluate(read, arg);
    try {
      deepStrictEqual(value, expected);
      return value;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops the script as one more failure: `FAIL message`, the tally, exit 1. */
export function bail(message) {
  console.log(`FAIL ${message}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
}

/** Prints the tally (and `note`) and exits, 1 if any check failed. */
export function finish(note = '') {
  console.log(`${passed} passed, ${failed} failed${note}`);
  process.exit(failed > 0 ? 1 : 0);
}

/** From here on, a throw outside any check (a setup step that failed) ends as `bail` does. */
export function bailOnCrash() {
  const crash = (err) => bail(String(err?.stack ?? err).split('\n').slice(0, 14).join('\n     '));
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
}

// --- the CLI -----------------------------------------------------------------------------------

/** Runs `loadproof ...args` and returns spawnSync's result, whatever the exit code. */
export function run(args, opts = {}) {
  return spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 256 << 20, ...opts });
}

/** Runs `loadproof ...args`; throws unless it exits with a code in `allow` (default 0). */
export function mustRun(args, { allow = [0], ...opts } = {}) {
  const r = run(args, opts);
  if (!allow.includes(r.status)) {
    throw new Error(`loadproof ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  }
  return r;
}

/** The CLI's `--json` for `args`, parsed (exits 0 and 1 are answers; anything else throws). */
export function cliJson(args, { allow = [0, 1], ...opts } = {}) {
  return JSON.parse(mustRun(args, { allow, ...opts }).stdout);
}

/** A port that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** `loadproof sim` flags for a fast model: prefill and decode take next to no time. */
export const FAST_SIM = ['--prefill-tokens-per-s', '100000000', '--decode-step-ms', '1', '--decode-ms-per-seq', '0'];

/**
 * Starts `loadproof sim --port PORT ...args` (PORT 0: any free one) and resolves once it
 * listens, to `{ url, port, stop }` (`stop()` kills it and resolves when it has exited). A port
 * the previous sim's socket still holds is tried again, 50 times at most.
 */
export async function startSim({ port = 0, args = [] } = {}) {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const child = spawn(bin, ['sim', '--port', String(port), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    const m = await new Promise((resolve) => {
      let buf = '';
      const timer = setTimeout(() => resolve(null), 15_000);
      child.stderr.on('data', (d) => {
        buf += d;
        // Only whole lines: a chunk may end inside the URL.
        const lines = buf.slice(0, buf.lastIndexOf('\n') + 1);
        const listening = /^loadproof sim listening on (http:\/\/\S+)/m.exec(lines);
        if (listening) {
          clearTimeout(timer);
          resolve(listening);
        }
      });
      child.on('exit', () => {
        clearTimeout(timer);
        resolve(null);
      });
    });
    const stop = () => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill();
    });
    if (m) return { url: m[1], port: Number(new URL(m[1]).port), stop };
    await stop();
    await new Promise((r) => setTimeout(r, 100)); // the previous sim's socket may linger
  }
  throw new Error(`loadproof sim could not listen on port ${port}`);
}

// --- the page ----------------------------------------------------------------------------------

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
};

/**
 * Serves `dir` at `prefix` (default `/`) on an ephemeral 127.0.0.1 port; anything else is 404.
 * Resolves to the listening server.
 */
export function serve(dir, { prefix = '/' } = {}) {
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = null;
    if (urlPath.startsWith(prefix)) {
      const rel = urlPath.slice(prefix.length).replace(/^\/+/, '') || 'index.html';
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

/** Headless Debian Chromium (`$CHROMIUM` or /usr/bin/chromium). */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Lets through only the requests whose URL `allowed(url)` accepts, in every page of `context`;
 * resolves to the list the others are added to (as they are blocked).
 */
export async function blockRequests(context, allowed) {
  const blocked = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (allowed(url)) return route.continue();
    blocked.push(url.href);
    return route.abort();
  });
  return blocked;
}

/**
 * Adds the page's uncaught errors and console errors to `errors`, each after `prefix`; console
 * errors are left out while `quiet()` is true (a test that blocks the network on purpose).
 */
export function collectErrors(page, errors, { prefix = '', quiet = () => false } = {}) {
  page.on('pageerror', (err) => errors.push(`${prefix}${err}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !quiet() && !noPlaybookOnABareBuild(msg)) errors.push(`${prefix}${msg.text()}`);
  });
}

/**
 * The page asks its site for `playbook.json` as it starts (offline after load); a bare build
 * (`dist/`, no `publish`) has none and answers 404, which the browser logs as an error. That
 * one answer is expected, not a fault; any other 404 still is.
 */
function noPlaybookOnABareBuild(msg) {
  return /status of 404/.test(msg.text()) && /\/playbook\.json$/.test(msg.location()?.url ?? '');
}

/**
 * Starts measuring, in `page`, the longest gap between animation frames (how long the page was
 * unresponsive at worst) into `window.__maxGap`, until `window[until]` is set and `afterMs`
 * more have passed (the rendering that follows it); `window.__gapsDone` is set then.
 * `window.__longFrames`: `[start, ms]` of every gap over 50 ms (`performance.now()` clock).
 */
export function watchFrameGaps(page, until, afterMs = 0) {
  return page.evaluate(([name, after]) => {
    window.__maxGap = 0;
    window.__gapsDone = false;
    let last = performance.now();
    let seen = null;
    window.__longFrames = [];
    const tick = (now) => {
      window.__maxGap = Math.max(window.__maxGap, now - last);
      if (now - last > (window.__longFrameMs ?? 50)) window.__longFrames.push([Math.round(last), Math.round(now - last)]);
      last = now;
      if (window[name] && seen === null) seen = now;
      if (seen === null || now - seen < after) requestAnimationFrame(tick);
      else window.__gapsDone = true;
    };
    requestAnimationFrame(tick);
  }, [until, afterMs]);
}

/** Sweeps the pointer along `y` (a share of the canvas's height) between the `from` and `to`
 *  shares of the width of chart `slug` until its readout shows; resolves to the readout's text ('' if none showed). */
export async function sweepReadout(page, slug, y, [from, to]) {
  // In the middle of the window, clear of the contents strip that stays at its top.
  await page.$eval(`#${slug}-chart`, (c) => c.scrollIntoView({ block: 'center' }));
  const box = await page.locator(`#${slug}-chart`).boundingBox();
  for (let x = box.x + box.width * from; x < box.x + box.width * to; x += 3) {
    await page.mouse.move(x, box.y + box.height * y);
    const shown = await page.$eval(`#${slug}-readout`, (r) => (r.hidden ? '' : r.textContent));
    if (shown) return shown;
  }
  return '';
}

/** Throws with every error collected, if any (the last check of a script). */
export function noErrors(errors) {
  if (errors.length > 0) throw new Error(errors.join('\n'));
}

/**
 * Serves `dir` at `prefix` and opens a Chromium context of `viewport` on it, where a request
 * goes through only if `allowed(url, host)` (`host` is the server's `127.0.0.1:PORT`; no
 * `allowed`: every request goes through). Resolves to
 * `{ server, host, base, browser, context, blocked }` (`blocked`: the URLs refused so far).
 */
export async function openSite(dir, { prefix = '/', viewport = { width: 1280, height: 800 }, allowed = null } = {}) {
  const server = await serve(dir, { prefix });
  const host = `127.0.0.1:${server.address().port}`;
  const browser = await launch();
  const context = await browser.newContext({ viewport });
  const blocked = allowed === null ? [] : await blockRequests(context, (url) => allowed(url, host));
  return { server, host, base: `http://${host}${prefix}`, browser, context, blocked };
}

/** Closes the browser and the server, and removes `tmp` when given. */
export async function cleanUp({ browser, server, tmp = null }) {
  await browser.close();
  server.close();
  if (tmp !== null) fs.rmSync(tmp, { recursive: true, force: true });
}

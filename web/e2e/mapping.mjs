#!/usr/bin/env node
// Browser test of a log read through a declared mapping (issue 18): the page builds a mapping
// from the header of a log no built-in format reads, reads the log through it, and says what
// `loadproof trace inspect LOG --schema MAPPING --json` says with the mapping it saved.
//
// Why: the mapping's bytes are what make a mapped trace reproducible (its sha256 travels with
// the trace). The page must read through the very bytes it saves, in its worker(s) as the CLI
// reads, or the saved file would give the CLI another trace than the one the page showed.
//
// Run from the repo root after `web/build.sh` and `cargo build --release -p loadproof_cli`:
//   node web/e2e/mapping.mjs
// Environment as web/e2e/trace.mjs. Prints one line per check, then `N passed, M failed`.

import { deepStrictEqual } from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import {
  TIMEOUT_MS, bailOnCrash, check, cleanUp, cliJson, collectErrors, dist, expectEqual, expectIncludes, finish,
  mustRun, noErrors, openSite, run, shared,
} from './harness.mjs';

bailOnCrash();

const AZURE = path.join(shared, 'traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv');
const MOONCAKE = path.join(shared, 'traces/mooncake/conversation_trace.jsonl');

const { server, base, browser, context } = await openSite(dist);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadproof-e2e-map-'));
const pageErrors = [];

async function freshPage({ halves = undefined } = {}) {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  if (halves !== undefined) await page.addInitScript((h) => { window.loadproofHalves = h; }, halves);
  collectErrors(page, pageErrors);
  await page.goto(base);
  await page.waitForSelector('#file', { state: 'attached' });
  return page;
}

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The report the page publishes for `source`, once it has (throws on an error shown instead). */
async function reportFor(page, source) {
  await page.waitForFunction(
    (name) => window.loadproofReport?.source === name || document.querySelector('#error'),
    source,
    { timeout: TIMEOUT_MS },
  );
  const error = await page.$('#error');
  if (error) throw new Error(`page shows an error: ${await error.innerText()}`);
  return page.evaluate(() => window.loadproofReport);
}

/** The page's numbers and both sha256s, exactly as the CLI's JSON has them. */
async function checkShown(page, expected) {
  const exact = (sel) => page.$eval(sel, (el) => el.title || el.innerText);
  expectEqual(await exact('#emitted'), String(expected.emitted), '#emitted');
  expectEqual(await exact('#dropped-total'), String(expected.dropped_total), '#dropped-total');
  expectEqual(await exact('#rate'), String(expected.regime.rate_rps), '#rate');
  expectEqual(await exact('#sha256'), expected.source_sha256, '#sha256');
  expectEqual(await exact('#schema-sha256'), expected.schema_sha256, '#schema-sha256');
  expectEqual(await exact('#format'), 'mapped', '#format');
}

/** Drops `file` on the trace view's zone, as a user would. */
async function drop(page, file) {
  await page.evaluate(
    ({ name, text }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name));
      const zone = document.querySelector('.dropzone');
      zone.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt }));
      zone.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
    },
    { name: path.basename(file), text: fs.readFileSync(file, 'utf8') },
  );
}

/** Fills the mapping form with `choice` ({ arrival, unit, format?, zone?, input, output, session?, prefix?: { field,
 *  blockTokens }, filters? })
 *  by keyboard-reachable controls, and saves the mapping to `saved`. */
async function buildMapping(page, choice, saved) {
  await page.waitForSelector('#map-arrival', { timeout: TIMEOUT_MS });
  await page.selectOption('#map-arrival', choice.arrival);
  await page.selectOption('#map-unit', choice.unit);
  if (choice.format !== undefined) await page.fill('#map-format', choice.format);
  if (choice.zone !== undefined) await page.fill('#map-zone', choice.zone);
  await page.selectOption('#map-input', choice.input);
  await page.selectOption('#map-output', choice.output);
  if (choice.session) await page.selectOption('#map-session', choice.session);
  if (choice.prefix) {
    await page.selectOption('#map-prefix', choice.prefix.field);
    await page.fill('#map-block-tokens', String(choice.prefix.blockTokens));
  }
  for (const column of choice.filters ?? []) await page.check(`.map-filters input[value="${column}"]`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#map-save')]);
  await download.saveAs(saved);
  return download.suggestedFilename();
}

try {
  // A gateway's export of the Azure conversation trace: its own column names in its own
  // order, a model column, and ISO 8601 stamps with a `T` and an offset (the same instants).
  const gateway = path.join(tmp, 'gateway.csv');
  await check('a gateway-shaped CSV is written from the Azure trace', () => {
    const lines = fs.readFileSync(AZURE, 'utf8').split(/\r?\n/).filter((l) => l.length > 0);
    const out = ['completion_tokens,received_at,model,prompt_tokens'];
    lines.slice(1).forEach((line, i) => {
      const [stamp, context, generated] = line.split(',');
      const [day, time] = stamp.split(' ');
      const [y, mo, d] = day.split('-').map(Number);
      const [hh, rest] = [Number(time.slice(0, 2)), time.slice(2)];
      const local = new Date(Date.UTC(y, mo - 1, d, hh) - 5 * 3600e3).toISOString().slice(0, 13);
      out.push(`${generated},${local}${rest}-05:00,${i % 3 ? 'llama-3-8b' : 'mixtral'},${context}`);
    });
    fs.writeFileSync(gateway, out.join('\n') + '\n');
  });

  const saved = path.join(tmp, 'built.schema.json');
  let expected = null;
  await check('gateway.csv: no built-in format reads it; the form built from its header reads it as the CLI does with the saved mapping', async () => {
    const page = await freshPage();
    await drop(page, gateway);
    await page.waitForSelector('#error');
    expectIncludes(await page.innerText('#error'), 'unrecognised layout', '#error');
    const offered = await page.$$eval('#map-arrival option', (os) => os.map((o) => o.value).filter(Boolean));
    deepStrictEqual(offered, ['completion_tokens', 'received_at', 'model', 'prompt_tokens']);
    // An unchosen column is refused by core, naming the field.
    await page.click('#map-read');
    expectIncludes(await page.innerText('#map-error'), 'arrival', '#map-error');
    const name = await buildMapping(page, {
      arrival: 'received_at', unit: 'datetime', input: 'prompt_tokens', output: 'completion_tokens', filters: ['model'],
    }, saved);
    expectEqual(name, 'gateway.schema.json', 'saved file name');
    expectEqual(await page.inputValue('#map-zone'), 'UTC', 'the zone defaults to UTC');
    await page.click('#map-read');
    const report = await reportFor(page, 'gateway.csv');
    expected = cliJson(['trace', 'inspect', gateway, '--schema', saved, '--json'], { allow: [0] });
    expectEqual(expected.schema_sha256, sha256(saved), 'CLI schema_sha256 is the saved bytes\' sha256');
    deepStrictEqual(report, expected);
    await checkShown(page, expected);
    expectEqual(await page.innerText('#mapping-sha256'), sha256(saved), '#mapping-sha256');
    const azure = cliJson(['trace', 'inspect', AZURE, '--json'], { allow: [0] });
    expectEqual(report.emitted, azure.emitted, 'emitted, as the Azure trace it maps');
    expectEqual(report.regime.rate_rps, azure.regime.rate_rps, 'rate, as the Azure trace it maps');
    await page.close();
  });

  await check('gateway.csv: the saved mapping chosen on a fresh page, then the log: the same report; its filter column answers the CLI\'s --where', async () => {
    if (expected === null) throw new Error('no saved mapping');
    const page = await freshPage();
    await page.setInputFiles('#mapping-file', saved);
    await page.waitForSelector('#mapping-sha256');
    await page.setInputFiles('#file', gateway);
    deepStrictEqual(await reportFor(page, 'gateway.csv'), expected);
    const r = run(['trace', 'inspect', gateway, '--schema', saved, '--where', 'model=mixtral', '--json']);
    expectEqual(r.status, 0, 'the saved filter column answers --where');
    await page.close();
  });

  // The whole case: the log as it usually arrives, gzipped, read through the saved
  // mapping in the page, equals the CLI's report of the same file (both sha256s included).
  await check('gateway.csv.gz: the gzipped log through the saved mapping equals the CLI, both digests included', async () => {
    if (expected === null) throw new Error('no saved mapping');
    const gz = path.join(tmp, 'gateway.csv.gz');
    fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(gateway)));
    const cli = cliJson(['trace', 'inspect', gz, '--schema', saved, '--json'], { allow: [0] });
    expectEqual(cli.compression?.codec, 'gzip', 'CLI compression.codec');
    expectEqual(cli.compression?.file_sha256, sha256(gz), 'CLI compression.file_sha256');
    expectEqual(cli.source_sha256, expected.source_sha256, 'the content\'s sha256, as the plain log\'s');
    const page = await freshPage();
    await page.setInputFiles('#mapping-file', saved);
    await page.waitForSelector('#mapping-sha256');
    await page.setInputFiles('#file', gz);
    deepStrictEqual(await reportFor(page, 'gateway.csv.gz'), cli);
    await page.close();
  });

  // A gateway writing its own datetime layout (nginx's `$time_local`, US-locale 12-hour clocks):
  // the form's layout field declares it, and the page reads it as the CLI does.
  await check('access.csv: stamps in the log\'s own layout (%d/%b/%Y:%H:%M:%S %z) read through the form\'s pattern as the CLI does', async () => {
    const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const lines = fs.readFileSync(AZURE, 'utf8').split(/\r?\n/).filter((l) => l.length > 0);
    const out = ['time_local,bytes_in,bytes_out'];
    for (const line of lines.slice(1)) {
      const [stamp, context, generated] = line.split(',');
      const [day, time] = stamp.split(' ');
      const [y, mo, d] = day.split('-');
      out.push(`${d}/${MONTHS[Number(mo) - 1]}/${y}:${time} +0000,${context},${generated}`);
    }
    const access = path.join(tmp, 'access.csv');
    fs.writeFileSync(access, out.join('\n') + '\n');
    const page = await freshPage();
    await drop(page, access);
    await page.waitForSelector('#error');
    const layoutSaved = path.join(tmp, 'access.schema.json');
    await buildMapping(page, {
      arrival: 'time_local', unit: 'datetime', format: '%d/%b/%Y:%H:%M:%S.%f %z', input: 'bytes_in', output: 'bytes_out',
    }, layoutSaved);
    await page.click('#map-read');
    const report = await reportFor(page, 'access.csv');
    const want = cliJson(['trace', 'inspect', access, '--schema', layoutSaved, '--json'], { allow: [0] });
    deepStrictEqual(report, want);
    const azure = cliJson(['trace', 'inspect', AZURE, '--json'], { allow: [0] });
    deepStrictEqual(report.regime, azure.regime);
    expectEqual(JSON.parse(fs.readFileSync(layoutSaved, 'utf8')).arrival.format, '%d/%b/%Y:%H:%M:%S.%f %z', 'saved layout');
    await page.close();
  });

  await check('a bad mapping is refused with the CLI\'s message, its field named', async () => {
    const bad = path.join(tmp, 'bad.schema.json');
    fs.writeFileSync(bad, JSON.stringify({
      schema: 'loadproof.trace-schema/v1', arrival: { field: 'received_at', unit: 'datetime' },
      input_tokens: 'prompt_tokens', output_tokens: 'completion_tokens',
    }));
    const r = run(['trace', 'inspect', gateway, '--schema', bad, '--json']);
    expectEqual(r.status, 2, 'CLI exit');
    const message = /not a trace mapping: .*/.exec(r.stderr)?.[0];
    if (!message) throw new Error(`CLI says ${r.stderr}`);
    const page = await freshPage();
    await page.setInputFiles('#mapping-file', bad);
    await page.waitForSelector('#error');
    expectEqual(await page.innerText('#error'), `bad.schema.json: ${message}`, '#error');
    expectIncludes(message, 'arrival.zone', 'the field');
    if (await page.$('#mapping-status')) throw new Error('a refused mapping is in use');
    await page.close();
  });

  // A JSONL log over 8 MiB (read in two halves on two workers), nested usage fields: the form
  // offers their dotted paths, and both workers read through the mapping.
  await check('a JSONL log with nested fields, read in two halves through a mapping built in the form, equals the CLI', async () => {
    const synth = path.join(tmp, 'synth.csv');
    mustRun(['trace', 'synth', '--out', synth, '--rows', '200000', '--seed', '5', '--failure-share', '0.02']);
    const [header, ...rows] = fs.readFileSync(synth, 'utf8').trim().split('\n');
    const col = Object.fromEntries(header.split(',').map((c, i) => [c, i]));
    const log = path.join(tmp, 'gateway.jsonl');
    fs.writeFileSync(log, rows.map((row) => {
      const c = row.split(',');
      return `{"at_s":${c[col.Timestamp]},"model":"${c[col.Model]}","usage":{"prompt_tokens":${c[col['Request tokens']]},"completion_tokens":${c[col['Response tokens']]}}}`;
    }).join('\n') + '\n');
    if (fs.statSync(log).size <= 8 << 20) throw new Error(`the log is only ${fs.statSync(log).size} bytes`);
    const page = await freshPage({ halves: true });
    await page.setInputFiles('#file', log);
    await page.waitForSelector('#error');
    const offered = await page.$$eval('#map-arrival option', (os) => os.map((o) => o.value).filter(Boolean));
    deepStrictEqual(offered, ['at_s', 'model', 'usage.completion_tokens', 'usage.prompt_tokens']);
    const savedJsonl = path.join(tmp, 'jsonl.schema.json');
    await buildMapping(page, {
      arrival: 'at_s', unit: 's', input: 'usage.prompt_tokens', output: 'usage.completion_tokens',
    }, savedJsonl);
    await page.click('#map-read');
    const report = await reportFor(page, 'gateway.jsonl');
    const want = cliJson(['trace', 'inspect', log, '--schema', savedJsonl, '--json'], { allow: [0] });
    if (!(want.dropped_total > 0)) throw new Error('the log has no defects: the check would prove less');
    deepStrictEqual(report, want);
    await checkShown(page, want);
    const marks = await page.evaluate(() => (window.loadproofWorkerMarks ?? []).map(([n]) => n));
    if (!marks.includes('shard-joined')) throw new Error(`not read in halves: worker marks ${marks.join(', ')}`);
    await page.close();
  });

  // A JSONL log with prefix identity under its own names (Mooncake's fields renamed, nested):
  // the form's prefix-block field and block size read it as the CLI does, and as Mooncake.
  await check('a JSONL log with its own prefix-block field: the form\'s block ids and size read it as the CLI does, as Mooncake', async () => {
    const log = path.join(tmp, 'cache.jsonl');
    const rows = fs.readFileSync(MOONCAKE, 'utf8').split('\n').filter((l) => l.trim().length > 0).map((l) => JSON.parse(l));
    fs.writeFileSync(log, rows.map((r) => JSON.stringify({
      at_ms: r.timestamp, req: { prompt: r.input_length, completion: r.output_length }, blocks: r.hash_ids,
    })).join('\n') + '\n');
    const page = await freshPage();
    await page.setInputFiles('#file', log);
    await page.waitForSelector('#error');
    const savedPrefix = path.join(tmp, 'cache.schema.json');
    await buildMapping(page, {
      arrival: 'at_ms', unit: 'ms', input: 'req.prompt', output: 'req.completion', prefix: { field: 'blocks', blockTokens: 512 },
    }, savedPrefix);
    await page.click('#map-read');
    const report = await reportFor(page, 'cache.jsonl');
    const want = cliJson(['trace', 'inspect', log, '--schema', savedPrefix, '--json'], { allow: [0] });
    deepStrictEqual(report, want);
    const mooncake = cliJson(['trace', 'inspect', MOONCAKE, '--json'], { allow: [0] });
    deepStrictEqual(report.regime, mooncake.regime);
    expectEqual(report.prefix_block_tokens, 512, 'prefix_block_tokens');
    expectEqual(report.rows_without_prefix, mooncake.rows_without_prefix, 'rows_without_prefix');
    await page.close();
  });

  await check('no page errors or console errors', () => noErrors(pageErrors));
} finally {
  await cleanUp({ browser, server, tmp });
}

finish();

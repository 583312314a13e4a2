// ui-harness.mjs: what the web UI's Chromium drivers (ui-*.mjs) share: their command
// line, the one JSON report each prints, the deadline, a throwaway Chromium profile
// (Debian's /usr/bin/chromium through playwright-core; no browser is downloaded), the
// screenshot and axe-core check of a page, and a bounded wait.
//
// Every driver takes --url BASE --token ADMIN_TOKEN --out DIR [--chromium PATH]
// [--timeout MS] and its own flags; it prints ONE JSON object, {"ok", "failures",
// "steps", "screenshots", "axe", …its own fields}, and exits 0 when every check passed, 1
// otherwise, 2 on a bad command line.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

// here is the directory of the drivers (test/e2e/js).
export const here = dirname(fileURLToPath(import.meta.url));

// driver parses the command line of the driver called name and starts its deadline.
//   flags:    its own flags, flag → option name ({"--server": "server"})
//   required: its own options that must be given
//   timeout:  the default of --timeout, in ms
//   report:   its own report fields and their first values
//   html:     keep each checked page's HTML in report.html
//   clock:    prefix each step with the seconds since the start
// It returns the options, the report, log and fail, and launch, check, onCleanup and run.
export function driver(name, { flags = {}, required = [], timeout = 120000, report: fields = {}, html = false, clock = false } = {}) {
  const opts = { chromium: "/usr/bin/chromium", timeout };
  const names = { "--url": "url", "--token": "token", "--out": "out", "--chromium": "chromium", "--timeout": "timeout", ...flags };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const key = names[argv[i]];
    if (!key) {
      process.stderr.write(`${name}: unknown argument ${argv[i]}\n`);
      process.exit(2);
    }
    opts[key] = key === "timeout" ? Number(argv[i + 1]) : argv[i + 1];
    i++;
  }
  const flagOf = Object.fromEntries(Object.entries(names).map(([f, k]) => [k, f]));
  for (const k of ["url", "token", "out", ...required]) {
    if (!opts[k]) {
      process.stderr.write(`${name}: ${flagOf[k]} is required\n`);
      process.exit(2);
    }
  }

  const report = { ok: false, failures: [], steps: [], screenshots: [], axe: {}, ...fields };
  if (html) report.html = [];
  const t0 = Date.now();
  const log = (msg) => {
    if (clock) msg = `${((Date.now() - t0) / 1000).toFixed(1)}s ${msg}`;
    report.steps.push(msg);
    process.stderr.write(`${name}: ${msg}\n`);
  };
  const fail = (msg) => { report.failures.push(msg); process.stderr.write(`${name}: FAIL ${msg}\n`); };

  let finished = false;
  const finish = async (code) => {
    if (finished) return;
    finished = true;
    report.ok = code === 0 && report.failures.length === 0;
    await new Promise((r) => process.stdout.write(JSON.stringify(report) + "\n", r));
    process.exit(report.ok ? 0 : 1);
  };

  const userDataDir = mkdtempSync(join(tmpdir(), `mcpgw-${name.replace(/-e2e$/, "")}-chromium-`));
  let context;
  const hooks = [];
  const cleanup = async () => {
    for (const h of hooks) {
      try { await h(); } catch {}
    }
    if (context) await Promise.race([context.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
    rmSync(userDataDir, { recursive: true, force: true });
  };
  const killer = setTimeout(() => { fail(`timed out after ${opts.timeout} ms`); cleanup().finally(() => finish(1)); }, opts.timeout);

  // launch starts headless Chromium on the throwaway profile with a window of viewport.
  const launch = async (viewport) => {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: opts.chromium,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      viewport,
    });
    return context;
  };

  const axeSource = readFileSync(join(here, "..", "node_modules", "axe-core", "axe.min.js"), "utf8");
  // check saves the page as DIR/<name>.png and runs axe-core on it: a serious or critical
  // violation is a failure.
  const check = async (page, shot) => {
    const file = join(opts.out, `${shot}.png`);
    await page.screenshot({ path: file, fullPage: true });
    report.screenshots.push(file);
    if (html) report.html.push(await page.content());
    // axe runs through the DevTools protocol, which the page's CSP does not govern.
    const res = await page.evaluate(async (src) => {
      if (!window.axe) (0, eval)(src);
      const r = await window.axe.run(document, { resultTypes: ["violations"] });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
    }, axeSource);
    report.axe[shot] = res;
    for (const v of res) {
      if (v.impact === "serious" || v.impact === "critical") fail(`axe ${shot}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(", ")}`);
    }
    log(`${shot}: screenshot ${file}, axe ${res.length} violation(s)`);
  };

  return {
    opts, report, log, fail, launch, check,
    // onCleanup adds work to do before the browser closes (stop a child process).
    onCleanup: (h) => { hooks.push(h); },
    // run runs main, then closes the browser, prints the report and exits.
    run: (main) => main().then(async () => { clearTimeout(killer); await cleanup(); await finish(0); },
      async (e) => { clearTimeout(killer); fail(String(e && e.stack || e)); await cleanup(); await finish(1); }),
  };
}

// waitFor polls fn every 200 ms until it returns a truthy value, which it returns, or
// throws after ms.
export async function waitFor(what, fn, ms = 30000) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try { if ((last = await fn())) return last; } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`waiting for ${what}: ${last instanceof Error ? last.message : "not yet"}`);
}

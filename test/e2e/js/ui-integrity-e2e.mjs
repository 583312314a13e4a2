#!/usr/bin/env node
// ui-integrity-e2e.mjs: drives the web UI's Integrity page in real Chromium (Debian's
// /usr/bin/chromium through playwright-core; no browser is downloaded) for TestUIIntegrity
// (ui_integrity_test.go).
//
//   node js/ui-integrity-e2e.mjs --url BASE --token ADMIN_TOKEN --out DIR --server NAME
//        [--chromium /usr/bin/chromium] [--timeout MS]
//
// The gateway at BASE holds changed definitions of server (or plugin) NAME. The script
// signs in with the tokenized address, opens the Integrity page, reads the nav link, the
// summary, the held definitions and each one's diff rows, clicks "Approve all" for NAME and
// reads the page again once it has reloaded. Both states are saved as DIR/<name>.png and
// checked with axe-core. It prints ONE JSON object:
//   {"ok": bool, "failures": [...], "steps": [...], "axe": {page: [violations]},
//    "before": {nav, summary, held: [names], diffs: {name: ["op path", ...]}}, "after": {...}}
// and exits 0 when every check passed, 1 otherwise. --timeout (default 120000) bounds it.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const opts = { chromium: "/usr/bin/chromium", timeout: 120000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const v = argv[i + 1];
  switch (argv[i]) {
    case "--url": opts.url = v; i++; break;
    case "--token": opts.token = v; i++; break;
    case "--out": opts.out = v; i++; break;
    case "--server": opts.server = v; i++; break;
    case "--chromium": opts.chromium = v; i++; break;
    case "--timeout": opts.timeout = Number(v); i++; break;
    default:
      process.stderr.write(`ui-integrity-e2e: unknown argument ${argv[i]}\n`);
      process.exit(2);
  }
}
for (const k of ["url", "token", "out", "server"]) {
  if (!opts[k]) {
    process.stderr.write(`ui-integrity-e2e: --${k} is required\n`);
    process.exit(2);
  }
}

const report = { ok: false, failures: [], steps: [], screenshots: [], axe: {}, before: null, after: null };
const log = (msg) => { report.steps.push(msg); process.stderr.write(`ui-integrity-e2e: ${msg}\n`); };
const fail = (msg) => { report.failures.push(msg); process.stderr.write(`ui-integrity-e2e: FAIL ${msg}\n`); };
let finished = false;
const finish = async (code) => {
  if (finished) return;
  finished = true;
  report.ok = code === 0 && report.failures.length === 0;
  await new Promise((r) => process.stdout.write(JSON.stringify(report) + "\n", r));
  process.exit(report.ok ? 0 : 1);
};
const killer = setTimeout(() => { fail(`timed out after ${opts.timeout} ms`); cleanup().finally(() => finish(1)); }, opts.timeout);

const userDataDir = mkdtempSync(join(tmpdir(), "mcpgw-ui-integrity-chromium-"));
let context;
async function cleanup() {
  if (context) await Promise.race([context.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
  rmSync(userDataDir, { recursive: true, force: true });
}

const axeSource = readFileSync(join(here, "..", "node_modules", "axe-core", "axe.min.js"), "utf8");

async function check(page, name) {
  const file = join(opts.out, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  report.screenshots.push(file);
  // axe runs through the DevTools protocol, which the page's CSP does not govern.
  const res = await page.evaluate(async (src) => {
    if (!window.axe) (0, eval)(src);
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
  }, axeSource);
  report.axe[name] = res;
  for (const v of res) {
    if (v.impact === "serious" || v.impact === "critical") fail(`axe ${name}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(", ")}`);
  }
  log(`${name}: screenshot ${file}, axe ${res.length} violation(s)`);
}

// state reads what the page shows: the nav link, the summary, and per held definition
// its diff rows ("op path").
async function state(page) {
  const nav = (await page.locator('nav a[href="/ui/integrity"]').innerText()).trim();
  const summary = (await page.locator("#integrity-summary").innerText()).trim();
  const defs = await page.locator("article.held-def").evaluateAll((els) => els.map((e) => ({
    name: e.dataset.name,
    diff: Array.from(e.querySelectorAll("tr[data-op]")).map((tr) => tr.dataset.op + " " + tr.dataset.path),
  })));
  const diffs = {};
  for (const d of defs) diffs[d.name] = d.diff;
  return { nav, summary, held: defs.map((d) => d.name), diffs };
}

async function main() {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: opts.chromium,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(20000);
  page.on("console", (m) => { if (/Content Security Policy/i.test(m.text())) fail(`CSP violation: ${m.text()}`); });
  page.on("pageerror", (e) => fail(`script error: ${e.message}`));
  // The page asks nothing: a dialog would be a script from a definition, or a confirm
  // nobody reviewed.
  page.on("dialog", (d) => { fail(`a dialog opened: ${d.type()} ${d.message()}`); d.dismiss().catch(() => {}); });

  // Sign in with the tokenized address (as `mcpgw ui` prints it), straight to the page.
  await page.goto(`${opts.url}/ui/login?token=${encodeURIComponent(opts.token)}&next=${encodeURIComponent("/ui/integrity")}`);
  await page.waitForURL(/\/ui\/integrity$/);
  log("signed in, on the Integrity page");

  report.before = await state(page);
  log(`before: nav ${JSON.stringify(report.before.nav)}, ${report.before.held.length} held: ${report.before.held.join(", ")}`);
  await check(page, "integrity-held");

  // The page reloads once the approval is answered: read it only then, whole.
  const reloaded = page.waitForEvent("load", { timeout: 30000 });
  await page.getByRole("button", { name: `Approve all of ${opts.server}`, exact: true }).click();
  await reloaded;
  report.after = await state(page);
  log(`after: nav ${JSON.stringify(report.after.nav)}, summary ${JSON.stringify(report.after.summary)}`);
  await check(page, "integrity-approved");
}

main().then(async () => { clearTimeout(killer); await cleanup(); await finish(0); },
  async (e) => { clearTimeout(killer); fail(String(e && e.stack || e)); await cleanup(); await finish(1); });

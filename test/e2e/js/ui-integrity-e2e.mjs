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

import { join } from "node:path";
import { driver } from "./ui-harness.mjs";

const d = driver("ui-integrity-e2e", { flags: { "--server": "server" }, required: ["server"], report: { before: null, after: null } });
const { opts, report, log, fail, check } = d;
let context;

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
  context = await d.launch({ width: 1280, height: 900 });
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

d.run(main);

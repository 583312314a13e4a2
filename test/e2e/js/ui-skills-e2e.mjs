#!/usr/bin/env node
// ui-skills-e2e.mjs: reads the web UI's skills (Servers page) and runners (Executors page)
// in real Chromium (Debian's /usr/bin/chromium through playwright-core; no browser is
// downloaded) for TestUISkillsAndRunners (ui_skills_test.go).
//
//   node js/ui-skills-e2e.mjs --url BASE --token ADMIN_TOKEN --out DIR
//        [--chromium /usr/bin/chromium] [--timeout MS]
//
// The script signs in with the tokenized address, opens the Servers page and reads the
// servers table's skills cells and every row of the skills table as the browser shows it
// (innerText); follows the first held skill's link to the Integrity page and reads the
// held definitions' kinds and names there; then opens the Executors page and reads the
// Runners table. Each page is saved as DIR/<name>.png and checked with axe-core. A dialog
// (an alert from a skill's text run as script) or a script error is a failure. It prints
// ONE JSON object:
//   {"ok": bool, "failures": [...], "steps": [...], "axe": {page: [violations]},
//    "skillCells": {server: text}, "skills": [{server, name, uri, description, files,
//    digest, hash, integrity, link, held}], "heading": text,
//    "integrityURL": url, "integrityHeld": ["kind name", ...],
//    "runners": [{executor, state, address, version, servers, since, error}]}
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
    case "--chromium": opts.chromium = v; i++; break;
    case "--timeout": opts.timeout = Number(v); i++; break;
    default:
      process.stderr.write(`ui-skills-e2e: unknown argument ${argv[i]}\n`);
      process.exit(2);
  }
}
for (const k of ["url", "token", "out"]) {
  if (!opts[k]) {
    process.stderr.write(`ui-skills-e2e: --${k} is required\n`);
    process.exit(2);
  }
}

const report = { ok: false, failures: [], steps: [], screenshots: [], axe: {}, skillCells: {}, skills: [], heading: "",
  integrityURL: "", integrityHeld: [], runners: [] };
const t0 = Date.now();
const log = (msg) => { msg = `${((Date.now() - t0) / 1000).toFixed(1)}s ${msg}`; report.steps.push(msg); process.stderr.write(`ui-skills-e2e: ${msg}\n`); };
const fail = (msg) => { report.failures.push(msg); process.stderr.write(`ui-skills-e2e: FAIL ${msg}\n`); };
let finished = false;
const finish = async (code) => {
  if (finished) return;
  finished = true;
  report.ok = code === 0 && report.failures.length === 0;
  await new Promise((r) => process.stdout.write(JSON.stringify(report) + "\n", r));
  process.exit(report.ok ? 0 : 1);
};
const killer = setTimeout(() => { fail(`timed out after ${opts.timeout} ms`); cleanup().finally(() => finish(1)); }, opts.timeout);

const userDataDir = mkdtempSync(join(tmpdir(), "mcpgw-ui-skills-chromium-"));
let context;
async function cleanup() {
  if (context) await Promise.race([context.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
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

async function main() {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: opts.chromium,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] || (await context.newPage());
  log("chromium up");
  page.setDefaultTimeout(20000);
  page.on("console", (m) => { if (/Content Security Policy/i.test(m.text())) fail(`CSP violation: ${m.text()}`); });
  page.on("pageerror", (e) => fail(`script error: ${e.message}`));
  // The pages ask nothing: a dialog is a skill's text run as script.
  page.on("dialog", (d) => { fail(`a dialog opened: ${d.type()} ${d.message()}`); d.dismiss().catch(() => {}); });

  await page.goto(`${opts.url}/ui/login?token=${encodeURIComponent(opts.token)}&next=${encodeURIComponent("/ui/servers")}`);
  await page.waitForURL(/\/ui\/servers$/);
  log("signed in, on the Servers page");

  report.skillCells = await page.locator("#servers-table tbody tr[data-name]").evaluateAll((rows) =>
    Object.fromEntries(rows.map((r) => [r.dataset.name, (r.querySelector('[data-col="skills"]') || {}).innerText || ""])));
  report.heading = (await page.locator("#skills-h").innerText()).trim();
  report.skills = await page.locator("#skills-table tbody tr[data-skill]").evaluateAll((rows) => rows.map((r) => {
    const c = r.querySelectorAll("td, th");
    const code = c[5].querySelector("code");
    const a = c[6].querySelector("a");
    return {
      server: r.dataset.server, held: r.dataset.held === "true",
      name: c[1].innerText, uri: c[2].innerText, description: c[3].innerText, files: c[4].innerText.trim(),
      digest: code ? code.innerText : "", hash: code ? code.title : "", integrity: c[6].innerText.trim(), link: a ? a.getAttribute("href") : "",
    };
  }));
  log(`skills table: ${report.skills.length} row(s), heading ${JSON.stringify(report.heading)}`);
  await check(page, "servers-skills");

  const held = page.locator('#skills-table tr[data-held="true"] a[href="/ui/integrity"]').first();
  if (await held.count()) {
    await Promise.all([page.waitForURL(/\/ui\/integrity$/), held.click()]);
    report.integrityURL = page.url();
    report.integrityHeld = await page.locator("article.held-def").evaluateAll((els) => els.map((e) => e.dataset.kind + " " + e.dataset.name));
    log(`followed the held skill's link to ${report.integrityURL}: ${report.integrityHeld.join(", ")}`);
  } else {
    fail("no held skill with a link to the Integrity page");
  }

  await page.goto(`${opts.url}/ui/executors`);
  report.runners = await page.locator("#runners-table tbody tr[data-executor]").evaluateAll((rows) => rows.map((r) => {
    const c = r.querySelectorAll("td, th");
    return { executor: r.dataset.executor, state: c[1].innerText.trim(), address: c[2].innerText.trim(), version: c[3].innerText.trim(),
      servers: c[4].innerText.trim(), since: c[5].innerText.trim(), error: c[6].innerText.trim() };
  }));
  log(`runners table: ${JSON.stringify(report.runners)}`);
  await check(page, "executors-runners");
}

main().then(async () => { clearTimeout(killer); await cleanup(); await finish(0); },
  async (e) => { clearTimeout(killer); fail(String(e && e.stack || e)); await cleanup(); await finish(1); });

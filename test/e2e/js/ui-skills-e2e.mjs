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

import { join } from "node:path";
import { chromium } from "playwright-core";
import { driver } from "./ui-harness.mjs";

const d = driver("ui-skills-e2e", {
  clock: true,
  report: { skillCells: {}, skills: [], heading: "", integrityURL: "", integrityHeld: [], runners: [] },
});
const { opts, report, log, fail, check } = d;
let context;

async function main() {
  context = await d.launch({ width: 1280, height: 900 });
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

d.run(main);

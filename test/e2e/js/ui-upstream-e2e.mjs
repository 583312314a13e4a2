#!/usr/bin/env node
// ui-upstream-e2e.mjs: drives the web UI's Upstream sign-in page in real Chromium (Debian's
// /usr/bin/chromium through playwright-core; no browser is downloaded) for TestUIUpstream
// (ui_upstream_test.go).
//
//   node js/ui-upstream-e2e.mjs --url BASE --token ADMIN_TOKEN --out DIR --server NAME
//        [--user-server NAME --subject SUBJECT] [--chromium /usr/bin/chromium] [--timeout MS]
//
// The gateway at BASE has NAME as an OAuth upstream (per: server) with no grant yet. The
// script signs in with the tokenized address, opens the page and reads it; clicks Connect
// for NAME, reads the consent box and follows its link, which opens a new window: the
// authorization server approves at once and sends it to the gateway's /oauth/callback,
// whose answer it reads. It reloads the page (Refresh) and reads the grant, clicks its
// Revoke button and reads the page it lands on. With --user-server (a per-user OAuth
// upstream), it then types SUBJECT into that server's subject field, clicks its Connect,
// follows the link the same way and reads the page again (the grant is left in place for
// the test to use). Each state is saved as DIR/<name>.png and checked with axe-core. It
// prints ONE JSON object:
//   {"ok": bool, "failures": [...], "steps": [...], "axe": {page: [violations]},
//    "before": state, "consent": {text, href, target}, "callback": {url, text},
//    "granted": state, "revoked": state, "userConsent": {...}, "userCallback": {...},
//    "userGranted": state, "html": [page HTML of every state]}
// where state is {nav, status, grants: ["server|subject|issuer|scopes|refreshable"],
// connect: bool, revokedNote}; it exits 0 when every check passed, 1 otherwise.
// --timeout (default 120000) bounds it.

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
    case "--user-server": opts.userServer = v; i++; break;
    case "--subject": opts.subject = v; i++; break;
    case "--chromium": opts.chromium = v; i++; break;
    case "--timeout": opts.timeout = Number(v); i++; break;
    default:
      process.stderr.write(`ui-upstream-e2e: unknown argument ${argv[i]}\n`);
      process.exit(2);
  }
}
for (const k of ["url", "token", "out", "server"]) {
  if (!opts[k]) {
    process.stderr.write(`ui-upstream-e2e: --${k} is required\n`);
    process.exit(2);
  }
}

const report = { ok: false, failures: [], steps: [], screenshots: [], axe: {}, before: null, consent: null, callback: null, granted: null, revoked: null, userConsent: null, userCallback: null, userGranted: null, html: [] };
const log = (msg) => { report.steps.push(msg); process.stderr.write(`ui-upstream-e2e: ${msg}\n`); };
const fail = (msg) => { report.failures.push(msg); process.stderr.write(`ui-upstream-e2e: FAIL ${msg}\n`); };
let finished = false;
const finish = async (code) => {
  if (finished) return;
  finished = true;
  report.ok = code === 0 && report.failures.length === 0;
  await new Promise((r) => process.stdout.write(JSON.stringify(report) + "\n", r));
  process.exit(report.ok ? 0 : 1);
};
const killer = setTimeout(() => { fail(`timed out after ${opts.timeout} ms`); cleanup().finally(() => finish(1)); }, opts.timeout);

const userDataDir = mkdtempSync(join(tmpdir(), "mcpgw-ui-upstream-chromium-"));
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
  report.html.push(await page.content());
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

// state reads what the page shows of the server: the nav link, its granted/no grant
// state, its grant rows, whether it has a Connect button, and a revocation note.
async function state(page, server = opts.server) {
  const nav = (await page.locator('nav a[href="/ui/upstream"]').innerText()).trim();
  const section = page.locator(`section.upstream-server[data-server="${server}"]`);
  if ((await section.count()) !== 1) return { nav, status: "", grants: [], connect: false, revokedNote: "", missing: true };
  const status = (await section.locator("h2 .state").innerText()).trim();
  const grants = await section.locator("tr.grant").evaluateAll((trs) => trs.map((tr) => {
    const cells = Array.from(tr.querySelectorAll("td")).map((td) => td.innerText.trim());
    return [tr.dataset.server, tr.dataset.subject, cells[0], cells[1], cells[3]].join("|");
  }));
  const connect = (await section.getByRole("button", { name: `Connect ${server}`, exact: true }).count()) === 1;
  const note = page.locator("#upstream-revoked");
  const revokedNote = (await note.count()) ? (await note.innerText()).trim() : "";
  return { nav, status, grants, connect, revokedNote };
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
  page.on("dialog", (d) => { fail(`a dialog opened: ${d.type()} ${d.message()}`); d.dismiss().catch(() => {}); });

  // Sign in with the tokenized address (as `mcpgw ui` prints it), straight to the page;
  // then reach the page from the nav, as a person would.
  await page.goto(`${opts.url}/ui/login?token=${encodeURIComponent(opts.token)}&next=${encodeURIComponent("/ui/servers")}`);
  await page.waitForURL(/\/ui\/servers$/);
  await page.getByRole("link", { name: "Upstream sign-in", exact: true }).click();
  await page.waitForURL(/\/ui\/upstream$/);
  log("signed in, on the Upstream sign-in page from the nav");

  report.before = await state(page);
  log(`before: ${JSON.stringify(report.before)}`);
  await check(page, "upstream-none");

  [report.consent, report.callback] = await connect(page, opts.server, "upstream-consent");
  await Promise.all([page.waitForEvent("load", { timeout: 30000 }), page.getByRole("link", { name: "Refresh", exact: true }).click()]);
  report.granted = await state(page);
  log(`granted: ${JSON.stringify(report.granted)}`);
  await check(page, "upstream-granted");

  await Promise.all([page.waitForURL(/\/ui\/upstream\?revoked=/, { timeout: 30000 }),
    page.getByRole("button", { name: `Revoke the grant of ${opts.server}`, exact: true }).click()]);
  report.revoked = await state(page);
  log(`revoked: ${JSON.stringify(report.revoked)}`);
  await check(page, "upstream-revoked");

  if (!opts.userServer) return;
  // A per-user server: the admin types whose grant it is, then that person follows the link.
  const section = page.locator(`section.upstream-server[data-server="${opts.userServer}"]`);
  await section.getByLabel(/^Subject/).fill(opts.subject);
  [report.userConsent, report.userCallback] = await connect(page, opts.userServer, "upstream-user-consent");
  await Promise.all([page.waitForEvent("load", { timeout: 30000 }), page.getByRole("link", { name: "Refresh", exact: true }).click()]);
  report.userGranted = await state(page, opts.userServer);
  log(`user granted: ${JSON.stringify(report.userGranted)}`);
  await check(page, "upstream-user-granted");
}

// connect clicks server's Connect (the form posts, the page comes back with the consent
// link), then follows the link as the person would: a new window, the authorization
// server, the gateway's callback. It returns what the consent box and the callback said.
async function connect(page, server, shot) {
  await Promise.all([page.waitForEvent("load", { timeout: 30000 }),
    page.getByRole("button", { name: `Connect ${server}`, exact: true }).click()]);
  const link = page.locator("#consent-link");
  const consent = {
    text: (await page.locator("#upstream-consent").innerText()).trim(),
    href: await link.getAttribute("href"),
    target: await link.getAttribute("target"),
    code: (await page.locator("#consent-code").innerText()).trim(),
  };
  log(`consent for ${server}: ${consent.href} (code ${consent.code})`);
  await check(page, shot);
  const [popup] = await Promise.all([context.waitForEvent("page", { timeout: 30000 }), link.click()]);
  // The gateway's consent page asks for the code the UI showed, as a person types it.
  await popup.waitForURL(/\/oauth\/consent\//, { timeout: 30000 });
  await popup.getByLabel("The code given with this address").fill(consent.code);
  await popup.getByRole("button", { name: "Continue" }).click();
  await popup.waitForURL(/\/oauth\/callback\?/, { timeout: 30000 });
  await popup.waitForLoadState("load");
  const callback = { url: popup.url().replace(/code=[^&]*/, "code=…"), text: (await popup.locator("body").innerText()).trim() };
  log(`callback for ${server}: ${callback.text}`);
  await popup.close();
  return [consent, callback];
}

main().then(async () => { clearTimeout(killer); await cleanup(); await finish(0); },
  async (e) => { clearTimeout(killer); fail(String(e && e.stack || e)); await cleanup(); await finish(1); });

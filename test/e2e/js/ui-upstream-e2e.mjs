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

import { join } from "node:path";
import { driver } from "./ui-harness.mjs";

const d = driver("ui-upstream-e2e", {
  flags: { "--server": "server", "--user-server": "userServer", "--subject": "subject" }, required: ["server"], html: true,
  report: { before: null, consent: null, callback: null, granted: null, revoked: null, userConsent: null, userCallback: null, userGranted: null },
});
const { opts, report, log, fail, check } = d;
let context;

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
  context = await d.launch({ width: 1280, height: 900 });
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

d.run(main);

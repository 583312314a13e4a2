#!/usr/bin/env node
// ui-edit-e2e.mjs: drives the web UI's server and task forms in real Chromium (Debian's
// /usr/bin/chromium through playwright-core; no browser is downloaded) for TestUIEdits
// (ui_edit_test.go).
//
//   node js/ui-edit-e2e.mjs --url BASE --token ADMIN_TOKEN --out DIR --stdio-command PATH
//        [--chromium /usr/bin/chromium] [--timeout MS]
//
// The gateway at BASE has the API servers keep and proxy (stdio, stdio_proxy, shared) and
// the sql plugin shop. The script signs in; reads the help notes ([data-note]) of the
// Servers, Executors, Tasks and Agents pages; edits keep's description in the form and
// saves; opens proxy's form, reads its stdio-proxy switch, edits its description and saves;
// adds the stdio server proxied (PATH) with the switch on and mode shared; opens the New
// task dialog, reads what it offers and creates task ui-shop-task with the defaults; turns
// read-only on in agent ui-agent's form and saves it. Each
// step is tried on its own, so one that fails does not hide the others. It prints ONE JSON
// object:
//   {"ok": bool, "failures": [...], "steps": [...], "axe": {page: [violations]},
//    "notes": {page: {note: text}}, "proxySwitch": bool|null, "saved": {server: "saved"|error},
//    "taskChoices": [...], "taskSaved": "saved"|error, "agentSaved": "saved"|error}
// and exits 0 when every step ran, 1 otherwise. --timeout (default 150000) bounds it.

import { join } from "node:path";
import { driver } from "./ui-harness.mjs";

const d = driver("ui-edit-e2e", {
  flags: { "--stdio-command": "stdio" }, required: ["stdio"], timeout: 150000,
  report: { notes: {}, proxySwitch: null, saved: {}, taskChoices: [], taskSaved: "", agentSaved: "", keptNote: "" },
});
const { opts, report, log, fail, check } = d;
let context;

// step runs one part of the scenario; a failure is reported and the next part runs.
async function step(name, fn) {
  try { await fn(); } catch (e) { fail(`${name}: ${String(e && e.message || e).split("\n")[0]}`); }
}

// save clicks the dialog's Save and waits for what follows: the page reloads (saved) or
// the form shows an error (its alert or a field's); it returns "saved" or that error.
async function save(page, formSel, buttonSel) {
  // Whichever comes second is left to fail on its own (the reload ends the page's script).
  const reloaded = page.waitForEvent("load", { timeout: 20000 }).then(() => "saved", (e) => `no reload and no error shown: ${e.message}`);
  const refused = page.waitForFunction((sel) => {
    const f = document.querySelector(sel);
    const a = f && f.querySelector(".alert");
    const errs = f ? Array.from(f.querySelectorAll(".field-error")).map((e) => e.textContent.trim()).filter(Boolean) : [];
    if (a && !a.hidden && a.textContent.trim()) errs.unshift(a.textContent.trim());
    return errs.length ? errs.join(" | ") : null;
  }, formSel, { timeout: 20000 }).then((h) => h.jsonValue(), () => new Promise(() => {}));
  await page.click(buttonSel);
  return Promise.race([reloaded, refused]);
}

async function notes(page, name) {
  report.notes[name] = await page.locator("[data-note]").evaluateAll((els) =>
    Object.fromEntries(els.map((e) => [e.dataset.note, e.textContent.replace(/\s+/g, " ").trim()])));
  log(`${name}: help notes ${Object.keys(report.notes[name]).join(", ") || "none"}`);
}

// openEdit opens a server's edit form and waits until it shows that server.
async function openEdit(page, name) {
  await page.getByRole("button", { name: `Edit ${name}`, exact: true }).click();
  await page.locator("#server-dialog[open]").waitFor();
  await page.waitForFunction((n) => document.querySelector("#s-name").value === n &&
    document.querySelector("#server-dialog-title").textContent === "Edit " + n, name);
}

async function main() {
  context = await d.launch({ width: 1280, height: 900 });
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(15000);
  page.on("console", (m) => { if (/Content Security Policy/i.test(m.text())) fail(`CSP violation: ${m.text()}`); });
  page.on("pageerror", (e) => fail(`script error: ${e.message}`));

  await page.goto(`${opts.url}/ui/login?token=${encodeURIComponent(opts.token)}&next=${encodeURIComponent("/ui/servers")}`);
  await page.waitForURL(/\/ui\/servers$/);
  log("signed in, on the Servers page");

  for (const p of ["executors", "tasks", "agents", "servers"]) {
    await step(`help notes of ${p}`, async () => {
      await page.goto(`${opts.url}/ui/${p}`);
      await notes(page, p);
    });
  }

  await step("edit keep", async () => {
    await openEdit(page, "keep");
    report.keptNote = (await page.locator("#s-kept").textContent()) || "";
    log(`keep: the form says ${JSON.stringify(report.keptNote)}`);
    await page.fill("#s-desc", "edited in the UI");
    await check(page, "servers-edit");
    report.saved.keep = await save(page, "#server-form", "#s-save");
    log(`keep: ${report.saved.keep}`);
  });

  await step("edit proxy", async () => {
    await openEdit(page, "proxy");
    const sw = page.locator("#s-stdio-proxy");
    report.proxySwitch = (await sw.count()) ? await sw.isChecked() : null;
    log(`proxy: stdio-proxy switch ${report.proxySwitch}`);
    await page.fill("#s-desc", "edited in the UI");
    report.saved.proxy = await save(page, "#server-form", "#s-save");
    log(`proxy: ${report.saved.proxy}`);
    if (report.saved.proxy !== "saved") await page.goto(`${opts.url}/ui/servers`);
  });

  // A form opened before a change made elsewhere does not overwrite it: its save is refused.
  await step("stale edit of proxy", async () => {
    await openEdit(page, "proxy");
    const r = await fetch(`${opts.url}/api/servers/proxy`, { method: "PATCH",
      headers: { Authorization: `Bearer ${opts.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ meta: { title: "changed elsewhere" } }) });
    if (r.status !== 200) throw new Error(`PATCH /api/servers/proxy answered ${r.status}`);
    await page.fill("#s-desc", "a stale edit");
    report.saved.stale = await save(page, "#server-form", "#s-save");
    log(`stale edit of proxy: ${report.saved.stale}`);
    if (report.saved.stale !== "saved") await page.goto(`${opts.url}/ui/servers`);
  });

  await step("add proxied", async () => {
    await page.click("#add-server");
    await page.locator("#server-dialog[open]").waitFor();
    await page.fill("#s-name", "proxied");
    await page.selectOption("#s-type", "stdio");
    await page.fill("#s-command", opts.stdio);
    await page.check("#s-stdio-proxy");
    await page.selectOption("#s-mode", "shared");
    report.saved.proxied = await save(page, "#server-form", "#s-save");
    log(`proxied: ${report.saved.proxied}`);
  });

  await step("new task", async () => {
    await page.goto(`${opts.url}/ui/tasks`);
    await page.click("#new-task");
    await page.locator("#task-dialog[open]").waitFor();
    report.taskChoices = await page.locator('#t-servers input[name="server"]').evaluateAll((els) => els.map((e) => e.value));
    log(`the New task dialog offers ${report.taskChoices.join(", ")}`);
    await check(page, "tasks-new");
    await page.fill("#t-id", "ui-shop-task");
    report.taskSaved = await save(page, "#task-form", "#t-save");
    log(`ui-shop-task: ${report.taskSaved}`);
  });

  await step("save ui-agent", async () => {
    await page.goto(`${opts.url}/ui/agents`);
    const form = 'form.agent-form[data-id="ui-agent"]';
    await page.check(`${form} input[name="read_only"]`);
    report.agentSaved = await save(page, form, `${form} button[type="submit"]`);
    log(`ui-agent: ${report.agentSaved}`);
  });

  // ui-none lists no server (servers: []); its form shows "exactly those checked" with
  // none checked, and a save of another field keeps the empty list.
  await step("save ui-none", async () => {
    await page.goto(`${opts.url}/ui/agents`);
    const form = 'form.agent-form[data-id="ui-none"]';
    report.noneFrom = await page.locator(`${form} select[name="servers_from"]`).inputValue();
    await page.check(`${form} input[name="read_only"]`);
    report.noneSaved = await save(page, form, `${form} button[type="submit"]`);
    log(`ui-none (servers from ${report.noneFrom}): ${report.noneSaved}`);
  });
}

d.run(main);

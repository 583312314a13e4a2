#!/usr/bin/env node
// ui-e2e.mjs: drives mcpgw's web UI in real Chromium (Debian's /usr/bin/chromium through
// playwright-core; no browser is downloaded) for TestWebUI (ui_test.go).
//
//   node js/ui-e2e.mjs --url BASE --token ADMIN_TOKEN --out DIR --stdio-command PATH
//        [--chromium /usr/bin/chromium] [--timeout MS]
//
// The gateway at BASE has servers alpha (default-enabled) and beta (not default-enabled),
// both stdio. The script signs in; adds a stdio server gamma through the form (after
// "test connection") and waits for it to come up; tries to save a shared stdio server
// and reads the error; creates task ui-task with alpha and gamma checked; runs the
// TypeScript SDK client (js/aggregate-client.mjs) with X-Task-ID: ui-task, which lists,
// calls alpha__test_simple_text and waits; finds that session on the Sessions page, ends
// it there, and lets the client try again; reads the call on the Usage page. It reads the
// sql plugin shop on the Plugins page and restarts it there, and saves an agent with
// executor nostdio (which refuses stdio) and reads the warnings its form shows. Every page
// is saved as DIR/<page>.png and checked with axe-core. It prints ONE JSON object:
//   {"ok": bool, "failures": [...], "screenshots": [...], "axe": {page: [violations]},
//    "client": <aggregate-client report>, "sharedError": "...", "csp": "...", ...}
// and exits 0 when every check passed, 1 otherwise. --timeout (default 240000) bounds it.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { driver, waitFor, here } from "./ui-harness.mjs";

const d = driver("ui-e2e", { flags: { "--stdio-command": "stdio" }, required: ["stdio"], timeout: 240000, report: { consoleErrors: [] } });
const { opts, report, log, fail, check } = d;
let context, client;
d.onCleanup(() => { if (client && client.exitCode === null) process.kill(-client.pid, "SIGKILL"); });

async function main() {
  context = await d.launch({ width: 1280, height: 800 });
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(20000);
  page.on("console", (m) => {
    const t = m.text();
    if (m.type() === "error") report.consoleErrors.push(t);
    if (/Content Security Policy/i.test(t)) fail(`CSP violation: ${t}`);
  });
  page.on("pageerror", (e) => fail(`script error: ${e.message}`));
  page.on("dialog", (d) => d.accept());

  // Sign in.
  const first = await page.goto(opts.url + "/ui/");
  report.csp = (await first.allHeaders())["content-security-policy"] || "";
  if (!/script-src 'self'/.test(report.csp) || /unsafe-inline/.test(report.csp)) fail(`CSP header: ${report.csp}`);
  if (!page.url().includes("/ui/login")) fail(`not sent to the sign-in form: ${page.url()}`);
  await check(page, "login");
  await page.getByLabel("Admin token").fill("wrong-token");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#login-error").waitFor();
  await page.getByLabel("Admin token").fill(opts.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/ui\/servers$/);
  const cookies = await context.cookies();
  const c = cookies.find((x) => x.name === "mcpgw_ui");
  if (!c || !c.httpOnly || c.sameSite !== "Strict") fail(`session cookie: ${JSON.stringify(c)}`);
  log("signed in");

  // A state-changing request without the CSRF token is refused.
  report.noCsrfStatus = await page.evaluate(async () => (await fetch("/ui/api/tasks", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })).status);
  if (report.noCsrfStatus !== 403) fail(`POST without CSRF token answered ${report.noCsrfStatus}, want 403`);

  // Add stdio server gamma through the form: test the connection first, then save.
  await page.getByRole("button", { name: "Add server" }).click();
  const dlg = page.locator("#server-dialog");
  await dlg.getByLabel("Name", { exact: true }).fill("gamma");
  await dlg.getByLabel("Transport").selectOption("stdio");
  await dlg.getByLabel("Command", { exact: true }).fill(opts.stdio);
  await dlg.getByLabel("Title").fill("Gamma tools");
  await dlg.getByRole("button", { name: "Test connection" }).click();
  await dlg.locator(".ok-box").waitFor({ timeout: 30000 });
  report.testConnection = await dlg.locator(".ok-box").innerText();
  if (!/gamma__test_simple_text/.test(report.testConnection)) fail(`test connection did not list gamma__test_simple_text: ${report.testConnection}`);
  await dlg.getByRole("button", { name: "Save" }).click();
  await page.locator('tr[data-name="gamma"]').waitFor();
  await waitFor("gamma up", async () => (await page.locator('tr[data-name="gamma"] [data-col="state"]').innerText()).trim() === "up");
  log("gamma is up");

  // A shared stdio server is refused with the exact message.
  await page.getByRole("button", { name: "Add server" }).click();
  await dlg.getByLabel("Name", { exact: true }).fill("delta");
  await dlg.getByLabel("Transport").selectOption("stdio");
  await dlg.getByLabel("Command", { exact: true }).fill(opts.stdio);
  await dlg.getByLabel("Mode").selectOption("shared");
  await dlg.getByRole("button", { name: "Save" }).click();
  await page.locator("#server-alert").waitFor({ state: "visible" });
  report.sharedError = await page.locator("#server-alert").innerText();
  await check(page, "servers-shared-stdio-error");
  await dlg.getByRole("button", { name: "Cancel" }).click();
  if (await page.locator('tr[data-name="delta"]').count()) fail("delta was stored");
  await page.reload();
  await check(page, "servers");

  // The Plugins page, from the nav: the sql plugin up; Restart counts a restart.
  await page.getByRole("link", { name: "Plugins" }).click();
  await page.waitForURL(/\/ui\/plugins$/);
  const prow = page.locator('tr[data-name="shop"]');
  await waitFor("shop up on the Plugins page", async () => {
    if ((await prow.locator('[data-col="state"]').innerText()).trim() === "up") return true;
    await page.reload();
    return false;
  });
  report.pluginRow = await prow.innerText();
  await check(page, "plugins");
  await prow.getByRole("button", { name: "Restart shop" }).click();
  await page.waitForLoadState("load");
  await waitFor("shop up again with one restart", async () => {
    const r = page.locator('tr[data-name="shop"]');
    const st = (await r.locator('[data-col="state"]').innerText()).trim();
    const n = (await r.locator('[data-col="restarts"]').innerText()).trim();
    if (st === "up" && n === "1") { report.pluginRestarted = n; return true; }
    await page.reload();
    return false;
  });
  log(`plugin shop restarted: ${report.pluginRestarted}`);

  // A project through the Projects page (reached from the nav): alpha and beta, not gamma.
  await page.getByRole("link", { name: "Projects" }).click();
  await page.getByRole("button", { name: "New project" }).click();
  const pdlg = page.locator("#project-dialog");
  await pdlg.getByLabel("Project ID").fill("ui-proj");
  await pdlg.getByLabel("Name", { exact: true }).fill("UI project");
  await pdlg.getByRole("checkbox", { name: "alpha" }).check();
  await pdlg.getByRole("checkbox", { name: "beta" }).check();
  await pdlg.getByRole("checkbox", { name: "gamma" }).uncheck();
  await pdlg.getByRole("button", { name: "Create project" }).click();
  await page.locator('tr[data-id="ui-proj"]').waitFor();
  report.projectRow = await page.locator('tr[data-id="ui-proj"]').innerText();
  log(`project ui-proj: ${report.projectRow}`);
  await check(page, "projects");

  // A task with two of the three servers.
  await page.getByRole("link", { name: "Tasks" }).click();
  await page.getByRole("button", { name: "New task" }).click();
  const tdlg = page.locator("#task-dialog");
  report.taskDefaults = {};
  for (const s of ["alpha", "beta", "gamma"]) report.taskDefaults[s] = await tdlg.getByRole("checkbox", { name: s }).isChecked();
  await tdlg.getByLabel("Task ID").fill("ui-task");
  await tdlg.getByRole("checkbox", { name: "alpha" }).check();
  await tdlg.getByRole("checkbox", { name: "beta" }).uncheck();
  await tdlg.getByRole("checkbox", { name: "gamma" }).check();
  await tdlg.getByRole("button", { name: "Create task" }).click();
  await page.locator('tr[data-id="ui-task"]').waitFor();
  report.taskServers = (await page.locator('tr[data-id="ui-task"] [data-col="servers"]').innerText()).trim();
  log(`task ui-task: ${report.taskServers}`);

  // The TypeScript SDK client of that task: list, call, wait for the browser, try again.
  const sig = mkdtempSync(join(tmpdir(), "mcpgw-ui-sig-"));
  const ready = join(sig, "ready"), ended = join(sig, "ended"), steps = join(sig, "steps.json");
  writeFileSync(steps, JSON.stringify([
    { op: "call", name: "alpha__test_simple_text", args: {} },
    { op: "touch", path: ready },
    { op: "waitFile", path: ended, timeoutMs: 90000 },
    { op: "list" },
  ]));
  let out = "";
  client = spawn(process.execPath, [join(here, "aggregate-client.mjs"), "--url", opts.url + "/mcp", "--steps", steps,
    "--header", "X-Task-ID: ui-task", "--header", "X-Agent-ID: ui-e2e", "--timeout", "120000", "--name", "ui-e2e-client"],
  { detached: true, stdio: ["ignore", "pipe", "inherit"] });
  client.stdout.on("data", (d) => { out += d; });
  const clientDone = new Promise((r) => client.on("exit", r));
  await waitFor("the client's first call", async () => existsSync(ready) || client.exitCode !== null, 60000);
  if (!existsSync(ready)) throw new Error(`the client ended early: ${out}`);

  await page.getByRole("link", { name: "Tasks" }).click();
  report.taskLoaded = await page.locator('tr[data-id="ui-task"]').innerText();
  await check(page, "tasks");

  // The Sessions page shows it; its page shows its view; ending it there ends it.
  await page.getByRole("link", { name: "Sessions" }).click();
  const row = page.locator("#sessions-table tbody tr", { hasText: "ui-task" });
  await row.waitFor();
  report.sessionRow = await row.innerText();
  await check(page, "sessions");
  await row.getByRole("link").click();
  await page.waitForURL(/\/ui\/sessions\/.+/);
  report.sessionView = await page.locator("main").innerText();
  await check(page, "session");
  await page.getByRole("button", { name: "End session" }).click();
  await page.waitForURL(/\/ui\/sessions$/);
  report.sessionsAfterEnd = await page.locator("#sessions-table").innerText();
  writeFileSync(ended, "");
  await Promise.race([clientDone, new Promise((r) => setTimeout(r, 30000))]);
  try { report.client = JSON.parse(out.trim().split("\n").pop()); } catch { fail(`no client report: ${out}`); }
  rmSync(sig, { recursive: true, force: true });

  // The Usage page shows the call.
  await page.getByRole("link", { name: "Usage" }).click();
  report.usageTable = await page.locator("#usage-table").innerText();
  report.usageTotal = (await page.locator("#total-calls").innerText()).trim();
  report.usageTokens = await page.locator("#tokens-table").innerText();
  await check(page, "usage");

  // Agents and executors: an executor with both lists shows the warning.
  await page.getByRole("link", { name: "Executors" }).click();
  await page.getByLabel("New executor ID").fill("box");
  await page.getByRole("button", { name: "Add executor" }).click();
  const ef = page.locator('form.executor-form[data-id="box"]');
  await ef.waitFor();
  await ef.getByLabel("Allowlist: servers, one per line").fill("alpha");
  await ef.getByLabel("Denylist: servers, one per line").fill("beta");
  report.bothListsWarning = await ef.locator(".both-lists").isVisible();
  await check(page, "executors");
  await page.getByRole("link", { name: "Agents" }).click();
  await check(page, "agents");

  // An agent whose executor refuses stdio: its form lists the skipped server on save.
  // (Last among the steps that need no client: once an agent exists, unknown agents are
  // refused.)
  await page.getByLabel("New agent ID").fill("ui-agent");
  await page.getByRole("button", { name: "Add agent" }).click();
  const af = page.locator('form.agent-form[data-id="ui-agent"]');
  await af.waitFor();
  await af.getByRole("checkbox", { name: "ui-agent uses alpha" }).check();
  await af.getByLabel("Executor").selectOption("nostdio");
  await af.getByRole("button", { name: "Save ui-agent" }).click();
  const warns = af.locator(".save-warnings");
  await warns.waitFor({ state: "visible" });
  report.agentWarnings = await warns.innerText();
  log(`agent warnings: ${report.agentWarnings}`);
  await check(page, "agent-warnings");

  // Narrow window: the Servers page stays usable.
  await page.setViewportSize({ width: 420, height: 800 });
  await page.getByRole("link", { name: "Servers" }).click();
  await check(page, "servers-narrow");
}

d.run(main);

#!/usr/bin/env node
// bridge-client.mjs: a TypeScript-SDK MCP client that spawns an stdio server (for
// mcpgw's tests: mcpgw-bridge) through StdioClientTransport.
//
//   node js/bridge-client.mjs [--steps FILE] [--timeout MS] -- COMMAND [ARGS...]
//
// It connects, lists every tool (following nextCursor), runs the steps in FILE (the same
// JSON steps as aggregate-client.mjs: list, call with progress, ping, sleep), closes the
// client (which ends the server's stdin) and prints ONE JSON object on stdout:
//
//   {"ok": true, "server": {...}, "pid": N, "closeMs": N,
//    "tools": [names], "results": [{op, ok, result | error, progress: [...]}],
//    "notifications": {"method": count}}
//
// "closeMs" is how long client.close() took: the SDK ends stdin, waits up to 2 s for the
// process to exit, then sends SIGTERM. The server's stderr is inherited.
// Exit status: 0 when it connected and ran every step, 1 when the connection failed,
// 2 on usage errors. --timeout (default 60000 ms) bounds the whole run.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

function usage(msg) {
  process.stderr.write(`bridge-client: ${msg}\n`);
  process.stdout.write(JSON.stringify({ ok: false, error: { message: msg } }) + "\n");
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { steps: null, timeout: 60000 };
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") { i++; break; }
    const next = () => {
      if (i + 1 >= argv.length) usage(`missing value for ${a}`);
      return argv[++i];
    };
    switch (a) {
      case "--steps": opts.steps = next(); break;
      case "--timeout": opts.timeout = Number(next()); break;
      default: usage(`unknown argument ${a}`);
    }
  }
  opts.command = argv[i];
  opts.args = argv.slice(i + 1);
  if (!opts.command) usage("the server command is required after --");
  if (!(opts.timeout > 0)) usage("--timeout must be a positive number of milliseconds");
  return opts;
}

function errorJSON(err) {
  if (err === undefined || err === null) return { message: String(err) };
  const out = { message: String(err.message ?? err) };
  if (err.code !== undefined) out.code = err.code;
  if (err.data !== undefined) out.data = err.data;
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function listAllTools(client) {
  const names = [];
  let cursor;
  let pages = 0;
  const seen = new Set();
  for (; pages < 1000; ) {
    const res = await client.listTools(cursor ? { cursor } : undefined);
    pages++;
    for (const t of res.tools ?? []) names.push(t.name);
    cursor = res.nextCursor;
    if (!cursor || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return { tools: names, pages };
}

async function runStep(client, step) {
  const out = { op: step.op };
  const progress = [];
  const options = {};
  if (step.timeoutMs) options.timeout = step.timeoutMs;
  if (step.progress) {
    options.onprogress = (p) => progress.push(p);
    options.resetTimeoutOnProgress = true;
  }
  try {
    let result;
    switch (step.op) {
      case "list": result = await listAllTools(client); break;
      case "call":
        result = await client.callTool({ name: step.name, arguments: step.args ?? {} }, undefined, options);
        break;
      case "ping": result = await client.ping(options); break;
      case "sleep": await sleep(Math.min(step.ms ?? 0, 60000)); result = {}; break;
      default: throw new Error(`unknown op ${JSON.stringify(step.op)}`);
    }
    out.ok = true;
    out.result = result;
  } catch (err) {
    out.ok = false;
    out.error = errorJSON(err);
  }
  if (step.progress) out.progress = progress;
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let steps = [];
  if (opts.steps) {
    try {
      steps = JSON.parse(readFileSync(opts.steps, "utf8"));
    } catch (err) {
      usage(`cannot read steps ${opts.steps}: ${err.message}`);
    }
    if (!Array.isArray(steps)) usage("steps must be a JSON array");
  }
  const report = { ok: false, transport: "stdio", tools: [], results: [], notifications: {} };
  let printed = false;
  const print = (code) => {
    if (printed) return;
    printed = true;
    process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(code));
  };
  const deadline = setTimeout(() => {
    report.ok = false;
    report.error = { message: `bridge-client: overall timeout of ${opts.timeout} ms` };
    print(1);
  }, opts.timeout);

  const transport = new StdioClientTransport({
    command: opts.command,
    args: opts.args,
    env: { ...getDefaultEnvironment(), ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("MCPGW_"))) },
    stderr: "inherit",
  });
  const client = new Client({ name: "mcpgw-e2e-bridge-client", version: "1.0.0" }, { capabilities: {} });
  client.fallbackNotificationHandler = async (n) => {
    report.notifications[n.method] = (report.notifications[n.method] ?? 0) + 1;
  };
  client.onerror = (err) => {
    (report.transportErrors ??= []).push(String(err?.message ?? err));
  };
  try {
    await client.connect(transport);
    report.pid = transport.pid;
    report.server = client.getServerVersion();
    report.capabilities = client.getServerCapabilities();
    const listed = await listAllTools(client);
    report.tools = listed.tools;
    report.toolPages = listed.pages;
  } catch (err) {
    report.error = errorJSON(err);
    clearTimeout(deadline);
    await client.close().catch(() => {});
    print(1);
    return;
  }
  for (const step of steps) {
    report.results.push(await runStep(client, step));
  }
  report.ok = true;
  const t0 = Date.now();
  await Promise.race([client.close().catch(() => {}), sleep(6000)]);
  report.closeMs = Date.now() - t0;
  clearTimeout(deadline);
  print(0);
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ ok: false, error: errorJSON(err) }) + "\n", () => process.exit(1));
});

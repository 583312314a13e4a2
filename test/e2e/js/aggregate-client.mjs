#!/usr/bin/env node
// aggregate-client.mjs: a real TypeScript-SDK MCP client for mcpgw's end-to-end tests.
//
//   node js/aggregate-client.mjs --url URL [--transport http|sse] [--header 'K: V' ...]
//        [--steps FILE] [--timeout MS] [--name CLIENT_NAME]
//
// It connects, lists every tool (following nextCursor), runs the steps in FILE (a JSON
// array) in order, and prints ONE JSON object on stdout:
//
//   {"ok": true, "server": {...}, "protocolVersion": "...", "sessionId": "...",
//    "tools": [names], "results": [{op, ok, result | error, progress: [...]}, ...],
//    "notifications": {"notifications/message": 3, ...}}
//
// Steps (fields other than "op" are optional unless marked):
//   {"op":"list"}                                   tools/list, all pages; result: {tools:[names], pages}
//   {"op":"call","name":N,"args":{...},"progress":true,"abortAfterMs":MS,"timeoutMs":MS}
//       tools/call; "progress" records notifications/progress in "progress";
//       "abortAfterMs" aborts through an AbortController (the SDK then sends
//       notifications/cancelled) and the result has "aborted": true.
//   {"op":"listPrompts"}  {"op":"getPrompt","name":N,"args":{...}}
//   {"op":"listResources"}  {"op":"listResourceTemplates"}  {"op":"readResource","uri":U}
//   {"op":"ping"}  {"op":"setLevel","level":"debug"}  {"op":"sleep","ms":MS}
//   {"op":"terminate"}     DELETE the session (streamable HTTP only)
//   {"op":"touch","path":P}                         create file P: tells a driver this point is reached
//   {"op":"waitFile","path":P,"timeoutMs":MS}       wait (bounded, default 60000 ms) until file P exists:
//       a driver's signal that what it does to the session (in a browser) is done
//
// Exit status: 0 when it connected and ran every step (a step's own error is data in
// "results", not a failure of the script), 2 on usage errors, 1 when the connection or
// the initial tools/list failed (the JSON then has "ok": false and "error").
// Every wait is bounded: --timeout (default 60000 ms) ends the whole run.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

function usage(msg) {
  process.stderr.write(`aggregate-client: ${msg}\n`);
  process.stdout.write(JSON.stringify({ ok: false, error: { message: msg } }) + "\n");
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { headers: {}, transport: "http", steps: null, timeout: 60000, name: "mcpgw-e2e-ts-client" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`missing value for ${a}`);
      return argv[++i];
    };
    switch (a) {
      case "--url": opts.url = next(); break;
      case "--transport": opts.transport = next(); break;
      case "--steps": opts.steps = next(); break;
      case "--timeout": opts.timeout = Number(next()); break;
      case "--name": opts.name = next(); break;
      case "--header": {
        const h = next();
        const idx = h.indexOf(":");
        if (idx <= 0) usage(`bad --header ${JSON.stringify(h)} (want K:V)`);
        opts.headers[h.slice(0, idx).trim()] = h.slice(idx + 1).trim();
        break;
      }
      default: usage(`unknown argument ${a}`);
    }
  }
  if (!opts.url) usage("--url is required");
  if (!["http", "sse"].includes(opts.transport)) usage(`--transport must be http or sse, not ${opts.transport}`);
  if (!(opts.timeout > 0)) usage("--timeout must be a positive number of milliseconds");
  return opts;
}

function errorJSON(err) {
  if (err === undefined || err === null) return { message: String(err) };
  const out = { message: String(err.message ?? err) };
  if (err.code !== undefined) out.code = err.code;
  if (err.data !== undefined) out.data = err.data;
  if (err.name && err.name !== "Error") out.name = err.name;
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function listAllTools(client) {
  const names = [];
  let cursor;
  let pages = 0;
  const seen = new Set();
  // Bounded: at most 1000 pages, and a repeated cursor ends the loop.
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

async function listAllPaged(fn, key) {
  const items = [];
  let cursor;
  let pages = 0;
  const seen = new Set();
  for (; pages < 1000; ) {
    const res = await fn(cursor ? { cursor } : undefined);
    pages++;
    items.push(...(res[key] ?? []));
    cursor = res.nextCursor;
    if (!cursor || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return { [key]: items, pages };
}

async function runStep(client, transport, step) {
  const out = { op: step.op };
  const progress = [];
  const options = {};
  if (step.timeoutMs) options.timeout = step.timeoutMs;
  if (step.progress) {
    options.onprogress = (p) => progress.push(p);
    options.resetTimeoutOnProgress = true;
  }
  let timer;
  if (step.abortAfterMs !== undefined) {
    const ac = new AbortController();
    options.signal = ac.signal;
    timer = setTimeout(() => ac.abort(new Error(`aborted after ${step.abortAfterMs} ms`)), step.abortAfterMs);
  }
  try {
    let result;
    switch (step.op) {
      case "list": result = await listAllTools(client); break;
      case "call":
        result = await client.callTool({ name: step.name, arguments: step.args ?? {} }, undefined, options);
        break;
      case "listPrompts": result = await listAllPaged((p) => client.listPrompts(p, options), "prompts"); break;
      case "getPrompt":
        result = await client.getPrompt({ name: step.name, arguments: step.args ?? {} }, options);
        break;
      case "listResources": result = await listAllPaged((p) => client.listResources(p, options), "resources"); break;
      case "listResourceTemplates":
        result = await listAllPaged((p) => client.listResourceTemplates(p, options), "resourceTemplates");
        break;
      case "readResource": result = await client.readResource({ uri: step.uri }, options); break;
      case "ping": result = await client.ping(options); break;
      case "setLevel": result = await client.setLoggingLevel(step.level ?? "debug", options); break;
      case "sleep": await sleep(Math.min(step.ms ?? 0, 60000)); result = {}; break;
      case "touch": writeFileSync(step.path, ""); result = {}; break;
      case "waitFile": {
        const deadline = Date.now() + Math.min(step.timeoutMs ?? 60000, 300000);
        while (!existsSync(step.path)) {
          if (Date.now() > deadline) throw new Error(`waitFile: ${step.path} did not appear`);
          await sleep(50);
        }
        result = {};
        break;
      }
      case "terminate":
        if (typeof transport.terminateSession !== "function") throw new Error("terminate needs --transport http");
        await transport.terminateSession();
        result = {};
        break;
      default: throw new Error(`unknown op ${JSON.stringify(step.op)}`);
    }
    out.ok = true;
    out.result = result;
  } catch (err) {
    out.ok = false;
    out.error = errorJSON(err);
    if (options.signal?.aborted) out.aborted = true;
  } finally {
    if (timer) clearTimeout(timer);
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

  const report = { ok: false, transport: opts.transport, tools: [], results: [], notifications: {} };
  let printed = false;
  const print = (code) => {
    if (printed) return;
    printed = true;
    process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(code));
  };
  const deadline = setTimeout(() => {
    report.ok = false;
    report.error = { message: `aggregate-client: overall timeout of ${opts.timeout} ms` };
    print(1);
  }, opts.timeout);

  const url = new URL(opts.url);
  const requestInit = { headers: opts.headers };
  const transport = opts.transport === "sse"
    ? new SSEClientTransport(url, { requestInit })
    : new StreamableHTTPClientTransport(url, { requestInit });
  const client = new Client({ name: opts.name, version: "1.0.0" }, { capabilities: {} });
  // Count every notification the server sends, by method.
  client.fallbackNotificationHandler = async (n) => {
    report.notifications[n.method] = (report.notifications[n.method] ?? 0) + 1;
  };
  client.onerror = (err) => {
    (report.transportErrors ??= []).push(String(err?.message ?? err));
  };

  try {
    await client.connect(transport);
    report.server = client.getServerVersion();
    report.capabilities = client.getServerCapabilities();
    report.protocolVersion = transport.protocolVersion;
    report.sessionId = transport.sessionId;
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
    report.results.push(await runStep(client, transport, step));
  }
  report.ok = true;
  clearTimeout(deadline);
  await Promise.race([client.close().catch(() => {}), sleep(2000)]);
  print(0);
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ ok: false, error: errorJSON(err) }) + "\n", () => process.exit(1));
});

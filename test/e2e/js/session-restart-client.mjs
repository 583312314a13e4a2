#!/usr/bin/env node
// session-restart-client.mjs: a TypeScript-SDK client (StreamableHTTPClientTransport) that
// keeps ONE session across a gateway restart, for sessions_restart_test.go.
//
//   node js/session-restart-client.mjs --url URL [--header 'K: V' ...] [--call TOOL ...]
//        [--timeout MS]
//
// Phase 1: connect (initialize), tools/list, call each --call tool (no arguments).
// It then prints one JSON line {"event":"phase1", ...} on stdout and waits for a line
// "continue" on stdin (the test kills and restarts the gateway meanwhile).
// Phase 2: tools/list and the same calls again, on the same Client and transport, then
// prints {"event":"done", ...} (with "getReopened": whether the SDK's GET stream came back
// within 5 s) and exits 0.
//
// A fetch wrapper counts every JSON-RPC method the client POSTs (so "initialize" must stay
// at 1) and records the Mcp-Session-Id header of every request and response.
// Every wait is bounded: --timeout (default 90000 ms) ends the whole run with exit 1.

import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const opts = { headers: {}, calls: [], timeout: 90000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  switch (a) {
    case "--url": opts.url = next(); break;
    case "--timeout": opts.timeout = Number(next()); break;
    case "--call": opts.calls.push(next()); break;
    case "--header": {
      const h = next() ?? "";
      const idx = h.indexOf(":");
      opts.headers[h.slice(0, idx).trim()] = h.slice(idx + 1).trim();
      break;
    }
    default:
      process.stdout.write(JSON.stringify({ event: "error", error: `unknown argument ${a}` }) + "\n");
      process.exit(2);
  }
}

const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const errorJSON = (err) => {
  const out = { message: String(err?.message ?? err) };
  if (err?.code !== undefined) out.code = err.code;
  if (err?.cause) out.cause = String(err.cause?.message ?? err.cause);
  return out;
};

const deadline = setTimeout(() => {
  emit({ event: "error", error: `overall timeout of ${opts.timeout} ms` });
  process.exit(1);
}, opts.timeout);

// What went over the wire.
const wire = { methods: {}, requestSessionIds: [], responseSessionIds: [], statuses: [] };
const note = (list, v) => { if (v && !list.includes(v)) list.push(v); };
const countingFetch = async (url, init = {}) => {
  const method = (init.method ?? "GET").toUpperCase();
  const h = new Headers(init.headers ?? {});
  note(wire.requestSessionIds, h.get("mcp-session-id"));
  if (method === "POST" && typeof init.body === "string") {
    try {
      const body = JSON.parse(init.body);
      for (const m of Array.isArray(body) ? body : [body]) {
        if (m && m.method) wire.methods[m.method] = (wire.methods[m.method] ?? 0) + 1;
      }
    } catch { /* not JSON: not ours to judge */ }
  }
  const resp = await fetch(url, init);
  note(wire.responseSessionIds, resp.headers.get("mcp-session-id"));
  wire.statuses.push(`${method} ${resp.status}`);
  return resp;
};

const transport = new StreamableHTTPClientTransport(new URL(opts.url), {
  requestInit: { headers: opts.headers },
  fetch: countingFetch,
});
const client = new Client({ name: "mcpgw-e2e-restart-client", version: "1.0.0" }, { capabilities: {} });
const transportErrors = [];
client.onerror = (err) => transportErrors.push(String(err?.message ?? err));

async function phase() {
  const out = { tools: [], calls: [] };
  try {
    const seen = new Set();
    let cursor;
    for (let page = 0; page < 100; page++) {
      const res = await client.listTools(cursor ? { cursor } : undefined);
      for (const t of res.tools ?? []) out.tools.push(t.name);
      cursor = res.nextCursor;
      if (!cursor || seen.has(cursor)) break;
      seen.add(cursor);
    }
    out.listOK = true;
  } catch (err) {
    out.listOK = false;
    out.listError = errorJSON(err);
  }
  for (const name of opts.calls) {
    try {
      const r = await client.callTool({ name, arguments: {} }, undefined, { timeout: 30000 });
      out.calls.push({ name, ok: true, result: r });
    } catch (err) {
      out.calls.push({ name, ok: false, error: errorJSON(err) });
    }
  }
  return out;
}

function waitForLine(want) {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin });
    rl.on("line", (line) => {
      if (line.trim() === want) {
        resolve(true); // before close(), which emits "close" at once
        rl.close();
      }
    });
    rl.on("close", () => resolve(false));
  });
}

try {
  await client.connect(transport);
} catch (err) {
  emit({ event: "error", error: errorJSON(err), wire });
  process.exit(1);
}
const p1 = await phase();
emit({ event: "phase1", sessionId: transport.sessionId, protocolVersion: transport.protocolVersion, ...p1, wire });
const go = await waitForLine("continue");
if (!go) {
  emit({ event: "error", error: "stdin closed before continue" });
  process.exit(1);
}
const getsBefore = wire.statuses.filter((s) => s === "GET 200").length;
const p2 = await phase();
// The SDK reopens its GET stream by itself (after 1 s, then 1 s again): wait up to 5 s.
let getReopened = false;
for (let i = 0; i < 50 && !getReopened; i++) {
  getReopened = wire.statuses.filter((s) => s === "GET 200").length > getsBefore;
  if (!getReopened) await new Promise((r) => setTimeout(r, 100));
}
clearTimeout(deadline);
emit({ event: "done", sessionId: transport.sessionId, ...p2, getReopened, wire, transportErrors });
// Leave without DELETE: the test owns the session's end. Bounded close.
await Promise.race([transport.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
process.exit(0);

#!/usr/bin/env node
// live-client.mjs: a TypeScript-SDK MCP client that holds one session and waits for the
// gateway to change its tools (mcpgw's live control plane e2e test).
//
//   node js/live-client.mjs --url URL [--header 'K: V' ...] --call TOOL [--timeout MS]
//
// It connects, lists its tools and prints one JSON line {"event":"ready","tools":[...]}.
// Then it waits for notifications/tools/list_changed, and on it lists the tools again,
// calls TOOL and prints {"event":"called","ok":bool,"text":"...","tools":[...],
// "error":{...}} and exits 0. Every wait is bounded by --timeout (default 30000 ms): on
// timeout it prints {"event":"timeout"} and exits 1.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const opts = { headers: {}, timeout: 30000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  if (a === "--url") opts.url = next();
  else if (a === "--call") opts.call = next();
  else if (a === "--timeout") opts.timeout = Number(next());
  else if (a === "--header") {
    const h = next() ?? "";
    const idx = h.indexOf(":");
    opts.headers[h.slice(0, idx).trim()] = h.slice(idx + 1).trim();
  } else {
    process.stderr.write(`live-client: unknown argument ${a}\n`);
    process.exit(2);
  }
}
if (!opts.url || !opts.call) {
  process.stderr.write("live-client: --url and --call are required\n");
  process.exit(2);
}

const emit = (obj) => new Promise((r) => process.stdout.write(JSON.stringify(obj) + "\n", r));
setTimeout(async () => {
  await emit({ event: "timeout" });
  process.exit(1);
}, opts.timeout);

async function toolNames(client) {
  const names = [];
  let cursor;
  for (let pages = 0; pages < 100; pages++) {
    const res = await client.listTools(cursor ? { cursor } : undefined);
    for (const t of res.tools ?? []) names.push(t.name);
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return names;
}

const transport = new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers: opts.headers } });
const client = new Client({ name: "mcpgw-e2e-live-client", version: "1.0.0" }, { capabilities: {} });
let changed;
const listChanged = new Promise((r) => (changed = r));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());

try {
  await client.connect(transport);
  await emit({ event: "ready", tools: await toolNames(client) });
  await listChanged;
  const out = { event: "called", tools: await toolNames(client) };
  try {
    const res = await client.callTool({ name: opts.call, arguments: {} });
    out.ok = !res.isError;
    out.text = (res.content ?? []).map((c) => c.text ?? "").join("");
  } catch (err) {
    out.ok = false;
    out.error = { message: String(err?.message ?? err), code: err?.code };
  }
  await emit(out);
  await Promise.race([client.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
  process.exit(0);
} catch (err) {
  await emit({ event: "error", error: { message: String(err?.message ?? err), code: err?.code } });
  process.exit(1);
}

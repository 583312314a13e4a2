#!/usr/bin/env node
// runner-client.mjs: a TypeScript-SDK MCP client (streamable HTTP) that holds one session
// and does what the test writes on stdin, one JSON line each, for runner_test.go:
//
//   node js/runner-client.mjs --url URL [--header 'K: V' ...] [--timeout MS]
//
//   {"op":"list"}                          → {"event":"tools","tools":[names]}
//   {"op":"call","name":N,"args":{...}}    → {"event":"result","ok":bool,"text":"..."}
//                                            or {"event":"result","ok":false,"error":{...}}
//
// It prints {"event":"ready"} once connected, and {"event":"list_changed"} on each
// notifications/tools/list_changed. --timeout (default 120000 ms) ends the run with exit 1.

import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const opts = { headers: {}, timeout: 120000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  if (a === "--url") opts.url = next();
  else if (a === "--timeout") opts.timeout = Number(next());
  else if (a === "--header") {
    const h = next() ?? "";
    const idx = h.indexOf(":");
    opts.headers[h.slice(0, idx).trim()] = h.slice(idx + 1).trim();
  } else {
    process.stdout.write(JSON.stringify({ event: "error", error: { message: `unknown argument ${a}` } }) + "\n");
    process.exit(2);
  }
}

const emit = (obj) => new Promise((r) => process.stdout.write(JSON.stringify(obj) + "\n", r));
setTimeout(async () => {
  await emit({ event: "timeout" });
  process.exit(1);
}, opts.timeout).unref();

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
const client = new Client({ name: "mcpgw-e2e-runner-client", version: "1.0.0" }, { capabilities: {} });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => emit({ event: "list_changed" }));

try {
  await client.connect(transport);
} catch (err) {
  await emit({ event: "error", error: { message: String(err?.message ?? err), code: err?.code } });
  process.exit(1);
}
await emit({ event: "ready" });

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch {
    await emit({ event: "error", error: { message: "bad command line" } });
    continue;
  }
  try {
    if (cmd.op === "list") {
      await emit({ event: "tools", tools: await toolNames(client) });
    } else if (cmd.op === "call") {
      const res = await client.callTool({ name: cmd.name, arguments: cmd.args ?? {} });
      await emit({ event: "result", ok: !res.isError, text: (res.content ?? []).map((c) => c.text ?? "").join("") });
    }
  } catch (err) {
    await emit({ event: "result", ok: false, error: { message: String(err?.message ?? err), code: err?.code } });
  }
}
await Promise.race([client.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
process.exit(0);

#!/usr/bin/env node
// sql-client.mjs: a TypeScript-SDK MCP client that declares elicitation and drives one
// table of mcpgw's sql plugin (the sql e2e matrix, over SQLite and PostgreSQL).
//
//   node js/sql-client.mjs --url URL --tool-prefix db_shop_v1_items --conn CONN
//        --type-uri URI [--header 'K: V' ...] [--timeout MS]
//
// It subscribes to the table's resource URI, then creates a row, updates it, deletes it
// once declining the gateway's elicitation (the row stays) and once accepting it (the row
// goes). It prints one JSON line with what it saw and exits 0; any failure prints
// {"error": "..."} and exits 1. Every wait is bounded by --timeout (default 30000 ms).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const opts = { headers: {}, timeout: 30000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  if (a === "--url") opts.url = next();
  else if (a === "--tool-prefix") opts.prefix = next();
  else if (a === "--conn") opts.conn = next();
  else if (a === "--type-uri") opts.typeURI = next();
  else if (a === "--timeout") opts.timeout = Number(next());
  else if (a === "--header") {
    const h = next() ?? "";
    const idx = h.indexOf(":");
    opts.headers[h.slice(0, idx).trim()] = h.slice(idx + 1).trim();
  } else {
    process.stderr.write(`sql-client: unknown argument ${a}\n`);
    process.exit(2);
  }
}
if (!opts.url || !opts.prefix || !opts.conn || !opts.typeURI) {
  process.stderr.write("sql-client: --url, --tool-prefix, --conn and --type-uri are required\n");
  process.exit(2);
}

const emit = (obj) => new Promise((r) => process.stdout.write(JSON.stringify(obj) + "\n", r));
setTimeout(async () => {
  await emit({ error: "timeout" });
  process.exit(1);
}, opts.timeout);

const report = { elicitations: [], updated: [] };
let answer = "decline";

const transport = new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers: opts.headers } });
const client = new Client({ name: "mcpgw-e2e-sql-client", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  report.elicitations.push({ message: req.params.message, answer });
  if (answer === "accept") return { action: "accept", content: { confirm: true } };
  return { action: answer };
});
let updatedWaiters = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  report.updated.push(n.params.uri);
  const ws = updatedWaiters;
  updatedWaiters = [];
  for (const w of ws) w();
});
// waitUpdated resolves once at least n resources/updated notifications arrived.
const waitUpdated = (n) =>
  new Promise((resolve) => {
    const check = () => (report.updated.length >= n ? resolve() : updatedWaiters.push(check));
    check();
  });

const call = async (op, args) => {
  const res = await client.callTool({ name: `${opts.prefix}_${op}`, arguments: { connectionId: opts.conn, ...args } });
  const text = (res.content ?? []).map((c) => c.text ?? "").join("");
  return { isError: !!res.isError, text, data: res.structuredContent ?? null };
};

try {
  await client.connect(transport);
  const tools = [];
  let cursor;
  for (let pages = 0; pages < 100; pages++) {
    const res = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...(res.tools ?? []));
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  const del = tools.find((t) => t.name === `${opts.prefix}_delete`);
  report.deleteTakesConfirm = !!del?.inputSchema?.properties?.confirm;
  report.hasDelete = !!del;

  await client.subscribeResource({ uri: opts.typeURI });
  const created = await call("create", { name: "ts-widget", qty: 3, kind: "tool" });
  if (created.isError) throw new Error(`create: ${created.text}`);
  report.created = created.data;
  const id = String(created.data.id);
  await waitUpdated(1);
  const updated = await call("update", { id, qty: 4 });
  report.updated_row = updated.data;
  await waitUpdated(2);

  answer = "decline";
  report.declined = await call("delete", { id });
  report.afterDecline = await call("get", { id });
  answer = "accept";
  report.accepted = await call("delete", { id });
  report.afterAccept = await call("get", { id });
  await waitUpdated(3);
  await client.close();
  await emit(report);
  process.exit(0);
} catch (e) {
  await emit({ error: String(e?.stack ?? e), report });
  process.exit(1);
}

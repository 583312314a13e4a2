#!/usr/bin/env node
// tasks-client.mjs: a TypeScript-SDK client (1.32.2, StreamableHTTPClientTransport) that
// drives MCP tasks (SEP-1686) through mcpgw, for tasks_test.go.
//
//   node js/tasks-client.mjs --url URL [--header 'K: V' ...] --op OP [--task ID]
//        [--tool NAME] [--timeout MS]
//   node js/tasks-client.mjs --op OP ... -- COMMAND [ARGS...]
//
// With a command after "--", the client spawns it and speaks stdio to it
// (StdioClientTransport: for mcpgw-bridge) instead of HTTP to --url.
//
// Ops (each prints one JSON line on stdout and exits 0 unless the run itself broke):
//   run     tools/call TOOL (default everything__simulate-research-query) with
//           task {ttl: 60000}; tasks/list; tasks/get until the task is terminal
//           (bounded by --timeout); tasks/result. Reports every answer.
//   runall  run's tools/call and tasks/get polling for every --tool at once (steps call0,
//           get0, call1, get1, ...), on the one session; no tasks/result.
//   input   tools/call TOOL with {topic: "python", ambiguous: true} as a task, the client
//           declaring elicitation: tasks/get until input_required (or terminal), then
//           tasks/result, during which the server's task asks the client
//           elicitation/create (accepted: interpretation "programming"); reports both
//           and the elicitation requests' params.
//   start   the same tools/call only: reports the CreateTaskResult.
//   poll    tasks/get and tasks/result of --task, then tasks/list.
//   cancel  tools/call as in start, then tasks/cancel of its task, then tasks/get.
//   sampling tools/call TOOL (trigger-sampling-request-async) with the client
//           declaring tasks.requests.sampling.createMessage: the server's sampling request
//           comes as a task the client runs (an InMemoryTaskStore), and the server polls
//           it; reports the tool's result.
//   elicitation the same with elicitation/create: the client declares elicitation and
//           tasks.requests.elicitation.create, runs the server's elicitation request as a
//           task (input_required, then completed with an accepted form) and reports the
//           tool's result, its task ids and the status notifications it received.
//   foreign tasks/get, tasks/result and tasks/cancel of --task, and tasks/list: each
//           answer or error reported (for another caller's task id).
// The client declares capabilities.tasks {list, cancel}; "initialize" reports the
// server's capabilities.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateTaskResultSchema, GetTaskResultSchema, ListTasksResultSchema,
  CancelTaskResultSchema, CallToolResultSchema,
  CreateMessageRequestSchema, ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";

const opts = { headers: {}, timeout: 60000, op: "run", tool: "everything__simulate-research-query", tools: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  switch (a) {
    case "--": opts.command = argv.slice(i + 1); i = argv.length; break;
    case "--url": opts.url = next(); break;
    case "--timeout": opts.timeout = Number(next()); break;
    case "--op": opts.op = next(); break;
    case "--task": opts.task = next(); break;
    case "--tool": opts.tool = next(); opts.tools.push(opts.tool); break;
    case "--header": {
      const h = next() ?? "";
      const idx = h.indexOf(":");
      opts.headers[h.slice(0, idx).trim()] = h.slice(idx + 1).trim();
      break;
    }
    default:
      process.stdout.write(JSON.stringify({ ok: false, error: `unknown argument ${a}` }) + "\n");
      process.exit(2);
  }
}

const report = { ok: false, op: opts.op, steps: [], statusNotes: [] };
const emit = () => process.stdout.write(JSON.stringify(report) + "\n");
const errorJSON = (err) => {
  const out = { message: String(err?.message ?? err) };
  if (err?.code !== undefined) out.code = err.code;
  return out;
};
const deadline = setTimeout(() => {
  report.error = `overall timeout of ${opts.timeout} ms`;
  emit();
  process.exit(1);
}, opts.timeout);

const clientCaps = { tasks: { list: {}, cancel: {} } };
const clientOpts = { capabilities: clientCaps };
if (opts.op === "sampling") {
  clientCaps.sampling = {};
  clientCaps.tasks.requests = { sampling: { createMessage: {} } };
  clientOpts.taskStore = new InMemoryTaskStore();
}
if (opts.op === "input") clientCaps.elicitation = { form: {} };
if (opts.op === "elicitation") {
  clientCaps.elicitation = { form: {} };
  clientCaps.tasks.requests = { elicitation: { create: {} } };
  clientOpts.taskStore = new InMemoryTaskStore();
}
const client = new Client({ name: "mcpgw-e2e-tasks-client", version: "1.0.0" }, clientOpts);
report.samplingRequests = 0;
const sample = { role: "assistant", content: { type: "text", text: "sampled by the e2e client" }, model: "e2e-model", stopReason: "endTurn" };
// Only a client that declared sampling may handle it (the SDK refuses otherwise).
if (opts.op === "sampling") {
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    report.samplingRequests++;
    if (!request.params.task) return sample;
    // Asked as a task: create it, answer CreateTaskResult at once, finish it later (long
    // enough for the server to poll it at least once).
    const task = await extra.taskStore.createTask({ ttl: request.params.task.ttl ?? 60000, pollInterval: 500 });
    report.clientTaskIds = [...(report.clientTaskIds ?? []), task.taskId];
    setTimeout(() => { extra.taskStore.storeTaskResult(task.taskId, "completed", sample).catch(() => {}); }, 1500);
    return { task };
  });
}
report.elicitationRequests = [];
const form = { action: "accept", content: { name: "e2e elicited", favoriteColor: "Blue", agreeToTerms: true } };
if (opts.op === "elicitation") {
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    report.elicitationRequests.push(request.params);
    if (!request.params.task) return form;
    // Asked as a task: answer CreateTaskResult at once; the "user" needs input for a
    // while (input_required), then accepts the form.
    const task = await extra.taskStore.createTask({ ttl: request.params.task.ttl ?? 60000, pollInterval: 500 });
    report.clientTaskIds = [...(report.clientTaskIds ?? []), task.taskId];
    setTimeout(() => { extra.taskStore.updateTaskStatus(task.taskId, "input_required", "waiting for the e2e user").catch(() => {}); }, 300);
    setTimeout(() => { extra.taskStore.storeTaskResult(task.taskId, "completed", form).catch(() => {}); }, 1800);
    return { task };
  });
}
if (opts.op === "input") {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    report.elicitationRequests.push(request.params);
    return { action: "accept", content: { interpretation: "programming" } };
  });
}
client.fallbackNotificationHandler = async (n) => {
  if (n.method === "notifications/tasks/status") report.statusNotes.push(n.params);
};
const transport = opts.command
  ? new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), env: getDefaultEnvironment(), stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers: opts.headers } });

// step runs one request and records its answer or error; it returns the result or null.
async function step(name, method, params, schema) {
  try {
    const result = await client.request({ method, params }, schema, { timeout: opts.timeout });
    report.steps.push({ name, ok: true, result });
    return result;
  } catch (err) {
    report.steps.push({ name, ok: false, error: errorJSON(err) });
    return null;
  }
}

const terminal = new Set(["completed", "failed", "cancelled"]);

async function start() {
  return step("call", "tools/call",
    { name: opts.tool, arguments: { topic: "gateways" }, task: { ttl: 60000 } }, CreateTaskResultSchema);
}

async function pollUntilDone(taskId, name = "get") {
  const until = Date.now() + opts.timeout - 5000;
  for (let i = 0; i < 200 && Date.now() < until; i++) {
    const t = await client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema);
    if (terminal.has(t.status)) {
      report.steps.push({ name, ok: true, result: t, polls: i + 1 });
      return t;
    }
    await new Promise((r) => setTimeout(r, Math.min(t.pollInterval ?? 500, 1000)));
  }
  report.steps.push({ name, ok: false, error: { message: "task never reached a terminal status" } });
  return null;
}

try {
  await client.connect(transport);
  report.serverCapabilities = client.getServerCapabilities();
  report.sessionId = transport.sessionId;
  switch (opts.op) {
    case "run": {
      const created = await start();
      if (!created) break;
      await step("list", "tasks/list", {}, ListTasksResultSchema);
      await pollUntilDone(created.task.taskId);
      await step("result", "tasks/result", { taskId: created.task.taskId }, CallToolResultSchema);
      break;
    }
    case "runall":
      await Promise.all(opts.tools.map(async (tool, i) => {
        const created = await step(`call${i}`, "tools/call",
          { name: tool, arguments: { topic: "gateways" }, task: { ttl: 60000 } }, CreateTaskResultSchema);
        if (created) await pollUntilDone(created.task.taskId, `get${i}`);
      }));
      break;
    case "input": {
      const created = await step("call", "tools/call",
        { name: opts.tool, arguments: { topic: "python", ambiguous: true }, task: { ttl: 60000 } }, CreateTaskResultSchema);
      if (!created) break;
      const id = created.task.taskId;
      const until = Date.now() + opts.timeout - 5000;
      for (let i = 0; i < 100 && Date.now() < until; i++) {
        const t = await client.request({ method: "tasks/get", params: { taskId: id } }, GetTaskResultSchema);
        if (t.status === "input_required" || terminal.has(t.status)) {
          report.steps.push({ name: "get", ok: true, result: t, polls: i + 1 });
          break;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      await step("result", "tasks/result", { taskId: id }, CallToolResultSchema);
      break;
    }
    case "start":
      await start();
      break;
    case "poll":
      await pollUntilDone(opts.task);
      await step("result", "tasks/result", { taskId: opts.task }, CallToolResultSchema);
      await step("list", "tasks/list", {}, ListTasksResultSchema);
      break;
    case "cancel": {
      const created = await start();
      if (!created) break;
      await step("cancel", "tasks/cancel", { taskId: created.task.taskId }, CancelTaskResultSchema);
      await step("get", "tasks/get", { taskId: created.task.taskId }, GetTaskResultSchema);
      break;
    }
    case "sampling":
    case "elicitation":
      // The first call starts the session's own instance (which registers the tool
      // for a client that declared the capability); then the tool is called.
      await step("echo", "tools/call", { name: "everything__echo", arguments: { message: "start" } }, CallToolResultSchema);
      for (let i = 0; i < 20; i++) {
        const l = await client.listTools();
        if (l.tools.some((t) => t.name === opts.tool)) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      await step("call", "tools/call", { name: opts.tool, arguments: { prompt: "hello" } }, CallToolResultSchema);
      break;
    case "foreign":
      await step("get", "tasks/get", { taskId: opts.task }, GetTaskResultSchema);
      await step("result", "tasks/result", { taskId: opts.task }, CallToolResultSchema);
      await step("cancel", "tasks/cancel", { taskId: opts.task }, CancelTaskResultSchema);
      await step("list", "tasks/list", {}, ListTasksResultSchema);
      break;
    default:
      throw new Error(`unknown op ${opts.op}`);
  }
  report.ok = true;
} catch (err) {
  report.error = errorJSON(err);
}
clearTimeout(deadline);
emit();
await client.close().catch(() => {});
process.exit(0);

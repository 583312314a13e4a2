#!/usr/bin/env node
// oauth-upstream.mjs: an OAuth-protected MCP server made of @modelcontextprotocol/sdk's own
// server parts, for the upstream OAuth e2e tests (upstream_oauth_test.go) and the UI test.
// One origin is both the authorization server (mcpAuthRouter: metadata, /authorize,
// /token, /register) and the resource server (/mcp behind requireBearerAuth, with its
// protected resource metadata at /.well-known/oauth-protected-resource/mcp). Only the
// provider (the token store) below is this file's own.
//
//   node js/oauth-upstream.mjs [--port N] [--access-ttl SECONDS]
//
//   --port N / $PORT              port on 127.0.0.1 (default 0: any free port)
//   --access-ttl S / $ACCESS_TTL  access token lifetime in seconds (default 3600)
//
// Prints the port number alone on stdout as its first line (e.g. "41234"), then serves
// until SIGTERM; the MCP endpoint is http://127.0.0.1:PORT/mcp. Behaviour:
// - /authorize approves at once: a redirect to redirect_uri with code and state (no
//   person); PKCE is checked by the SDK's token handler; dynamic registration in memory.
// - Each authorization-code exchange starts a grant g1, g2, ...; refreshes keep its id.
// - Refresh tokens rotate: a refresh returns a new one and retires the old one; a retired
//   (already used) one is refused with invalid_grant and counted as a replay.
// - Tool `whoami` answers "grant=<id>" of the bearer token's grant.
// - GET /stats (no auth, test-only): {"code": n, "refresh": n, "replays": n,
//   "grants": ["g1", ...], "issued": [every access and refresh token ever issued]}.
// - The SDK's rate limits are off (tests make many token requests).

import { randomBytes } from "node:crypto";
import * as z from "zod/v4";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";

function flag(name, envName, def) {
  const i = process.argv.indexOf(name);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[envName] ?? def;
}
const port = Number(flag("--port", "PORT", "0"));
const accessTTL = Number(flag("--access-ttl", "ACCESS_TTL", "3600"));

const stats = { code: 0, refresh: 0, replays: 0, grants: [], issued: [] };
const newToken = (kind) => {
  const t = `${kind}_${randomBytes(24).toString("base64url")}`;
  stats.issued.push(t);
  return t;
};

class Clients {
  constructor() { this.clients = new Map(); }
  async getClient(id) { return this.clients.get(id); }
  async registerClient(c) { this.clients.set(c.client_id, c); return c; }
}

// Provider: auto-approving authorization, rotating refresh tokens, grants by id.
class Provider {
  constructor() {
    this.clientsStore = new Clients();
    this.codes = new Map();    // code -> {client_id, params}
    this.access = new Map();   // access token -> {grant, clientId, scopes, resource, expiresAt}
    this.refresh = new Map();  // refresh token -> {grant, clientId, scopes, resource, used}
  }

  async authorize(client, params, res) {
    const code = randomBytes(16).toString("base64url");
    this.codes.set(code, { clientId: client.client_id, params });
    const u = new URL(params.redirectUri);
    u.searchParams.set("code", code);
    if (params.state !== undefined) u.searchParams.set("state", params.state);
    res.redirect(u.toString());
  }

  async challengeForAuthorizationCode(_client, code) {
    const c = this.codes.get(code);
    if (!c) throw new InvalidGrantError("unknown authorization code");
    return c.params.codeChallenge;
  }

  async exchangeAuthorizationCode(client, code) {
    const c = this.codes.get(code);
    if (!c || c.clientId !== client.client_id) throw new InvalidGrantError("unknown authorization code");
    this.codes.delete(code);
    stats.code++;
    const grant = `g${stats.grants.length + 1}`;
    stats.grants.push(grant);
    return this.issue({ grant, clientId: client.client_id, scopes: c.params.scopes || [], resource: c.params.resource });
  }

  async exchangeRefreshToken(client, refreshToken) {
    const r = this.refresh.get(refreshToken);
    if (!r || r.clientId !== client.client_id) throw new InvalidGrantError("unknown refresh token");
    if (r.used) {
      stats.replays++;
      throw new InvalidGrantError("refresh token already used");
    }
    r.used = true;
    stats.refresh++;
    return this.issue(r);
  }

  issue({ grant, clientId, scopes, resource }) {
    const accessToken = newToken("at");
    const refreshToken = newToken("rt");
    this.access.set(accessToken, { grant, clientId, scopes, resource, expiresAt: Date.now() + accessTTL * 1000 });
    this.refresh.set(refreshToken, { grant, clientId, scopes, resource, used: false });
    return {
      access_token: accessToken,
      token_type: "bearer",
      expires_in: accessTTL,
      refresh_token: refreshToken,
      scope: scopes.join(" "),
    };
  }

  async verifyAccessToken(token) {
    const a = this.access.get(token);
    if (!a || a.expiresAt < Date.now()) throw new InvalidTokenError("invalid or expired token");
    return {
      token, clientId: a.clientId, scopes: a.scopes, resource: a.resource,
      expiresAt: Math.floor(a.expiresAt / 1000), extra: { grant: a.grant },
    };
  }
}

function mcpServer() {
  const server = new McpServer({ name: "oauth-upstream", version: "1.0.0" });
  server.registerTool("whoami", { description: "The grant of the bearer token", inputSchema: {} },
    async (_args, extra) => ({ content: [{ type: "text", text: `grant=${extra.authInfo?.extra?.grant}` }] }));
  server.registerTool("echo", { description: "Echoes its text", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }));
  return server;
}

const provider = new Provider();
const app = createMcpExpressApp();
const httpServer = app.listen(port, "127.0.0.1", () => {
  const actual = httpServer.address().port;
  const origin = `http://127.0.0.1:${actual}`;
  const mcpUrl = new URL(`${origin}/mcp`);
  app.get("/stats", (_req, res) => res.json(stats));
  app.use(mcpAuthRouter({
    provider,
    issuerUrl: new URL(origin),
    resourceServerUrl: mcpUrl,
    scopesSupported: ["mcp:tools"],
    resourceName: "oauth-upstream",
    authorizationOptions: { rateLimit: false },
    tokenOptions: { rateLimit: false },
    clientRegistrationOptions: { rateLimit: false },
    revocationOptions: { rateLimit: false },
  }));
  const auth = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  // Stateless MCP: a server and transport per request; the token decides the grant.
  const handle = async (req, res) => {
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => { transport.close(); server.close(); });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      console.error("mcp:", err);
      if (!res.headersSent) res.status(500).json({ jsonrpc: "2.0", error: { code: -32603, message: "internal error" }, id: null });
    }
  };
  app.post("/mcp", auth, handle);
  app.get("/mcp", auth, (_req, res) => res.status(405).set("Allow", "POST").end());
  app.delete("/mcp", auth, (_req, res) => res.status(405).set("Allow", "POST").end());
  console.log(String(actual));
});
httpServer.on("error", (err) => { console.error("listen:", err.message); process.exit(1); });
process.on("SIGTERM", () => { httpServer.close(); process.exit(0); });

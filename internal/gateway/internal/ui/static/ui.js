// mcpgw web UI: the small amount of script the pages need. Every change goes through
// /ui/api (the admin API behind the UI's sign-in) with the page's CSRF token.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  async function api(method, path, body, headers) {
    const init = { method, credentials: "same-origin", headers: { ...headers, "X-CSRF-Token": csrf } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch("/ui/api" + path, init);
    } catch (e) {
      return { status: 0, json: { error: "the gateway cannot be reached: " + e.message } };
    }
    let json = null;
    const text = await res.text();
    try { json = text ? JSON.parse(text) : null; } catch { json = { error: text }; }
    return { status: res.status, json };
  }

  function announce(msg) {
    const el = $("#announce");
    if (el) { el.textContent = ""; setTimeout(() => { el.textContent = msg; }, 30); }
  }

  const lines = (s) => s.split("\n").map((x) => x.trim()).filter(Boolean);

  // ---- field errors ----------------------------------------------------------------
  function clearErrors(form) {
    $$(".field-error", form).forEach((e) => { e.textContent = ""; });
    $$("[aria-invalid]", form).forEach((e) => e.removeAttribute("aria-invalid"));
    const a = $(".alert", form);
    if (a) { a.hidden = true; a.textContent = ""; }
    const w = $(".save-warnings", form);
    if (w) { w.hidden = true; w.textContent = ""; }
  }

  // showErrors puts each field error next to its field (matched on the end of its config
  // path: servers.x.url → url) and everything else, with the summary, in the alert.
  function showErrors(form, json, prefix) {
    clearErrors(form);
    const alert = $(".alert", form);
    const general = [];
    for (const e of (json && json.errors) || []) {
      let f = e.field || "";
      if (prefix && f.startsWith(prefix)) f = f.slice(prefix.length);
      f = f.replace(/\[\d+\]$/, ""); // pinned_tools[1]: the list's slot
      let slot = null;
      for (let key = f; key && !slot; key = key.includes(".") ? key.slice(0, key.lastIndexOf(".")) : "") {
        slot = $(`[data-error-for="${CSS.escape(key)}"]`, form);
      }
      if (slot) {
        slot.textContent = (slot.textContent ? slot.textContent + " " : "") + e.message;
        const input = slot.id ? $(`[aria-describedby~="${slot.id}"]`, form) : null;
        if (input) input.setAttribute("aria-invalid", "true");
      } else {
        general.push(e.field ? e.field + ": " + e.message : e.message);
      }
    }
    if ((!json || !json.errors || !json.errors.length) && json && json.error) general.push(json.error);
    if (alert && general.length) {
      alert.textContent = "";
      for (const g of general) {
        const p = document.createElement("p");
        p.textContent = g;
        alert.appendChild(p);
      }
      alert.hidden = false;
    }
    const first = $("[aria-invalid]", form) || (alert && !alert.hidden ? alert : null);
    if (first) { if (first === alert) alert.setAttribute("tabindex", "-1"); first.focus(); }
  }

  // showWarnings lists a saved entity's warnings (servers its executor skips, say) in the
  // form's warning box and reports whether there were any: the save stands, and the page
  // stays so that they can be read.
  function showWarnings(form, json) {
    const box = $(".save-warnings", form);
    const ws = (json && json.warnings) || [];
    if (!box || !ws.length) return false;
    box.textContent = "";
    const head = document.createElement("p");
    head.textContent = "Saved, with warnings:";
    box.appendChild(head);
    const ul = document.createElement("ul");
    for (const w of ws) {
      const li = document.createElement("li");
      li.textContent = w.message;
      ul.appendChild(li);
    }
    box.appendChild(ul);
    box.hidden = false;
    return true;
  }

  // ---- key/value editor ------------------------------------------------------------
  function kvRow(box, k, v) {
    const rows = $(".kv-rows", box);
    const noun = box.dataset.noun || "entry";
    const n = rows.children.length + 1;
    const row = document.createElement("div");
    row.className = "kv-row";
    const key = document.createElement("input");
    key.className = "kv-key"; key.value = k || ""; key.autocomplete = "off";
    key.setAttribute("aria-label", `${box.dataset.key || "Name"} of ${noun} ${n}`);
    const val = document.createElement("input");
    val.className = "kv-value"; val.value = v || ""; val.autocomplete = "off";
    val.setAttribute("aria-label", `${box.dataset.value || "Value"} of ${noun} ${n}`);
    const rm = document.createElement("button");
    rm.type = "button"; rm.textContent = "Remove";
    rm.setAttribute("aria-label", `Remove ${noun} ${n}`);
    rm.addEventListener("click", () => { row.remove(); });
    row.append(key, val, rm);
    rows.appendChild(row);
    return key;
  }
  function kvSet(box, obj) {
    $(".kv-rows", box).textContent = "";
    for (const [k, v] of Object.entries(obj || {})) kvRow(box, k, v);
  }
  // kvGet returns the object, or throws a message naming the problem.
  function kvGet(box) {
    const out = {};
    for (const row of $$(".kv-row", box)) {
      const k = $(".kv-key", row).value.trim(), v = $(".kv-value", row).value;
      if (!k && !v) continue;
      if (!k) throw new Error(`a ${box.dataset.noun || "entry"} has a value but no name`);
      if (k in out) throw new Error(`${k} is given twice`);
      out[k] = v;
    }
    return Object.keys(out).length ? out : undefined;
  }
  $$(".kv").forEach((box) => {
    $(".kv-add", box).addEventListener("click", () => kvRow(box).focus());
  });
  function kvAll(form) {
    const out = {}, errs = [];
    for (const box of $$(".kv", form)) {
      try { out[box.dataset.kv] = kvGet(box); } catch (e) {
        errs.push(e.message);
        const slot = $(".field-error", box);
        if (slot) slot.textContent = e.message;
      }
    }
    return errs.length ? null : out;
  }

  // ---- dialogs ---------------------------------------------------------------------
  $$("dialog [data-close]").forEach((b) => b.addEventListener("click", () => b.closest("dialog").close()));
  let opener = null;
  function openDialog(d) { opener = document.activeElement; d.showModal(); }
  $$("dialog").forEach((d) => d.addEventListener("close", () => { if (opener) opener.focus(); }));

  // ---- Servers ---------------------------------------------------------------------
  function initServers() {
    const dlg = $("#server-dialog"), form = $("#server-form");
    // editing is the name of the server being edited, and base the whole server as the API
    // returned it when its form opened: a save starts from base and changes only the
    // fields the form shows, so that settings it has no field for (timeouts,
    // max_concurrency, queue, pool, tls, ...) are kept, and is sent with base's ETag, so
    // that it cannot overwrite a change made since.
    let editing = null, base = null;
    const formKeys = ["name", "kind", "type", "command", "args", "dir", "env", "stdio_proxy", "url", "headers", "mode",
      "default_enabled", "enabled", "meta", "source", "file", "created_at", "updated_at", "version", "etag", "live"];
    const showTransport = () => {
      const t = form.type.value;
      $$("fieldset[data-transport]", form).forEach((fs) => { fs.hidden = !fs.dataset.transport.split(" ").includes(t); });
    };
    form.type.addEventListener("change", showTransport);
    const fill = (name, doc, enabled) => {
      form.reset();
      clearErrors(form);
      $("#test-result").textContent = "";
      form.name.value = name || "";
      form.name.readOnly = !!name;
      form.type.value = doc.type || "stdio";
      form.command.value = doc.command || "";
      form.args.value = (doc.args || []).join("\n");
      form.dir.value = doc.dir || "";
      form.url.value = doc.url || "";
      form.stdio_proxy.checked = !!doc.stdio_proxy;
      form.mode.value = doc.mode || "auto";
      form.default_enabled.checked = doc.default_enabled !== false;
      form.enabled.checked = enabled !== false;
      const m = doc.meta || {};
      form["meta.title"].value = m.title || ""; form["meta.description"].value = m.description || "";
      form["meta.url"].value = m.url || ""; form["meta.icon"].value = m.icon || "";
      kvSet($('[data-kv="env"]', form), doc.env);
      kvSet($('[data-kv="headers"]', form), doc.headers);
      // What the form has no field for is kept by a save: say which settings those are.
      const kept = Object.keys(doc).filter((k) => !formKeys.includes(k)).sort();
      $("#s-kept").textContent = kept.length ? "Kept as they are (no field here): " + kept.join(", ") + "." : "";
      $("#s-kept").hidden = !kept.length;
      showTransport();
      $("#server-dialog-title").textContent = name ? "Edit " + name : "Add server";
    };
    const collect = () => {
      const kv = kvAll(form);
      if (!kv) return null;
      const t = form.type.value;
      const doc = structuredClone(base || {});
      for (const k of ["kind", "source", "file", "created_at", "updated_at", "version", "etag", "live"]) delete doc[k];
      Object.assign(doc, { name: form.name.value.trim(), type: t, mode: form.mode.value,
        default_enabled: form.default_enabled.checked, enabled: form.enabled.checked });
      const set = (o, k, v) => { if (v === undefined || v === "" || v === false || (Array.isArray(v) && !v.length)) delete o[k]; else o[k] = v; };
      const [mine, theirs] = t === "stdio" ? [["command", "args", "dir", "env", "stdio_proxy"], ["url", "headers"]]
        : [["url", "headers"], ["command", "args", "dir", "env", "stdio_proxy"]];
      for (const k of theirs) delete doc[k]; // the other transport's fields
      const shown = { command: form.command.value.trim(), args: lines(form.args.value), dir: form.dir.value.trim(),
        env: kv.env, stdio_proxy: form.stdio_proxy.checked, url: form.url.value.trim(), headers: kv.headers };
      for (const k of mine) set(doc, k, shown[k]);
      const meta = { ...doc.meta };
      for (const k of ["title", "description", "url", "icon"]) set(meta, k, form["meta." + k].value.trim());
      set(doc, "meta", Object.keys(meta).length ? meta : undefined);
      return doc;
    };
    $("#add-server").addEventListener("click", () => { editing = null; base = null; fill("", {}, true); openDialog(dlg); form.name.focus(); });
    $$(".edit-server").forEach((b) => b.addEventListener("click", async () => {
      const r = await api("GET", "/servers/" + encodeURIComponent(b.dataset.name));
      if (r.status !== 200) { alert((r.json && r.json.error) || "reading the server failed: " + r.status); return; }
      editing = b.dataset.name;
      base = r.json;
      fill(editing, base, base.enabled !== false);
      openDialog(dlg);
      form.type.focus();
    }));
    $$(".delete-server").forEach((b) => b.addEventListener("click", async () => {
      if (!confirm(`Delete server ${b.dataset.name}? Running tasks keep it until they end.`)) return;
      const r = await api("DELETE", "/servers/" + encodeURIComponent(b.dataset.name));
      if (r.status === 204) { announce(`Server ${b.dataset.name} deleted`); location.reload(); }
      else alert((r.json && r.json.error) || "delete failed: " + r.status);
    }));
    const prefix = () => "servers." + form.name.value.trim() + ".";
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      clearErrors(form);
      const doc = collect();
      if (!doc) return;
      const save = $("#s-save");
      save.disabled = true;
      const r = editing ? await api("PUT", "/servers/" + encodeURIComponent(editing), doc, { "If-Match": base.etag })
        : await api("POST", "/servers", doc);
      save.disabled = false;
      if (r.status === 200 || r.status === 201) {
        announce(`Server ${doc.name} saved`);
        dlg.close();
        location.reload();
        return;
      }
      if (r.status === 412) {
        showErrors(form, { error: `${editing} changed since this form opened (${(r.json && r.json.error) || "412"}). Nothing was saved: cancel and edit it again to see the change.` });
        return;
      }
      showErrors(form, r.json, prefix());
    });
    $("#s-test").addEventListener("click", async () => {
      clearErrors(form);
      const out = $("#test-result");
      const doc = collect();
      if (!doc) return;
      out.textContent = "Connecting…";
      const r = await api("POST", "/servers/test", doc);
      out.textContent = "";
      if (r.status !== 200) { showErrors(form, r.json, prefix()); return; }
      const box = document.createElement("div");
      if (!r.json.ok) {
        box.className = "alert";
        box.textContent = "Could not connect: " + r.json.error;
      } else {
        box.className = "ok-box";
        const p = document.createElement("p");
        p.textContent = `Connected in ${r.json.ms} ms: ${r.json.tools.length} tools, ${r.json.prompts} prompts, ${r.json.resources} resources.`;
        const ul = document.createElement("ul");
        ul.setAttribute("aria-label", "Tools it would add");
        for (const t of r.json.tools) {
          const li = document.createElement("li");
          li.textContent = t.name;
          ul.appendChild(li);
        }
        box.append(p, ul);
      }
      out.appendChild(box);
    });
    // Live state: the list is read again every few seconds.
    const refresh = async () => {
      const r = await api("GET", "/servers");
      if (r.status !== 200 || !Array.isArray(r.json)) return;
      for (const s of r.json) {
        const row = $(`tr[data-name="${CSS.escape(s.name)}"]`);
        if (!row) continue;
        const st = $('[data-col="state"]', row);
        const state = !s.enabled ? "disabled" : s.live ? s.live.state : "—";
        if (st && st.textContent.trim() !== state) {
          st.textContent = "";
          const span = document.createElement("span");
          span.className = "state state-" + (s.live ? s.live.state : "off");
          span.textContent = state;
          st.appendChild(span);
        }
        const tools = $('[data-col="tools"]', row);
        if (tools) tools.textContent = s.live ? String(s.live.tools) : "—";
        const err = $('[data-col="error"]', row);
        if (err) err.textContent = (s.live && s.live.error) || "";
      }
    };
    setInterval(refresh, 2000);
  }

  // ---- Tasks -----------------------------------------------------------------------
  function initTasks() {
    const dlg = $("#task-dialog"), form = $("#task-form");
    let editing = null;
    $("#new-task").addEventListener("click", () => {
      editing = null;
      form.reset();
      clearErrors(form);
      form.id.readOnly = false;
      $$('input[name="server"]', form).forEach((c) => { c.checked = c.dataset.default === "true"; });
      $("#task-dialog-title").textContent = "New task";
      $("#t-save").textContent = "Create task";
      openDialog(dlg);
      form.id.focus();
    });
    $$(".edit-task").forEach((b) => b.addEventListener("click", () => {
      editing = b.dataset.id;
      clearErrors(form);
      form.id.value = editing;
      form.id.readOnly = true;
      form.agent.value = b.dataset.agent || "";
      form.project.value = b.dataset.project || "";
      const have = JSON.parse(b.dataset.servers || "[]");
      $$('input[name="server"]', form).forEach((c) => { c.checked = have.includes(c.value); });
      $("#task-dialog-title").textContent = "Servers of " + editing;
      $("#t-save").textContent = "Save";
      openDialog(dlg);
    }));
    $$(".delete-task").forEach((b) => b.addEventListener("click", async () => {
      if (!confirm(`Delete task ${b.dataset.id}?`)) return;
      const r = await api("DELETE", "/tasks/" + encodeURIComponent(b.dataset.id));
      if (r.status === 204) location.reload();
      else alert((r.json && r.json.error) || "delete failed: " + r.status);
    }));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = { enabled_mcp_servers: $$('input[name="server"]:checked', form).map((c) => c.value) };
      if (form.agent.value) body.agent = form.agent.value;
      if (form.project.value || editing) body.project = form.project.value; // "" leaves the project
      let r;
      if (editing) r = await api("PUT", "/tasks/" + encodeURIComponent(editing), body);
      else {
        if (form.id.value.trim()) body.id = form.id.value.trim();
        r = await api("POST", "/tasks", body);
      }
      if (r.status === 200 || r.status === 201) { dlg.close(); location.reload(); return; }
      showErrors(form, r.json);
    });
  }

  // ---- Projects --------------------------------------------------------------------
  function initProjects() {
    const dlg = $("#project-dialog"), form = $("#project-form");
    let editing = null;
    $("#new-project").addEventListener("click", () => {
      editing = null;
      form.reset();
      clearErrors(form);
      form.id.readOnly = false;
      $$('input[name="server"]', form).forEach((c) => { c.checked = c.dataset.default === "true"; });
      $("#project-dialog-title").textContent = "New project";
      $("#p-save").textContent = "Create project";
      openDialog(dlg);
      form.id.focus();
    });
    $$(".edit-project").forEach((b) => b.addEventListener("click", () => {
      editing = b.dataset.id;
      clearErrors(form);
      form.id.value = editing;
      form.id.readOnly = true;
      form.name.value = b.dataset.name || "";
      const have = JSON.parse(b.dataset.servers || "[]");
      $$('input[name="server"]', form).forEach((c) => { c.checked = have.includes(c.value); });
      $("#project-dialog-title").textContent = "Servers of " + editing;
      $("#p-save").textContent = "Save";
      openDialog(dlg);
    }));
    $$(".delete-project").forEach((b) => b.addEventListener("click", async () => {
      if (!confirm(`Delete project ${b.dataset.id}?`)) return;
      const r = await api("DELETE", "/projects/" + encodeURIComponent(b.dataset.id));
      if (r.status === 204) location.reload();
      else alert((r.json && r.json.error) || "delete failed: " + r.status);
    }));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = { servers: $$('input[name="server"]:checked', form).map((c) => c.value) };
      if (form.name.value.trim()) body.name = form.name.value.trim();
      let r;
      if (editing) r = await api("PUT", "/projects/" + encodeURIComponent(editing), body);
      else {
        if (form.id.value.trim()) body.id = form.id.value.trim();
        r = await api("POST", "/projects", body);
      }
      if (r.status === 200 || r.status === 201) { dlg.close(); location.reload(); return; }
      showErrors(form, r.json);
    });
  }

  // ---- Sessions --------------------------------------------------------------------
  function initSessions() {
    $$(".end-session").forEach((b) => b.addEventListener("click", async () => {
      b.disabled = true;
      const r = await api("DELETE", "/sessions/" + encodeURIComponent(b.dataset.id));
      if (r.status === 204 || r.status === 404) {
        announce("Session ended");
        if (b.dataset.after) { location.href = b.dataset.after; return; }
        const row = b.closest("tr");
        if (row) row.remove();
        if (!$("#sessions-table tbody tr")) location.reload();
      } else {
        b.disabled = false;
        alert((r.json && r.json.error) || "ending the session failed: " + r.status);
      }
    }));
  }

  // ---- Plugins ---------------------------------------------------------------------
  function initPlugins() {
    $$(".restart-plugin").forEach((b) => b.addEventListener("click", async () => {
      const alert = $("#plugin-alert");
      alert.hidden = true;
      b.disabled = true;
      const r = await api("POST", "/plugins/" + encodeURIComponent(b.dataset.name) + "/restart");
      if (r.status === 202) { announce(`Plugin ${b.dataset.name} restarted`); location.reload(); return; }
      b.disabled = false;
      alert.textContent = (r.json && r.json.error) || "failed: " + r.status;
      alert.hidden = false;
    }));
  }

  // ---- Integrity -------------------------------------------------------------------
  // Approve or Reject one definition (data-kind, data-name and data-hash: the version
  // shown) or everything of a server the page shows waiting (neither), then read the
  // page again. An approval names the fingerprint of each version shown, so that one the
  // upstream served since stays held (409: the page is read again to show it). The names
  // are sent as data, never written into the page.
  function shownHeld(server) {
    const sec = $$(".integrity-server").find((s) => s.dataset.server === server);
    return sec ? $$("article.held-def", sec).map((a) => ({ kind: a.dataset.kind, name: a.dataset.name, hash: a.dataset.hash })) : [];
  }
  function initIntegrity() {
    const box = $("#integrity-alert");
    const buttons = $$(".integrity-decide");
    buttons.forEach((b) => b.addEventListener("click", async () => {
      box.hidden = true;
      const action = b.dataset.action === "reject" ? "reject" : "approve";
      let body = {};
      if (b.dataset.kind) body = { kind: b.dataset.kind, name: b.dataset.name, hash: b.dataset.hash };
      else if (action === "approve") body = { definitions: shownHeld(b.dataset.server) };
      buttons.forEach((x) => { x.disabled = true; });
      const r = await api("POST", "/integrity/" + encodeURIComponent(b.dataset.server) + "/" + action, body);
      // 404: nothing of it waits any more (decided meanwhile): the page shows what is.
      if (r.status === 200 || r.status === 404) {
        announce(action === "approve" ? "Approved" : "Rejected");
        location.reload();
        return;
      }
      buttons.forEach((x) => { x.disabled = false; });
      box.textContent = (r.json && r.json.error) || "failed: " + r.status;
      box.hidden = false;
      box.setAttribute("tabindex", "-1");
      box.focus();
    }));
  }

  // ---- Agents ----------------------------------------------------------------------
  function docOf(form) {
    const d = JSON.parse(form.dataset.doc);
    for (const k of ["id", "source", "file", "created_at", "updated_at", "version", "etag"]) delete d[k];
    return d;
  }
  function initAgents() {
    $$(".agent-form").forEach((form) => {
      const doc = docOf(form);
      const uses = {};
      for (const u of doc.servers || []) {
        if (typeof u === "string") uses[u] = ""; else uses[u.name] = u.mode || "";
      }
      // Absent (or null) servers mean the defaults; a list, even an empty one, means
      // exactly those (docs/config.md, "An agent's server list").
      form.servers_from.value = Array.isArray(doc.servers) ? "list" : "defaults";
      $$("tr[data-server]", form).forEach((tr) => {
        const s = tr.dataset.server;
        $('input[name="use"]', tr).checked = s in uses;
        // A mode the selector does not offer is added to it, so a save keeps it.
        const sel = $('select[name="mode"]', tr), m = uses[s] || "";
        if (m && !$$("option", sel).some((o) => o.value === m)) sel.add(new Option(m, m));
        sel.value = m;
      });
      form.allow.value = ((doc.tools || {}).allow || []).join("\n");
      form.deny.value = ((doc.tools || {}).deny || []).join("\n");
      form.executor.value = doc.executor || "";
      form.handshake.value = doc.handshake || "";
      form.pinned_tools.value = (doc.pinned_tools || []).join("\n");
      const cs = doc.connection_scope;
      form.connection_scope.value = cs === undefined ? "" : (cs.length ? cs.join("\n") : "-");
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const d = docOf(form);
        d.enabled = form.enabled.checked;
        d.read_only = form.read_only.checked;
        d.servers = $$("tr[data-server]", form).filter((tr) => $('input[name="use"]', tr).checked).map((tr) => {
          const m = $('select[name="mode"]', tr).value;
          return m ? { name: tr.dataset.server, mode: m } : tr.dataset.server;
        });
        if (form.servers_from.value === "defaults") delete d.servers;
        const allow = lines(form.allow.value), deny = lines(form.deny.value);
        d.tools = {};
        if (allow.length) d.tools.allow = allow;
        if (deny.length) d.tools.deny = deny;
        if (!allow.length && !deny.length) delete d.tools;
        if (form.executor.value) d.executor = form.executor.value; else delete d.executor;
        if (form.handshake.value) d.handshake = form.handshake.value; else delete d.handshake;
        const pinned = lines(form.pinned_tools.value);
        if (pinned.length) d.pinned_tools = pinned; else delete d.pinned_tools;
        const scope = lines(form.connection_scope.value);
        if (!scope.length) delete d.connection_scope;
        else d.connection_scope = scope.filter((id) => id !== "-");
        const r = await api("PUT", "/agents/" + encodeURIComponent(form.dataset.id), d);
        if ((r.status === 200 || r.status === 201) && showWarnings(form, r.json)) { announce("Agent saved, with warnings"); return; }
        if (r.status === 200 || r.status === 201) { announce("Agent saved"); location.reload(); return; }
        showErrors(form, r.json, "agents." + form.dataset.id + ".");
      });
      const del = $(".delete-agent", form);
      if (del) del.addEventListener("click", async () => {
        if (!confirm(`Delete agent ${form.dataset.id}?`)) return;
        const r = await api("DELETE", "/agents/" + encodeURIComponent(form.dataset.id));
        if (r.status === 204) location.reload(); else showErrors(form, r.json);
      });
    });
    newEntity("#new-agent", "/agents/", () => ({}));
  }
  function newEntity(sel, path, body) {
    const form = $(sel);
    if (!form) return;
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const id = form.id.value.trim();
      const slot = $('[data-error-for="id"]', form);
      slot.textContent = "";
      if (!id) { slot.textContent = "An ID is required."; return; }
      const r = await api("PUT", path + encodeURIComponent(id), body(form));
      if (r.status === 201 || r.status === 200) { location.reload(); return; }
      slot.textContent = (r.json && r.json.error) || "failed: " + r.status;
    });
  }

  // ---- Executors -------------------------------------------------------------------
  function initExecutors() {
    $$(".executor-form").forEach((form) => {
      const doc = docOf(form);
      const p = doc.mcp_policy || {};
      form.type.value = doc.type || "local_pc";
      for (const k of ["allow_stdio", "allow_http", "allow_sse", "allow_streamable_http"]) form[k].checked = p[k] !== false;
      form.allowlist_servers.value = (p.allowlist_servers || []).join("\n");
      form.denylist_servers.value = (p.denylist_servers || []).join("\n");
      form.env_injection_overrides_server.checked = !!p.env_injection_overrides_server;
      kvSet($('[data-kv="url_rewrite"]', form), p.url_rewrite);
      kvSet($('[data-kv="env_injection"]', form), p.env_injection);
      const warn = $(".both-lists", form);
      const check = () => { warn.hidden = !(lines(form.allowlist_servers.value).length && lines(form.denylist_servers.value).length); };
      form.allowlist_servers.addEventListener("input", check);
      form.denylist_servers.addEventListener("input", check);
      check();
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        clearErrors(form);
        const kv = kvAll(form);
        if (!kv) return;
        for (const [k, v] of Object.entries(kv.url_rewrite || {})) {
          if (!/^https?:\/\//.test(k) || !/^https?:\/\//.test(v)) {
            $('[data-error-for="mcp_policy.url_rewrite"]', form).textContent = `${k} → ${v}: both sides must be http:// or https:// URLs`;
            return;
          }
        }
        const d = docOf(form);
        d.type = form.type.value;
        const np = {};
        for (const k of ["allow_stdio", "allow_http", "allow_sse", "allow_streamable_http"]) np[k] = form[k].checked;
        const al = lines(form.allowlist_servers.value), dl = lines(form.denylist_servers.value);
        if (al.length) np.allowlist_servers = al;
        if (dl.length) np.denylist_servers = dl;
        if (kv.url_rewrite) np.url_rewrite = kv.url_rewrite;
        if (kv.env_injection) np.env_injection = kv.env_injection;
        if (form.env_injection_overrides_server.checked) np.env_injection_overrides_server = true;
        d.mcp_policy = np;
        const r = await api("PUT", "/executors/" + encodeURIComponent(form.dataset.id), d);
        if (r.status === 200 || r.status === 201) { announce("Executor saved"); location.reload(); return; }
        showErrors(form, r.json, "executors." + form.dataset.id + ".");
      });
      const del = $(".delete-executor", form);
      if (del) del.addEventListener("click", async () => {
        if (!confirm(`Delete executor ${form.dataset.id}?`)) return;
        const r = await api("DELETE", "/executors/" + encodeURIComponent(form.dataset.id));
        if (r.status === 204) location.reload(); else showErrors(form, r.json);
      });
    });
    newEntity("#new-executor", "/executors/", (f) => ({ type: f.type.value }));
  }

  // The tokenized sign-in address (mcpgw ui) serves a form holding the token: it is
  // posted from here, same-origin, so that only a POST signs in (or counts as a wrong
  // credential) and a request another site makes the browser send does neither.
  const auto = $("form[data-autosubmit]");
  if (auto) auto.submit();

  const page = document.body.dataset.page;
  if (page === "servers") initServers();
  if (page === "tasks") initTasks();
  if (page === "projects") initProjects();
  if (page === "sessions" || page === "session") initSessions();
  if (page === "agents") initAgents();
  if (page === "plugins") initPlugins();
  if (page === "executors") initExecutors();
  if (page === "integrity") initIntegrity();
})();

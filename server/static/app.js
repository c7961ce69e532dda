"use strict";
// The page of relay-baton serve. Every text that came from a model, a tool,
// a transcript, a repository or a chat message is shown with textContent,
// through visible(): no markup, and nothing that changes how text reads.
// An agent's reply is Markdown made into elements (markdown()), its text
// set the same way.
const $ = (id) => document.getElementById(id);

// visible is render.Inert (events/render/inert.go) for the page: C0 controls
// but newline and tab, and DEL, in caret notation (ESC is ^[, BEL ^G, CR ^M,
// DEL ^?); C1 controls as \u009b; bidi controls (U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069) and zero-width characters (U+200B-U+200D,
// U+2060, U+FEFF) as <U+202E>. A right-to-left override in a message is
// shown where it is, and overrides nothing. The server already sends most
// text through Inert; this holds for every string, whatever route it came
// by, and leaves Inert's output as it is.
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;
function visible(s) {
  if (s == null) return "";
  return String(s).replace(HIDDEN, (c) => {
    const n = c.charCodeAt(0);
    if (n < 0x20 || n === 0x7f) return "^" + String.fromCharCode(n ^ 0x40);
    if (n <= 0x9f) return "\\u00" + n.toString(16).padStart(2, "0");
    return "<U+" + n.toString(16).toUpperCase().padStart(4, "0") + ">";
  });
}
// show sets an element's text, visibly.
function show(el, s) { el.textContent = visible(s); }

// ---- Markdown, as DOM nodes ----
// markdown renders an agent's reply (Markdown as models write it:
// paragraphs, headings, emphasis, inline code, fenced code blocks, lists,
// block quotes, links) as elements made with createElement and text set
// with textContent: no markup in the text is ever parsed as HTML (a
// <script> or an <img onerror> shows as itself), and the text passes
// through visible() first. A link shows its target beside its text, and
// opens (in a new tab, without a referrer or an opener) only when it is
// http, https or mailto; any other (javascript:, data:, a relative path
// to this server) is text.
const MD_DEPTH = 6; // nesting of quotes, lists and emphasis
const MD_INLINE_MAX = 20000; // a longer paragraph is shown as plain text
const RE_FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const RE_FENCE_END = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const RE_HEAD = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RE_HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const RE_QUOTE = /^ {0,3}> ?(.*)$/;
const RE_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const RE_ESCAPABLE = /[!-/:-@[-`{-~]/;

function markdown(text) {
  const box = document.createElement("div");
  box.className = "md";
  mdBlocks(box, visible(String(text == null ? "" : text).replace(/\r\n/g, "\n")).split("\n"), 0);
  return box;
}
function mdFence(line) {
  const m = RE_FENCE.exec(line);
  return m && !(m[1][0] === "`" && m[2].includes("`")) ? m : null;
}
function mdStartsBlock(line) {
  return !!(mdFence(line) || RE_HEAD.test(line) || RE_HR.test(line) || RE_QUOTE.test(line) || RE_ITEM.test(line));
}
function mdBlocks(parent, lines, depth) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    let m;
    if ((m = mdFence(line))) {
      const body = [];
      for (i++; i < lines.length; i++) {
        const c = RE_FENCE_END.exec(lines[i]);
        if (c && c[1][0] === m[1][0] && c[1].length >= m[1].length) { i++; break; }
        body.push(lines[i]);
      }
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      code.textContent = body.join("\n");
      pre.appendChild(code);
      parent.appendChild(pre);
      continue;
    }
    if ((m = RE_HEAD.exec(line))) {
      const h = document.createElement("h" + m[1].length);
      mdInline(h, m[2] || "", depth);
      parent.appendChild(h);
      i++;
      continue;
    }
    if (RE_HR.test(line)) { parent.appendChild(document.createElement("hr")); i++; continue; }
    if (depth < MD_DEPTH && RE_QUOTE.test(line)) {
      const inner = [];
      for (; i < lines.length && lines[i].trim(); i++) {
        const q = RE_QUOTE.exec(lines[i]);
        if (q) inner.push(q[1]);
        else if (!mdStartsBlock(lines[i])) inner.push(lines[i]); // a lazy continuation of the quote's paragraph
        else break;
      }
      const bq = document.createElement("blockquote");
      mdBlocks(bq, inner, depth + 1);
      parent.appendChild(bq);
      continue;
    }
    if (depth < MD_DEPTH && RE_ITEM.test(line)) { i = mdList(parent, lines, i, depth); continue; }
    const para = [];
    for (; i < lines.length && lines[i].trim() && !(para.length && mdStartsBlock(lines[i])); i++) para.push(lines[i].trim());
    const p = document.createElement("p");
    mdInline(p, para.join("\n"), depth);
    parent.appendChild(p);
  }
}
// mdList renders the list starting at lines[i] and returns the index of
// the first line after it. An item goes on over lines indented past its
// marker, and over blank lines when an indented line follows them.
function mdList(parent, lines, i, depth) {
  const ordered = (m) => /\d/.test(m[2][0]);
  const first = RE_ITEM.exec(lines[i]);
  const list = document.createElement(ordered(first) ? "ol" : "ul");
  if (ordered(first)) { const n = parseInt(first[2], 10); if (n !== 1) list.start = n; }
  parent.appendChild(list);
  // lead is a line's indentation in columns (a tab is 4); dedent takes
  // up to n columns of it off.
  const lead = (l) => { let n = 0; for (const c of l) { if (c === " ") n++; else if (c === "\t") n += 4; else break; } return n; };
  const dedent = (l, n) => { let k = 0; for (; k < l.length && n > 0 && (l[k] === " " || l[k] === "\t"); k++) n -= l[k] === "\t" ? 4 : 1; return l.slice(k); };
  while (i < lines.length) {
    const m = RE_ITEM.exec(lines[i]);
    if (!m || ordered(m) !== ordered(first)) break;
    const inside = m[1].length + 2; // a line indented this far belongs to the item
    const col = m[1].length + m[2].length + 1;
    const item = [m[3]];
    for (i++; i < lines.length; i++) {
      const l = lines[i];
      if (!l.trim()) {
        let j = i;
        while (j < lines.length && !lines[j].trim()) j++;
        if (j < lines.length && lead(lines[j]) >= inside) { for (; i < j; i++) item.push(""); i--; continue; }
        break;
      }
      if (lead(l) >= inside) { item.push(dedent(l, col)); continue; }
      if (mdStartsBlock(l)) break;
      item.push(l.trim()); // a lazy continuation of the item's paragraph
    }
    const li = document.createElement("li");
    mdBlocks(li, item, depth + 1);
    list.appendChild(li);
    let j = i;
    while (j < lines.length && !lines[j].trim()) j++;
    const next = j < lines.length ? RE_ITEM.exec(lines[j]) : null;
    if (!next || ordered(next) !== ordered(first)) break;
    i = j;
  }
  return i;
}
// mdInline renders a paragraph's text: backslash escapes, `code`,
// [text](target), <https://...>, **strong**, *emphasis* (and with _).
// Every search for a closing mark remembers where it failed, and link
// targets that do not close spend a budget, so a line of unmatched marks
// takes linear time.
function mdInline(parent, s, depth, inLink) {
  if (s.length > MD_INLINE_MAX || depth > MD_DEPTH) { parent.appendChild(document.createTextNode(s)); return; }
  let buf = "";
  const flush = () => { if (buf) { parent.appendChild(document.createTextNode(buf)); buf = ""; } };
  const failed = {}; // a closing mark not found at or after this index
  const find = (mark, from, ok) => {
    if (failed[mark] !== undefined && from >= failed[mark]) return -1;
    for (let j = s.indexOf(mark, from); j >= 0; j = s.indexOf(mark, j + 1)) if (ok(j)) return j;
    failed[mark] = from;
    return -1;
  };
  let budget = 4 * s.length + 8192; // characters link targets may scan, so unclosed ones take linear time
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\" && i + 1 < s.length && RE_ESCAPABLE.test(s[i + 1])) { buf += s[i + 1]; i += 2; continue; }
    if (c === "`") {
      let n = 1;
      while (s[i + n] === "`") n++;
      const run = "`".repeat(n);
      const end = find(run, i + n, (j) => s[j - 1] !== "`" && s[j + n] !== "`");
      if (end < 0) { buf += run; i += n; continue; }
      let t = s.slice(i + n, end);
      if (t.length > 2 && t[0] === " " && t[t.length - 1] === " " && t.trim()) t = t.slice(1, -1);
      flush();
      const code = document.createElement("code");
      code.textContent = t;
      parent.appendChild(code);
      i = end + n;
      continue;
    }
    if (c === "[" && !inLink) {
      const close = find("]", i + 1, (j) => s[j - 1] !== "\\");
      let l = null;
      if (close > i && s[close + 1] === "(" && budget > 0) {
        l = mdTarget(s, close + 2);
        if (!l) budget -= Math.min(2048, s.length - close);
      }
      if (l) { flush(); mdAnchor(parent, s.slice(i + 1, close), l.url, depth); i = l.end; continue; }
    }
    if (c === "<" && !inLink) {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]{1,2048})>/i.exec(s.slice(i, i + 2060));
      if (m) { flush(); mdAnchor(parent, null, m[1], depth); i += m[0].length; continue; }
    }
    if (c === "*" || c === "_") {
      const d = s[i + 1] === c ? c + c : c;
      const after = s[i + d.length];
      const word = (x) => x !== undefined && /[\p{L}\p{N}]/u.test(x);
      const opens = after !== undefined && !/\s/.test(after) && after !== c && !(c === "_" && word(s[i - 1]));
      const end = opens ? find(d, i + d.length + 1, (j) => !/\s/.test(s[j - 1]) && s[j - 1] !== c && s[j + d.length] !== c && !(c === "_" && word(s[j + d.length]))) : -1;
      if (end < 0) { buf += d; i += d.length; continue; }
      flush();
      const em = document.createElement(d.length === 2 ? "strong" : "em");
      mdInline(em, s.slice(i + d.length, end), depth + 1, inLink);
      parent.appendChild(em);
      i = end + d.length;
      continue;
    }
    buf += c;
    i++;
  }
  flush();
}
// mdTarget reads a link's (target "title") from s at i; null when it is
// not one.
function mdTarget(s, i) {
  let j = i;
  while (s[j] === " ") j++;
  let url = "";
  if (s[j] === "<") {
    const e = s.indexOf(">", j);
    if (e < 0 || e - j > 2048) return null;
    url = s.slice(j + 1, e);
    j = e + 1;
  } else {
    let depth = 0;
    const from = j;
    for (; j < s.length && j - from <= 2048 && !/\s/.test(s[j]); j++) {
      if (s[j] === "(") depth++;
      else if (s[j] === ")") { if (depth === 0) break; depth--; }
    }
    url = s.slice(from, j);
  }
  while (s[j] === " " || s[j] === "\n") j++;
  if (s[j] === '"' || s[j] === "'") {
    const e = s.indexOf(s[j], j + 1);
    if (e < 0 || e - j > 2048) return null;
    j = e + 1;
    while (s[j] === " ") j++;
  }
  return s[j] === ")" ? { url, end: j + 1 } : null;
}
// mdAnchor shows a link: its text and, beside it, its target. Only an
// http, https or mailto target is clickable.
function mdAnchor(parent, label, url, depth) {
  let ok = false;
  if (/^(https?:\/\/|mailto:)/i.test(url)) {
    try { ok = ["http:", "https:", "mailto:"].includes(new URL(url).protocol); } catch (e) {}
  }
  const node = document.createElement(ok ? "a" : "span");
  if (ok) { node.href = url; node.target = "_blank"; node.rel = "noopener noreferrer"; }
  else { node.className = "md-nolink"; node.title = "not opened: only http, https and mailto links are"; }
  if (label == null || label === url) node.textContent = url;
  else mdInline(node, label, depth + 1, true);
  parent.appendChild(node);
  if (label != null && label !== url) {
    const t = document.createElement("span");
    t.className = "md-url";
    t.textContent = " (" + url + ")";
    parent.appendChild(t);
  }
}

// noSecret is what the page says when the server refuses it 401: the
// secret in its cookie is not this server's (serve was restarted).
const noSecret = "This page does not have the secret of the running relay-baton serve (it makes a new one each start): open the whole address it printed.";
const state = { target: "", targets: [], es: null, reachable: false, seen: new Set() };

function draftKey() { return "relay-baton.draft." + (state.target || "none"); }
function saveDraft() { try { sessionStorage.setItem(draftKey(), $("text").value); } catch (e) {} }
function loadDraft() { try { $("text").value = sessionStorage.getItem(draftKey()) || ""; } catch (e) {} }

function age(ms) {
  if (ms == null || ms < 0) return "";
  const s = Math.round(ms / 1000);
  if (s < 1) return "<1s";
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + (s % 60 ? " " + (s % 60) + "s" : "");
  return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
}
function hhmmss(iso) {
  const d = iso ? new Date(iso) : new Date();
  return isNaN(d) || d.getFullYear() < 2000 ? "" : d.toLocaleTimeString([], { hour12: false });
}

function setReachable(ok, why) {
  state.reachable = ok;
  $("conn").className = ok ? "ok" : "down";
  $("conn").textContent = ok ? "server connected" : "server unreachable";
  updateComposer(why);
}
function updateComposer(why) {
  const t = state.targets.find((x) => x.id === state.target);
  let reason = "";
  if (!state.reachable) reason = why || "The relay-baton server is not reachable: start it with `relay-baton serve`.";
  else if (!t) reason = "No session selected. Start Claude Code with the relay-baton hooks installed (`relay-baton hook install`).";
  else if (!t.chatCapable) reason = "This session is not chat-capable: it started before `relay-baton hook install`.";
  $("text").disabled = $("send").disabled = !!reason;
  show($("reason"), reason);
}

function addMsg(role, text, meta, id) {
  if (id && state.seen.has(role + ":" + id)) return null;
  if (id) state.seen.add(role + ":" + id);
  const div = document.createElement("div");
  div.className = "msg " + role;
  const who = document.createElement("div");
  who.className = "who";
  who.textContent = role === "user" ? "you" : role === "agent" ? "session" : "relay-baton";
  const m = document.createElement("span");
  m.className = "meta";
  show(m, meta || "");
  who.appendChild(m);
  const body = document.createElement("div");
  body.className = "body";
  if (role === "agent") { div.reply = text || ""; body.appendChild(markdown(div.reply)); }
  else show(body, text);
  div.append(who, body);
  const log = $("log");
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  log.appendChild(div);
  if (atBottom) log.scrollTop = log.scrollHeight;
  return div;
}
function addTool(text) {
  const div = document.createElement("div");
  div.className = "tool";
  show(div, text.startsWith("✓ ") ? text : "▸ " + text);
  $("log").appendChild(div);
  $("log").scrollTop = $("log").scrollHeight;
}
let currentReply = null;
function setActivity(text, busy) {
  const a = $("activity");
  a.className = busy ? "pulse" : "idle";
  show(a, text);
}

function renderData() {
  const t = state.targets.find((x) => x.id === state.target);
  if (!t) { $("capable").textContent = "no target"; $("queue").textContent = ""; $("last").textContent = ""; return; }
  show($("capable"), t.chatCapable ? (t.state ? t.state : "chat-capable") : "not chat-capable");
  $("queue").textContent = t.queueDepth ? `${t.queueDepth} queued · oldest ${age(t.oldestAgeMs || 0)}` : "queue empty";
  $("last").textContent = t.lastActivity ? "last activity " + hhmmss(t.lastActivity) : "";
}

async function refreshTargets() {
  try {
    const r = await fetch("/api/targets", { cache: "no-store" });
    if (r.status === 401) { state.targets = []; setReachable(false, noSecret); return; }
    if (!r.ok) throw new Error("HTTP " + r.status);
    const body = await r.json();
    state.targets = body.targets || [];
    const sel = $("target");
    const keep = state.target;
    sel.textContent = "";
    for (const t of state.targets) {
      const o = document.createElement("option");
      o.value = t.id;
      show(o, (t.lead ? "★ lead · " : "") + t.id.slice(0, 8) + (t.cwd ? " · " + t.cwd : ""));
      sel.appendChild(o);
    }
    if (!state.target || !state.targets.some((t) => t.id === state.target)) {
      const saved = (() => { try { return sessionStorage.getItem("relay-baton.target"); } catch (e) { return null; } })();
      const pick = state.targets.find((t) => t.id === saved) || state.targets[0];
      state.target = pick ? pick.id : "";
    }
    sel.value = state.target;
    setReachable(true);
    renderData();
    if (state.target !== keep) switchTarget();
  } catch (e) {
    setReachable(false);
  }
}

async function loadLog() {
  $("log").textContent = "";
  state.seen.clear();
  if (!state.target) return;
  try {
    const r = await fetch("/api/log?session=" + encodeURIComponent(state.target), { cache: "no-store" });
    if (!r.ok) return;
    const body = await r.json();
    for (const e of body.entries || []) addMsg(e.role === "user" ? "user" : "agent", e.text, hhmmss(e.at), e.id);
  } catch (e) {}
}

function connectEvents() {
  if (state.es) state.es.close();
  state.es = null;
  if (!state.target) return;
  const es = new EventSource("/api/events?session=" + encodeURIComponent(state.target));
  state.es = es;
  es.onopen = () => setReachable(true);
  es.onerror = () => { if (es.readyState === EventSource.CLOSED) setReachable(false, "Lost the event stream; reload when the server is back."); };
  const on = (name, fn) => es.addEventListener(name, (ev) => { let d = {}; try { d = JSON.parse(ev.data); } catch (e) {} fn(d); });
  on("queued", (d) => { if (d.depth > 0) setActivity(`queued (${d.ahead || 0} ahead)`, true); refreshTargets(); });
  on("delivered", (d) => {
    const line = `delivered via ${d.lane || "?"} at ${hhmmss(d.at)}`;
    addTool("✓ " + line);
    setActivity(line, true);
    currentReply = null;
    refreshTargets();
  });
  on("thinking", () => setActivity("thinking", true));
  on("activity", (d) => { addTool((d.tool || "tool") + (d.detail ? " — " + d.detail : "")); setActivity("working: " + (d.tool || ""), true); });
  on("text", (d) => {
    if (!currentReply) currentReply = addMsg("agent", "", hhmmss(d.at));
    if (currentReply) {
      currentReply.reply += (currentReply.reply ? "\n\n" : "") + (d.text || "");
      currentReply.querySelector(".body").replaceChildren(markdown(currentReply.reply));
    }
    $("log").scrollTop = $("log").scrollHeight;
  });
  on("end_turn", () => { setActivity("end of turn", false); currentReply = null; });
  on("notice", (d) => addMsg("notice", d.text || "", hhmmss(d.at)));
}

function switchTarget() {
  try { sessionStorage.setItem("relay-baton.target", state.target); } catch (e) {}
  loadDraft();
  renderData();
  updateComposer();
  loadLog();
  connectEvents();
}

// streamOpen resolves once the session's event stream is open: the server
// opens it when its watch has taken its starting points, so the delivery
// and the reply of a message sent after it are shown. A stream that does
// not open within 10 s does not hold the message back (its reply is in the
// log on the next load).
function streamOpen() {
  const es = state.es;
  if (!es || es.readyState === EventSource.OPEN) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 10000);
    es.addEventListener("open", () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

async function send() {
  const text = $("text").value;
  if (!text.trim() || $("send").disabled) return;
  $("send").disabled = true;
  try {
    await streamOpen();
    const r = await fetch("/api/send", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ session: state.target, text }),
    });
    const body = await r.json().catch(() => ({}));
    if (r.status === 401) { show($("reason"), noSecret); return; }
    if (!r.ok) { show($("reason"), body.error || ("send failed: HTTP " + r.status)); return; }
    addMsg("user", text, hhmmss(body.createdAt), body.id);
    $("text").value = "";
    saveDraft();
    setActivity(`queued (${body.ahead || 0} ahead)`, true);
    refreshTargets();
  } catch (e) {
    setReachable(false, "Could not reach the server to send; your draft is kept.");
  } finally {
    updateComposer();
  }
}

$("target").addEventListener("change", () => { if ($("target").value === state.target) return; state.target = $("target").value; switchTarget(); });
$("text").addEventListener("input", saveDraft);
$("text").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(); } });
$("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });

// ---- the Agent Room: timeline and context (read-only) ----
const ROLES = ["user", "claude", "codex", "orchestrator", "relay-baton"];
const KINDS = ["message", "command", "prompt_preview", "agent_run", "plan", "execute", "review", "diagnose",
  "handoff", "status", "budget", "audit", "chat_sent", "chat_delivered", "chat_reply", "changes"];
const room = { events: [], before: -1, more: false, end: 0, es: null, loading: false, enabled: true };
for (const r of ROLES) { const o = document.createElement("option"); o.value = o.textContent = r; $("f-role").appendChild(o); }
for (const k of KINDS) { const o = document.createElement("option"); o.value = o.textContent = k; $("f-kind").appendChild(o); }

function dur(ns) { return ns == null ? "" : age(ns / 1e6); }
function filterQuery() {
  const p = new URLSearchParams();
  if ($("f-role").value) p.set("role", $("f-role").value);
  if ($("f-kind").value) p.set("kind", $("f-kind").value);
  return p;
}
function keeps(e) {
  return (!$("f-role").value || e.role === $("f-role").value) && (!$("f-kind").value || e.kind === $("f-kind").value);
}
// A turn starts with what the user did: a command or a message (not the
// confirmation that answers a preview).
function startsTurn(e) {
  return e.role === "user" && (e.kind === "command" || e.kind === "message") && !(e.meta && "confirmed" in e.meta);
}
// isReply: an agent's answer, shown as Markdown (the rest of the log is
// the room's own words and the user's, shown as they are).
function isReply(e) {
  return (e.role === "claude" || e.role === "codex" || e.role === "orchestrator") && (e.kind === "message" || e.kind === "chat_reply");
}
function evNode(e) {
  const d = document.createElement("div");
  d.className = "ev r-" + (ROLES.includes(e.role) ? e.role : "other");
  const h = document.createElement("div");
  h.className = "h";
  const who = document.createElement("span");
  who.className = "who";
  const agent = e.meta && typeof e.meta.agent === "string" && e.meta.agent !== e.role ? "/" + e.meta.agent : "";
  show(who, e.role + agent);
  const kind = document.createElement("span");
  show(kind, e.kind + " · " + hhmmss(e.ts));
  h.append(who, kind);
  for (const [key, val] of Object.entries(e.refs || {})) {
    if (typeof val !== "string" || val.startsWith(".claude/")) continue; // chat files move; not a document
    if (val.startsWith("/")) continue; // a session's transcript, outside .ai-session: /api/ref refuses it
    const b = document.createElement("button");
    b.type = "button"; b.className = "ref"; show(b, key + ": " + val);
    b.addEventListener("click", () => openRef(val));
    h.appendChild(b);
  }
  const t = document.createElement("div");
  t.className = "t";
  if (isReply(e)) t.appendChild(markdown(e.text || ""));
  else show(t, e.text || "");
  if ((e.text || "").split("\n").length > 6 || (e.text || "").length > 600) {
    d.classList.add("clip");
    t.title = "click to expand";
    t.addEventListener("click", () => d.classList.toggle("clip"));
  }
  d.append(h, t);
  return d;
}
function renderTimeline() {
  const box = $("turns");
  box.textContent = "";
  let turn = null;
  for (const e of room.events) {
    if (!turn || startsTurn(e)) { turn = document.createElement("div"); turn.className = "turn"; box.appendChild(turn); }
    turn.appendChild(evNode(e));
  }
  $("more").hidden = !room.more;
  $("tl-status").textContent = room.events.length ? room.events.length + " events shown" + (room.more ? " (scroll up for earlier)" : "") : "no events yet";
}
function appendLive(e) {
  if (!keeps(e)) return;
  room.events.push(e);
  const tl = $("timeline");
  const atBottom = tl.scrollHeight - tl.scrollTop - tl.clientHeight < 40;
  const box = $("turns");
  let turn = box.lastElementChild;
  if (!turn || startsTurn(e)) { turn = document.createElement("div"); turn.className = "turn"; box.appendChild(turn); }
  turn.appendChild(evNode(e));
  $("tl-status").textContent = room.events.length + " events shown" + (room.more ? " (scroll up for earlier)" : "");
  if (atBottom) tl.scrollTop = tl.scrollHeight;
}
async function loadPage(first) {
  if (room.loading || (!first && !room.more)) return;
  room.loading = true;
  try {
    const p = filterQuery();
    if (!first) p.set("before", room.before);
    const r = await fetch("/api/timeline?" + p, { cache: "no-store" });
    if (r.status === 401) { $("tl-status").textContent = noSecret; return; }
    if (r.status === 404) { room.enabled = false; $("tl-status").textContent = "no Agent Room here (serve from inside a git repository)"; return; }
    if (!r.ok) throw new Error("HTTP " + r.status);
    const pg = await r.json();
    const evs = (pg.events || []).map((x) => x.event);
    const tl = $("timeline");
    const oldH = tl.scrollHeight;
    room.events = first ? evs : evs.concat(room.events);
    room.before = pg.before; room.more = pg.more;
    if (first) room.end = pg.end;
    renderTimeline();
    if (first) tl.scrollTop = tl.scrollHeight; else tl.scrollTop += tl.scrollHeight - oldH;
    if (first) connectRoom();
  } catch (e) {
    $("tl-status").textContent = "timeline not reachable: is `relay-baton serve` running?";
  } finally {
    room.loading = false;
  }
}
function renderContext(c) {
  show($("ctx-agent"), (c.activeAgent || "?") + (c.mode === "orchestrator" ? " (orchestrator lane)" : " (agent room)"));
  const plan = $("ctx-plan");
  if (!c.plan) { plan.textContent = "none"; plan.className = "warn"; }
  else {
    const miss = c.planMissingSections || [];
    show(plan, dur(c.planAgeNs || 0) + " old, gate: " + (miss.length ? "lacks " + miss.join(", ") : "ok"));
    plan.className = miss.length ? "warn" : "ok";
  }
  const b = $("ctx-budget");
  show(b, (c.budgetRatio || 0).toFixed(2) + " " + (c.diet || "") + " (stops at 0.95)");
  b.className = c.budgetRatio >= 0.95 ? "bad" : c.budgetRatio >= 0.75 ? "warn" : "ok";
  $("ctx-changed").textContent = c.changedFiles < 0 ? "unknown" : c.changedFiles + (c.changedFiles === 1 ? " file" : " files");
  const l = c.lastRun;
  $("ctx-last").textContent = l ? visible( `${l.agent} /${l.command} ${l.cancelled ? "cancelled" : "exit " + l.exitCode} ${dur(l.durationNs)}, ${dur(c.lastRunAgoNs || 0)} ago`) : "none";
  $("ctx-orch").textContent = c.target ? visible(c.target.slice(0, 8)) + " · " + (c.queueDepth ? c.queueDepth + " queued, oldest " + dur(c.queueOldestNs) : "queue empty") : "none";
  // The executor run waiting in its worktree, as the terminal's panel and
  // /status say it ("3 files changed, not applied"), with its folder.
  const run = $("ctx-run");
  if (c.pendingRun) {
    show(run, c.pendingRun + (c.pendingRunWorktree ? " · worktree " + c.pendingRunWorktree : ""));
    run.className = "warn";
  } else { run.textContent = "none"; run.className = ""; }
  // What each run the log records cost, and the total (the words /costs
  // uses, made by the server).
  const k = c.costs || {};
  show($("ctx-cost-total"), k.runs ? k.text : "no agent run yet");
  const list = [];
  if (k.earlier) list.push("(" + k.earlier + (k.earlier === 1 ? " earlier run" : " earlier runs") + " not listed)");
  for (const r of k.latest || []) list.push(r.text);
  $("ctx-cost-runs").replaceChildren(...list.map((t) => { const li = document.createElement("li"); show(li, t); return li; }));
  const h = $("ctx").offsetHeight;
  if (h) document.documentElement.style.setProperty("--ctxh", h + "px");
}
function connectRoom() {
  if (room.es) room.es.close();
  const es = new EventSource("/api/room/stream?from=" + room.end);
  room.es = es;
  es.addEventListener("timeline", (ev) => { try { appendLive(JSON.parse(ev.data).event); } catch (e) {} });
  es.addEventListener("context", (ev) => { try { renderContext(JSON.parse(ev.data)); } catch (e) {} });
  es.onopen = () => {
    // After an interruption the stream would start again from the old end:
    // reload the newest page instead, so nothing is shown twice or missed.
    if (room.broken) { room.broken = false; es.close(); loadPage(true); }
  };
  es.onerror = () => {
    room.broken = true;
    $("tl-status").textContent = es.readyState === EventSource.CLOSED
      ? "timeline not reachable: the server is gone; reload when it is back"
      : "timeline not reachable: reconnecting to relay-baton serve…";
  };
}
async function openRef(name) {
  show($("refname"), ".ai-session/" + name);
  $("reftext").textContent = "loading…";
  $("refview").classList.add("open");
  try {
    const r = await fetch("/api/ref?name=" + encodeURIComponent(name), { cache: "no-store" });
    const text = await r.text();
    if (r.status === 401) { show($("reftext"), noSecret); return; }
    if (!r.ok) { let m = text; try { m = JSON.parse(text).error; } catch (e) {} show($("reftext"), m); return; }
    show($("reftext"), text);
  } catch (e) { $("reftext").textContent = "not reachable"; }
}
$("ctx-costs").addEventListener("toggle", () => {
  const h = $("ctx").offsetHeight;
  if (h) document.documentElement.style.setProperty("--ctxh", h + "px");
});
$("refclose").addEventListener("click", () => $("refview").classList.remove("open"));
$("more").addEventListener("click", () => loadPage(false));
$("timeline").addEventListener("scroll", () => { if ($("timeline").scrollTop < 60) loadPage(false); });
for (const id of ["f-role", "f-kind"]) $(id).addEventListener("change", () => { room.more = false; loadPage(true); });
loadPage(true);

// The room's composer: the page's second frontend of the room's engine
// (relay-baton serve hosts one). A line goes to POST /api/room/run; what
// the room prints, and the preview that waits, come back on the console
// stream. Run, Edit and Cancel answer the preview by its id and hash: a
// click on a preview that is no longer the one waiting is refused.
const desk = { es: null, seq: 0, st: null, editing: false, heldPoll: 0 };
const CONSOLE_MAX = 200000;
// A diff /diff showed (kind "diff", made inert by the server) gets one
// span per line, classed by what the line is: added, removed, a hunk's
// head, a file's head. Every line is still text (textContent).
function diffClass(line) {
  if (line.startsWith("diff --git ") || line.startsWith("+++ ") || line.startsWith("--- ")) return "dfile";
  if (line.startsWith("@@")) return "dhunk";
  if (line.startsWith("+")) return "dadd";
  if (line.startsWith("-")) return "ddel";
  return "";
}
function appendConsole(text, kind) {
  const c = $("console");
  const atBottom = c.scrollHeight - c.scrollTop - c.clientHeight < 40;
  if (kind === "diff") {
    const box = document.createElement("span");
    box.className = "diff";
    for (const line of visible(text).split(/(?<=\n)/)) {
      const s = document.createElement("span");
      s.className = diffClass(line);
      s.textContent = line;
      box.appendChild(s);
    }
    c.appendChild(box);
  } else if (kind === "md") {
    c.appendChild(markdown(text)); // an agent's reply: elements built from text, never HTML
  } else {
    c.appendChild(document.createTextNode(visible(text)));
  }
  while (c.childNodes.length > 1 && c.textContent.length > CONSOLE_MAX) c.removeChild(c.firstChild);
  if (atBottom) c.scrollTop = c.scrollHeight;
}
function deskError(msg) { show($("room-error"), msg || ""); }
// CHANGE_WORDS: a change preview's question and its Run button.
const CHANGE_WORDS = { apply: ["apply these?", "Apply"], undo: ["take these out?", "Undo"], discard: ["discard the run?", "Discard"], revert: ["revert these files?", "Revert"] };
function renderDesk(st) {
  // A request's answer may come after the stream's newer state: the
  // newest one stays.
  if (desk.st && st.version < desk.st.version) return;
  desk.st = st;
  // Another screen's run is another process's lock: nothing on the
  // stream says when it is let go, so the state is read again each second
  // while it holds.
  clearTimeout(desk.heldPoll);
  if (st.held) desk.heldPoll = setTimeout(refreshDesk, 1000);
  const p = st.preview;
  const card = $("preview");
  if (p) {
    if (card.dataset.id !== p.id) {
      card.dataset.id = p.id;
      desk.editing = false;
      $("preview-editor").hidden = true;
      $("preview-editor").value = p.prompt || "";
      $("preview-edit").textContent = "Edit";
      $("preview-more").open = false;
    }
    card.hidden = false;
    const chat = p.agent === "orchestrator";
    // A change to your files (/apply, /undo): every path is in its text;
    // it is run or cancelled, not edited.
    const change = CHANGE_WORDS[p.change];
    if (change) show($("preview-title"), change[0] + " /" + p.command);
    else show($("preview-title"), (chat ? "send this? " : "run this? ") + "/" + p.command + " → " + p.agent + (p.role ? " (" + p.role + ")" : "") + (p.edited ? " · edited" : ""));
    show($("preview-lane"), p.lane ? "lane: " + p.lane : "");
    show($("preview-text"), p.text);
    show($("preview-all"), p.all);
    $("preview-more").hidden = !!change;
    $("preview-edit").hidden = !!change;
    $("preview-run").textContent = change ? change[1] : chat ? "Send" : "Run";
    $("preview-run").disabled = !!st.held && !chat && !change;
  } else {
    card.hidden = true;
    card.dataset.id = "";
  }
  let status = "";
  if (st.held) status = st.heldText;
  else if (st.busy) status = (p ? "waiting for your answer: " : st.stopped ? "stopping: " : st.running ? "an agent runs: " : "running: ") + st.line;
  else status = "ready · active agent " + (st.active || "?");
  show($("room-status"), status);
  $("room-status").className = st.held ? "hint warn" : "hint";
  $("room-send").disabled = !!st.busy;
  $("room-stop").disabled = !st.busy;
}
async function postJSON(path, body) {
  try {
    const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), cache: "no-store" });
    let d = {};
    try { d = await r.json(); } catch (e) {}
    if (r.status === 401) return { ok: false, error: noSecret };
    return { ok: r.ok, status: r.status, d, error: r.ok ? "" : (d.error || "HTTP " + r.status) };
  } catch (e) {
    return { ok: false, error: "relay-baton serve is not reachable" };
  }
}
async function deskRun() {
  const line = $("room-line").value;
  if (!line.trim()) return;
  deskError("");
  const r = await postJSON("/api/room/run", { line });
  if (!r.ok) { deskError(r.error); return; }
  $("room-line").value = "";
  renderDesk(r.d);
}
async function deskAnswer(action) {
  const st = desk.st;
  if (!st || !st.preview) return;
  const body = { id: st.preview.id, hash: st.hash, action };
  if (action === "edit") body.text = $("preview-editor").value;
  deskError("");
  for (const id of ["preview-run", "preview-edit", "preview-cancel"]) $(id).disabled = true;
  const r = await postJSON("/api/room/answer", body);
  for (const id of ["preview-edit", "preview-cancel"]) $(id).disabled = false;
  $("preview-run").disabled = !!(desk.st && desk.st.held && !(desk.st.preview && desk.st.preview.change));
  if (!r.ok) { deskError(r.error); return; }
  renderDesk(r.d);
}
function connectDesk() {
  if (desk.es) desk.es.close();
  const es = new EventSource("/api/room/console?from=" + desk.seq);
  desk.es = es;
  es.addEventListener("out", (ev) => {
    let out = [];
    try { out = JSON.parse(ev.data); } catch (e) {}
    for (const o of out) { if (o.seq > desk.seq) { desk.seq = o.seq; appendConsole(o.text, o.kind); } }
  });
  es.addEventListener("state", (ev) => { try { renderDesk(JSON.parse(ev.data)); } catch (e) {} });
  es.onerror = () => {
    show($("room-status"), es.readyState === EventSource.CLOSED ? "the room is not reachable: the server is gone; reload when it is back" : "the room is not reachable: reconnecting to relay-baton serve…");
    $("room-send").disabled = $("room-stop").disabled = $("preview-run").disabled = true;
  };
}
async function refreshDesk() {
  try {
    const r = await fetch("/api/room/state", { cache: "no-store" });
    if (r.ok) renderDesk(await r.json());
  } catch (e) {}
}
async function startDesk() {
  try {
    const r = await fetch("/api/room/state", { cache: "no-store" });
    if (!r.ok) return; // 404: this server shows the room without driving it
    $("desk").hidden = false;
    renderDesk(await r.json());
    connectDesk();
  } catch (e) {}
}
$("room-form").addEventListener("submit", (e) => { e.preventDefault(); deskRun(); });
$("room-line").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); deskRun(); return; }
  if (e.key === "Tab" && $("room-line").value.startsWith("/")) { e.preventDefault(); deskComplete(); }
});
// deskComplete completes the composer's line as the terminal's Tab does:
// one completion is taken, several are listed (their common start taken).
async function deskComplete() {
  const line = $("room-line");
  const text = line.value;
  try {
    const r = await fetch("/api/room/complete?text=" + encodeURIComponent(text), { cache: "no-store" });
    if (!r.ok) return;
    const c = (await r.json()).completions || [];
    if (line.value !== text || !c.length) { show($("room-complete"), c.length ? "" : "no completion"); return; }
    let common = c[0];
    for (const x of c) while (!x.startsWith(common)) common = common.slice(0, -1);
    if (common.length > text.length) line.value = common;
    show($("room-complete"), c.length > 1 ? c.map((x) => x.trim()).join("   ") : "");
  } catch (e) {}
}
$("room-stop").addEventListener("click", async () => {
  const r = await postJSON("/api/room/stop", {});
  if (!r.ok) deskError(r.error); else renderDesk(r.d);
});
$("preview-run").addEventListener("click", () => deskAnswer("run"));
$("preview-cancel").addEventListener("click", () => deskAnswer("cancel"));
$("preview-edit").addEventListener("click", () => {
  if (!desk.editing) {
    desk.editing = true;
    $("preview-editor").hidden = false;
    $("preview-edit").textContent = "Preview the edit";
    $("preview-editor").focus();
    return;
  }
  deskAnswer("edit");
});
startDesk();

refreshTargets();
setInterval(refreshTargets, 5000); // soft refresh of the data region only; the composer is never touched

// A page left for another (a reload, a link) closes its streams at once:
// a browser opens only a few connections to one host, and a page kept in
// its back/forward cache would go on holding them. Shown again from that
// cache, it loads afresh.
window.addEventListener("pagehide", () => { for (const es of [state.es, room.es, desk.es]) if (es) es.close(); });
window.addEventListener("pageshow", (e) => { if (e.persisted) location.reload(); });

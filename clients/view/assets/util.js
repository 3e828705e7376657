// util.js: reading the data block, building DOM nodes, formatting numbers, unpacking episode details.
//
// Every value from a record is untrusted. It only ever reaches the page as a text node or as an attribute
// set by name (h() below); nothing here parses a string as HTML.

const DATA = JSON.parse(document.getElementById("toolgym-data").textContent);

function append(el, kids) {
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.setAttribute("class", value);
    else if (key === "text") el.textContent = String(value);
    else if (key === "data") for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

// h("tr", {class: "x", onclick: f}, "text", child...) → an element; strings become text nodes.
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  return append(el, kids);
}

function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// A link to a route of this page (routes are built here from indexes and encoded names, never from raw data).
function link(route, attrs, ...kids) {
  return h("a", {...attrs, href: "#/" + route.map((p) => encodeURIComponent(String(p))).join("/")}, ...kids);
}

function pct(value) {
  if (value === null || value === undefined) return "–";
  const p = value * 100;
  return (Number.isInteger(Math.round(p * 10) / 10) ? p.toFixed(0) : p.toFixed(1)) + "%";
}

function num(value, digits = 1) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
}

function int(value) {
  return value === null || value === undefined ? "–" : Number(value).toLocaleString("en-US");
}

function ci(pair, asPct = false) {
  if (!pair) return "–";
  const f = asPct ? pct : (v) => num(v, 2);
  return f(pair[0]) + " – " + f(pair[1]);
}

function dur(ms) {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1) return ms.toFixed(2) + " ms";
  if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + " ms";
  return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
}

function pts(delta) {
  if (delta === null || delta === undefined) return "–";
  const v = delta * 100;
  return (v > 0 ? "+" : v < 0 ? "−" : "±") + Math.abs(v).toFixed(1) + " pts";
}

function pretty(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch (err) {
    return String(value);
  }
}

function verdict(row) {
  if (row.status === "errored") return {cls: "err", text: "INFRA ERROR"};
  if (row.status === "recorded") return {cls: "rec", text: "RECORDED"};
  return row.passed ? {cls: "pass", text: "PASS"} : {cls: "fail", text: "FAIL"};
}

function badge(cls, text, title) {
  return h("span", {class: "badge " + cls, title: title || null}, text);
}

// A long text in a <pre>, folded into <details> when it has many lines.
function block(text, {open = false, lines = 14, label = null, cls = ""} = {}) {
  const body = h("pre", {class: "code " + cls}, text);
  const count = text.split("\n").length;
  if (count <= lines && text.length < 1600) return label ? h("div", {class: "kv"}, h("span", {class: "k"}, label), body) : body;
  const summary = (label ? label + " · " : "") + count + " lines, " + int(text.length) + " characters";
  return h("details", {class: "fold", open: open}, h("summary", null, summary), body);
}

function section(title, ...kids) {
  return h("section", {class: "card"}, h("h2", null, title), ...kids);
}

function table(headers, rows, attrs) {
  return h(
    "table",
    attrs || {class: "grid-table"},
    h("thead", null, h("tr", null, headers.map((x) => h("th", typeof x === "string" ? null : x.attrs, typeof x === "string" ? x : x.text)))),
    h("tbody", null, rows),
  );
}

// Episode details are inline ("plain") or deflated base64 chunks inflated on first use.
const chunks = new Map();

async function inflate(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(stream).text());
}

async function detailOf(runIndex, episodeIndex) {
  const packed = DATA.runs[runIndex].details;
  if (packed.mode === "plain") return packed.items[episodeIndex];
  const n = Math.floor(episodeIndex / packed.chunk);
  const key = runIndex + ":" + n;
  if (!chunks.has(key)) chunks.set(key, inflate(packed.chunks[n]));
  const items = await chunks.get(key);
  return items[episodeIndex % packed.chunk];
}

function setCrumbs(...parts) {
  const nav = clear(document.getElementById("crumbs"));
  parts.forEach((part, i) => {
    if (i) nav.append(h("span", {class: "sep"}, "›"));
    nav.append(part);
  });
}

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

// "1 episode", "2 episodes": a count with its noun agreeing.
function plural(n, noun, many) {
  return int(n) + " " + (n === 1 ? noun : many || noun + "s");
}

// "refused: not_found" for a failed call; the class alone when the code repeats it ("invalid_arguments").
function errorLabel(error) {
  const cls = String(error.error_class || "error");
  const code = String(error.code || "");
  return !code || code === cls ? cls : cls + ": " + code;
}

// What a cell sorts by: its data-v when it has one (a number when it reads as one), else its text —
// numbers read from the front ("12.5 s", "−50.0 pts", "2 / 4"), "–" and empty as missing (always last).
function sortValue(cell) {
  if (!cell) return null;
  const given = cell.dataset.v;
  const text = given !== undefined ? given : cell.textContent.trim();
  if (text === "" || text === "–" || text === "-") return null;
  const m = text.replace(/[−–]/g, "-").replace(/[±+]/g, "").replace(/,/g, "").match(/^-?\d+(\.\d+)?/);
  return m ? Number(m[0]) : text.toLowerCase();
}

function compareValues(a, b) {
  if (a === null || b === null) return 0;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", {numeric: true});
}

// Sort a table's body rows by column `col`; missing values stay last whichever the direction.
function sortRows(tableEl, col, dir) {
  const body = tableEl.tBodies[0];
  const keyed = [...body.rows].map((row, i) => ({row, i, v: sortValue(row.cells[col])}));
  keyed.sort((a, b) => {
    if (a.v === null || b.v === null) return (a.v === null) - (b.v === null) || a.i - b.i;
    return compareValues(a.v, b.v) * dir || a.i - b.i;
  });
  body.append(...keyed.map((k) => k.row));
}

function markSorted(tableEl, col, dir) {
  tableEl.querySelectorAll("thead th").forEach((th, i) => {
    if (i === col) th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    else th.removeAttribute("aria-sort");
  });
}

// A table whose headers sort it: a click sorts by that column, a second click the other way. With
// `opts.onsort(col, dir)` the caller sorts (data spread over pages); `opts.sorted` = {col, dir} marks it.
function table(headers, rows, attrs, opts = {}) {
  const el = h("table", attrs || {class: "grid-table"});
  const heads = headers.map((x, col) => {
    const label = typeof x === "string" ? x : x.text;
    const th = h("th", typeof x === "string" ? null : x.attrs, label);
    if (label && !(x && x.nosort)) {
      th.classList.add("sortable");
      th.title = (th.title ? th.title + " · " : "") + "sort by " + label;
      th.addEventListener("click", () => {
        const current = th.getAttribute("aria-sort");
        const dir = current === "ascending" ? -1 : 1;
        if (opts.onsort) opts.onsort(col, dir);
        else {
          sortRows(el, col, dir);
          markSorted(el, col, dir);
        }
      });
    }
    return th;
  });
  append(el, [h("thead", null, h("tr", null, heads)), h("tbody", null, rows)]);
  if (opts.sorted) markSorted(el, opts.sorted.col, opts.sorted.dir);
  return el;
}

// Save `text` as a file: a link to an in-memory blob, clicked (nothing leaves the machine).
function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], {type: type}));
  const a = h("a", {href: url, download: name, class: "hidden"});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

// One CSV field: quoted when needed; a text that a spreadsheet would run as a formula is made inert.
function csvField(value) {
  if (value === null || value === undefined) return "";
  let text = Array.isArray(value) ? value.join("; ") : String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = "'" + text;
  return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
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

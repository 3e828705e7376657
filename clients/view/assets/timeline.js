// timeline.js: an episode's conversation and tool calls on one timeline, and the rows each call changed.

function contentText(content) {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && typeof part.text === "string" ? part.text : pretty(part)))
      .join("\n");
  }
  return pretty(content);
}

function requestedCalls(calls) {
  return h(
    "ul",
    {class: "asks"},
    calls.map((call) => {
      const fn = (call && call.function) || call || {};
      let args = fn.arguments;
      if (typeof args === "string") {
        try {
          args = JSON.stringify(JSON.parse(args));
        } catch (err) {
          // a model's malformed arguments are shown as they came
        }
      } else {
        args = JSON.stringify(args);
      }
      return h("li", null, "→ ", h("code", null, String(fn.name || "?")), h("span", {class: "muted"}, " " + (args || "")));
    }),
  );
}

function messageEvent(event, n) {
  const role = String(event.role || "?");
  const text = contentText(event.content);
  const head = h(
    "div",
    {class: "ev-head"},
    h("span", {class: "ev-n"}, n),
    badge("role role-" + (["system", "user", "assistant", "tool"].includes(role) ? role : "other"), role),
    event.tool_call_id ? h("span", {class: "muted"}, "reply to " + event.tool_call_id) : null,
    event.usage ? h("span", {class: "muted right"}, int(event.usage.total) + " tokens") : null,
  );
  const body = h("div", {class: "ev-body"});
  if (role === "tool" || role === "system") {
    const what = role === "tool" ? "result as the model read it" : "system prompt";
    body.append(h("details", {class: "fold"}, h("summary", null, what + " · " + int(text.length) + " characters"), h("pre", {class: "code"}, text)));
  } else if (text) {
    body.append(h("div", {class: "say"}, text));
  }
  if (Array.isArray(event.tool_calls) && event.tool_calls.length) body.append(requestedCalls(event.tool_calls));
  return h("div", {class: "ev msg", data: {kind: "message", role: role}}, head, body);
}

const PAIRS = 3; // column/value pairs per line of an inserted or deleted row

function changeTable(change) {
  const before = change.before || {};
  const after = change.after || {};
  const op = String(change.op || "?");
  let heads;
  let rows;
  if (op === "update") {
    heads = ["column", "before", "after"];
    const cols = Object.keys(after).filter((c) => JSON.stringify(before[c]) !== JSON.stringify(after[c]));
    rows = cols.map((c) => h("tr", null, h("td", {class: "col"}, c), h("td", {class: "old"}, pretty(before[c])), h("td", {class: "new"}, pretty(after[c]))));
    if (!rows.length) rows = [h("tr", null, h("td", {colspan: 3, class: "muted"}, "no column changed value"))];
  } else {
    // A whole row: its non-null columns three to a line (a 15-column insert is 5 lines, not 15), nulls named once.
    const deleted = op === "delete";
    const values = deleted ? before : after;
    const filled = Object.keys(values).filter((c) => values[c] !== null && values[c] !== undefined);
    const empty = Object.keys(values).filter((c) => values[c] === null || values[c] === undefined);
    heads = [{text: deleted ? "before (deleted)" : "after (inserted)", span: PAIRS * 2}];
    rows = [];
    for (let i = 0; i < filled.length; i += PAIRS) {
      rows.push(h("tr", null, filled.slice(i, i + PAIRS).map((c) => [h("td", {class: "col"}, c), h("td", {class: deleted ? "old" : "new"}, pretty(values[c]))])));
    }
    if (empty.length) rows.push(h("tr", null, h("td", {colspan: PAIRS * 2, class: "muted nulls"}, "null: " + empty.join(", "))));
  }
  const key = Array.isArray(change.key) ? change.key.map(String).join(", ") : pretty(change.key);
  return h(
    "div",
    {class: "change", data: {op: op}},
    h("div", {class: "change-head"}, badge("op op-" + op, op), h("code", null, String(change.table || "?")), h("span", {class: "muted"}, " " + key)),
    h("table", {class: "diff" + (op === "update" ? "" : " row")}, h("thead", null, h("tr", null, heads.map((x) => (typeof x === "string" ? h("th", null, x) : h("th", {colspan: x.span}, x.text))))), h("tbody", null, rows)),
  );
}

// The call as one line, tool(name=value, ...), when its arguments are short and flat; else null.
function signature(tool, args) {
  if (!args || typeof args !== "object" || Array.isArray(args)) return null;
  const parts = [];
  for (const [k, v] of Object.entries(args)) {
    if (v !== null && typeof v === "object") return null;
    parts.push(k + "=" + JSON.stringify(v));
  }
  const text = tool + "(" + parts.join(", ") + ")";
  return text.length <= 240 && !text.includes("\n") ? text : null;
}

// Bookkeeping rows (inserts into the environment's audit log...) are not effects: folded under one line.
function isBookkeeping(change, bookkeeping) {
  return change && change.op === "insert" && bookkeeping.includes(String(change.table));
}

function bookkeepingFold(rows) {
  const tables = [...new Set(rows.map((c) => String(c.table)))].join(", ");
  return h(
    "details",
    {class: "fold bookkeeping", data: {rows: rows.length}},
    h("summary", null, "+" + plural(rows.length, tables + " row") + " (bookkeeping)"),
    rows.map(changeTable),
  );
}

function callEvent(event, bookkeeping) {
  const error = event.error && typeof event.error === "object" ? event.error : null;
  const all = Array.isArray(event.changes) ? event.changes : [];
  const changes = all.filter((c) => !isBookkeeping(c, bookkeeping));
  const kept = all.filter((c) => isBookkeeping(c, bookkeeping));
  const head = h(
    "div",
    {class: "ev-head"},
    h("span", {class: "ev-n"}, "#" + event.seq),
    h("code", {class: "tool"}, String(event.tool)),
    error ? badge("fail", String(error.error_class || "error"), String(error.code || "")) : badge("pass", "ok"),
    changes.length ? badge("neutral", changes.length + (changes.length === 1 ? " row changed" : " rows changed")) : null,
    h("span", {class: "muted right"}, dur(event.duration_ms) + " · at " + dur(event.started_ms)),
  );
  const body = h("div", {class: "ev-body"});
  const line = signature(String(event.tool), event.arguments || {});
  body.append(line ? h("pre", {class: "code sig"}, line) : block(pretty(event.arguments || {}), {label: "arguments", open: true, lines: 30}));
  if (error) {
    const cls = String(error.error_class || "error");
    const code = String(error.code || "");
    body.append(
      h("div", {class: "callerr"}, h("strong", null, cls), code && code !== cls ? [" · ", h("code", null, code)] : null, ": ", String(error.message || "")),
    );
  } else {
    body.append(block(pretty(event.result), {label: "result", lines: all.length ? 6 : 14})); // a write's rows below say the rest
  }
  if (changes.length) body.append(h("div", {class: "changes"}, changes.map(changeTable)));
  if (kept.length) body.append(bookkeepingFold(kept));
  return h("div", {class: "ev call" + (error ? " call-error" : ""), data: {kind: "tool_call", tool: String(event.tool)}}, head, body);
}

// A call the agent answered itself (bad arguments, over a limit): it never reached the world.
function rejectedEvent(event) {
  const error = event.error && typeof event.error === "object" ? event.error : {};
  const head = h(
    "div",
    {class: "ev-head"},
    h("span", {class: "ev-n"}, "✕"),
    h("code", {class: "tool"}, String(event.tool || "(no tool name)")),
    badge("fail", "rejected · " + String(error.error_class || "error"), String(error.code || "")),
    h("span", {class: "muted right"}, "never reached the world"),
  );
  const size = Number(event.raw_size || 0);
  const raw = String(event.raw_arguments === undefined ? "" : event.raw_arguments);
  return h(
    "div",
    {class: "ev call call-error", data: {kind: "rejected_call", tool: String(event.tool || "")}},
    head,
    h(
      "div",
      {class: "ev-body"},
      block(raw, {label: "arguments as sent" + (size > raw.length ? " (first " + int(raw.length) + " of " + int(size) + " characters)" : "")}),
      h("div", {class: "callerr"}, h("code", null, String(error.code || error.error_class || "error")), ": ", String(error.message || "")),
    ),
  );
}

function closedText(event) {
  const reason = String(event.reason || "closed");
  const why = reason === "closed" ? "closed" : "closed (" + reason + ")";
  return why + " after " + plural(Number(event.tool_calls) || 0, "tool call");
}

function timeline(events, bookkeeping = []) {
  const items = [];
  let n = 0;
  for (const event of events) {
    if (!event || typeof event !== "object") continue;
    if (event.type === "tool_call") items.push(callEvent(event, bookkeeping));
    else if (event.type === "message") items.push(messageEvent(event, ++n));
    else if (event.type === "rejected_call") items.push(rejectedEvent(event));
    else if (event.type === "closed") items.push(h("div", {class: "ev closed"}, h("span", {class: "muted"}, closedText(event))));
    else items.push(h("div", {class: "ev other"}, block(pretty(event), {label: String(event.type || "event")})));
  }
  if (!events.some((e) => e && (e.type === "tool_call" || e.type === "message" || e.type === "rejected_call"))) {
    items.unshift(h("p", {class: "muted"}, "No tool call and no message: the agent did nothing."));
  }
  return h("div", {class: "timeline"}, items);
}

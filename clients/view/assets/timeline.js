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
    const deleted = op === "delete";
    heads = ["column", deleted ? "before (deleted)" : "after (inserted)"];
    const values = deleted ? before : after;
    rows = Object.keys(values).map((c) => h("tr", null, h("td", {class: "col"}, c), h("td", {class: deleted ? "old" : "new"}, pretty(values[c]))));
  }
  const key = Array.isArray(change.key) ? change.key.map(String).join(", ") : pretty(change.key);
  return h(
    "div",
    {class: "change", data: {op: op}},
    h("div", {class: "change-head"}, badge("op op-" + op, op), h("code", null, String(change.table || "?")), h("span", {class: "muted"}, " " + key)),
    h("table", {class: "diff"}, h("thead", null, h("tr", null, heads.map((x) => h("th", null, x)))), h("tbody", null, rows)),
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

function callEvent(event) {
  const error = event.error && typeof event.error === "object" ? event.error : null;
  const changes = Array.isArray(event.changes) ? event.changes : [];
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
    body.append(
      h("div", {class: "callerr"}, h("strong", null, String(error.error_class || "error")), " · ", h("code", null, String(error.code || "")), ": ", String(error.message || "")),
    );
  } else {
    body.append(block(pretty(event.result), {label: "result", lines: 14}));
  }
  if (changes.length) body.append(h("div", {class: "changes"}, changes.map(changeTable)));
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
      h("div", {class: "callerr"}, h("code", null, String(error.code || "")), ": ", String(error.message || "")),
    ),
  );
}

function timeline(events) {
  const items = [];
  let n = 0;
  for (const event of events) {
    if (!event || typeof event !== "object") continue;
    if (event.type === "tool_call") items.push(callEvent(event));
    else if (event.type === "message") items.push(messageEvent(event, ++n));
    else if (event.type === "rejected_call") items.push(rejectedEvent(event));
    else if (event.type === "closed") items.push(h("div", {class: "ev closed"}, h("span", {class: "muted"}, "closed (" + String(event.reason || "closed") + ") after " + int(event.tool_calls) + " tool calls")));
    else items.push(h("div", {class: "ev other"}, block(pretty(event), {label: String(event.type || "event")})));
  }
  if (!events.some((e) => e && (e.type === "tool_call" || e.type === "message" || e.type === "rejected_call"))) {
    items.unshift(h("p", {class: "muted"}, "No tool call and no message: the agent did nothing."));
  }
  return h("div", {class: "timeline"}, items);
}

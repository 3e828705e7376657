// run.js: the run page — figures, charts per task and category, the task × trial grid, what failed, episodes.

const filters = new Map(); // run index → {failed, task, category, split, tag, q, facet, sort, shown}
const LIST_PAGE = 100;
const FACETS = {code: "tool error", ecls: "infra error", stop: "ended"};

function filterOf(runIndex) {
  if (!filters.has(runIndex)) filters.set(runIndex, {failed: false, task: "", category: "", split: "", tag: "", q: "", facet: null, sort: null, shown: LIST_PAGE, hits: null});
  return filters.get(runIndex);
}

// What the index row says about an episode, searchable at once: ids, task, agent, error codes, failures.
function haystack(row) {
  if (row._hay === undefined) {
    row._hay = [row.id, row.name, row.task, row.agent, row.stop, row.ecls, row.err, ...(row.failed || []), ...(row.codes || [])]
      .filter(Boolean)
      .join("\n")
      .toLowerCase();
  }
  return row._hay;
}

function jsonText(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

// Everything an episode's record says, as one lowercase text: tool names, arguments, results, error classes,
// codes and messages, the messages of the conversation (ids of every kind live in these).
function detailText(detail) {
  const parts = [];
  for (const e of Array.isArray(detail.events) ? detail.events : []) {
    if (!e || typeof e !== "object") continue;
    if (e.type === "tool_call" || e.type === "rejected_call") {
      parts.push(e.tool, jsonText(e.arguments), jsonText(e.raw_arguments), jsonText(e.result));
      if (e.error && typeof e.error === "object") parts.push(e.error.error_class, e.error.code, e.error.message);
    } else if (e.type === "message") {
      parts.push(contentText(e.content), jsonText(e.tool_calls), e.tool_call_id);
    }
  }
  const line = detail.line || {};
  parts.push(line.error, line.error_class);
  return parts.filter(Boolean).join("\n").toLowerCase();
}

const detailTexts = new Map(); // run index → Promise<string[]>, built on the first search (details may be packed)

function detailTextsOf(runIndex) {
  if (!detailTexts.has(runIndex)) {
    detailTexts.set(
      runIndex,
      (async () => {
        const texts = [];
        for (let i = 0; i < DATA.runs[runIndex].episodes.length; i++) texts.push(detailText((await detailOf(runIndex, i)) || {}));
        return texts;
      })(),
    );
  }
  return detailTexts.get(runIndex);
}

// The episodes a search matches, in their rows or anywhere in their records; kept on the filter.
async function runSearch(runIndex, f) {
  const q = f.q.toLowerCase();
  if (!q) {
    f.hits = null;
    return;
  }
  const texts = await detailTextsOf(runIndex);
  if (f.q.toLowerCase() !== q) return; // typed on meanwhile: a later search owns the result
  const hits = new Set();
  DATA.runs[runIndex].episodes.forEach((row, i) => {
    if (haystack(row).includes(q) || texts[i].includes(q)) hits.add(i);
  });
  f.hits = {q: q, set: hits};
}

async function setSearch(runIndex, f, q) {
  f.q = q;
  f.shown = LIST_PAGE;
  await runSearch(runIndex, f);
  renderRun(runIndex);
}

function setFacet(runIndex, f, kind, value) {
  f.facet = kind ? {kind: kind, value: value} : null;
  f.shown = LIST_PAGE;
  renderRun(runIndex);
  const list = document.getElementById("episodes");
  if (list && kind) list.scrollIntoView({block: "start"});
}

function matches(run, row, f, i) {
  const meta = run.tasks[row.task] || {};
  if (f.failed && row.status === "graded" && row.passed) return false;
  if (f.task && row.task !== f.task) return false;
  if (f.category && meta.category !== f.category) return false;
  if (f.split && meta.split !== f.split) return false;
  if (f.tag && !(meta.tags || []).includes(f.tag)) return false;
  if (f.facet) {
    const {kind, value} = f.facet;
    if (kind === "code" && !(row.codes || []).includes(value)) return false;
    if (kind === "ecls" && !(row.status === "errored" && row.ecls === value)) return false;
    if (kind === "stop" && !(row.status === "graded" && row.stop === value)) return false;
  }
  if (f.q) {
    const q = f.q.toLowerCase();
    const found = f.hits && f.hits.q === q ? f.hits.set.has(i) : haystack(row).includes(q);
    if (!found) return false;
  }
  return true;
}

function card(label, value, sub, key) {
  return h("div", {class: "stat", data: {stat: key}}, h("div", {class: "stat-label"}, label), h("div", {class: "stat-value"}, value), sub ? h("div", {class: "stat-sub"}, sub) : null);
}

function agentCards(agent, k) {
  const o = agent.overall;
  const cards = [
    card("episodes", int(o.episodes), o.errored ? plural(o.errored, "infra error") + " (excluded)" : plural(o.problems, "problem"), "episodes"),
    card("pass@1", pct(o.pass_at_1), "95% CI " + ci(o.pass_at_1_ci, true), "pass_at_1"),
  ];
  if (k > 1) {
    // the denominator: problems with k graded trials (one whose trials errored is left out of both)
    const over = " · over " + plural(o.problems_k || 0, "problem") + " with " + k + " graded trials";
    cards.push(card("pass^" + k, pct(o.pass_hat_k), "all " + k + " trials pass" + over, "pass_hat_k"));
    cards.push(card("pass@" + k, pct(o.pass_at_k), "some of " + k + " trials pass" + over, "pass_at_k"));
  }
  cards.push(
    card("mean score", num(o.mean_score, 2), "95% CI " + ci(o.score_ci), "mean_score"),
    card("tool calls", num(o.mean_tool_calls, 1), "per episode · " + int(o.tool_errors) + " failed", "tool_calls"),
    // tokens are never dropped: those of attempts that errored and were run again count too
    card("tokens", int(o.tokens + (o.failed_attempt_tokens || 0)),
      int(Math.round(o.tokens / Math.max(1, o.episodes + o.errored))) + " per episode" +
        (o.failed_attempt_tokens ? " · " + int(o.failed_attempt_tokens) + " in re-run attempts" : ""), "tokens"),
    card("time", num(o.mean_wall_s, 2) + " s", "per episode", "time"),
  );
  return h("div", {class: "stats"}, cards);
}

function bars(items, key) {
  return h(
    "div",
    {class: "bars", data: {chart: key}},
    items.map((it) => {
      const fill = h("div", {class: "bar-fill " + (it.value === null ? "" : it.value >= 0.999 ? "pass" : it.value <= 0.001 ? "fail" : "mid")});
      fill.style.width = ((it.value || 0) * 100).toFixed(2) + "%";
      const track = h("div", {class: "bar-track", title: it.title || null}, fill);
      if (it.ci && it.ci[1] > it.ci[0]) {
        const whisker = h("div", {class: "bar-ci"});
        whisker.style.left = (it.ci[0] * 100).toFixed(2) + "%";
        whisker.style.width = ((it.ci[1] - it.ci[0]) * 100).toFixed(2) + "%";
        track.append(whisker);
      }
      return h("div", {class: "bar-row", data: {name: it.label}}, h("span", {class: "bar-label", title: it.label}, it.labelNode || it.label), track, h("span", {class: "bar-value"}, it.note));
    }),
  );
}

function statsItem(stats) {
  return {
    label: String(stats.name),
    value: stats.mean_score,
    ci: stats.score_ci,
    note: num(stats.mean_score, 2) + " · pass@1 " + pct(stats.pass_at_1) + " · n " + stats.episodes,
    title: "mean score " + num(stats.mean_score, 3) + ", 95% CI " + ci(stats.score_ci),
  };
}

function taskTable(run, agent, visible) {
  const k = run.k;
  const heads = ["task", "category", "split", {text: "n", attrs: {class: "num"}}, {text: "pass@1", attrs: {class: "num"}}, {text: "95% CI", attrs: {class: "num"}}];
  if (k > 1) heads.push({text: "pass^" + k, attrs: {class: "num"}}, {text: "pass@" + k, attrs: {class: "num"}});
  heads.push({text: "score", attrs: {class: "num"}}, {text: "95% CI", attrs: {class: "num"}}, {text: "calls", attrs: {class: "num"}}, {text: "errs", attrs: {class: "num"}}, {text: "s/ep", attrs: {class: "num"}}, {text: "infra", attrs: {class: "num"}});
  const rows = agent.tasks
    .filter((t) => visible.has(t.name))
    .map((t) => {
      const meta = run.tasks[t.name] || {};
      const cells = [
        h("td", {class: "name"}, String(t.name), meta.description ? h("div", {class: "muted small"}, String(meta.description)) : null),
        h("td", null, String(meta.category || "–")),
        h("td", null, String(meta.split || "–")),
        h("td", {class: "num"}, int(t.episodes)),
        h("td", {class: "num " + (t.pass_at_1 === 1 ? "good" : t.pass_at_1 === 0 ? "bad" : "")}, pct(t.pass_at_1)),
        h("td", {class: "num muted"}, ci(t.pass_at_1_ci, true)),
      ];
      if (k > 1) {
        const of = h("span", {class: "muted small"}, " of " + int(t.problems_k || 0));
        const v = (x) => (x === null || x === undefined ? "" : String(x));  // sort by the rate, not its "of N"
        cells.push(h("td", {class: "num", data: {v: v(t.pass_hat_k)}}, pct(t.pass_hat_k), of), h("td", {class: "num", data: {v: v(t.pass_at_k)}}, pct(t.pass_at_k), of.cloneNode(true)));
      }
      cells.push(h("td", {class: "num"}, num(t.mean_score, 2)), h("td", {class: "num muted"}, ci(t.score_ci)), h("td", {class: "num"}, num(t.mean_tool_calls, 1)), h("td", {class: "num"}, int(t.tool_errors)), h("td", {class: "num"}, num(t.mean_wall_s, 2)), h("td", {class: "num" + (t.errored ? " bad" : "")}, int(t.errored)));
      return h("tr", {data: {task: String(t.name)}}, cells);
    });
  return table(heads, rows, {class: "grid-table tasks"});
}

function gridSection(run, runIndex, f) {
  const rows = new Map();
  const multi = run.agents.length > 1;
  run.episodes.forEach((row, i) => {
    const key = multi ? row.task + " · " + row.agent : row.task;
    if (!rows.has(key)) rows.set(key, []);
    rows.get(key).push(i);
  });
  const lines = [];
  for (const [key, indexes] of rows) {
    const shown = indexes.filter((i) => matches(run, run.episodes[i], f, i));
    if (!shown.length) continue;
    const cells = [];
    let seed = null;
    for (const i of indexes) {
      const row = run.episodes[i];
      if (seed !== null && row.seed !== seed) cells.push(h("span", {class: "gap"}));
      seed = row.seed;
      const v = verdict(row);
      const tip = "seed " + row.seed + " trial " + row.trial + " · " + v.text + (row.score !== null ? " · score " + num(row.score, 2) : "") + (row.failed.length ? " · failed: " + row.failed.join(", ") : "") + (row.err ? " · " + row.err : "");
      cells.push(link(["ep", runIndex, i], {class: "cell " + v.cls + (shown.includes(i) ? "" : " dim"), title: tip, data: {verdict: v.cls}}));
    }
    lines.push(h("div", {class: "grid-row"}, h("span", {class: "grid-label", title: key}, key), h("span", {class: "grid-cells"}, cells)));
  }
  const legend = h("div", {class: "legend"}, h("span", {class: "cell pass"}), " pass ", h("span", {class: "cell fail"}), " fail ", h("span", {class: "cell err"}), " infra error · one square per trial, seeds apart");
  return section("Task × trial", legend, lines.length ? h("div", {class: "grid", data: {cells: lines.length}}, lines) : h("p", {class: "muted"}, "No episode matches the filters."));
}

// The episode list's columns: header, how a row sorts by it, and its cell.
function episodeColumns(run, runIndex, multi) {
  const cols = [
    {head: "", key: (r) => verdict(r).text, cell: (r) => h("td", null, badge(verdict(r).cls, verdict(r).text))},
    {head: "task", key: (r) => String(r.task), cell: (r, i) => h("td", null, link(["ep", runIndex, i], null, String(r.task)))},
    {head: {text: "seed", attrs: {class: "num"}}, key: (r) => r.seed, cell: (r) => h("td", {class: "num"}, r.seed)},
    {head: {text: "trial", attrs: {class: "num"}}, key: (r) => r.trial, cell: (r) => h("td", {class: "num"}, r.trial)},
  ];
  if (multi) cols.push({head: "agent", key: (r) => String(r.agent), cell: (r) => h("td", null, String(r.agent))});
  cols.push(
    {head: {text: "score", attrs: {class: "num"}}, key: (r) => r.score, cell: (r) => h("td", {class: "num"}, num(r.score, 2))},
    {head: {text: "calls", attrs: {class: "num"}}, key: (r) => r.calls, cell: (r) => h("td", {class: "num"}, int(r.calls))},
    {head: {text: "errs", attrs: {class: "num"}}, key: (r) => r.errs, cell: (r) => h("td", {class: "num"}, int(r.errs))},
    {head: {text: "tokens", attrs: {class: "num"}}, key: (r) => r.tokens, cell: (r) => h("td", {class: "num"}, int(r.tokens))},
    {head: {text: "time", attrs: {class: "num"}}, key: (r) => r.ms, cell: (r) => h("td", {class: "num", data: {v: r.ms}}, dur(r.ms))},
    {
      head: "failed criteria · error",
      key: (r) => (r.status === "errored" ? String(r.ecls) + " " + String(r.err || "") : r.failed.join(", ")),
      cell: (r) => h("td", {class: "small"}, r.status === "errored" ? "[" + String(r.ecls) + "] " + String(r.err || "") : r.failed.join(", ")),
    },
  );
  return cols;
}

function sortedIndexes(run, indexes, cols, sort) {
  if (!sort || !cols[sort.col]) return indexes;
  const key = cols[sort.col].key;
  const keyed = indexes.map((i, n) => ({i, n, v: key(run.episodes[i])}));
  keyed.sort((a, b) => {
    const missing = (v) => v === null || v === undefined || v === "";
    if (missing(a.v) || missing(b.v)) return missing(a.v) - missing(b.v) || a.n - b.n;
    return compareValues(a.v, b.v) * sort.dir || a.n - b.n;
  });
  return keyed.map((k) => k.i);
}

const EXPORT_FIELDS = ["id", "name", "agent", "task", "seed", "trial", "status", "passed", "score", "calls", "errs", "tokens", "ms", "turns", "stop", "ecls", "err", "failed", "codes"];

// The filtered episodes (every one, not only the page shown), in the list's order, as CSV or JSON lines.
function exportRows(run, indexes, format) {
  const rows = indexes.map((i) => {
    const row = run.episodes[i];
    const out = {};
    for (const field of EXPORT_FIELDS) out[field] = row[field] === undefined ? null : row[field];
    return out;
  });
  const stem = String(run.label).replace(/[^A-Za-z0-9_.-]+/g, "-") + "-episodes";
  if (format === "csv") {
    const lines = [EXPORT_FIELDS.join(",")].concat(rows.map((r) => EXPORT_FIELDS.map((k) => csvField(r[k])).join(",")));
    download(stem + ".csv", "text/csv;charset=utf-8", lines.join("\r\n") + "\r\n");
  } else {
    download(stem + ".jsonl", "application/x-ndjson;charset=utf-8", rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  }
}

function episodeList(run, runIndex, f, indexes) {
  const multi = run.agents.length > 1;
  const cols = episodeColumns(run, runIndex, multi);
  const ordered = sortedIndexes(run, indexes, cols, f.sort);
  const rows = ordered.slice(0, f.shown).map((i) => h("tr", {data: {episode: String(run.episodes[i].id)}}, cols.map((c) => c.cell(run.episodes[i], i))));
  const onsort = (col, dir) => {
    f.sort = {col, dir};
    renderRun(runIndex);
  };
  const more = ordered.length > f.shown ? h("button", {class: "btn", onclick: () => { f.shown += LIST_PAGE * 5; renderRun(runIndex); }}, "show more (" + int(ordered.length - f.shown) + " left)") : null;
  const tools = h(
    "div",
    {class: "export"},
    h("span", {class: "muted small"}, "export the " + plural(ordered.length, "filtered episode") + ": "),
    h("button", {class: "btn", id: "export-csv", onclick: () => exportRows(run, ordered, "csv")}, "CSV"),
    h("button", {class: "btn", id: "export-jsonl", onclick: () => exportRows(run, ordered, "jsonl")}, "JSONL"),
  );
  const list = section("Episodes", tools, table(cols.map((c) => c.head), rows, {class: "grid-table episodes"}, {onsort: onsort, sorted: f.sort}), more);
  list.id = "episodes";
  return list;
}

function failedCriteria(agent, f, runIndex) {
  const crit = agent.failed_criteria.map((c) =>
    h("tr", {data: {criterion: String(c.name)}}, h("td", null, h("button", {class: "linkish", title: "show the episodes where it failed", onclick: () => { f.failed = true; setSearch(runIndex, f, String(c.name)); }}, String(c.name))), h("td", {class: "num"}, c.failures + " / " + c.of), h("td", {class: "small"}, c.tasks.slice(0, 6).join(", ") + (c.tasks.length > 6 ? " …" : ""))),
  );
  return section("Criteria that failed most", crit.length ? table(["criterion", {text: "failed", attrs: {class: "num"}}, "tasks"], crit, {class: "grid-table failed-criteria"}) : h("p", {class: "muted"}, "No criterion failed."));
}

// A name that filters the episode list to the episodes it describes.
function facetLink(runIndex, f, kind, value) {
  const title = "show the episodes: " + FACETS[kind] + " " + value;
  return h("button", {class: "linkish", title: title, data: {facet: kind, value: value}, onclick: () => setFacet(runIndex, f, kind, value)}, value);
}

function toolErrors(agent, runIndex, f) {
  const tools = Object.entries(agent.tool_errors).map(([name, n]) => h("tr", null, h("td", null, facetLink(runIndex, f, "code", name)), h("td", {class: "num"}, int(n))));
  const infra = Object.entries(agent.error_classes).map(([name, n]) => h("tr", null, h("td", null, facetLink(runIndex, f, "ecls", name)), h("td", {class: "num bad"}, int(n))));
  return section(
    "Tool errors by class",
    tools.length ? table(["class: code", {text: "calls", attrs: {class: "num"}}], tools, {class: "grid-table tool-errors"}) : h("p", {class: "muted"}, "No tool call failed."),
    infra.length ? [h("h3", null, "Infrastructure errors (episodes excluded from scores)"), table(["class", {text: "episodes", attrs: {class: "num"}}], infra, {class: "grid-table infra-errors"})] : null,
  );
}

// How graded episodes ended (done, max_turns, timeout...), each reason listing its episodes.
function stopReasons(agent, runIndex, f) {
  const rows = Object.entries(agent.stop_reasons || {}).map(([name, n]) => h("tr", {data: {stop: name}}, h("td", null, facetLink(runIndex, f, "stop", name)), h("td", {class: "num"}, int(n))));
  if (!rows.length) return null;
  return section("How graded episodes ended", table(["stop reason", {text: "episodes", attrs: {class: "num"}}], rows, {class: "grid-table stop-reasons"}));
}

function select(label, value, options, onchange) {
  return h("label", null, label + " ", h("select", {onchange: (e) => onchange(e.target.value)}, h("option", {value: ""}, "all"), options.map((o) => h("option", {value: o, selected: o === value}, o))));
}

function filterBar(run, runIndex, f, counts) {
  const meta = Object.values(run.tasks);
  const uniq = (xs) => [...new Set(xs)].filter((x) => x && x !== "-").sort();
  const again = (key) => (value) => { f[key] = value; f.shown = LIST_PAGE; renderRun(runIndex); };
  // A render while someone types in the box (a search that settled, a filter) must not lose what they typed
  // since, where their caret or selection is, or the search they have yet to run: the new box takes the old
  // one's text and selection, and one timer per run outlives the box that started it.
  const typing = liveSearch && liveSearch.run === runIndex ? liveSearch : null;
  const search = h("input", {type: "search", placeholder: "search ids, tools, arguments, results, error codes, criteria", value: typing ? typing.value : f.q, id: "search", data: {run: String(runIndex)}, title: "searches every episode's record: tool names, arguments, results, error classes, codes and messages, ids, the conversation"});
  search.addEventListener("input", () => {
    clearTimeout(f.timer);
    f.timer = setTimeout(() => {
      const box = document.getElementById("search") || search;
      setSearch(runIndex, f, box.value.trim());
    }, 150);
  });
  const facet = f.facet
    ? h("span", {class: "chip", data: {facet: f.facet.kind}}, FACETS[f.facet.kind] + ": " + f.facet.value + " ", h("button", {class: "linkish", id: "clear-facet", title: "show every episode again", onclick: () => setFacet(runIndex, f, null)}, "×"))
    : null;
  return h(
    "div",
    {class: "filters"},
    h("label", null, h("input", {type: "checkbox", id: "failed-only", checked: f.failed, onchange: (e) => again("failed")(e.target.checked)}), " failed only"),
    select("task", f.task, Object.keys(run.tasks).sort(), again("task")),
    select("category", f.category, uniq(meta.map((m) => m.category)), again("category")),
    select("split", f.split, uniq(meta.map((m) => m.split)), again("split")),
    select("tag", f.tag, uniq(meta.flatMap((m) => m.tags || [])), again("tag")),
    search,
    facet,
    h("span", {class: "counts", data: counts}, int(counts.shown) + " of " + plural(counts.total, "episode") + " · " + int(counts.pass) + " pass · " + int(counts.fail) + " fail · " + plural(counts.errored, "infra error")),
  );
}

function runHeader(run, runIndex) {
  const agents = run.agents.map((a) => a.agent).join(", ");
  const models = [...new Set(run.agents.map((a) => a.model))].join(", ");
  return h(
    "div",
    {class: "run-head"},
    h("h1", null, String(run.env), h("span", {class: "muted"}, " · " + agents)),
    h(
      "dl",
      {class: "meta cols"},
      h("dt", null, "run"), h("dd", null, String(run.label)),
      h("dt", null, "agent"), h("dd", {data: {field: "agent"}}, agents),
      h("dt", null, "model"), h("dd", {data: {field: "model"}}, models || "–"),
      h("dt", null, "environment"), h("dd", null, String(run.env)),
      h("dt", null, "fixture version"), h("dd", null, run.fixture_versions.join(", ") || "–"),
      h("dt", null, "date"), h("dd", null, String(run.date)),
      h("dt", null, "trials per problem (k)"), h("dd", null, String(run.k)),
      h("dt", null, "folder"), h("dd", {class: "small"}, String(run.path)),
    ),
    run.problems ? h("div", {class: "notice"}, run.problems + " record file(s) are missing or incomplete; their episodes say why.") : null,
  );
}

// The search box being typed in when a render began: its run, text and selection (see filterBar).
let liveSearch = null;

function renderRun(runIndex) {
  const old = document.getElementById("search");
  liveSearch = old && document.activeElement === old
    ? {run: Number(old.dataset.run), value: old.value, start: old.selectionStart, end: old.selectionEnd, direction: old.selectionDirection}
    : null;
  const app = clear(document.getElementById("app"));
  const run = DATA.runs[runIndex];
  const f = filterOf(runIndex);
  const crumbs = [link(["run", runIndex], null, String(run.label))];
  if (DATA.kind === "compare") crumbs.unshift(link([], null, "comparison"));
  setCrumbs(...crumbs);
  const indexes = [];
  const visible = new Set();
  const counts = {total: run.episodes.length, shown: 0, pass: 0, fail: 0, errored: 0};
  run.episodes.forEach((row, i) => {
    if (!matches(run, row, f, i)) return;
    indexes.push(i);
    visible.add(row.task);
    counts.shown++;
    if (row.status === "errored") counts.errored++;
    else if (row.passed) counts.pass++;
    else counts.fail++;
  });
  app.append(runHeader(run, runIndex));
  for (const agent of run.agents) {
    if (run.agents.length > 1) app.append(h("h2", {class: "agent-name"}, String(agent.agent)));
    app.append(agentCards(agent, run.k));
  }
  app.append(filterBar(run, runIndex, f, counts));
  const grid = gridSection(run, runIndex, f);
  run.agents.forEach((agent, n) => {
    const tasks = agent.tasks.filter((t) => visible.has(t.name)).map(statsItem);
    const cats = agent.categories.filter((c) => !f.category || c.name === f.category).map(statsItem);
    const perTask = section("Score per task (mean, 95% CI)", tasks.length ? bars(tasks, "tasks") : h("p", {class: "muted"}, "No task matches."));
    app.append(h("div", {class: "two"}, perTask, n === 0 ? grid : h("div")));
    app.append(h("div", {class: "two"}, h("div", {class: "stack"}, section("Score per category", bars(cats, "categories")), toolErrors(agent, runIndex, f), stopReasons(agent, runIndex, f)), failedCriteria(agent, f, runIndex)));
    app.append(section("Tasks", taskTable(run, agent, visible)));
  });
  if (!run.agents.length) app.append(grid);
  app.append(episodeList(run, runIndex, f, indexes));
  const search = document.getElementById("search");
  if (search && liveSearch && liveSearch.run === runIndex) {
    search.focus();
    search.setSelectionRange(liveSearch.start, liveSearch.end, liveSearch.direction);
  }
  liveSearch = null;
}

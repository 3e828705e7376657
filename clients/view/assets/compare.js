// compare.js: two runs — per-task pass-rate deltas with their intervals, then episodes side by side.

const VERDICTS = {regression: "fail", fix: "pass", noise: "neutral", same: "neutral", missing: "rec"};
const VERDICT_TEXT = {regression: "regression", fix: "fix", noise: "noise", same: "same", missing: "missing"};
const VERDICT_TITLE = {
  regression: "the pass rate fell, and the 95% interval of the difference lies below 0",
  fix: "the pass rate rose, and the 95% interval of the difference lies above 0",
  noise: "the pass rate moved, but the 95% interval of the difference includes 0: no evidence of a change",
  same: "the same pass rate in both runs",
  missing: "the task is in one run only",
};
let pairTask = null;

function rateCell(side) {
  return h("td", {class: "num"}, side.n ? side.passed + "/" + side.n + " · " + pct(side.rate) : "–", side.errored ? h("span", {class: "bad small"}, " +" + side.errored + " infra") : null);
}

function deltaTable(rows, onpick) {
  const body = rows.map((r) =>
    h(
      "tr",
      {class: "delta-row", data: {task: String(r.task), verdict: r.verdict, delta: r.delta === null ? "" : r.delta}},
      h("td", {data: {v: r.verdict}}, badge(VERDICTS[r.verdict] || "neutral", VERDICT_TEXT[r.verdict] || r.verdict, VERDICT_TITLE[r.verdict])),
      h("td", {class: "name"}, onpick ? h("button", {class: "linkish", onclick: () => onpick(r.task)}, String(r.task)) : String(r.task)),
      rateCell(r.a),
      rateCell(r.b),
      h("td", {class: "num delta " + (r.verdict === "fix" ? "good" : r.verdict === "regression" ? "bad" : "")}, pts(r.delta)),
      h("td", {class: "num muted"}, r.delta_ci ? pts(r.delta_ci[0]) + " … " + pts(r.delta_ci[1]) : "–"),
      h("td", null, r.significant ? h("span", {title: "the 95% interval excludes 0"}, "yes") : h("span", {class: "muted"}, "no")),
    ),
  );
  return table(["", "task", {text: "A passed", attrs: {class: "num"}}, {text: "B passed", attrs: {class: "num"}}, {text: "Δ pass rate", attrs: {class: "num"}}, {text: "95% CI", attrs: {class: "num"}}, "CI excludes 0"], body, {class: "grid-table deltas"});
}

function pairList(task) {
  const cmp = DATA.compare;
  const items = [];
  cmp.pairs.forEach((p, i) => {
    if (p.task !== task) return;
    const side = (r, at) => (at === null || at === undefined ? badge("rec", "none") : badge(verdict(DATA.runs[r].episodes[at]).cls, verdict(DATA.runs[r].episodes[at]).text));
    items.push(h("tr", null, h("td", {class: "num"}, p.seed), h("td", {class: "num"}, p.trial), h("td", null, side(0, p.a)), h("td", null, side(1, p.b)), h("td", null, link(["pair", i], {class: "btn"}, "side by side"))));
  });
  return table([{text: "seed", attrs: {class: "num"}}, {text: "trial", attrs: {class: "num"}}, "A", "B", ""], items, {class: "grid-table pairs"});
}

function renderCompare() {
  const app = clear(document.getElementById("app"));
  const cmp = DATA.compare;
  const [a, b] = DATA.runs;
  setCrumbs(link([], null, "comparison"));
  const who = (run) => run.agents.map((x) => x.agent).join(", ");
  app.append(
    h(
      "div",
      {class: "run-head"},
      h("h1", null, String(a.env) + " · ", link(["run", 0], null, String(a.label)), " → ", link(["run", 1], null, String(b.label))),
      h("dl", {class: "meta cols"}, h("dt", null, "A (before)"), h("dd", null, String(a.label) + " · " + who(a) + " · " + a.date), h("dt", null, "B (after)"), h("dd", null, String(b.label) + " · " + who(b) + " · " + b.date)),
    ),
  );
  const o = cmp.overall;
  const warnings = cmp.warnings || [];
  if (warnings.length) app.append(h("div", {class: "notice warn", id: "compare-warnings"}, h("strong", null, "These runs were not run alike. "), warnings.map((w) => h("div", {class: "warning"}, String(w)))));
  const count = (v) => cmp.tasks.filter((r) => r.verdict === v).length;
  app.append(
    h(
      "div",
      {class: "stats"},
      card("A pass rate", pct(o.a.rate), o.a.passed + " / " + plural(o.a.n, "episode") + " · 95% CI " + ci(o.a.ci, true), "a_rate"),
      card("B pass rate", pct(o.b.rate), o.b.passed + " / " + plural(o.b.n, "episode") + " · 95% CI " + ci(o.b.ci, true), "b_rate"),
      card("Δ pass rate", pts(o.delta), "95% CI " + (o.delta_ci ? pts(o.delta_ci[0]) + " … " + pts(o.delta_ci[1]) : "–"), "delta"),
      card("regressions · fixes", count("regression") + " · " + count("fix"), "tasks whose 95% interval excludes 0 · " + plural(count("noise"), "task") + " moved within noise", "changes"),
    ),
  );
  const pairs = h("div", {id: "pairs"});
  const pick = (task) => {
    pairTask = task;
    clear(pairs).append(h("h3", null, String(task)), pairList(task));
    pairs.scrollIntoView({block: "nearest"});
  };
  const how = h("p", {class: "muted small", id: "delta-note"}, "A task is a regression or a fix only when the 95% interval of its pass-rate difference (Newcombe's, from Wilson intervals) excludes 0; a difference within it is noise.");
  app.append(section("Pass rate per task, B − A (regressions first)", how, deltaTable(cmp.tasks, pick)));
  const tasks = [...new Set(cmp.pairs.map((p) => p.task))];
  const chooser = h("select", {id: "pair-task", onchange: (e) => pick(e.target.value)}, tasks.map((t) => h("option", {value: t}, t)));
  app.append(section("Episodes side by side", h("label", null, "task ", chooser), pairs));
  const first = pairTask || (cmp.tasks.find((r) => r.verdict === "regression" || r.verdict === "fix" || r.verdict === "noise") || cmp.tasks[0] || {}).task;
  if (first !== undefined) {
    chooser.value = first;
    pairTask = first;
    pairs.append(h("h3", null, String(first)), pairList(first));
  }
}

async function renderPair(index) {
  const app = clear(document.getElementById("app"));
  const p = DATA.compare.pairs[index];
  if (!p) {
    app.append(h("p", {class: "muted"}, "No such pair."));
    return;
  }
  pairTask = p.task;
  setCrumbs(link([], null, "comparison"), h("span", null, p.task + " · seed " + p.seed + " · trial " + p.trial));
  const nav = h("div", {class: "ep-nav"});
  if (index > 0) nav.append(link(["pair", index - 1], {class: "btn"}, "← previous"));
  if (index < DATA.compare.pairs.length - 1) nav.append(link(["pair", index + 1], {class: "btn"}, "next →"));
  app.append(h("div", {class: "ep-top"}, h("h1", null, String(p.task), h("span", {class: "muted"}, " · seed " + p.seed + " · trial " + p.trial)), nav));
  const columns = h("div", {class: "side"});
  app.append(columns);
  const jobs = [];
  [p.a, p.b].forEach((at, run) => {
    const column = h("div", {class: "side-col", data: {side: run ? "B" : "A"}}, h("div", {class: "side-label"}, (run ? "B · " : "A · ") + String(DATA.runs[run].label), at !== null && at !== undefined ? link(["ep", run, at], {class: "small"}, " open alone") : null));
    columns.append(column);
    if (at === null || at === undefined) column.append(h("p", {class: "muted"}, "This run has no such episode."));
    else jobs.push(renderEpisode(column, run, at, {compact: true}));
  });
  await Promise.all(jobs);
}

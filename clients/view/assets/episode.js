// episode.js: one episode — header, prompt, timeline, grade (failing gates first) and world hashes.

const CREDITED_NOTE =
  "credited: whether passing a criterion earns score. One the untouched world already satisfies (doing nothing would pass it) is not credited: passing it is left out of the score, failing it counts against it, and a failed gate zeroes the grade either way.";
const CREDITED_YES = "credited: passing it earns its weight";
const CREDITED_NO = "not credited: the untouched world satisfies it, so passing it earns nothing; failing it still costs score";

function criterionRank(c) {
  if (c.graded === false) return 2;
  if (!c.passed) return c.gate ? 0 : 1;
  return c.gate ? 3 : 4;
}

function gradeSection(grade, note) {
  if (!grade) return section("Grade", h("p", {class: "muted"}, note || "This episode has no grade."));
  const criteria = (Array.isArray(grade.criteria) ? grade.criteria : []).slice();
  criteria.sort((a, b) => criterionRank(a) - criterionRank(b));
  const rows = criteria.map((c) => {
    const state = c.graded === false ? "ungraded" : c.passed ? "pass" : "fail";
    return h(
      "tr",
      {class: "crit crit-" + state, data: {criterion: String(c.name), state: state}},
      h("td", null, c.graded === false ? badge("rec", "UNGRADED") : c.passed ? badge("pass", "PASS") : badge("fail", "FAIL")),
      h("td", {class: "name"}, String(c.name), h("div", {class: "muted small"}, String(c.kind || ""))),
      h("td", {class: "num"}, num(c.weight, 1)),
      h("td", null, c.gate ? badge("gate", "gate") : ""),
      h("td", null, c.credited === false ? h("span", {class: "muted", title: CREDITED_NO}, "no") : h("span", {title: CREDITED_YES}, "yes")),
      h("td", {class: "num"}, num(c.score, 2)),
      h("td", {class: "evidence"}, String(c.evidence || "")),
    );
  });
  const head = h(
    "div",
    {class: "grade-head"},
    grade.passed ? badge("pass big", "PASS") : badge("fail big", "FAIL"),
    h("span", {class: "score"}, "score " + num(grade.score, 3)),
    h("span", {class: "muted"}, " threshold " + num(grade.threshold, 2)),
    grade.gated ? h("span", {class: "gated"}, " gate failed: " + (grade.failed_gates || []).join(", ")) : null,
    grade.complete === false ? h("span", {class: "gated"}, " incomplete: " + (grade.ungraded || []).join(", ") + " not graded") : null,
  );
  const credited = {text: "credited", attrs: {title: CREDITED_NOTE, class: "explained"}};
  return section(
    "Grade",
    head,
    table(["", "criterion", {text: "weight", attrs: {class: "num"}}, "gate", credited, {text: "score", attrs: {class: "num"}}, "evidence"], rows, {class: "grid-table criteria"}),
    criteria.length ? h("p", {class: "muted small", id: "credited-note"}, CREDITED_NOTE) : null,
  );
}

function hashesSection(header, events, grade) {
  const closed = events.slice().reverse().find((e) => e && e.type === "closed");
  const start = header && header.start_hash;
  const end = closed ? closed.end_hash : grade ? grade.end_hash : null;
  const same = start && end && start === end;
  return section(
    "World",
    h(
      "dl",
      {class: "meta"},
      h("dt", null, "start hash"), h("dd", null, h("code", {class: "hash", data: {hash: "start"}}, String(start || "–"))),
      h("dt", null, "end hash"), h("dd", null, h("code", {class: "hash", data: {hash: "end"}}, String(end || "– (not closed)"))),
      h("dt", null, "change"), h("dd", null, same ? "none: the world is as the agent found it" : end ? "the world changed" : "unknown"),
      header && header.clock ? [h("dt", null, "world clock"), h("dd", null, String(header.clock))] : null,
    ),
  );
}

function episodeMeta(run, row, header) {
  const pairs = [
    ["episode", row.id],
    ["agent", row.agent],
    ["environment", (header && header.env) || run.env],
    ["fixture", header ? String(header.fixture_version) + " (seed " + header.fixture_seed + ")" : "–"],
    ["status", row.status + (row.stop ? " · stopped: " + row.stop : "")],
    ["tool calls", int(row.calls) + " (" + int(row.errs) + " failed)"],
    ["turns · tokens", int(row.turns) + " · " + int(row.tokens) + (row.rerun_tokens ? " (" + int(row.rerun_tokens) + " in re-run attempts)" : "")],
    ["time", dur(row.ms) + (row.attempts > 1 ? " · " + row.attempts + " attempts" : "")],
  ];
  return h("dl", {class: "meta cols"}, pairs.map(([k, v]) => [h("dt", null, k), h("dd", null, String(v))]));
}

// Renders into `host`; `compact` (side-by-side) leaves out navigation and the meta block.
async function renderEpisode(host, runIndex, episodeIndex, {compact = false} = {}) {
  const run = DATA.runs[runIndex];
  const row = run.episodes[episodeIndex];
  if (!row) {
    host.append(h("p", {class: "muted"}, "No such episode."));
    return;
  }
  const v = verdict(row);
  const title = h(compact ? "h3" : "h1", {class: "ep-title"}, badge(v.cls + " big", v.text), " ", String(row.task), h("span", {class: "muted"}, " · seed " + row.seed + " · trial " + row.trial));
  const top = h("div", {class: "ep-top"}, title);
  if (row.score !== null && row.score !== undefined) top.append(h("span", {class: "score"}, "score " + num(row.score, 3)));
  if (!compact) {
    const nav = h("div", {class: "ep-nav"});
    if (episodeIndex > 0) nav.append(link(["ep", runIndex, episodeIndex - 1], {class: "btn"}, "← previous"));
    if (episodeIndex < run.episodes.length - 1) nav.append(link(["ep", runIndex, episodeIndex + 1], {class: "btn"}, "next →"));
    top.append(nav);
  }
  const page = h("div", {class: "episode", data: {episode: row.id}}, top);
  host.append(page);
  const loading = h("p", {class: "muted"}, "Unpacking the episode…");
  page.append(loading);
  const detail = await detailOf(runIndex, episodeIndex);
  loading.remove();
  const header = detail.header || null;
  const events = Array.isArray(detail.events) ? detail.events : [];
  if (!compact) page.append(section("Episode", episodeMeta(run, row, header)));
  if (detail.problem) page.append(h("div", {class: "notice"}, "Record: " + String(detail.problem)));
  const line = detail.line || {};
  if (line.status === "errored") {
    page.append(h("div", {class: "notice err"}, "Infrastructure error (" + String(line.error_class) + "), excluded from scores: " + String(line.error || "")));
  }
  const grade = detail.grade;
  const failing = grade && Array.isArray(grade.criteria) ? grade.criteria.filter((c) => c.graded !== false && !c.passed) : [];
  if (failing.length) {
    failing.sort((a, b) => criterionRank(a) - criterionRank(b));
    const first = failing[0];
    page.append(h("div", {class: "notice fail", data: {first: String(first.name)}}, h("strong", null, "Failed: " + String(first.name)), first.gate ? " (gate)" : "", " — " + String(first.evidence || ""), failing.length > 1 ? h("span", {class: "muted"}, " · and " + (failing.length - 1) + " more below") : null));
  }
  page.append(section("Prompt", h("div", {class: "say prompt"}, String((header && header.prompt) || "(no prompt: free play)"))));
  page.append(section("Timeline", timeline(events, run.bookkeeping || [])));
  page.append(gradeSection(grade, run.grade_note));
  page.append(hashesSection(header, events, grade));
}

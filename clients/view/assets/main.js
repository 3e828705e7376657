// main.js: routes (#/, #/run/R, #/ep/R/I, #/pair/I) and the first render.
//
// When a route has rendered, <body> gets data-route (the route) and, the first time, data-rendered-ms
// (milliseconds since navigation started): tests and the bench wait for these.

let routing = 0;

async function renderEpisodePage(runIndex, episodeIndex) {
  const app = clear(document.getElementById("app"));
  const run = DATA.runs[runIndex];
  const row = run && run.episodes[episodeIndex];
  const crumbs = [];
  if (DATA.kind === "compare") crumbs.push(link([], null, "comparison"));
  if (DATA.kind !== "record") crumbs.push(link(["run", runIndex], null, String(run ? run.label : "run")));
  crumbs.push(h("span", null, row ? row.task + " · seed " + row.seed + " · trial " + row.trial : "episode"));
  setCrumbs(...crumbs);
  if (!run) {
    app.append(h("p", {class: "muted"}, "No such run."));
    return;
  }
  await renderEpisode(app, runIndex, episodeIndex);
}

async function route() {
  const mine = ++routing;
  const hash = location.hash.replace(/^#\/?/, "");
  const parts = hash ? hash.split("/").map(decodeURIComponent) : [];
  const n = (i) => Number.parseInt(parts[i], 10);
  try {
    if (parts[0] === "run") renderRun(n(1));
    else if (parts[0] === "ep") await renderEpisodePage(n(1), n(2));
    else if (parts[0] === "pair" && DATA.compare) await renderPair(n(1));
    else if (DATA.kind === "compare") renderCompare();
    else if (DATA.kind === "record") await renderEpisodePage(0, 0);
    else renderRun(0);
    if (parts[0] === "ep" || parts[0] === "pair") window.scrollTo(0, 0);
  } catch (err) {
    const app = clear(document.getElementById("app"));
    app.append(h("div", {class: "notice err"}, "This view could not be drawn: " + String(err && err.message ? err.message : err)));
    console.error(err);
  }
  if (mine !== routing) return;
  document.body.dataset.route = "/" + hash;
  if (!document.body.dataset.renderedMs) document.body.dataset.renderedMs = performance.now().toFixed(1);
}

window.addEventListener("hashchange", route);
route();

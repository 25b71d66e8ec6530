// The watch page: step through a recorded game (every hand shown: it is a record),
// and show evaluate.py results folders as their tables and plots.
let replay = null, at = 0;
const $ = (id) => document.getElementById(id);
function showError(msg) { $("error").textContent = msg || ""; }

async function init() {
  const { records } = await api("GET", "/api/records");
  $("records").replaceChildren(...records.map((r) => new Option(r, r)));
  if (!records.length) $("records").append(new Option("(no records folder or no records)", ""));
  $("pick").addEventListener("submit", (e) => { e.preventDefault(); openRecord(); });
  $("upload").addEventListener("change", uploadRecord);
  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(at - 1));
  $("next").addEventListener("click", () => go(at + 1));
  $("last").addEventListener("click", () => go(replay.frames.length - 1));
  $("slider").addEventListener("input", () => go(Number($("slider").value)));
  document.addEventListener("keydown", (e) => {
    if (!replay || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowRight") go(at + 1);
    if (e.key === "ArrowLeft") go(at - 1);
  });
  await results();
}

async function openRecord() {
  showError("");
  const path = $("records").value;
  if (!path) return showError("choose a record (start the server with --records DIR), or upload one");
  try { show(await api("GET", `/api/records/frames?path=${encodeURIComponent(path)}&game=${Number($("game-no").value)}`)); }
  catch (e) { showError(e.message); }
}

async function uploadRecord() {
  showError("");
  const file = $("upload").files[0];
  if (!file) return;
  try {
    const url = `/api/records/upload?game=${Number($("game-no").value)}&name=${encodeURIComponent(file.name)}`;
    show(await api("POST", url, await file.text()));
  } catch (e) { showError(e.message); }
}

function show(data) {
  replay = data;
  $("replay").hidden = false;
  $("slider").max = data.frames.length - 1;
  $("title").textContent = `${data.name}, game ${data.game + 1} of ${data.games}: ${data.num_players} players `
    + `(${data.players.join(", ")}), ${data.rules.table} table, seed ${data.seed}`
    + (data.winners ? ` · winners: seat(s) ${data.winners.join(", ")}` : " · not finished");
  go(0);
}

function go(k) {
  if (!replay) return;
  at = Math.max(0, Math.min(replay.frames.length - 1, k));
  const f = replay.frames[at];
  $("slider").value = at;
  $("where").textContent = `move ${at + 1} / ${replay.frames.length} · round ${f.round}`;
  $("event").textContent = f.text;
  $("hands").replaceChildren(...f.hands.map((h, p) => {
    const el = document.createElement("div");
    el.className = "seat" + (p === f.seat ? " current" : "") + (f.active[p] ? "" : " out");
    el.append(text("div", `seat ${p}: ${replay.players[p] ?? ""}`, "name"),
      text("div", f.active[p] ? `lives ${f.lives[p]}` + (p === f.dealer ? " · dealer" : "") : "out"),
      handEl(h, { small: true }));
    return el;
  }));
  renderPiles(f);
  const r = f.result;
  $("result").replaceChildren();
  if (r) {
    const lost = r.losses.map((x, p) => (x ? `seat ${p} loses ${x}` : null)).filter(Boolean).join(", ");
    $("result").append(text("div", `round over (${r.reason}): ${lost || "nobody loses a life"}`),
      text("div", "values: " + r.values.map((v, p) => `seat ${p} ${v ?? "-"}`).join(" · ")),
      text("div", "lives: " + r.lives.join(" · ")));
  }
}

async function results() {
  const { results } = await api("GET", "/api/results");
  const box = $("results");
  if (!results.length) return box.append(text("p", "No results folder (start the server with --results DIR)."));
  for (const folder of results) {
    const details = document.createElement("details");
    details.append(text("summary", folder.name));
    details.addEventListener("toggle", async () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = "1";
      for (const t of folder.tables) {
        try {
          const table = await api("GET", `/api/results/${encodeURIComponent(folder.name)}/${encodeURIComponent(t)}`);
          details.append(text("h3", t), tableEl(table));
        } catch (e) { details.append(text("p", e.message, "error")); }
      }
      const plots = document.createElement("div");
      plots.className = "plots";
      for (const p of folder.plots) {
        const img = document.createElement("img");
        img.src = `/api/results/${encodeURIComponent(folder.name)}/${encodeURIComponent(p)}`;
        img.alt = p;
        plots.append(img);
      }
      details.append(plots);
    }, { once: false });
    box.append(details);
  }
}

function tableEl(t) {
  const table = document.createElement("table");
  table.className = "data";
  const head = document.createElement("tr");
  head.append(...t.header.map((h) => text("th", h)));
  table.append(head);
  for (const row of t.rows) {
    const tr = document.createElement("tr");
    tr.append(...row.map((c) => text("td", c)));
    table.append(tr);
  }
  return table;
}

init().catch((e) => showError(e.message));

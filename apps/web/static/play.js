// The play page: set up a game, then show the table as your seat sees it. Other seats'
// moves arrive as events and are shown one by one; the legal moves are buttons.
let options = null, gameId = null, state = null, busy = false;
const $ = (id) => document.getElementById(id);
// pause between the others' moves (?step=MS in the address changes it; 0 for tests)
const STEP_MS = Number(new URLSearchParams(location.search).get("step") ?? 350);

function showError(msg) { $("error").textContent = msg || ""; }

async function init() {
  options = await api("GET", "/api/options");
  $("seed-label").hidden = !options.seeds;  // (a server started with --allow-seeds)
  for (const name of Object.keys(options.presets)) $("rules").append(new Option(name, name));
  $("rules").value = "standard";
  for (const n of options.players) $("player-names").append(new Option(n, n));
  for (const m of options.models) $("player-names").append(new Option(`ppo:path=${m}`, `ppo:path=${m}`));
  $("rules").addEventListener("change", sizes);
  $("size").addEventListener("change", seats);
  sizes();
  $("setup").addEventListener("submit", (e) => { e.preventDefault(); start(); });
  $("resign").addEventListener("click", resign);
  $("save").addEventListener("click", save);
}

function sizes() {
  const preset = options.presets[$("rules").value];
  const old = Number($("size").value) || 4;
  $("size").replaceChildren(...preset.sizes.map((n) => new Option(`${n}`, n)));
  $("size").value = preset.sizes.includes(old) ? old : preset.sizes[preset.sizes.length - 1];
  seats();
}

function seats() {
  const n = Number($("size").value);
  $("seat").replaceChildren(...Array.from({ length: n }, (_, i) => new Option(`${i}`, i)));
  const box = $("opponents");
  const old = [...box.querySelectorAll("input")].map((i) => i.value);
  box.replaceChildren();
  for (let k = 0; k < n - 1; k++) {
    const label = text("label", `Opponent ${k + 1}`);
    const input = document.createElement("input");
    input.setAttribute("list", "player-names");
    input.value = old[k] || "ppo";
    input.className = "opponent";
    label.append(input);
    box.append(label);
  }
}

async function start() {
  showError("");
  const body = {
    rules: $("rules").value,
    opponents: [...document.querySelectorAll("#opponents input")].map((i) => i.value.trim()),
    seat: Number($("seat").value),
  };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try {
    const data = await api("POST", "/api/games", body);
    gameId = data.id;
    $("log").replaceChildren();
    $("showdown").replaceChildren();
    $("saved").textContent = "";
    $("download").hidden = true;
    $("game").hidden = false;
    await play(data);
  } catch (e) { showError(e.message); }
}

async function move(id) {
  if (busy) return;
  showError("");
  busy = true;
  render(state, true);  // buttons off while the others move
  try {
    await play(await api("POST", `/api/games/${gameId}/move`, { action: id, turn: state.turn }));
  } catch (e) { showError(e.message); busy = false; render(state); }
}

async function resign() {
  try { await play(await api("POST", `/api/games/${gameId}/resign`)); } catch (e) { showError(e.message); }
}

async function save() {
  try {
    const data = await api("POST", `/api/games/${gameId}/save`);
    $("saved").textContent = `saved as ${data.saved}`;
  } catch (e) { showError(e.message); }
}

// Show the events one at a time (the table between them is the one before the answer,
// with the new discards and results), then the table as it is now.
async function play(data) {
  busy = true;
  for (const ev of data.events) {
    log(ev);
    if (ev.type === "settle") showdown(ev);
    if (ev.card && ev.type === "move" && ev.text.includes(" discards ")) {
      $("discard")?.replaceChildren(cardEl(ev.card, { fresh: true }));  // (none before the first table)
    }
    if (state && STEP_MS > 0) await new Promise((r) => setTimeout(r, STEP_MS));
  }
  state = data.state;
  busy = false;
  render(state);
}

function log(ev) {
  const p = text("p", ev.text || describeSettle(ev), ev.type);
  $("log").append(p);
  $("log").scrollTop = $("log").scrollHeight;
}

function describeSettle(ev) {
  const lost = ev.losses.map((x, p) => (x ? `seat ${p} loses ${x}` : null)).filter(Boolean).join(", ");
  return `round ${ev.round} over (${ev.reason}): ${lost || "nobody loses a life"}`;
}

function showdown(ev) {
  const box = $("showdown");
  box.replaceChildren(text("div", describeSettle(ev)));
  ev.hands.forEach((h, p) => {
    if (!h) return;
    const row = document.createElement("div");
    row.className = "hand";
    const v = ev.values[p];
    row.append(text("span", `seat ${p}${p === state?.seat ? " (you)" : ""}: `));
    for (const c of h) row.append(cardEl(c, { small: true }));
    row.append(text("span", v === null || v === undefined ? "" : ` = ${v}`));
    box.append(row);
  });
}

function render(s, frozen = false) {
  if (!s) return;
  const turn = s.over ? (s.finished ? (s.winners.includes(s.seat) ? "You win!" : `Game over: seat(s) ${s.winners.join(", ")} win.`)
    : (s.stopped ? s.stopped : s.out ? "You are out of the game." : "You resigned."))
    : s.my_turn ? "Your turn" : `Seat ${s.current} to play`;
  $("status").textContent = `Round ${s.round} · dealer seat ${s.dealer} · ${turn}` + (s.knocker !== null ? ` · seat ${s.knocker} knocked` : "");
  $("seats").replaceChildren(...s.seats.map((seat) => {
    const el = document.createElement("div");
    el.className = "seat" + (seat.seat === s.current ? " current" : "") + (seat.active ? "" : " out");
    el.dataset.seat = seat.seat;
    el.append(text("div", `seat ${seat.seat}: ${seat.name}`, "name"));
    el.append(text("div", seat.active ? `lives ${seat.lives}` + (seat.score !== null ? ` · score ${seat.score}` : "") : "out"));
    if (seat.seat !== s.seat && seat.known.length) {
      el.append(text("div", "known:"));
      el.append(handEl(seat.known, { small: true }));
    }
    return el;
  }));
  renderPiles(s);
  const hand = handEl(s.hand);
  if (s.drawn) hand.querySelectorAll(`[data-card="${s.drawn}"]`).forEach((c) => c.classList.add("new"));
  $("hand").replaceChildren(hand);
  if (s.choice.length) $("hand").append(text("div", "your two dealt hands:"), ...s.choice.map((h) => handEl(h)));
  $("value").textContent = s.hand_value !== null ? `(value ${s.hand_value})` : "";
  $("moves").replaceChildren(...s.moves.map((m) => {
    const b = text("button", m.label);
    b.type = "button";
    b.dataset.action = m.id;
    b.className = "move";
    b.disabled = frozen || busy || !m.legal;
    if (!m.legal) b.title = "not allowed now";
    b.addEventListener("click", () => move(m.id));
    return b;
  }));
  $("resign").disabled = s.over;
  $("save").disabled = !s.over || !options.records;
  if (s.over) {
    $("download").hidden = false;
    $("download").href = `/api/games/${gameId}/record`;
    $("download").textContent = "Download record";
  }
}

init().catch((e) => showError(e.message));

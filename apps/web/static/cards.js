// Cards as tiles: "Qh" -> a white tile with Q and a red heart; null -> a face-down back.
const SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };

function cardEl(name, opts = {}) {
  const el = document.createElement("span");
  el.className = "card" + (opts.small ? " small" : "") + (opts.fresh ? " new" : "");
  if (!name) {
    el.classList.add("back");
    el.title = "face down";
    return el;
  }
  const rank = name.slice(0, -1), suit = name.slice(-1);
  if (suit === "h" || suit === "d") el.classList.add("red");
  el.dataset.card = name;
  el.title = name;
  const r = document.createElement("span");
  r.textContent = rank === "T" ? "10" : rank;
  const s = document.createElement("span");
  s.className = "suit";
  s.textContent = SUITS[suit] || suit;
  el.append(r, s);
  return el;
}

function handEl(names, opts = {}) {
  const el = document.createElement("div");
  el.className = "hand";
  for (const n of names) el.append(cardEl(n, opts));
  return el;
}

function text(tag, content, cls) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (cls) el.className = cls;
  return el;
}

// The middle of the table (#centre on both pages): the stock, the top discard and the
// table hands of the variants (null: a face-down card).
function renderPiles(t) {
  const pile = (id, content, label) => {
    const el = document.createElement("div");
    el.className = "pile";
    const cards = document.createElement("div");
    cards.id = id;
    cards.append(...content);
    el.append(cards, label);
    return el;
  };
  const tables = document.createElement("div");
  tables.id = "table-hands";
  tables.append(...t.table_hands.map((h, k) => {
    const el = document.createElement("div");
    el.append(text("div", `table hand ${k}`), handEl(h, { small: true }));
    return el;
  }));
  document.getElementById("centre").replaceChildren(
    pile("stock", [t.stock ? cardEl(null) : text("span", "empty"), text("div", `${t.stock} cards`)], "stock"),
    pile("discard", [t.top_discard ? cardEl(t.top_discard) : text("span", "empty")], "discard"),
    tables,
  );
}

async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    if (typeof body === "string") { init.body = body; init.headers["Content-Type"] = "application/x-ndjson"; }
    else { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  }
  const res = await fetch(url, init);
  const data = await res.json().catch(() => ({ detail: res.statusText }));
  if (!res.ok) {
    const d = data.detail;
    throw new Error(typeof d === "string" ? d : JSON.stringify(d));
  }
  return data;
}

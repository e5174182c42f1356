// The page of `imperiale serve`: the play table and the replay with its analysis.
// No framework, no build step: the server keeps every game and checks every move.
"use strict";

const SUIT_SIGNS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const $ = (id) => document.getElementById(id);
let gameId = null;
let replay = null;     // {frames, summary, record}
let analysis = null;   // the annotated record, once asked for
let at = 0;            // the replay frame shown
const beliefCache = new Map();  // "deal:index" of the replayed record -> the server's belief (or its error)
let beliefAsked = 0;   // the latest belief request: an older answer arriving late is not drawn
let playNames = [];    // the seats' names of the game being played

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function showMessage(text) {
  const m = $("message");
  m.textContent = text;
  m.hidden = !text;
}

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  let answer;
  try {
    answer = await fetch(path, options);
  } catch (e) {
    throw new Error("the server cannot be reached: is `imperiale serve` still running?");
  }
  const data = await answer.json().catch(() => ({ error: STATUS_WORDS[answer.status] || `the server answered ${answer.status}` }));
  if (!answer.ok || (data && data.error)) throw new Error(data.error || STATUS_WORDS[answer.status] || `the server answered ${answer.status}`);
  return data;
}

// What a player reads when the server gave no message of its own.
const STATUS_WORDS = {
  404: "this game is not on the server any more (it was restarted?): start a new game",
  410: "this game expired after a long pause: start a new game",
  413: "the file is too large for the table",
  500: "the server failed on this request; the terminal running `imperiale serve` tells why",
  503: "the table is full: try again in a few minutes",
};

// The bot thinks: a sign of life while the server answers (the champion or pimc can take seconds).
async function thinking(work) {
  const t = setTimeout(() => { $("thinking").hidden = false; }, 150);
  try { return await work(); } finally { clearTimeout(t); $("thinking").hidden = true; }
}

function card(code, { small = false, legal = false, onclick = null } = {}) {
  const suit = code.slice(-1), rank = code.slice(0, -1);
  const c = el("div", { class: `card${small ? " small" : ""}${"HD".includes(suit) ? " red" : ""}${legal ? " legal" : ""}`,
                         "data-card": code, title: code },
               el("span", { class: "rank" }, rank), el("span", { class: "suit" }, SUIT_SIGNS[suit]));
  if (onclick) c.addEventListener("click", onclick);
  return c;
}

function backs(n) {
  const h = el("div", { class: "hand" });
  for (let i = 0; i < n; i++) h.append(el("div", { class: "card back small" }));
  return h;
}

function scoreBadges(imp, pts) {
  const span = el("span", { class: "badges" });
  for (let i = 0; i < imp; i++) span.append(el("span", { class: "imperiale", title: "impériale" }, "♛"));
  for (let i = 0; i < Math.floor(pts / 4); i++) span.append(el("span", { class: "counter", title: "counter (4 points)" }));
  return span;
}

function scoreBlock(s) {
  const box = el("div", { class: "score", id: "score" });
  for (let p = 0; p < s.players; p++) {
    box.append(el("div", { class: "score-line", "data-player": p, "data-imperiales": s.imperiales[p], "data-points": s.points[p] },
      `${s.names[p]}: ${s.imperiales[p]} impériale${s.imperiales[p] === 1 ? "" : "s"}, ${s.points[p]} points `,
      scoreBadges(s.imperiales[p], s.points[p])));
  }
  return box;
}

function trickCards(cards, names) {
  return cards.map(({ player, card: code }) => el("figure", {}, card(code, { small: true }), el("figcaption", {}, names[player])));
}

// The trick being played, and beside it the last finished trick with who won it and why: it stays
// until the next trick is finished, so a trick the bot won (and led after at once) is never missed.
function trickBlock(s) {
  const box = el("div", { class: "tricks" });
  box.append(el("div", { class: "trick", id: "trick" }, el("span", { class: "trick-label" }, "This trick"), trickCards(s.trick || [], s.names)));
  if (s.last_trick) {
    box.append(el("div", { class: "trick last", id: "last-trick", "data-winner": s.last_trick.winner },
      el("span", { class: "trick-label" }, "Last trick"), trickCards(s.last_trick.cards, s.names),
      el("p", { class: "trick-reason", id: "last-trick-reason" }, s.last_trick.text)));
  }
  return box;
}

// Every card played in this deal, by suit, as a player counts them.
function playedBlock(s) {
  const box = el("div", { class: "played", id: "played" }, el("b", {}, "Played this deal"));
  for (const suit of "SHDC") {
    const cards = (s.played && s.played[suit]) || [];
    box.append(el("div", { class: "played-suit", "data-suit": suit },
      el("span", { class: `suit-sign${"HD".includes(suit) ? " red" : ""}` }, SUIT_SIGNS[suit]), " ",
      cards.length ? cards.map((c) => c.slice(0, -1)).join(" ") : "–"));
  }
  return box;
}

function seatTitle(s, p) {
  const bits = [el("b", {}, s.names[p])];
  if (p === s.dealer) bits.push(" (dealer)");
  bits.push(` · tricks ${s.tricks[p]}`);
  const d = s.declared && s.declared[p];
  if (d) bits.push(` · point ${d.count} cards worth ${d.value}`);
  if (s.shown[p].length) bits.push(` · shown ${s.shown[p].join(" ")}`);
  return el("h3", {}, bits);
}

function eventsBlock(s) {
  const box = el("div", { class: "events", id: "events" });
  if (s.last_deal_events && s.last_deal_events.length) {
    box.append(el("p", {}, el("i", {}, "Last deal:")));
    for (const line of s.last_deal_events) box.append(el("p", {}, line));
  }
  box.append(el("p", {}, el("i", {}, `Deal ${s.deal + 1}:`)));
  for (const line of s.events) box.append(el("p", {}, line));
  return box;
}

function header(s) {
  return el("div", { class: "head" }, `${s.preset} · deal ${s.deal + 1} · trump ${SUIT_SIGNS[s.trump]} ${s.trump_name} · turned `,
            card(s.turned, { small: true }), ` · target ${s.target} impériales`);
}

// ------------------------------------------------------------------ play

function drawPlay(state) {
  const root = $("play-table");
  root.replaceChildren();
  const me = state.seat;
  root.append(header(state));
  for (let p = 0; p < state.players; p++) {
    if (p === me) continue;
    root.append(el("div", { class: "seat" }, seatTitle(state, p), backs(state.counts[p])));
  }
  root.append(el("div", { class: "middle" }, trickBlock(state), playedBlock(state), scoreBlock(state), eventsBlock(state)));
  const d = state.decision;
  const mine = d && d.player === me;
  const legalCards = new Set(mine && d.kind === "play" ? d.legal.map((a) => a.card) : []);
  if (state.news && state.news.length) root.append(newsBlock(state));
  if (mine && d.kind !== "play") root.append(questionBlock(d));
  if (state.resigned) {
    root.append(el("div", { class: "over", id: "game-over" }, "You resigned: the game is over. Save the record to replay it."));
  } else if (state.over) {
    const w = state.winner;
    root.append(el("div", { class: "over", id: "game-over" },
      w === null ? "The game is over." : (w === me ? "You win the game!" : `${state.names[w]} wins the game.`)));
  } else if (mine && d.kind === "play") {
    root.append(el("div", { class: "prompt" }, "Your turn: play a highlighted card.", whyLine(d)));
  }
  const hand = el("div", { class: "hand mine", id: "my-hand" });
  for (const code of state.hands[me] || [])
    hand.append(card(code, { legal: legalCards.has(code), onclick: () => move({ act: "play", card: code }) }));
  root.append(el("div", { class: "seat" }, seatTitle(state, me), hand));
  playNames = state.names;
  drawMyBeliefs();
  // The record holds the bot's cards: the server gives it once the game is finished.
  const dl = $("download");
  dl.hidden = !state.finished;
  dl.href = `/api/games/${gameId}/record`;
  $("resign").hidden = state.finished;
}

// The rule behind the decision in front of the person (the terminal's "Now:" line in `help`).
function whyLine(d) {
  return d.why ? el("p", { class: "why", id: "why" }, el("b", {}, "Now: "), d.why) : null;
}

// The score events the last move made (the person's and the bots' answers), told when they happen.
function newsBlock(s) {
  const box = el("div", { class: "news", id: "news", role: "status" }, el("b", {}, "Just scored"));
  for (const n of s.news) box.append(el("p", { class: "news-line", "data-deal": n.deal }, n.deal === s.deal ? n.text : `(deal ${n.deal + 1}) ${n.text}`));
  return box;
}

function questionBlock(d) {
  const box = el("div", { class: "question", id: "question" });
  if (d.kind === "question") {
    box.append(el("p", {}, d.question.text), el("div", { class: "question-cards" }, d.question.cards.map((c) => card(c, { small: true }))));
    box.append(el("div", {},
      el("button", { id: "answer-show", onclick: () => move({ act: "show" }) }, "Show"),
      el("button", { id: "answer-hide", onclick: () => move({ act: "hide" }) }, "Hide")));
  } else {
    box.append(el("p", {}, d.text));
    const row = el("div", {});
    for (const a of d.legal) {
      const label = a.act === "sink" ? "Sink" : `Point in ${SUIT_SIGNS[a.suit]}: ${a.count} card${a.count === 1 ? "" : "s"}, ${a.value}`;
      row.append(el("button", { class: "answer-point", "data-act": a.act, "data-suit": a.suit || "",
                                onclick: () => move(a) }, label));
    }
    box.append(row);
  }
  box.append(whyLine(d));
  return box;
}

// One move at a time: a second click while the server answers would be refused as out of turn.
// The table carries data-moving until the answer is drawn, which is also what a test waits on.
async function move(action) {
  const table = $("play-table");
  if (table.dataset.moving) return;
  table.dataset.moving = "1";
  try {
    const data = await thinking(() => api("POST", `/api/games/${gameId}/move`, { action }));
    showMessage("");
    drawPlay(data.state);
  } catch (e) {
    showMessage(`Move refused: ${e.message}`);
  } finally {
    delete table.dataset.moving;
  }
}

async function newGame(ev) {
  ev.preventDefault();
  const body = { preset: $("preset").value, opponent: $("opponent").value.trim() };
  const seed = $("seed").value.trim();
  if (seed) body.seed = /^\d+$/.test(seed) ? Number(seed) : seed;
  try {
    const data = await thinking(() => api("POST", "/api/games", body));
    gameId = data.id;
    localStorage.setItem("imperiale-visited", "1");
    $("hint").hidden = true;  // play has started: the welcome has done its work
    showMessage("");
    drawPlay(data.state);
  } catch (e) {
    showMessage(`Cannot start the game: ${e.message}`);
  }
}

async function resign() {
  if (!gameId) return;
  try {
    drawPlay((await api("POST", `/api/games/${gameId}/resign`)).state);
  } catch (e) {
    showMessage(`Cannot resign: ${e.message}`);
  }
}

// ------------------------------------------------------------------ replay

// The records of a file: one JSON object, or a .jsonl of one object a line; several are picked from a list.
function recordsOf(text) {
  const lines = text.split("\n").filter((l) => l.trim());
  try { return [JSON.parse(text)]; } catch (e) { if (lines.length < 2) throw e; }
  return lines.map((l, n) => {
    try { return JSON.parse(l); } catch (e) { throw new Error(`line ${n + 1}: ${e.message}`); }
  });
}

function offerRecords(records, labels) {
  const pick = $("record-pick");
  pick.replaceChildren();
  records.forEach((r, n) => pick.append(el("option", { value: n },
    labels ? labels[n] : `${n + 1}: ${(r.rules && r.rules.preset) || "?"}, ${(r.deals || []).length} deals`)));
  $("pick-label").hidden = records.length < 2;
  pick.onchange = () => openRecord(records[Number(pick.value)]);
  openRecord(records[0]);
}

async function openFile(text) {
  let records;
  try {
    records = recordsOf(text);
  } catch (e) {
    showMessage(`Cannot open the record: it is not JSON (${e.message})`);
    return;
  }
  offerRecords(records);
}

async function openRecord(record) {
  try {
    const data = await api("POST", "/api/replay", record);
    replay = { ...data, record };
    analysis = null;
    beliefCache.clear();
    at = 0;
    showMessage("");
    $("analyse").disabled = false;
    drawReplay();
  } catch (e) {
    showMessage(`Cannot open the record: ${e.message}`);
  }
}

function decisionAnalysis(next) {
  if (!analysis || !next) return null;
  const deal = analysis.deals[next.deal];
  return deal ? deal.decisions.find((d) => d.index === next.index) : null;
}

function drawReplay() {
  if (!replay) return;
  const frames = replay.frames;
  at = Math.max(0, Math.min(at, frames.length - 1));
  const s = frames[at];
  $("position").textContent = `step ${at} of ${frames.length - 1}`;
  const root = $("replay-table");
  root.replaceChildren(header(s));
  for (let p = 0; p < s.players; p++) {
    const hand = el("div", { class: "hand" });
    for (const code of s.hands[p]) hand.append(card(code));
    root.append(el("div", { class: "seat" }, seatTitle(s, p), hand));
  }
  root.append(el("div", { class: "middle" }, trickBlock(s), playedBlock(s), scoreBlock(s), eventsBlock(s)));
  if (s.next) {
    const n = s.next;
    const what = n.act === "play" ? `plays ${n.card}` : n.act === "point" ? `declares the point in ${n.suit}` : n.act;
    root.append(el("p", { class: "next-move" }, `Next: ${s.names[n.player]} ${what}`));
  } else {
    const f = replay.summary.final;
    const w = replay.summary.winner;
    root.append(el("div", { class: "over", id: "final-score", "data-final": JSON.stringify(f) },
      `End of the record. Final score: ` +
      f.imperiales.map((imp, p) => `${s.names[p]} ${imp} impériale${imp === 1 ? "" : "s"} ${f.points[p]} points`).join(", ") +
      (w === null ? " (unfinished game)" : ` · ${s.names[w]} wins`)));
  }
  drawAnalysis(s);
  drawReplayBeliefs(s);
}

function drawAnalysis(s) {
  const box = $("analysis");
  box.replaceChildren();
  if (!analysis) {
    box.append(el("p", {}, "Press Analyse for the value of every legal action (open-hand solver and pimc)."));
    return;
  }
  const a = decisionAnalysis(s.next);
  if (a) {
    box.append(el("h3", {}, `${s.names[a.player]}: ${a.kind}, ${a.tricks_left} tricks left`));
    if (a.note) box.append(el("p", {}, a.note));
    else {
      const rows = a.values.map((v) => {
        const label = Object.values(v.action).join(" ");
        const chosen = JSON.stringify(v.action) === JSON.stringify(a.action);
        const best = a.solver && v.solver === a.solver.best;
        return el("tr", { class: `${chosen ? "chosen" : ""} ${best ? "best" : ""}` },
          el("td", {}, label), el("td", {}, fmt(v.solver)), el("td", {}, fmt(v.pimc)));
      });
      box.append(el("table", { id: "values" }, el("tr", {}, el("th", {}, "action"), el("th", {}, "solver"), el("th", {}, "pimc")), rows));
      box.append(el("p", { id: "move-loss" }, "Loss of the move: ",
        el("span", { class: "loss" }, `solver ${fmt(a.solver && a.solver.loss)}`), ", ",
        el("span", { class: "loss" }, `pimc ${fmt(a.pimc && a.pimc.loss)}`), " points"));
    }
  }
  const dealIndex = s.next ? s.next.deal : analysis.deals.length - 1;
  const deal = analysis.deals[dealIndex];
  if (deal) {
    box.append(chart(deal, s.next ? s.next.index : null, s.players, s.names));
    box.append(el("p", {}, `Loss in deal ${dealIndex + 1} (solver): ` + deal.loss.solver.map((x, p) => `${s.names[p]} ${x.toFixed(1)}`).join(", ")));
  }
  box.append(el("p", {}, "Loss in the record (solver): " + analysis.loss.solver.map((x, p) => `${s.names[p]} ${x.toFixed(1)}`).join(", ")));
}

function fmt(x) { return x === null || x === undefined ? "–" : (x > 0 ? "+" : "") + Number(x).toFixed(1); }

// Okabe-Ito: told apart with every kind of colour blindness; a lost move is a square, not a colour.
const COLOURS = ["#0072B2", "#E69F00", "#009E73"];
const LOSS = "#D55E00";

// The solver's value of the move made, for the player who made it, over the deal (an inline SVG
// with its axes, their labels and a legend).
function chart(deal, current, players, names) {
  const W = 420, H = 230, left = 44, right = 12, top = 22, bottom = 62;
  const pts = deal.decisions.filter((d) => d.solver);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("width", W); svg.setAttribute("height", H); svg.setAttribute("class", "chart"); svg.setAttribute("id", "value-chart");
  svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "value of each move made, by decision");
  const add = (tag, attrs, text) => {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e); return e;
  };
  add("text", { x: left, y: 14, "font-size": 12 }, "Value of the move made (solver, points, for its player)");
  if (!pts.length) { add("text", { x: left, y: 90, "font-size": 12 }, "no decision valued in this deal"); return svg; }
  const n = deal.decisions.length;
  const vals = pts.flatMap((d) => [d.solver.chosen, d.solver.best]);
  const lo = Math.min(0, ...vals), hi = Math.max(0, ...vals, lo + 1);
  const x = (i) => left + (W - left - right) * (n <= 1 ? 0 : i / (n - 1));
  const y = (v) => top + (H - top - bottom) * (hi - v) / (hi - lo);
  const line = (x1, y1, x2, y2, extra = {}) => add("line", { x1, y1, x2, y2, stroke: "#444", ...extra });
  line(left, top, left, y(lo)); line(left, y(lo), W - right, y(lo)); line(left, y(0), W - right, y(0), { stroke: "#bbb", "stroke-dasharray": "3 3" });
  for (const v of [lo, 0, hi].filter((v, i, a) => a.indexOf(v) === i)) {
    line(left - 4, y(v), left, y(v));
    add("text", { x: left - 6, y: y(v) + 4, "font-size": 10, "text-anchor": "end" }, v.toFixed(0));
  }
  for (const i of [0, Math.floor((n - 1) / 2), n - 1].filter((v, k, a) => a.indexOf(v) === k)) {
    line(x(i), y(lo), x(i), y(lo) + 4);
    add("text", { x: x(i), y: y(lo) + 15, "font-size": 10, "text-anchor": "middle" }, String(i + 1));
  }
  add("text", { x: (left + W - right) / 2, y: y(lo) + 28, "font-size": 11, "text-anchor": "middle", class: "x-label" }, "decision in the deal");
  add("text", { x: 12, y: (top + y(lo)) / 2, "font-size": 11, "text-anchor": "middle", class: "y-label",
                transform: `rotate(-90 12 ${(top + y(lo)) / 2})` }, "points");
  for (let p = 0; p < players; p++) {
    const mine = pts.filter((d) => d.player === p);
    if (mine.length > 1) add("polyline", { fill: "none", stroke: COLOURS[p], "stroke-width": 1.5, points: mine.map((d) => `${x(d.index)},${y(d.solver.chosen)}`).join(" ") });
    for (const d of mine) {
      if (d.solver.loss > 0) add("rect", { x: x(d.index) - 4, y: y(d.solver.chosen) - 4, width: 8, height: 8, fill: LOSS, stroke: "#000", class: "loss-mark" });
      else add("circle", { cx: x(d.index), cy: y(d.solver.chosen), r: 2.5, fill: COLOURS[p] });
    }
  }
  if (current !== null) line(x(current), top, x(current), y(lo), { stroke: "#000", "stroke-width": 1, "stroke-dasharray": "2 2" });
  const legend = add("g", { class: "legend", id: "chart-legend" });
  let lx = left;
  const ly = H - 12;
  const item = (mark, text) => { legend.append(mark); const t = document.createElementNS("http://www.w3.org/2000/svg", "text");
    t.setAttribute("x", lx + 12); t.setAttribute("y", ly + 4); t.setAttribute("font-size", 10); t.textContent = text; legend.append(t); lx += 18 + 6 * text.length; };
  const mk = (tag, attrs) => { const e = document.createElementNS("http://www.w3.org/2000/svg", tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); return e; };
  for (let p = 0; p < players; p++) item(mk("circle", { cx: lx + 4, cy: ly, r: 4, fill: COLOURS[p] }), names[p]);
  item(mk("rect", { x: lx, y: ly - 4, width: 8, height: 8, fill: LOSS, stroke: "#000" }), "move that lost value");
  return svg;
}

// ------------------------------------------------------------------ beliefs (the belief model's view)

// Viridis: a sequential scale that stays ordered in lightness for every kind of colour blindness.
const VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#fde725"];
const RANK_ORDER = ["K", "Q", "J", "A", "10", "9", "8", "7", "6"];
const KNOWN_MARKS = { "in the hand": "h", played: "p", shown: "s", turned: "t", "not in the deck": "·" };

function viridis(p) {
  const x = Math.max(0, Math.min(1, p)) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2), f = x - i;
  const rgb = (h) => [1, 3, 5].map((k) => parseInt(h.slice(k, k + 2), 16));
  const a = rgb(VIRIDIS[i]), b = rgb(VIRIDIS[i + 1]);
  return `rgb(${a.map((v, k) => Math.round(v + (b[k] - v) * f)).join(",")})`;
}

function placeName(place, names) {
  if (place.seat === null) return "the talon";
  return names[place.seat] === "You" ? "your hand" : `${names[place.seat]}'s hand`;
}

// One 4 x 9 grid a place (suits by rank), each unseen card coloured by its probability of lying there;
// the cards the player knows are grey with a letter saying why.
function beliefMap(b, names) {
  const box = el("div", { class: "belief-map", id: "belief-map", "data-player": b.player });
  const you = names[b.player] === "You";
  box.append(el("p", { class: "belief-title" }, you
    ? "Where you believe the unseen cards are (the belief model, from your view only)"
    : `Where ${names[b.player]} believes the unseen cards are (the belief model, from ${names[b.player]}'s view only)`));
  const grids = el("div", { class: "belief-grids" });
  b.places.forEach((place, k) => {
    const table = el("table", { class: "belief-grid", "data-place": place.seat === null ? "talon" : place.seat });
    table.append(el("caption", {}, placeName(place, names)));
    table.append(el("tr", {}, el("th", {}), RANK_ORDER.map((r) => el("th", {}, r))));
    for (const suit of "SHDC") {
      const row = el("tr", {}, el("th", { class: `suit-sign${"HD".includes(suit) ? " red-dark" : ""}` }, SUIT_SIGNS[suit]));
      for (const r of RANK_ORDER) {
        const code = r + suit;
        if (code in b.cards) {
          const p = b.cards[code][k];
          const cell = el("td", { class: "belief-cell", "data-card": code, "data-p": p,
                                  title: `${code}: ${(100 * p).toFixed(0)}% in ${placeName(place, names)}` },
                          (100 * p).toFixed(0));
          cell.style.background = viridis(p);
          cell.style.color = p > 0.6 ? "#000" : "#fff";
          row.append(cell);
        } else {
          const why = b.known[code];
          row.append(el("td", { class: "belief-cell known", "data-card": code, "data-known": why,
                                title: `${code}: known to ${names[b.player]} (${why}), no belief` }, KNOWN_MARKS[why] || "?"));
        }
      }
      table.append(row);
    }
    grids.append(table);
  });
  box.append(grids, beliefLegend());
  return box;
}

function beliefLegend() {
  const bar = el("div", { class: "belief-bar" });
  bar.style.background = `linear-gradient(to right, ${VIRIDIS.join(", ")})`;
  return el("div", { class: "belief-legend", id: "belief-legend" },
    el("span", {}, "probability the card lies there: 0%"), bar, el("span", {}, "100% (numbers in %)"),
    el("span", { class: "belief-keys" }, "grey, known: ",
      Object.entries(KNOWN_MARKS).map(([why, mark]) => el("span", { class: "belief-key" },
        el("span", { class: "belief-cell known" }, mark), ` ${why}`))));
}

async function drawReplayBeliefs(s) {
  const box = $("beliefs");
  if (!replay || !s.next) { box.replaceChildren(el("p", {}, "No decision left: no belief.")); return; }
  const key = `${s.next.deal}:${s.next.index}`;
  const asked = ++beliefAsked;
  if (!beliefCache.has(key)) {
    try {
      beliefCache.set(key, await api("POST", "/api/beliefs", { record: replay.record, deal: s.next.deal, index: s.next.index }));
    } catch (e) {
      beliefCache.set(key, { error: e.message });
    }
  }
  if (asked !== beliefAsked) return;
  const b = beliefCache.get(key);
  box.replaceChildren(b.error ? el("p", { class: "belief-error" }, `No belief: ${b.error}`) : beliefMap(b, s.names));
}

async function drawMyBeliefs() {
  const box = $("play-beliefs");
  box.hidden = !$("my-beliefs").checked || !gameId;
  if (box.hidden) return;
  const asked = ++beliefAsked;
  try {
    const b = await api("GET", `/api/games/${gameId}/beliefs`);
    if (asked === beliefAsked) box.replaceChildren(beliefMap(b, playNames));
  } catch (e) {
    if (asked === beliefAsked) box.replaceChildren(el("p", { class: "belief-error" }, `No belief: ${e.message}`));
  }
}

// The server streams the analysis as JSON lines: progress while it runs, the annotated record last.
async function streamedAnalysis(body, onProgress) {
  let answer;
  try {
    answer = await fetch("/api/analyse", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  } catch (e) {
    throw new Error("the server cannot be reached: is `imperiale serve` still running?");
  }
  if (!answer.ok) {
    const data = await answer.json().catch(() => ({}));
    throw new Error(data.error || STATUS_WORDS[answer.status] || `the server answered ${answer.status}`);
  }
  const reader = answer.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "", last = null;
  for (;;) {
    const { done, value } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    const lines = buffer.split("\n");
    buffer = lines.pop();
    for (const line of lines.filter((l) => l.trim())) {
      const data = JSON.parse(line);
      if (data.progress) onProgress(data.progress); else last = data;
    }
    if (done) break;
  }
  if (!last) throw new Error("the analysis ended without an answer (the server stopped?)");
  if (last.error) throw new Error(last.error);
  return last;
}

function showAnalysisProgress(p) {
  const bar = $("analysis-progress");
  bar.hidden = false;
  if (p.total === null) { bar.removeAttribute("value"); $("analysis-status").textContent = "Analysing: reading the record…"; return; }
  bar.max = Math.max(p.total, 1);
  bar.value = p.done;
  $("analysis-status").textContent = `Analysing: ${p.done} of ${p.total} decisions valued (deal ${p.deal + 1})`;
}

async function runAnalysis() {
  if (!replay) return;
  const button = $("analyse");
  button.disabled = true;
  button.textContent = "Analysing…";
  showAnalysisProgress({ done: 0, total: null, deal: 0 });
  try {
    // Full depth (every trick valued) unless a horizon is asked for.
    const body = { record: replay.record, samples: Number($("samples").value) };
    const horizon = $("horizon").value.trim();
    if (horizon) body.horizon = Number(horizon);
    analysis = await streamedAnalysis(body, showAnalysisProgress);
    showMessage("");
    drawReplay();
  } catch (e) {
    showMessage(`Cannot analyse: ${e.message}`);
  } finally {
    button.disabled = false;
    button.textContent = "Analyse";
    $("analysis-progress").hidden = true;
    $("analysis-status").textContent = "";
  }
}

// ------------------------------------------------------------------ wiring

function switchView(name) {
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.view === name);
  $("view-play").hidden = name !== "play";
  $("view-replay").hidden = name !== "replay";
  showMessage("");
}

async function init() {
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => switchView(b.dataset.view));
  $("new-game").addEventListener("submit", newGame);
  $("record-file").addEventListener("change", async (ev) => {
    const f = ev.target.files[0];
    if (f) openFile(await f.text());
  });
  $("record-list").addEventListener("change", async (ev) => {
    if (!ev.target.value) return;
    try {
      const answer = await api("GET", `/api/records/${encodeURIComponent(ev.target.value)}`);
      offerRecords(answer.records || [answer], answer.labels);
    } catch (e) { showMessage(`Cannot open the record: ${e.message}`); }
  });
  $("analyse").addEventListener("click", runAnalysis);
  $("resign").addEventListener("click", resign);
  $("my-beliefs").addEventListener("change", drawMyBeliefs);
  $("hint").hidden = localStorage.getItem("imperiale-visited") === "1";
  $("hint-close").addEventListener("click", () => { localStorage.setItem("imperiale-visited", "1"); $("hint").hidden = true; });
  $("rules-open").addEventListener("click", () => $("rules").showModal());
  $("rules-close").addEventListener("click", () => $("rules").close());
  $("first").addEventListener("click", () => { at = 0; drawReplay(); });
  $("back").addEventListener("click", () => { at -= 1; drawReplay(); });
  $("forward").addEventListener("click", () => { at += 1; drawReplay(); });
  $("last").addEventListener("click", () => { at = replay ? replay.frames.length - 1 : 0; drawReplay(); });
  document.addEventListener("keydown", (ev) => {
    if ($("view-replay").hidden) return;
    if (ev.key === "ArrowRight") { at += 1; drawReplay(); }
    if (ev.key === "ArrowLeft") { at -= 1; drawReplay(); }
  });
  const options = await api("GET", "/api/options");
  for (const p of options.presets) $("preset").append(el("option", { value: p }, p));
  for (const a of options.agents) $("opponents").append(el("option", { value: a }));
  if (options.records) {
    $("folder-label").hidden = false;
    const list = await api("GET", "/api/records");
    for (const name of list.records) $("record-list").append(el("option", { value: name }, name));
  }
}

init().catch((e) => showMessage(`The page could not start: ${e.message}`));

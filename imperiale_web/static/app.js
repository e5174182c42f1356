// The page of `imperiale serve`: the play table and the replay with its analysis.
// No framework, no build step: the server keeps every game and checks every move.
"use strict";

const SUIT_SIGNS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const $ = (id) => document.getElementById(id);
let gameId = null;
let replay = null;     // {frames, summary, record}
let analysis = null;   // the annotated record, once asked for
let at = 0;            // the replay frame shown

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
  const answer = await fetch(path, options);
  const data = await answer.json().catch(() => ({ error: `the server answered ${answer.status}` }));
  if (!answer.ok || (data && data.error)) throw new Error(data.error || `the server answered ${answer.status}`);
  return data;
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

function trickBlock(s) {
  const t = el("div", { class: "trick", id: "trick" });
  const cards = s.trick && s.trick.length ? s.trick : (s.last_trick || []);
  const label = s.trick && s.trick.length ? "" : (s.last_trick ? "last trick: " : "");
  for (const { player, card: code } of cards)
    t.append(el("figure", {}, card(code, { small: true }), el("figcaption", {}, label + s.names[player])));
  return t;
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
  root.append(el("div", { class: "middle" }, trickBlock(state), scoreBlock(state), eventsBlock(state)));
  const d = state.decision;
  const mine = d && d.player === me;
  const legalCards = new Set(mine && d.kind === "play" ? d.legal.map((a) => a.card) : []);
  if (mine && d.kind !== "play") root.append(questionBlock(d));
  if (state.over) {
    const w = state.winner;
    root.append(el("div", { class: "over", id: "game-over" },
      w === null ? "The game is over." : (w === me ? "You win the game!" : `${state.names[w]} wins the game.`)));
  } else if (mine && d.kind === "play") {
    root.append(el("div", { class: "prompt" }, "Your turn: play a highlighted card."));
  }
  const hand = el("div", { class: "hand mine", id: "my-hand" });
  for (const code of state.hands[me] || [])
    hand.append(card(code, { legal: legalCards.has(code), onclick: () => move({ act: "play", card: code }) }));
  root.append(el("div", { class: "seat" }, seatTitle(state, me), hand));
  const dl = $("download");
  dl.hidden = false;
  dl.href = `/api/games/${gameId}/record`;
}

function questionBlock(d) {
  const box = el("div", { class: "question", id: "question" });
  if (d.kind === "question") {
    box.append(el("p", {}, d.question.text), el("span", {}, d.question.cards.map((c) => card(c, { small: true }))));
    box.append(el("div", {},
      el("button", { id: "answer-show", onclick: () => move({ act: "show" }) }, "Show"),
      el("button", { id: "answer-hide", onclick: () => move({ act: "hide" }) }, "Hide")));
  } else {
    box.append(el("p", {}, d.text));
    const row = el("div", {});
    for (const a of d.legal) {
      const label = a.act === "sink" ? "Sink" : `Point in ${SUIT_SIGNS[a.suit]}`;
      row.append(el("button", { class: "answer-point", "data-act": a.act, "data-suit": a.suit || "",
                                onclick: () => move(a) }, label));
    }
    box.append(row);
  }
  return box;
}

async function move(action) {
  try {
    const data = await api("POST", `/api/games/${gameId}/move`, { action });
    showMessage("");
    drawPlay(data.state);
  } catch (e) {
    showMessage(`Move refused: ${e.message}`);
  }
}

async function newGame(ev) {
  ev.preventDefault();
  const body = { preset: $("preset").value, opponent: $("opponent").value.trim() };
  const seed = $("seed").value.trim();
  if (seed) body.seed = /^\d+$/.test(seed) ? Number(seed) : seed;
  try {
    const data = await api("POST", "/api/games", body);
    gameId = data.id;
    showMessage("");
    drawPlay(data.state);
  } catch (e) {
    showMessage(`Cannot start the game: ${e.message}`);
  }
}

// ------------------------------------------------------------------ replay

async function openRecord(text) {
  let record;
  try {
    record = JSON.parse(text);
  } catch (e) {
    showMessage(`Cannot open the record: it is not JSON (${e.message})`);
    return;
  }
  try {
    const data = await api("POST", "/api/replay", record);
    replay = { ...data, record };
    analysis = null;
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
  root.append(el("div", { class: "middle" }, trickBlock(s), scoreBlock(s), eventsBlock(s)));
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
    box.append(chart(deal, s.next ? s.next.index : null, s.players));
    box.append(el("p", {}, `Loss in deal ${dealIndex + 1} (solver): ` + deal.loss.solver.map((x, p) => `${s.names[p]} ${x.toFixed(1)}`).join(", ")));
  }
  box.append(el("p", {}, "Loss in the record (solver): " + analysis.loss.solver.map((x, p) => `${s.names[p]} ${x.toFixed(1)}`).join(", ")));
}

function fmt(x) { return x === null || x === undefined ? "–" : (x > 0 ? "+" : "") + Number(x).toFixed(1); }

const COLOURS = ["#1565c0", "#c62828", "#2e7d32"];

// The solver's value of the move made, for the player who made it, over the deal (an inline SVG).
function chart(deal, current, players) {
  const W = 360, H = 160, pad = 28;
  const pts = deal.decisions.filter((d) => d.solver);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("width", W); svg.setAttribute("height", H); svg.setAttribute("class", "chart"); svg.setAttribute("id", "value-chart");
  const add = (tag, attrs, text) => {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e); return e;
  };
  add("text", { x: 4, y: 12, "font-size": 11 }, "value of the move made (solver, points, for its player)");
  if (!pts.length) { add("text", { x: 10, y: 80, "font-size": 12 }, "no decision valued in this deal"); return svg; }
  const n = deal.decisions.length;
  const vals = pts.flatMap((d) => [d.solver.chosen, d.solver.best]);
  const lo = Math.min(0, ...vals), hi = Math.max(0, ...vals) || 1;
  const x = (i) => pad + (W - 2 * pad) * (n <= 1 ? 0 : i / (n - 1));
  const y = (v) => H - pad + 8 - (H - 2 * pad) * (v - lo) / (hi - lo || 1);
  add("line", { x1: pad, x2: W - pad, y1: y(0), y2: y(0), stroke: "#999" });
  add("text", { x: 2, y: y(hi) + 4, "font-size": 10 }, hi.toFixed(0));
  add("text", { x: 2, y: y(lo) + 4, "font-size": 10 }, lo.toFixed(0));
  for (let p = 0; p < players; p++) {
    const mine = pts.filter((d) => d.player === p);
    if (mine.length > 1) add("polyline", { fill: "none", stroke: COLOURS[p], points: mine.map((d) => `${x(d.index)},${y(d.solver.chosen)}`).join(" ") });
    for (const d of mine) {
      add("circle", { cx: x(d.index), cy: y(d.solver.chosen), r: d.solver.loss > 0 ? 4 : 2.5, fill: d.solver.loss > 0 ? "#b3261e" : COLOURS[p] });
    }
  }
  if (current !== null) add("line", { x1: x(current), x2: x(current), y1: pad - 10, y2: H - pad + 8, stroke: "#f90", "stroke-width": 2 });
  return svg;
}

async function runAnalysis() {
  if (!replay) return;
  const button = $("analyse");
  button.disabled = true;
  button.textContent = "Analysing…";
  try {
    const samples = Number($("samples").value), horizon = Number($("horizon").value);
    analysis = await api("POST", "/api/analyse", { record: replay.record, samples, horizon });
    showMessage("");
    drawReplay();
  } catch (e) {
    showMessage(`Cannot analyse: ${e.message}`);
  } finally {
    button.disabled = false;
    button.textContent = "Analyse";
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
    if (f) openRecord(await f.text());
  });
  $("record-list").addEventListener("change", async (ev) => {
    if (!ev.target.value) return;
    try {
      const record = await api("GET", `/api/records/${encodeURIComponent(ev.target.value)}`);
      openRecord(JSON.stringify(record));
    } catch (e) { showMessage(`Cannot open the record: ${e.message}`); }
  });
  $("analyse").addEventListener("click", runAnalysis);
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

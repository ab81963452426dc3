// aptos-dca-bot console: the dashboard's one script (ours, no build step, no CDN).
//
// It reads the page's data-* attributes (which page, which strategy or order, how often
// to poll), fetches the API's JSON with the session cookie, and draws the page with DOM
// nodes (textContent only: nothing from the API is parsed as HTML). Every refresh
// *replaces* the nodes of each section, and the few things kept between refreshes are
// replaced too, never appended to: a page left open for days holds what one refresh drew.
// Polling pauses while the tab is hidden (document.visibilityState) and resumes at once
// when it is shown again. Money stays the API's exact text; the chart alone turns prices
// into numbers, to place points.
"use strict";
(() => {
  const data = document.body.dataset;
  const csrfMeta = document.querySelector('meta[name="csrf"]');
  const csrf = csrfMeta ? csrfMeta.content : "";
  const POLL_MS = Math.max(200, Number(data.poll || 5) * 1000);
  const SLOW_EVERY = Math.max(1, Math.round(60000 / POLL_MS)); // P&L, prices, fills: ~1/min
  const LIVE = new Set((data.live || "").split(",").filter(Boolean));
  const MAX_ROWS = 50;
  const VALUE_POINTS = 200; // moments of the wallet-value chart (the server evaluates them)
  const enc = encodeURIComponent;
  let memo = { pnl: null, prices: null, fills: null, value: null, symbols: null, slowError: "" };

  class LoggedOut extends Error {}

  async function api(path, options) {
    const init = { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } };
    if (options && options.method) {
      init.method = options.method;
      init.headers["X-Console-CSRF"] = csrf;
      if (options.body !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(options.body);
      }
    }
    const answer = await fetch("/api/v1" + path, init);
    if (answer.status === 401) {
      window.location.assign("/login");
      throw new LoggedOut("logged out");
    }
    let payload = null;
    try { payload = await answer.json(); } catch (e) { payload = null; }
    if (!answer.ok) throw new Error((payload && payload.detail) || "HTTP " + answer.status);
    return payload;
  }

  // --- DOM helpers --------------------------------------------------------------------
  function h(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined) continue;
      node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }
  function fill(id, ...nodes) {
    const target = document.querySelector("#" + id + " .body");
    if (target) target.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined));
  }
  function problem(text) {
    const line = document.getElementById("problem");
    line.textContent = text;
    line.hidden = !text;
  }
  const short = (v) => (!v ? "–" : v.length > 16 ? v.slice(0, 8) + "…" + v.slice(-4) : v);
  const token = (t) => (!t ? "–" : t.includes("::") ? t.split("::").pop() : short(t));
  // A token as people read it: its symbol when the API knows it, the exact identity in the tooltip.
  const sym = (symbol, t) => (!t ? "–" : h("span", { class: "token", title: t }, symbol || token(t)));
  const pair = (o) => [sym(o.from_symbol, o.from_token), " → ", sym(o.to_symbol, o.to_token)];
  function when(t) {
    if (!t) return "–";
    const d = new Date(t);
    return isNaN(d) ? String(t) : d.toISOString().slice(0, 16).replace("T", " ");
  }
  // The API's exact decimal text, rounded half-up to `places` for display (BigInt: no float).
  function rounded(v, places) {
    const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(v));
    if (!m || (m[3] || "").length <= places) return String(v);
    const [, sign, whole, frac] = m;
    const units = BigInt(whole + frac.slice(0, places)) + (Number(frac[places]) >= 5 ? 1n : 0n);
    const text = units.toString().padStart(places + 1, "0");
    const out = places ? text.slice(0, -places) + "." + text.slice(-places) : text;
    return (sign && /[1-9]/.test(out) ? "-" : "") + out;
  }
  function money(v, places) {
    if (v === null || v === undefined) return "n/a";
    const shown = rounded(v, places === undefined ? 8 : places);
    return shown === String(v) ? shown : h("span", { title: String(v) }, shown);
  }
  const usd = (v) => money(v, 2);
  function signed(v) {
    if (v === null || v === undefined) return h("span", { class: "muted" }, "n/a");
    const s = String(v);
    const shown = rounded(s, 2);
    const tone = !/[1-9]/.test(shown) ? "" : shown.startsWith("-") ? "neg" : "pos";
    return h("span", { class: tone, title: s }, shown);
  }
  const badge = (text) => h("span", { class: "badge " + text }, text);
  const orderLink = (o) =>
    h("a", { href: "/orders/" + enc(o.order_id) + "?kind=" + enc(o.kind) }, h("code", {}, short(o.order_id)));
  const strategyLink = (name) => (name ? h("a", { href: "/strategies/" + enc(name) }, name) : "–");
  function card(label, value, id) {
    return h("div", { class: "card", id: id }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
  }
  function table(columns, rows, empty) {
    if (!rows || rows.length === 0) return h("p", { class: "muted" }, empty || "none");
    const head = h("tr", {}, columns.map((c) => h("th", { class: c.num ? "num" : c.small ? "hide-small" : null }, c.title)));
    const body = rows.slice(0, MAX_ROWS).map((row) =>
      h("tr", {}, columns.map((c) => h("td", { class: c.num ? "num" : c.small ? "hide-small" : null }, c.cell(row)))));
    return h("div", { class: "scroll" }, h("table", {}, h("thead", {}, head), h("tbody", {}, body)));
  }

  // --- shared pieces ------------------------------------------------------------------
  function ordersTable(page) {
    const rows = page.items;
    const shown = table([
      { title: "Order", cell: orderLink },
      { title: "Kind", cell: (o) => o.kind },
      { title: "Strategy", cell: (o) => strategyLink(o.strategy) },
      { title: "Status", cell: (o) => badge(o.status) },
      { title: "Pair", cell: pair },
      { title: "Amount", num: true, cell: (o) => money(o.amount_total) },
      { title: "Spent", num: true, small: true, cell: (o) => money(o.amount_spent) },
      { title: "Rate", num: true, small: true, cell: (o) => money(o.rate) },
      { title: "Updated", small: true, cell: (o) => when(o.updated_at) },
    ], rows, "no orders");
    const more = page.total > rows.length ? h("p", { class: "muted" }, rows.length + " of " + page.total + " shown") : null;
    return [shown, more];
  }
  // Fills as `/fills` gives them: each with its order's kind, id, strategy and tokens.
  function fillsTable(fills) {
    return table([
      { title: "When", cell: (f) => when(f.time || f.recorded_at) },
      { title: "Order", cell: orderLink },
      { title: "Strategy", small: true, cell: (f) => strategyLink(f.strategy) },
      { title: "Paid", num: true, cell: (f) => [money(f.from_amount), " ", sym(f.from_symbol, f.from_token)] },
      { title: "Got", num: true, cell: (f) => [money(f.to_amount), " ", sym(f.to_symbol, f.to_token)] },
      { title: "Fee", num: true, small: true, cell: (f) => money(f.fee_amount) },
      { title: "Tx", small: true, cell: (f) => h("code", {}, short(f.tx_id)) },
    ], fills, "no fills yet");
  }
  const FILLS = "/fills?type=filled&limit=20";
  async function slowly(work) {
    try { await work(); memo.slowError = ""; } catch (e) {
      if (e instanceof LoggedOut) throw e;
      memo.slowError = e.message;
    }
  }

  // --- overview -----------------------------------------------------------------------
  async function overview(slow) {
    const others = api("/remotes").catch((e) => (e instanceof LoggedOut ? Promise.reject(e) : { error: e.message }));
    const [status, strategies, open, alerts, fills] = await Promise.all([
      api("/status"), api("/strategies"), api("/orders?state=open&limit=" + MAX_ROWS), api("/alerts?limit=20"),
      api(FILLS)]);
    if (slow || memo.pnl === null) {
      await slowly(async () => {
        const [pnl, value] = await Promise.all([api("/pnl"), api("/value?points=" + VALUE_POINTS)]);
        memo = { ...memo, pnl: pnl, value: value };
      });
    }
    const daemon = document.getElementById("daemon");
    daemon.textContent = status.available ? status.state + " · " + status.mode + (status.healthy === false ? " · unhealthy" : "") : "no status yet";
    const wallets = memo.pnl ? memo.pnl.wallets : [];
    const cards = wallets.map((w) => [
      card("Wallet value (USD) " + short(w.strategy), usd(w.value_usd), "wallet-value"),
      card("P&L (USD)", signed(w.pnl_usd), "wallet-pnl"),
      card("Realised (USD)", signed(w.realised_usd)),
    ]);
    if (wallets.length === 0) cards.push(card("Wallet value (USD)", memo.slowError || "no trades yet", "wallet-value"));
    cards.push(card("Open orders", String(open.total), "open-count"));
    cards.push(card("APT for gas", money(status.apt_balance)));
    fill("wallet", h("div", { class: "cards" }, cards), memo.slowError ? h("p", { class: "error" }, memo.slowError) : null);
    const pnlOf = new Map(((memo.pnl && memo.pnl.strategies) || []).map((s) => [s.strategy, s]));
    fill("strategies", table([
      { title: "Strategy", cell: (s) => strategyLink(s.name) },
      { title: "State", cell: (s) => badge(s.paused ? "paused" : s.enabled === false ? "disabled" : "running") },
      { title: "Value (USD)", num: true, cell: (s) => usd(pnlOf.has(s.name) ? pnlOf.get(s.name).value_usd : null) },
      { title: "P&L (USD)", num: true, cell: (s) => signed(pnlOf.has(s.name) ? pnlOf.get(s.name).pnl_usd : null) },
      { title: "Avg entry", num: true, small: true, cell: (s) => {
        const p = pnlOf.get(s.name);
        return money(p && p.position ? p.position.average_entry : null, 6);
      } },
      { title: "Ticks", num: true, small: true, cell: (s) => money(s.ticks) },
      { title: "Errors", num: true, small: true, cell: (s) => money(s.errors) },
      { title: "Last tick", small: true, cell: (s) => when(s.last_tick) },
    ], strategies.items, "no strategies"));
    fill("value", valueChart(memo.value));
    fill("open-orders", ordersTable(open));
    fill("fills", fillsTable(fills.items));
    fill("alerts", !alerts.kept ? h("p", { class: "muted" }, "this daemon keeps no alerts")
      : alerts.items.length === 0 ? h("p", { class: "muted" }, "no alerts")
      : h("ul", { class: "alerts" }, alerts.items.map((a) =>
        h("li", {}, h("span", { class: "muted" }, when(a.at) + " "), badge(a.kind), " " + a.text))));
    fill("remotes", remotesView(await others));
  }

  // --- other bots (read-only, fetched by this bot's console) --------------------------
  function remotesView(answer) {
    if (answer.error) return h("p", { class: "error" }, answer.error);
    if (answer.items.length === 0) return h("p", { class: "muted" }, "none configured ([console].remotes)");
    const wallet = (r) => (r.wallets.length ? r.wallets[0] : null);
    const bots = table([
      { title: "Bot", cell: (r) => h("strong", {}, r.name) },
      { title: "State", cell: (r) => [badge(r.state === "ok" ? (r.status && r.status.state) || "ok" : r.state),
        r.problem ? h("span", { class: "muted" }, " " + r.problem) : null] },
      { title: "Wallet", small: true, cell: (r) => h("code", {}, short((r.status && r.status.wallet) || (wallet(r) && wallet(r).strategy))) },
      { title: "Value (USD)", num: true, cell: (r) => usd(wallet(r) ? wallet(r).value_usd : null) },
      { title: "P&L (USD)", num: true, cell: (r) => signed(wallet(r) ? wallet(r).pnl_usd : null) },
      { title: "Open orders", num: true, cell: (r) => (r.open_orders ? String(r.open_orders.total) : "–") },
      { title: "Checked", small: true, cell: (r) => when(r.checked_at) },
    ], answer.items);
    const orders = [];
    for (const r of answer.items) for (const o of (r.open_orders ? r.open_orders.items : [])) orders.push([r.name, o]);
    const open = orders.length === 0 ? null : table([
      { title: "Bot", cell: ([name]) => name },
      { title: "Order", cell: ([, o]) => h("code", {}, short(o.order_id)) },
      { title: "Strategy", small: true, cell: ([, o]) => o.strategy || "–" },
      { title: "Status", cell: ([, o]) => badge(o.status) },
      { title: "Pair", cell: ([, o]) => pair(o) },
      { title: "Amount", num: true, cell: ([, o]) => money(o.amount_total) },
    ], orders);
    return [bots, open ? h("h3", {}, "Their open orders") : null, open];
  }

  // --- charts (inline SVG; the API's exact text turned into numbers only to place points) ---
  // lines: [{ cls, points: [[ms, y], ...] }]; level: { y, text } drawn dashed across.
  function svgChart(lines, level, label) {
    const drawn = lines.map((l) => ({ cls: l.cls, points: l.points.filter((p) => isFinite(p[0]) && isFinite(p[1])) }))
      .filter((l) => l.points.length >= 2);
    if (drawn.length === 0) return null;
    const W = 640, H = 240, L = 56, R = 10, T = 10, B = 26;
    const all = drawn.flatMap((l) => l.points);
    const xs = all.map((p) => p[0]);
    const ys = all.map((p) => p[1]).concat(level && isFinite(level.y) ? [level.y] : []);
    const x0 = Math.min(...xs), x1 = Math.max(...xs);
    let y0 = Math.min(...ys), y1 = Math.max(...ys);
    if (y1 === y0) { y0 -= 1; y1 += 1; }
    const X = (x) => L + ((x - x0) / (x1 - x0 || 1)) * (W - L - R);
    const Y = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
    const NS = "http://www.w3.org/2000/svg";
    const s = (tag, attrs, text) => {
      const node = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
      if (text !== undefined) node.textContent = text;
      return node;
    };
    const svg = s("svg", { class: "chart", viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": label });
    svg.append(s("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
    svg.append(s("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
    svg.append(s("text", { x: L - 4, y: T + 10, "text-anchor": "end" }, y1.toPrecision(4)));
    svg.append(s("text", { x: L - 4, y: H - B, "text-anchor": "end" }, y0.toPrecision(4)));
    svg.append(s("text", { x: L, y: H - 8 }, when(new Date(x0).toISOString())));
    svg.append(s("text", { x: W - R, y: H - 8, "text-anchor": "end" }, when(new Date(x1).toISOString())));
    for (const l of drawn) {
      const line = l.points.map((p) => X(p[0]).toFixed(1) + "," + Y(p[1]).toFixed(1)).join(" ");
      svg.append(s("polyline", { class: l.cls, points: line }));
    }
    if (level && isFinite(level.y)) {
      svg.append(s("line", { class: "entry", x1: L, y1: Y(level.y), x2: W - R, y2: Y(level.y) }));
      svg.append(s("text", { x: W - R, y: Y(level.y) - 4, "text-anchor": "end" }, level.text));
    }
    return svg;
  }
  const at = (t) => Date.parse(t);
  function chart(prices, pnl, symbols) {
    const points = (prices ? prices.items : []).map((p) => [at(p.timestamp), Number(p.usd_price)]);
    const entry = pnl && pnl.position && pnl.position.average_entry !== null ? pnl.position.average_entry : null;
    const level = entry === null ? null : { y: Number(entry), text: "average entry " + rounded(entry, 6) };
    const svg = svgChart([{ cls: "price", points: points }], level, "price and average entry");
    if (svg === null) return h("p", { class: "muted" }, "not enough recorded prices to draw");
    const named = (t) => (symbols && symbols[t]) || token(t);
    const legend = h("p", { class: "muted" }, "price of " + named(prices.token) + " in USD (line), average entry in "
      + named(pnl && pnl.position ? pnl.position.quote : "") + " per " + named(prices.token) + " (dashed)");
    return [svg, legend];
  }
  function valueChart(value) {
    const wallets = value ? value.wallets : [];
    if (wallets.length === 0) return h("p", { class: "muted" }, memo.slowError || "no trades yet");
    return wallets.map((w) => {
      const svg = svgChart([
        { cls: "cost", points: w.points.map((p) => [at(p.at), Number(p.cost_usd)]) },
        { cls: "value", points: w.points.filter((p) => p.value_usd !== null).map((p) => [at(p.at), Number(p.value_usd)]) },
      ], null, "wallet value over time");
      const last = w.points[w.points.length - 1];
      return h("div", { class: "wallet-series", "data-wallet": w.wallet, "data-points": String(w.points.length) },
        svg || h("p", { class: "muted" }, "not enough points to draw"),
        h("p", { class: "muted" }, "wallet ", h("code", {}, short(w.wallet)), ": value of its holdings in USD (line) and "
          + "their remaining cost (grey) at " + w.points.length + " moments; now ", usd(last ? last.value_usd : null),
          " USD (P&L ", signed(last ? last.pnl_usd : null), ")"));
    });
  }

  // --- strategy -----------------------------------------------------------------------
  async function strategyPage(slow) {
    const name = data.strategy;
    const [strategies, orders] = await Promise.all([
      api("/strategies"), api("/orders?strategy=" + enc(name) + "&limit=30")]);
    const found = strategies.items.find((s) => s.name === name);
    if (!found) throw new Error("no strategy " + name + " in the journal or the settings");
    if (slow || memo.fills === null) {
      await slowly(async () => {
        const all = await api("/pnl");
        const pnl = all.strategies.find((s) => s.strategy === name) || null;
        const base = pnl && pnl.position ? pnl.position.base : null;
        const prices = base ? await api("/prices?token=" + enc(base) + "&limit=500") : null;
        memo = { ...memo, pnl: pnl, prices: prices, symbols: all.symbols,
          fills: (await api(FILLS + "&strategy=" + enc(name))).items };
      });
    }
    document.getElementById("pause").disabled = found.paused;
    document.getElementById("resume").disabled = !found.paused;
    const pnl = memo.pnl;
    fill("summary", h("div", { class: "cards" },
      card("State", badge(found.paused ? "paused" : "running"), "strategy-state"),
      card("Value (USD)", usd(pnl ? pnl.value_usd : null)),
      card("P&L (USD)", signed(pnl ? pnl.pnl_usd : null)),
      card("Average entry", money(pnl && pnl.position ? pnl.position.average_entry : null, 6)),
      card("Ticks / errors", (found.ticks ?? "–") + " / " + (found.errors ?? "–")),
      card("Last tick", when(found.last_tick))),
      found.last_error ? h("p", { class: "error" }, "last error: " + found.last_error) : null,
      memo.slowError ? h("p", { class: "error" }, memo.slowError) : null);
    fill("chart", chart(memo.prices, pnl, memo.symbols));
    fill("orders", ordersTable(orders));
    fill("fills", fillsTable(memo.fills || []));
  }

  // --- order --------------------------------------------------------------------------
  async function orderPage() {
    const kind = data.kind ? "?kind=" + enc(data.kind) : "";
    const d = await api("/orders/" + enc(data.order) + kind);
    const o = d.order;
    const cancel = document.getElementById("cancel");
    cancel.hidden = !LIVE.has(o.status);
    const rows = [
      ["Status", badge(o.status)], ["Kind", o.kind], ["Strategy", strategyLink(o.strategy)],
      ["Order id", h("code", { class: "wrap" }, o.order_id)],
      ["Pair", pair(o)], ["Amount", money(o.amount_total)],
      ["Spent", money(o.amount_spent)], ["Received", money(o.to_amount_received)], ["Rate", money(o.rate)],
      ["Slices", o.orders_total === null ? "–" : (o.orders_completed || 0) + " of " + o.orders_total],
      ["Created", when(o.created_at)], ["Last seen", when(o.last_seen_at)],
      ["Intent", d.intent ? "#" + d.intent.id + " " + d.intent.kind + " (" + d.intent.state + ")" : "–"],
    ];
    fill("summary", h("div", { class: "scroll" }, h("table", {}, h("tbody", {},
      rows.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v)))))));
    fill("transitions", table([
      { title: "When", cell: (t) => when(t.observed_at) },
      { title: "From", cell: (t) => t.from_status || "–" },
      { title: "To", cell: (t) => badge(t.to_status) },
      { title: "Seen by", cell: (t) => t.source },
    ], d.transitions, "no transitions"));
    const own = { order_id: o.order_id, kind: o.kind, strategy: o.strategy, from_token: o.from_token,
      to_token: o.to_token, from_symbol: o.from_symbol, to_symbol: o.to_symbol };
    fill("fills", fillsTable(d.fills.filter((f) => f.type === "filled").map((f) => Object.assign({}, own, f))));
    fill("transactions", table([
      { title: "Hash", cell: (t) => h("code", { class: "hash wrap" }, t.hash) },
      { title: "State", cell: (t) => badge(t.state) },
      { title: "Gas", num: true, cell: (t) => money(t.gas_used) },
      { title: "What", small: true, cell: (t) => t.payload_summary },
      { title: "When", small: true, cell: (t) => when(t.created_at) },
    ], d.transactions, "no transactions recorded for this order"));
  }

  // --- reports ------------------------------------------------------------------------
  async function reportsPage() {
    const found = await api("/reports");
    document.getElementById("reports-folder").textContent = found.folder_exists
      ? (found.truncated ? "the first " + found.items.length + " reports found" : found.items.length + " report(s)")
      : "the reports folder does not exist yet ([console].reports_dir)";
    fill("reports", table([
      { title: "Report", cell: (r) => h("a", { href: r.url, class: "report" }, r.path) },
      { title: "Written", cell: (r) => when(r.modified) },
      { title: "Size", num: true, small: true, cell: (r) => Math.max(1, Math.round(r.size / 1024)) + " KiB" },
    ], found.items, "no HTML reports yet: bot backtest --report DIR, bot report --html DIR"));
  }

  // --- controls -----------------------------------------------------------------------
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  async function control(path, body) {
    const line = document.getElementById("command");
    const buttons = document.querySelectorAll(".actions button");
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const queued = await api(path, { method: "POST", body: body });
      line.textContent = queued.kind + " queued (command " + queued.command_id + ")";
      for (let i = 0; i < 60; i++) {
        await sleep(Math.min(POLL_MS, 1000));
        const c = await api("/commands/" + queued.command_id);
        if (c.state === "done" || c.state === "failed") {
          line.textContent = c.kind + " " + c.state + ": " + (c.result || "");
          break;
        }
        line.textContent = c.kind + " " + c.state + " (command " + queued.command_id + ")";
      }
    } catch (e) {
      if (!(e instanceof LoggedOut)) line.textContent = e.message;
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
      refreshNow();
    }
  }
  function wire() {
    const pause = document.getElementById("pause");
    const resume = document.getElementById("resume");
    const cancel = document.getElementById("cancel");
    const name = data.strategy;
    if (pause) pause.addEventListener("click", () => control("/strategies/" + enc(name) + "/pause"));
    if (resume) resume.addEventListener("click", () => control("/strategies/" + enc(name) + "/resume"));
    if (cancel) cancel.addEventListener("click", () => {
      if (window.confirm("Cancel order " + short(data.order) + "?")) {
        control("/orders/" + enc(data.order) + "/cancel", data.kind ? { kind: data.kind } : undefined);
      }
    });
  }

  // --- polling ------------------------------------------------------------------------
  const pages = { overview: overview, strategy: strategyPage, order: orderPage, reports: reportsPage };
  const refresh = pages[data.page];
  let timer = null;
  let busy = false;
  let cycle = 0;
  let stopped = false;
  async function tick() {
    timer = null;
    if (stopped || busy || document.visibilityState === "hidden") return;
    busy = true;
    try {
      await refresh(cycle % SLOW_EVERY === 0);
      problem("");
      document.getElementById("updated").textContent =
        "updated " + new Date().toISOString().slice(11, 19) + " UTC, every " + POLL_MS / 1000 + " s while shown";
    } catch (e) {
      if (e instanceof LoggedOut) stopped = true;
      else problem(e.message);
    } finally {
      busy = false;
      cycle += 1;
      schedule();
    }
  }
  function schedule() {
    if (timer === null && !stopped && document.visibilityState !== "hidden") timer = setTimeout(tick, POLL_MS);
  }
  function refreshNow() {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    tick();
  }
  if (refresh) {
    wire();
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") refreshNow();
    });
    tick();
  }
})();

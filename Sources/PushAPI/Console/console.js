// PushFleet console: one page, routed by the URL's fragment (#/overview, #/jobs/<id>, …).
// Everything it shows comes from the public API (/v1/apps/{app}/…), called with the app's API
// key held in session storage; nothing is stored on the server. Data is written with
// textContent only, never as HTML.
"use strict";

const storage = window.sessionStorage;
const session = {
  get app() { return storage.getItem("pushfleet.app"); },
  get key() { return storage.getItem("pushfleet.key"); },
  set(app, key) { storage.setItem("pushfleet.app", app); storage.setItem("pushfleet.key", key); },
  clear() { storage.removeItem("pushfleet.app"); storage.removeItem("pushfleet.key"); },
};

const $ = (id) => document.getElementById(id);

// ---- small DOM helpers ----------------------------------------------------------------------

function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") element.className = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const SVG = "http://www.w3.org/2000/svg";
function s(tag, attributes, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes || {})) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

function table(headers, rows, numeric = []) {
  if (rows.length === 0) return h("p", { class: "meta" }, "Nothing to show.");
  return h("table", {},
    h("thead", {}, h("tr", {}, headers.map((name, index) => h("th", { scope: "col", class: numeric.includes(index) ? "num" : null }, name)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell, index) =>
      h("td", { class: numeric.includes(index) ? "num" : null }, cell))))));
}

function figures(list, pairs) {
  list.replaceChildren(...pairs.flatMap(([name, value, id]) => [h("dt", {}, name), h("dd", { id: id || null }, value)]));
}

const number = (value) => (value === null || value === undefined ? "–" : Number(value).toLocaleString("en-US"));
const time = (ms) => (ms ? new Date(Number(ms)).toLocaleString() : "–");
const percent = (part, whole) => (whole > 0 ? `${(100 * part / whole).toFixed(1)}%` : "–");
const lines = (text) => text.split(/[\n,]/).map((item) => item.trim()).filter(Boolean);

let toastTimer = null;
function toast(text) {
  $("toast").textContent = text;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { $("toast").textContent = ""; }, 4000);
}

// ---- the API ---------------------------------------------------------------------------------

class APIError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `the API answered ${status}`);
    this.status = status;
    this.code = error.code || "error";
    this.field = error.field || null;
  }
  // "field: message", as the API names it.
  get text() { return this.field ? `${this.field}: ${this.message}` : this.message; }
}

const appPath = (path) => `/v1/apps/${encodeURIComponent(session.app)}${path}`;

async function api(method, path, body, headers = {}) {
  const init = { method, headers: { Authorization: `Bearer ${session.key}`, ...headers } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if ((response.status === 401 || response.status === 403) && path.startsWith("/v1/")) {
    // A key that is not (or no longer) the app's, or one that may not do this: sign in again.
    const error = new APIError(response.status, json);
    session.clear();
    showSignIn(error.message);
    throw error;
  }
  if (!response.ok) throw new APIError(response.status, json);
  return json;
}

// Reads `text/event-stream` with the bearer key (an EventSource cannot send one). Calls
// onEvent(name, data) per event; resolves when the server ends the stream.
async function readEvents(path, onEvent, signal) {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${session.key}`, Accept: "text/event-stream" }, signal });
  if (!response.ok) throw new APIError(response.status, await response.json().catch(() => null));
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

// ---- routing -----------------------------------------------------------------------------------

const pages = {};
let leaving = null;

function showPage(id) {
  for (const page of document.querySelectorAll(".page")) page.hidden = page.id !== `page-${id}`;
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.page === id || (id === "job" && link.dataset.page === "jobs")) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const heading = document.querySelector(`#page-${id} h1`);
  if (heading) {
    document.title = `${heading.textContent} · PushFleet console`;
    heading.focus();
  }
}

function showSignIn(message) {
  $("nav").hidden = true;
  $("sign-out").hidden = true;
  $("who").textContent = "";
  $("signin-error").textContent = message || "";
  $("signin-app").value = session.app || $("signin-app").value;
  showPage("signin");
}

async function route() {
  if (leaving) { leaving(); leaving = null; }
  if (!session.key) { showSignIn(); return; }
  $("nav").hidden = false;
  $("sign-out").hidden = false;
  $("who").textContent = `app ${session.app}`;
  const [, name, ...rest] = (location.hash || "#/overview").slice(1).split("/");
  const query = new URLSearchParams((location.hash.split("?")[1]) || "");
  const page = pages[name.split("?")[0]];
  if (!page) { location.hash = "#/overview"; return; }
  leaving = await page(rest.map(decodeURIComponent), query) || null;
}

window.addEventListener("hashchange", route);

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const app = $("signin-app").value.trim();
  const key = $("signin-key").value.trim();
  if (!app || !key) { $("signin-error").textContent = "App id and API key are both required."; return; }
  session.set(app, key);
  try {
    await api("GET", appPath("/devices"));
    $("signin-key").value = "";
    if (!location.hash || location.hash === "#/signin") location.hash = "#/overview";
    else route();
  } catch (error) {
    session.clear();
    showSignIn(error.status === 404 ? `No app '${app}' is configured.` : error.message);
  }
});

$("sign-out").addEventListener("click", () => {
  session.clear();
  location.hash = "#/signin";
  showSignIn("Signed out.");
});

// ---- overview ---------------------------------------------------------------------------------

pages.overview = async () => {
  showPage("overview");
  let previous = null;
  const refresh = async () => {
    const [devices, online, tags, jobs, ready] = await Promise.all([
      api("GET", appPath("/devices")),
      api("GET", appPath("/online")),
      api("GET", appPath("/tags")),
      api("GET", appPath(`/jobs?limit=20&since=${Date.now() - 7 * 86400000}`)),
      fetch("/readyz").then((answer) => answer.json()).catch(() => ({ status: "unavailable", checks: {} })),
    ]);
    figures($("ov-devices"), [
      ["sandbox", number(devices.sandbox), "ov-sandbox"], ["production", number(devices.production), "ov-production"],
      ["kept aside (suspect)", number(devices.suspect.sandbox + devices.suspect.production)], ["total", number(devices.total)],
      ["online now (connected to a gateway)", `${number(online.devices)} on ${number(online.gateways)} gateway(s)`, "ov-online"],
    ]);
    const tagEntries = Object.entries(tags.tags).sort((a, b) => b[1] - a[1]);
    const most = Math.max(1, ...tagEntries.map(([, count]) => count));
    $("ov-tags").replaceChildren(table(["Tag", "Devices", ""], tagEntries.map(([tag, count]) => [
      tag, number(count), barCell(count / most, `${tag}: ${count} devices`)]), [1]));
    const list = jobs.jobs.map((entry) => entry.status);
    $("ov-jobs").replaceChildren(jobTable(jobs.jobs));
    const done = list.filter((job) => job.state === "in-progress").reduce((sum, job) => sum + job.accepted + job.online + job.inboxed + job.failed, 0);
    const now = Date.now();
    let rate = "–";
    if (previous) rate = `${number(Math.max(0, Math.round((done - previous.done) / ((now - previous.at) / 1000))))} /s`;
    previous = { done, at: now };
    const checks = ready.checks || {};
    figures($("ov-health"), [
      ["readiness", ready.status || "unavailable", "ov-ready"], ["Kafka", checks.kafka || "–"], ["Redis", checks.redis || "–"],
      ["notifications/s now", rate, "ov-rate"],
      ["campaigns running", number(list.filter((job) => job.state === "in-progress").length)],
    ]);
  };
  await refresh().catch((error) => toast(error.message));
  await showHours().catch((error) => toast(error.message));
  const timer = setInterval(() => refresh().catch(() => {}), 3000);
  return () => clearInterval(timer);
};

const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const hourName = (cell) => `${WEEKDAYS[cell.weekday - 1]} ${cell.hour}:00`;

// The hour-of-day statistics as a heatmap: a row per weekday, a column per hour of the app's
// time zone, darker where a larger share of what was sent was delivered; each cell is labelled.
async function showHours() {
  const stats = await api("GET", appPath("/stats/hours?days=28"));
  $("ov-hours-caption").textContent =
    `Delivery rate by weekday and hour, last ${stats.days} days, ${stats["time-zone"]} (receipts of the hour over notifications sent in it).`;
  const size = 18, left = 36, top = 16;
  const svg = s("svg", { id: "ov-heatmap", width: left + 24 * size, height: top + 7 * size, role: "img",
    "aria-label": "Delivery rate by weekday and hour" });
  for (let hour = 0; hour < 24; hour += 3) {
    svg.append(s("text", { x: left + hour * size + 2, y: 11, class: "heat-label" }, String(hour)));
  }
  WEEKDAYS.forEach((name, row) => svg.append(s("text", { x: 0, y: top + row * size + 13, class: "heat-label" }, name)));
  for (const cell of stats.hours) {
    const rate = cell["delivery-rate"];
    const label = rate === null
      ? `${hourName(cell)}: nothing sent`
      : `${hourName(cell)}: ${(100 * rate).toFixed(1)}% of ${number(cell.sent)} delivered, ${number(cell.opened)} opened`;
    const rect = s("rect", {
      x: left + cell.hour * size, y: top + (cell.weekday - 1) * size, width: size - 2, height: size - 2,
      fill: rate === null ? "#eef1f4" : `rgba(11, 87, 208, ${(0.12 + 0.88 * Math.min(1, rate)).toFixed(3)})`,
      "data-weekday": cell.weekday, "data-hour": cell.hour, "data-sent": cell.sent, "aria-label": label,
    });
    rect.append(s("title", {}, label));
    svg.append(rect);
  }
  $("ov-hours").replaceChildren(svg);
  const best = stats.best;
  $("ov-best-hour").textContent = best
    ? `Best hour: ${hourName(best)} (${(100 * best["delivery-rate"]).toFixed(1)}% of ${number(best.sent)} delivered).`
    : "Best hour: not yet known (no hour has had 100 notifications sent).";
}

function barCell(fraction, label) {
  const svg = s("svg", { width: 160, height: 12, viewBox: "0 0 160 12", role: "img", "aria-label": label });
  svg.append(s("rect", { x: 0, y: 1, width: 160, height: 10, fill: "#e3e8ee" }));
  svg.append(s("rect", { x: 0, y: 1, width: Math.max(1, Math.round(160 * fraction)), height: 10, fill: "#0b57d0" }));
  return h("span", { class: "bar-cell" }, svg);
}

function stateBadge(state) {
  return h("span", { class: `state state-${state}` }, state);
}

// A campaign in a list: its name (or, without one, its id) as the link to its page; a name has
// the id beneath it.
function campaignCell(status) {
  const link = h("a", { href: `#/jobs/${encodeURIComponent(status.job)}`, class: status.name ? null : "mono" }, status.name || status.job);
  return status.name ? h("span", {}, link, h("span", { class: "meta mono campaign-id" }, status.job)) : link;
}

function jobTable(entries) {
  return table(["Campaign", "State", "Listed", "Targeted", "Accepted", "Failed", "Scheduled for"],
    entries.map(({ status, "listed-at": listedAt }) => [
      campaignCell(status),
      stateBadge(status.state), time(listedAt), number(status.targeted), number(status.accepted), number(status.failed),
      status["scheduled-at"] ? time(status["scheduled-at"]) : "–",
    ]), [3, 4, 5]);
}

// ---- compose ----------------------------------------------------------------------------------

const compose = {
  kind() { return document.querySelector('input[name="audience-kind"]:checked').value; },
  // The tag expression of the tag fields: its all, any and none lists, each when not empty.
  tags() {
    const tags = {};
    for (const name of ["all", "any", "none"]) {
      const list = lines($(`aud-tags-${name}`).value);
      if (list.length > 0) tags[name] = list;
    }
    return tags;
  },
  audience() {
    switch (this.kind()) {
      case "tags": return { tags: this.tags() };
      case "area": {
        // The circle's numbers as typed (an empty field left out: the API names what is missing),
        // narrowed by the tag fields when any is filled.
        const area = {};
        for (const [key, id] of [["lat", "c-area-lat"], ["lon", "c-area-lon"], ["radius-km", "c-area-radius"]]) {
          if ($(id).value.trim() !== "") area[key] = Number($(id).value);
        }
        const tags = this.tags();
        return Object.keys(tags).length > 0 ? { area, tags } : { area };
      }
      case "openids": return { openids: lines($("aud-openids").value) };
      case "tokens": return { tokens: lines($("aud-tokens").value) };
      default: return { broadcast: true };
    }
  },
  // The job as POST /push takes it; `local` holds errors found before the API is asked.
  job() {
    const local = [];
    const pushType = $("c-push-type").value;
    const aps = {};
    if (pushType === "background") {
      aps["content-available"] = 1;
    } else {
      const alert = {};
      if ($("c-title").value) alert.title = $("c-title").value;
      if ($("c-subtitle").value) alert.subtitle = $("c-subtitle").value;
      if ($("c-body").value) alert.body = $("c-body").value;
      if (Object.keys(alert).length > 0) aps.alert = alert;
      if ($("c-sound").value) aps.sound = $("c-sound").value;
      if ($("c-badge").value !== "") {
        // A number for every device, or a rule: each device's badge, counted by the server.
        const badge = Number($("c-badge").value);
        const mode = $("c-badge-mode").value;
        aps.badge = mode === "number" ? badge : { [mode]: badge };
      }
    }
    let notification = { aps };
    const custom = $("c-custom").value.trim();
    if (custom) {
      try {
        const keys = JSON.parse(custom);
        if (typeof keys !== "object" || keys === null || Array.isArray(keys)) throw new Error("not an object");
        if ("aps" in keys) local.push(["notification", "custom keys must not hold aps: the fields above make it"]);
        notification = { ...keys, aps };
      } catch {
        local.push(["notification", "custom keys must be a JSON object, e.g. {\"article\": 42}"]);
      }
    }
    const headers = { "push-type": pushType };
    if ($("c-priority").value) headers.priority = Number($("c-priority").value);
    if ($("c-collapse-id").value) headers["collapse-id"] = $("c-collapse-id").value;
    if ($("c-expiration").value) headers.expiration = Math.floor(new Date($("c-expiration").value).getTime() / 1000);
    const job = { environment: $("c-environment").value, audience: this.audience(), notification, headers };
    if ($("c-delivery").value !== "apns") job.delivery = $("c-delivery").value;
    if ($("c-name").value.trim()) job.name = $("c-name").value.trim();
    const throttle = {};
    if ($("c-rate").value !== "") throttle["rate-per-second"] = Number($("c-rate").value);
    if ($("c-sleep-after").value !== "") throttle["sleep-after"] = Number($("c-sleep-after").value);
    if ($("c-sleep-ms").value !== "") throttle["sleep-ms"] = Number($("c-sleep-ms").value);
    if (Object.keys(throttle).length > 0) job.throttle = throttle;
    const when = document.querySelector('input[name="when"]:checked').value;
    if (when === "later") {
      if (!$("c-send-at").value) local.push(["send-at", "choose when to send"]);
      else job["send-at"] = new Date($("c-send-at").value).toISOString().replace(/\.\d{3}Z$/, "Z");
    } else if (when === "local-time") {
      if (!$("c-local-time").value) local.push(["send-at.local-time", "choose a time of day"]);
      else job["send-at"] = { "local-time": $("c-local-time").value.slice(0, 5) };
    } else if (when === "best-hour") {
      job["send-at"] = { "best-hour": { within: `${$("c-within").value}h` } };
    }
    return { job, local };
  },
};

// What a locked iPhone shows of `payload` sent as `pushType`: the banner's title, subtitle and
// body, or only a note saying why there is no banner (or that the device fills the text in).
function lockScreen(payload, pushType) {
  const none = (note) => ({ banner: false, title: "", subtitle: "", body: "", note });
  if (pushType !== "alert") return none(`A ${pushType} push shows no banner on the lock screen.`);
  const alert = payload && payload.aps ? payload.aps.alert : undefined;
  if (typeof alert === "string") return { banner: alert !== "", title: "", subtitle: "", body: alert, note: alert === "" ? "An empty alert shows nothing." : "" };
  if (alert === null || typeof alert !== "object") return none("Without an alert the device shows nothing (a sound or a badge at most).");
  const text = (key) => (typeof alert[key] === "string" ? alert[key] : "");
  const shown = { banner: true, title: text("title"), subtitle: text("subtitle"), body: text("body"), note: "" };
  const localized = ["title-loc-key", "subtitle-loc-key", "loc-key"].filter((key) => typeof alert[key] === "string");
  if (localized.length > 0) shown.note = `The device fills in the localized text of ${localized.map((key) => `${key} ${alert[key]}`).join(", ")}.`;
  if (!shown.title && !shown.subtitle && !shown.body && localized.length === 0) return none("An alert without text shows nothing.");
  return shown;
}

function showLockScreen(payload, pushType) {
  const shown = lockScreen(payload, pushType);
  $("c-lock-banner").hidden = !shown.banner;
  $("c-lock-app").textContent = session.app || "";
  for (const part of ["title", "subtitle", "body"]) $(`c-lock-${part}`).textContent = shown[part];
  $("c-lock-note").textContent = shown.note;
}

function markField(form, field) {
  for (const control of form.querySelectorAll("[data-field]")) {
    const name = control.dataset.field;
    if (field && (name === field || field.startsWith(`${name}.`) || name.startsWith(`${field}.`))) control.setAttribute("aria-invalid", "true");
    else control.removeAttribute("aria-invalid");
  }
}

function debounce(action, ms) {
  let timer = null;
  return () => { clearTimeout(timer); timer = setTimeout(action, ms); };
}

let composeGeneration = 0;
const checkCompose = debounce(async () => {
  const generation = ++composeGeneration;
  const { job, local } = compose.job();
  const payload = job.notification;
  $("c-preview").textContent = JSON.stringify(payload, null, 2);
  showLockScreen(payload, job.headers["push-type"]);
  const form = $("compose-form");
  if (local.length > 0) {
    $("c-error").textContent = `${local[0][0]}: ${local[0][1]}`;
    markField(form, local[0][0]);
    return;
  }
  // The audience's estimate shows even while the API refuses the rest of the job.
  const [checked, estimated] = await Promise.allSettled([
    api("POST", appPath("/push/check"), job),
    api("POST", appPath("/audience/estimate"), { environment: job.environment, audience: job.audience }),
  ]);
  if (generation !== composeGeneration) return;
  if (estimated.status === "fulfilled") {
    const estimate = estimated.value;
    $("estimate").textContent = estimate.devices === null ? "unknown"
      : `${estimate.exact ? "" : "at most "}${number(estimate.devices)} device${estimate.devices === 1 ? "" : "s"} in ${estimate.environment}`;
  } else if (estimated.reason instanceof APIError) {
    // Not the previous audience's figure: this one is refused (the error below names why).
    $("estimate").textContent = "unknown until the API accepts the audience";
  }
  if (checked.status === "rejected") {
    const error = checked.reason;
    if (!(error instanceof APIError)) return;
    $("c-error").textContent = error.text;
    markField(form, error.field);
    const bytes = new TextEncoder().encode(JSON.stringify(payload)).length;
    $("c-size").textContent = `about ${number(bytes)} bytes (the API did not accept the job)`;
    return;
  }
  const check = checked.value;
  $("c-error").textContent = "";
  markField(form, null);
  $("c-preview").textContent = JSON.stringify(check.payload, null, 2);
  showLockScreen(check.payload, check["push-type"]);
  $("c-size").textContent = `${number(check["payload-bytes"])} of ${number(check["payload-limit"])} bytes (${check["push-type"]})`;
  $("c-size-meter").max = check["payload-limit"];
  $("c-size-meter").value = check["payload-bytes"];
}, 250);

function newIdempotencyKey() {
  return `console-${crypto.randomUUID()}`;
}

pages.compose = async () => {
  showPage("compose");
  if (!$("c-idempotency").value) $("c-idempotency").value = newIdempotencyKey();
  checkCompose();
};

for (const radio of document.querySelectorAll('input[name="audience-kind"]')) {
  radio.addEventListener("change", () => {
    const chosen = compose.kind();
    for (const kind of ["tags", "openids", "tokens", "area"]) $(`aud-${kind}-fields`).hidden = chosen !== kind;
    // An area may be narrowed by tags: the tag fields show beneath its circle.
    if (chosen === "area") $("aud-tags-fields").hidden = false;
    checkCompose();
  });
}
for (const radio of document.querySelectorAll('input[name="when"]')) {
  radio.addEventListener("change", () => {
    const when = document.querySelector('input[name="when"]:checked').value;
    $("c-send-at").disabled = when !== "later";
    $("c-local-time").disabled = when !== "local-time";
    $("c-within").disabled = when !== "best-hour";
    checkCompose();
  });
}
$("compose-form").addEventListener("input", checkCompose);
$("compose-form").addEventListener("change", checkCompose);
$("aud-tokens-file").addEventListener("change", async () => {
  const file = $("aud-tokens-file").files[0];
  if (!file) return;
  const text = await file.text();
  $("aud-tokens").value = text.split(/[\s,;]+/).filter((token) => /^[0-9a-fA-F]+$/.test(token)).join("\n");
  checkCompose();
});

$("compose-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const { job, local } = compose.job();
  if (local.length > 0) {
    $("c-error").textContent = `${local[0][0]}: ${local[0][1]}`;
    return;
  }
  // What shows next is this send's answer, not an earlier check's.
  $("c-error").textContent = "";
  $("c-result").textContent = "";
  const key = $("c-idempotency").value.trim();
  $("c-send").disabled = true;
  try {
    const answer = await api("POST", appPath("/push"), job, key ? { "Idempotency-Key": key } : {});
    $("c-result").textContent = `${answer.replayed ? "Already published" : "Published"}: job ${answer.job}`;
    $("c-idempotency").value = newIdempotencyKey();
    location.hash = `#/jobs/${encodeURIComponent(answer.job)}`;
  } catch (error) {
    $("c-error").textContent = error.text || error.message;
    markField($("compose-form"), error.field);
  } finally {
    $("c-send").disabled = false;
  }
});

// ---- test send --------------------------------------------------------------------------------

pages.test = async () => { showPage("test"); };

$("test-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const target = $("t-target").value.trim();
  const byToken = document.querySelector('input[name="test-kind"]:checked').value === "token";
  $("t-error").textContent = "";
  if (!target) { $("t-error").textContent = "Name a device: its token or its user's openid."; return; }
  const job = {
    environment: $("t-environment").value,
    audience: byToken ? { tokens: [target] } : { openids: [target] },
    notification: { aps: { alert: { title: $("t-title").value, body: $("t-body").value } } },
    headers: { "push-type": "alert" },
  };
  $("t-send").disabled = true;
  try {
    const answer = await api("POST", appPath("/push/test"), job);
    $("t-results").replaceChildren(table(["Token", "Environment", "Answer", "Reason", "apns-id"],
      answer.results.map((result) => [
        h("span", { class: "mono" }, result.token), result.environment,
        result.status === null ? `not answered (${result.error})` : h("span", { class: result.accepted ? "ok" : "error" }, `${result.status} ${result.accepted ? "accepted" : "refused"}`),
        result.reason || "–", h("span", { class: "mono" }, result["apns-id"] || "–"),
      ])));
  } catch (error) {
    $("t-error").textContent = error.text || error.message;
  } finally {
    $("t-send").disabled = false;
  }
});

// ---- one campaign: live progress and report -----------------------------------------------------

function drawChart(svg, points) {
  const width = 480, height = 200, left = 44, bottom = 24, top = 10, right = 10;
  svg.replaceChildren();
  const most = Math.max(1, ...points.map((point) => point.rate));
  const { scale, steps } = niceScale(most);
  for (let step = 0; step <= steps; step++) {
    const y = top + (height - top - bottom) * (1 - step / steps);
    svg.append(s("line", { x1: left, x2: width - right, y1: y, y2: y, class: "grid-line" }));
    svg.append(s("text", { x: left - 6, y: y + 4, "text-anchor": "end" }, compact(scale * step / steps)));
  }
  svg.append(s("line", { x1: left, x2: left, y1: top, y2: height - bottom, class: "axis" }));
  svg.append(s("line", { x1: left, x2: width - right, y1: height - bottom, y2: height - bottom, class: "axis" }));
  if (points.length === 0) {
    svg.append(s("text", { x: width / 2, y: height / 2, "text-anchor": "middle" }, "waiting for the first figures"));
    return;
  }
  const first = points[0].at, last = Math.max(points[points.length - 1].at, first + 1000);
  const x = (at) => left + (width - left - right) * (at - first) / (last - first);
  const y = (rate) => top + (height - top - bottom) * (1 - rate / scale);
  svg.append(s("polyline", { class: "series", points: points.map((point) => `${x(point.at).toFixed(1)},${y(point.rate).toFixed(1)}`).join(" ") }));
  svg.append(s("text", { x: left, y: height - 6 }, new Date(first).toLocaleTimeString()));
  svg.append(s("text", { x: width - right, y: height - 6, "text-anchor": "end" }, new Date(last).toLocaleTimeString()));
  const now = points[points.length - 1].rate;
  svg.setAttribute("aria-label", `Notifications per second over time; now ${Math.round(now)} per second, at most ${Math.round(most)}`);
}

// The smallest 1, 2 or 5 × 10^n at or above `value`, with a number of grid steps that keeps the
// labels round (5 for 1 and 5, 4 for 2).
function niceScale(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const factor of [1, 2, 5, 10]) {
    if (factor * power >= value) return { scale: factor * power, steps: factor === 2 ? 4 : 5 };
  }
  return { scale: 10 * power, steps: 5 };
}

const compact = (value) => (value >= 1000 ? `${(value / 1000).toFixed(value >= 10000 ? 0 : 1)}k` : String(Math.round(value * 10) / 10));

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h("a", { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function csv(status) {
  const rows = [["field", "value"]];
  for (const [name, value] of Object.entries(status)) {
    if (name === "failed-by-reason") for (const [reason, count] of Object.entries(value)) rows.push([`failed:${reason}`, count]);
    else if (value !== null && typeof value === "object") rows.push([name, JSON.stringify(value)]);
    else rows.push([name, value === null ? "" : value]);
  }
  return rows.map((row) => row.map((cell) => `"${String(cell).replace(/"/g, '""')}"`).join(",")).join("\r\n") + "\r\n";
}

pages.jobs = async ([jobID], query) => {
  if (jobID) return jobPage(jobID);
  showPage("jobs");
  if (query.get("state") !== null) $("jobs-state").value = query.get("state");
  await listJobs();
  return null;
};

async function listJobs() {
  const parameters = new URLSearchParams({ limit: "100" });
  if ($("jobs-state").value) parameters.set("state", $("jobs-state").value);
  if ($("jobs-since").value) parameters.set("since", String(new Date(`${$("jobs-since").value}T00:00:00`).getTime()));
  try {
    const answer = await api("GET", appPath(`/jobs?${parameters}`));
    $("jobs-table").replaceChildren(jobTable(answer.jobs));
  } catch (error) {
    $("jobs-table").replaceChildren(h("p", { class: "error" }, error.text || error.message));
  }
}

$("jobs-filter").addEventListener("submit", (event) => { event.preventDefault(); listJobs(); });

async function jobPage(jobID) {
  showPage("job");
  $("job-heading").textContent = `Campaign ${jobID}`;
  $("job-id").textContent = "";
  // Nothing of the last report shown stays up while this one loads, and there is nothing to
  // export until it has.
  $("job-percent").textContent = "";
  $("job-export-json").disabled = true;
  $("job-export-csv").disabled = true;
  $("job-error").textContent = "";
  $("job-recall-confirm").hidden = true;
  $("job-recall-error").textContent = "";
  $("job-dead-letters-link").href = `#/dead-letters?job=${encodeURIComponent(jobID)}`;
  const points = [];
  let last = null;
  let latest = null;
  let stopped = false;
  const controller = new AbortController();

  const render = (status) => {
    latest = status;
    $("job-export-json").disabled = false;
    $("job-export-csv").disabled = false;
    // A named campaign is headed by its name, its id beneath.
    $("job-heading").textContent = status.name || `Campaign ${jobID}`;
    $("job-id").textContent = status.name ? `Campaign ${jobID}` : "";
    const now = Date.now();
    // A notification is done once acked online, kept in an inbox, accepted by APNs or refused.
    const done = status.accepted + status.online + status.inboxed + status.failed;
    if (last && now > last.at) points.push({ at: now, rate: Math.max(0, (done - last.done) * 1000 / (now - last.at)) });
    if (points.length > 300) points.shift();
    last = { at: now, done };
    const final = status.state === "complete" || status.state === "cancelled";
    const fraction = status.state === "complete" ? 1 : status.targeted > 0 ? Math.min(1, done / status.targeted) : 0;
    $("job-progress").value = Math.round(fraction * 100);
    $("job-percent").textContent = `${Math.round(fraction * 100)}%`;
    $("job-state").replaceChildren(stateBadge(status.state));
    $("job-stopped").textContent = status.stopped ? `${status.stopped.reason}${status.stopped.by ? ` (by ${status.stopped.by})` : ""}` : "";
    // A campaign sent at each device's own time: what still waits for its slot, and the next one.
    const slots = status["send-times"] || [];
    const waiting = slots.reduce((sum, slot) => sum + slot.scheduled - slot.released, 0);
    const next = slots.find((slot) => slot.released < slot.scheduled);
    const rate = points.length > 0 ? points[points.length - 1].rate : 0;
    const remaining = Math.max(0, status.targeted - done);
    $("job-eta").textContent = final ? "finished" : status.state === "scheduled" ? `scheduled for ${time(status["scheduled-at"])}`
      : status.state === "paused" ? "paused: resume to go on"
      : next && rate === 0 ? `waiting for each device's time (next at ${time(next.at)})`
      : rate > 0 ? `about ${Math.ceil(remaining / rate)} s left` : "ETA: waiting for a rate";
    $("job-pause").disabled = status.state !== "in-progress" && status.state !== "queued";
    $("job-resume").disabled = status.state !== "paused";
    $("job-cancel").disabled = final;
    // A campaign is recalled once, and a recall is not recalled.
    const link = (prefix, other) => [prefix, h("a", { href: `#/jobs/${encodeURIComponent(other.job)}`, class: "mono" }, other.job), ` (${other.mode})`];
    $("job-recall-link").replaceChildren(...(status["recalled-by"] ? link("Recalled by ", status["recalled-by"])
      : status["recall-of"] ? link("Recall of ", status["recall-of"]) : ["Not recalled"]));
    const recallable = !status["recalled-by"] && !status["recall-of"];
    $("job-recall").disabled = !recallable;
    $("job-overwrite").disabled = !recallable;
    if (!recallable) $("job-recall-confirm").hidden = true;
    figures($("job-figures"), [
      ["targeted", number(status.targeted), "job-targeted"],
      ...(slots.length > 0 ? [["waiting for their time", `${number(waiting)}${next ? ` (next at ${time(next.at)})` : ""}`, "job-waiting"]] : []), ["sent", number(status.sent)],
      ["accepted", number(status.accepted), "job-accepted"],
      ...(status.delivery !== "apns" ? [["online (acked over the app's connection)",
        `${number(status.online)} of ${number(status["online-sent"])} handed to a gateway`, "job-online"]] : []),
      ...(status.delivery === "online-only" ? [["inboxed (kept until the device connects)",
        `${number(status.inboxed)}, ${number(status["inbox-read"])} read since`, "job-inboxed"]] : []),
      ["failed", number(status.failed), "job-failed"],
      ["retried", number(status.retried)], ["dead-lettered", number(status["dead-lettered"])],
      ["unregistered (removed)", `${number(status.unregistered)} (${number(status.removed)})`],
      ["kept aside (suspect)", number(status.suspect)],
      ["delivered", `${number(status.delivered)} (${percent(status.delivered, status.accepted + status.online + status.inboxed)})`, "job-delivered"],
      ["opened", `${number(status.opened)} (${percent(status.opened, status.accepted + status.online + status.inboxed)})`, "job-opened"],
      ["rate changed to", status["rate-per-second"] === null ? "not changed" : `${number(status["rate-per-second"])} /s`],
    ]);
    const reasons = Object.entries(status["failed-by-reason"]).sort((a, b) => b[1] - a[1]);
    const most = Math.max(1, ...reasons.map(([, count]) => count));
    $("job-reasons").replaceChildren(table(["Reason", "Notifications", "Share", ""], reasons.map(([reason, count]) => [
      reason, number(count), percent(count, status.failed), barCell(count / most, `${reason}: ${count}`)]), [1, 2]));
    drawChart($("job-chart"), points);
    return final;
  };

  try {
    render(await api("GET", appPath(`/jobs/${encodeURIComponent(jobID)}`)));
  } catch (error) {
    $("job-error").textContent = error.text || error.message;
    return null;
  }

  // Follows the job's event stream while it runs, reconnecting when a stream ends.
  (async () => {
    while (!stopped && latest && latest.state !== "complete" && latest.state !== "cancelled") {
      let final = false;
      try {
        $("job-live").textContent = "live";
        await readEvents(appPath(`/jobs/${encodeURIComponent(jobID)}/events`), (name, status) => {
          final = render(status) || name === "end";
        }, controller.signal);
      } catch (error) {
        if (stopped) return;
        $("job-live").textContent = `reconnecting (${error.message})`;
      }
      if (final || stopped) break;
      const running = latest.state === "in-progress";
      await new Promise((resolve) => setTimeout(resolve, running ? 500 : 3000));
    }
    if (!stopped) $("job-live").textContent = "final figures";
  })();

  const control = (action, body) => async () => {
    $("job-error").textContent = "";
    try {
      const status = await api("POST", appPath(`/jobs/${encodeURIComponent(jobID)}/${action}`), body);
      if (status && status.state) render(status);
      else render(await api("GET", appPath(`/jobs/${encodeURIComponent(jobID)}`)));
      toast(`${action}: done`);
    } catch (error) {
      $("job-error").textContent = error.text || error.message;
    }
  };
  // Recall and overwrite wait for a confirmation that says what they do.
  let recallMode = null;
  const askRecall = (mode) => () => {
    recallMode = mode;
    $("job-recall-error").textContent = "";
    const stillGoing = latest.state !== "complete" && latest.state !== "cancelled";
    $("job-recall-what").textContent = (stillGoing ? "What is not yet sent is cancelled. " : "")
      + (mode === "withdraw"
        ? `The ${number(latest.accepted)} devices that got it are asked to remove it (a background push).`
        : `The ${number(latest.accepted)} devices that got it are sent this in its place:`);
    $("job-overwrite-fields").hidden = mode !== "overwrite";
    $("job-recall-confirm").hidden = false;
    $(mode === "overwrite" ? "job-overwrite-title" : "job-recall-go").focus();
  };
  const recall = async () => {
    $("job-recall-error").textContent = "";
    let body;
    if (recallMode === "overwrite") {
      const alert = { title: $("job-overwrite-title").value.trim(), body: $("job-overwrite-body").value.trim() };
      if (!alert.title && !alert.body) {
        $("job-recall-error").textContent = "Write the new title or body first.";
        return;
      }
      body = { "overwrite-with": { notification: { aps: { alert } } } };
    }
    try {
      const answer = await api("POST", appPath(`/jobs/${encodeURIComponent(jobID)}/recall`), body);
      $("job-recall-confirm").hidden = true;
      toast(`${answer.mode}: job ${answer.job} published`);
      location.hash = `#/jobs/${encodeURIComponent(answer.job)}`;
    } catch (error) {
      $("job-recall-error").textContent = error.text || error.message;
    }
  };
  const handlers = {
    "job-recall": askRecall("withdraw"),
    "job-overwrite": askRecall("overwrite"),
    "job-recall-go": recall,
    "job-recall-back": () => { $("job-recall-confirm").hidden = true; },
    "job-pause": control("pause", { reason: "paused in the console" }),
    "job-resume": control("resume"),
    "job-cancel": control("cancel", { reason: "cancelled in the console" }),
    "job-export-json": () => download(`${jobID}.json`, "application/json", JSON.stringify(latest, null, 2)),
    "job-export-csv": () => download(`${jobID}.csv`, "text/csv", csv(latest)),
  };
  for (const [id, handler] of Object.entries(handlers)) $(id).onclick = handler;
  return () => {
    stopped = true;
    controller.abort();
    for (const id of Object.keys(handlers)) $(id).onclick = null;
  };
}

// ---- devices ----------------------------------------------------------------------------------

let shownDevice = null;

pages.devices = async () => { showPage("devices"); };

function renderDevice(device) {
  shownDevice = device;
  $("dev-card").hidden = false;
  figures($("dev-result"), [
    ["token", h("span", { class: "mono" }, device.token), "dev-token"], ["environment", device.environment, "dev-environment"],
    ["openid", device.openid || "–", "dev-openid"], ["registered", time(device["registered-at"]), "dev-registered"],
    ["kept aside", device.suspect ? `${device.suspect.reason} since ${time(device.suspect.since)}` : "no"],
    ["time zone", device["time-zone"] || "none given (the app's)", "dev-time-zone"],
    ["reads most", readingHour(device["receipt-hours"]), "dev-best-hour"],
  ]);
  $("dev-tags").replaceChildren(...device.tags.map((tag) => h("li", {}, tag,
    h("button", { type: "button", "aria-label": `Remove tag ${tag}`, onclick: () => removeTag(tag) }, "×"))));
  $("dev-unbind").hidden = false;
  $("dev-unbind-confirm").hidden = true;
  showDeviceBadge(device.token);
  showDeviceLocation(device.token);
  showDeviceCampaigns(device.token);
}

// The UTC hour the device's receipts came in most, once it has 3 (receipt-hours on the device).
function readingHour(hours) {
  const total = hours.utc.reduce((sum, count) => sum + count, 0);
  if (hours["best-utc-hour"] === null) return `not known yet (${total} receipt${total === 1 ? "" : "s"}, 3 needed)`;
  const hour = hours["best-utc-hour"];
  const two = (n) => String(n).padStart(2, "0");
  return `${two(hour)}:00–${two((hour + 1) % 24)}:00 UTC (${hours.utc[hour]} of ${total} receipts)`;
}

// The badge the server keeps for the device (campaigns whose badge is added or set per device).
async function showDeviceBadge(token) {
  $("dev-badge").textContent = "…";
  try {
    const answer = await api("GET", appPath(`/devices/${token}/badge`));
    if (!shownDevice || shownDevice.token !== token) return;
    $("dev-badge").textContent = `${answer.badge}, as campaigns that count badges left it`;
  } catch (error) {
    $("dev-badge").textContent = error.text || error.message;
  }
}

// Where the device last said it was, as the server keeps it (coarsened to the registry's
// location-precision-km), and until when; "none" when it has not said, or it was forgotten or
// expired.
async function showDeviceLocation(token) {
  $("dev-location").textContent = "…";
  try {
    const answer = await api("GET", appPath(`/devices/${token}/location`));
    if (!shownDevice || shownDevice.token !== token) return;
    $("dev-location").textContent = `${answer.lat}, ${answer.lon} until ${time(answer["expires-at"])}`;
  } catch (error) {
    if (!shownDevice || shownDevice.token !== token) return;
    $("dev-location").textContent = error.status === 404 ? "none" : error.text || error.message;
  }
}

// The campaigns a device is known to have got: those it posted receipts for.
async function showDeviceCampaigns(token) {
  $("dev-campaigns").replaceChildren(h("p", { class: "meta" }, "…"));
  try {
    const answer = await api("GET", appPath(`/devices/${token}/campaigns`));
    if (!shownDevice || shownDevice.token !== token) return;
    $("dev-campaigns").replaceChildren(answer.campaigns.length === 0
      ? h("p", { class: "meta" }, "No receipts from this device in the app's 50 newest campaigns.")
      : table(["Campaign", "Listed", "Receipts"], answer.campaigns.map((campaign) => [
        campaignCell(campaign),
        time(campaign["listed-at"]), campaign.events.join(", "),
      ])));
  } catch (error) {
    $("dev-campaigns").replaceChildren(h("p", { class: "error" }, error.text || error.message));
  }
}

async function lookUp() {
  const query = $("dev-query").value.trim();
  const byToken = document.querySelector('input[name="dev-kind"]:checked').value === "token";
  $("dev-error").textContent = "";
  if (!query) { $("dev-error").textContent = "Enter a token or an openid."; return; }
  try {
    renderDevice(await api("GET", appPath(byToken ? `/devices/${encodeURIComponent(query)}` : `/users/${encodeURIComponent(query)}`)));
  } catch (error) {
    $("dev-card").hidden = true;
    shownDevice = null;
    $("dev-error").textContent = error.status === 404 ? `No device found: ${error.message}` : error.text;
  }
}

async function removeTag(tag) {
  try {
    await api("DELETE", appPath(`/devices/${shownDevice.token}/tags/${encodeURIComponent(tag)}`));
    renderDevice(await api("GET", appPath(`/devices/${shownDevice.token}`)));
    toast(`tag ${tag} removed`);
  } catch (error) {
    $("dev-error").textContent = error.text;
  }
}

$("dev-lookup").addEventListener("submit", (event) => { event.preventDefault(); lookUp(); });
$("dev-badge-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!shownDevice) return;
  const token = shownDevice.token;
  try {
    await api("PUT", appPath(`/devices/${token}/badge`), { badge: Number($("dev-badge-set").value) });
    await showDeviceBadge(token);
    toast(`badge set to ${$("dev-badge-set").value}`);
  } catch (error) {
    $("dev-error").textContent = error.text;
  }
});
$("dev-location-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!shownDevice) return;
  const token = shownDevice.token;
  // The numbers as typed, an empty one left out: the API names what is missing or out of range.
  const body = {};
  for (const [key, id] of [["lat", "dev-location-lat"], ["lon", "dev-location-lon"]]) {
    if ($(id).value.trim() !== "") body[key] = Number($(id).value);
  }
  $("dev-error").textContent = "";
  try {
    const answer = await api("PUT", appPath(`/devices/${token}/location`), body);
    await showDeviceLocation(token);
    toast(`location recorded as ${answer.lat}, ${answer.lon}`);
  } catch (error) {
    $("dev-error").textContent = error.text || error.message;
  }
});
$("dev-location-forget").addEventListener("click", async () => {
  if (!shownDevice) return;
  const token = shownDevice.token;
  $("dev-error").textContent = "";
  try {
    const answer = await api("DELETE", appPath(`/devices/${token}/location`));
    await showDeviceLocation(token);
    toast(answer.forgotten ? "location forgotten" : "the device had no location");
  } catch (error) {
    $("dev-error").textContent = error.text || error.message;
  }
});
$("dev-tag-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const tags = lines($("dev-tag-add").value);
  if (!shownDevice || tags.length === 0) return;
  try {
    await api("POST", appPath(`/devices/${shownDevice.token}/tags`), { tags });
    $("dev-tag-add").value = "";
    renderDevice(await api("GET", appPath(`/devices/${shownDevice.token}`)));
    toast(`tag ${tags.join(", ")} added`);
  } catch (error) {
    $("dev-error").textContent = error.text;
  }
});
for (const id of ["job-overwrite-title", "job-overwrite-body"]) {
  $(id).addEventListener("input", () => { $("job-recall-error").textContent = ""; });
}
$("dev-unbind").addEventListener("click", () => {
  $("dev-unbind-confirm").hidden = false;
  $("dev-unbind-confirm").focus();
});
$("dev-unbind-confirm").addEventListener("click", async () => {
  try {
    await api("DELETE", appPath(`/devices/${shownDevice.token}`));
    toast(`device ${shownDevice.token.slice(0, 12)}… unbound`);
    $("dev-card").hidden = true;
    shownDevice = null;
  } catch (error) {
    $("dev-error").textContent = error.text;
  }
});
$("dev-bind-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const token = $("dev-bind-token").value.trim();
  const body = { environment: $("dev-bind-env").value };
  if ($("dev-bind-openid").value.trim()) body.openid = $("dev-bind-openid").value.trim();
  const tags = lines($("dev-bind-tags").value);
  if (tags.length > 0) body.tags = tags;
  if ($("dev-bind-zone").value.trim()) body["time-zone"] = $("dev-bind-zone").value.trim();
  $("dev-bind-result").textContent = "";
  try {
    if (!token) throw new APIError(400, { error: { field: "token", message: "is required" } });
    renderDevice(await api("PUT", appPath(`/devices/${encodeURIComponent(token)}`), body));
    $("dev-bind-result").textContent = "Bound.";
  } catch (error) {
    $("dev-bind-result").textContent = error.text || error.message;
  }
});

// ---- dead letters -----------------------------------------------------------------------------

pages["dead-letters"] = async (_, query) => {
  showPage("dead-letters");
  $("dl-job").value = query.get("job") || "";
  await showLetters();
};

async function showLetters() {
  const job = $("dl-job").value.trim();
  $("dl-error").textContent = "";
  try {
    const answer = await api("GET", appPath(job ? `/jobs/${encodeURIComponent(job)}/dead-letters?limit=500` : "/dead-letters?limit=500"));
    $("dl-summary").textContent = job
      ? `Job ${job}: ${number(answer.letters.length)} letters, newest first (${number(answer.total)} counted as dead-lettered in its report).`
      : `Letters of app ${session.app} without a job: the newest ${number(answer.letters.length)}.`;
    $("dl-table").replaceChildren(table(["When", "Reason", "Field", "Job", "Token", "APNs status", "Message"],
      answer.letters.map((letter) => [
        time(letter["dead-lettered-at"]), letter.reason, letter.field || "–", h("span", { class: "mono" }, letter["job-id"] || "–"),
        h("span", { class: "mono" }, letter.token || "–"), letter.status || "–", letter.message,
      ])));
  } catch (error) {
    $("dl-error").textContent = error.text || error.message;
    $("dl-table").replaceChildren();
    $("dl-summary").textContent = "";
  }
}

$("dl-form").addEventListener("submit", (event) => { event.preventDefault(); showLetters(); });

route();

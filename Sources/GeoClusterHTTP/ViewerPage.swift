import Hummingbird

/// The map viewer that `GET /` serves: one HTML document with its script and style
/// inline, so the binary needs no files and the page loads nothing but this API (its
/// Content-Security-Policy allows nothing else).
///
/// It draws a layer's clusters for the view on a canvas in Web Mercator (256-pixel
/// tiles, as the `zoom` of `/v1/layers/{layer}/clusters` counts them) over a graticule:
/// drag pans, the wheel and the buttons zoom, a click on a cluster zooms to its
/// expansion zoom, a click on a point shows its properties. The view is in the URL
/// (`/?layer=stations&lon=127.5&lat=36.3&zoom=7`). The reachability form asks
/// `/v1/reachable` which places of a places layer can be visited from a station before a
/// departure, and marks them.
///
/// After each drawing `#status` carries `data-clusters`, `data-points` and `data-bbox`
/// of what was drawn, and `data-reachable` the number of reachable places marked. A URL
/// with `station` (and optionally `stations_layer`, `places`, `departure`, `now`) opens
/// with the places reachable from that station.
enum ViewerPage {
    /// The page as a response; it is not cached, so a new binary's page is used at once.
    static func response() -> Response {
        var response = JSONResponse.response(bytes: Array(html.utf8), mediaType: .html)
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'"

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>geo-cluster</title>
<style>
  html, body { margin: 0; height: 100%; overflow: hidden; font: 13px system-ui, sans-serif; }
  canvas { display: block; width: 100vw; height: 100vh; touch-action: none; cursor: grab; }
  #panel { position: absolute; left: 8px; top: 8px; width: 270px; max-height: 220px; overflow: auto;
           background: rgba(255, 255, 255, 0.92); border: 1px solid #bbb; border-radius: 4px; padding: 6px 8px; }
  #panel label { display: block; margin: 3px 0; }
  #panel select, #panel input { max-width: 170px; }
  #info { white-space: pre-wrap; color: #333; margin-top: 4px; }
  #error { color: #b00; }
</style>
</head>
<body>
<canvas id="map"></canvas>
<div id="panel">
  <label>Layer <select id="layer"></select></label>
  <button id="zoom-in" title="Zoom in">+</button> <button id="zoom-out" title="Zoom out">&minus;</button>
  <span id="status" data-clusters="0" data-points="0"></span>
  <details id="reach">
    <summary>Reachable places</summary>
    <label>Stations <select id="stations-layer"></select></label>
    <label>Station <select id="station"></select></label>
    <label>Places <select id="places-layer"></select></label>
    <label>Departure <input id="departure" type="datetime-local"></label>
    <button id="reach-go">Show</button> <button id="reach-clear">Clear</button>
  </details>
  <div id="error"></div>
  <div id="info"></div>
</div>
<script>
"use strict";
const TILE_PIXELS = 256;
const MAX_LATITUDE = 85.0511287798; // atan(sinh(pi)): the Web Mercator square
const MAX_ZOOM = 20;
const CLUSTER_COLOR = "#e6550d", POINT_COLOR = "#3182bd", REACHABLE_COLOR = "#31a354";

const canvas = document.getElementById("map");
const ctx = canvas.getContext("2d");
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const view = { lon: num(params.get("lon"), 127.8), lat: num(params.get("lat"), 36.3),
               zoom: Math.round(num(params.get("zoom"), 6)) };
let layers = [], layer = null, features = [], reachable = null, generation = 0;

function num(text, fallback) { const v = parseFloat(text); return Number.isFinite(v) ? v : fallback; }
function clamp(v, lo, hi) { return Math.min(hi, Math.max(lo, v)); }

// Web Mercator: world pixels at a zoom, 0 at the north-west corner.
function project(lon, lat, zoom) {
  const size = TILE_PIXELS * 2 ** zoom;
  const sin = Math.sin(clamp(lat, -MAX_LATITUDE, MAX_LATITUDE) * Math.PI / 180);
  return [(lon + 180) / 360 * size, (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * size];
}
function unproject(x, y, zoom) {
  const size = TILE_PIXELS * 2 ** zoom;
  return [x / size * 360 - 180, Math.atan(Math.sinh(Math.PI * (1 - 2 * y / size))) * 180 / Math.PI];
}
function toScreen(lon, lat) {
  const [x, y] = project(lon, lat, view.zoom), [cx, cy] = project(view.lon, view.lat, view.zoom);
  return [x - cx + canvas.clientWidth / 2, y - cy + canvas.clientHeight / 2];
}
function fromScreen(sx, sy) {
  const [cx, cy] = project(view.lon, view.lat, view.zoom);
  return unproject(cx + sx - canvas.clientWidth / 2, cy + sy - canvas.clientHeight / 2, view.zoom);
}
function bbox() {
  const [west, north] = fromScreen(0, 0), [east, south] = fromScreen(canvas.clientWidth, canvas.clientHeight);
  return [clamp(west, -180, 180), clamp(south, -MAX_LATITUDE, MAX_LATITUDE),
          clamp(east, -180, 180), clamp(north, -MAX_LATITUDE, MAX_LATITUDE)].map((v) => v.toFixed(6)).join(",");
}

async function api(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? body.error.code + ": " + body.error.message : response.statusText);
  return body;
}
function showError(error) { $("error").textContent = error ? String(error.message || error) : ""; }
const layerPath = (name) => "/v1/layers/" + encodeURIComponent(name);

async function load() {
  const current = ++generation, box = bbox();
  const url = layerPath(layer.name) + "/clusters?bbox=" + box + "&zoom=" + view.zoom;
  history.replaceState(null, "", "?" + new URLSearchParams({ layer: layer.name, lon: view.lon.toFixed(5),
                                                             lat: view.lat.toFixed(5), zoom: view.zoom }));
  try {
    const answer = await api(url);
    if (current !== generation) return;
    features = answer.features;
    showError(null);
  } catch (error) {
    if (current === generation) { features = []; showError(error); }
  }
  draw();
  const clusters = features.filter((f) => f.properties && f.properties.cluster).length;
  const status = $("status");
  status.dataset.clusters = clusters;
  status.dataset.points = features.length - clusters;
  status.dataset.bbox = box;
  status.textContent = "z" + view.zoom + ": " + clusters + " clusters, " + (features.length - clusters) + " points";
}

function draw() {
  const width = canvas.clientWidth, height = canvas.clientHeight, ratio = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
  }
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.fillStyle = "#f4f1ea";
  ctx.fillRect(0, 0, width, height);
  drawGraticule(width, height);
  for (const feature of features) {
    const [lon, lat] = feature.geometry.coordinates, [x, y] = toScreen(lon, lat);
    const count = feature.properties && feature.properties.cluster ? feature.properties.point_count : 0;
    feature.screen = [x, y, count ? Math.min(28, 10 + 3 * Math.log2(count)) : 5];
    ctx.beginPath();
    ctx.arc(x, y, feature.screen[2], 0, 2 * Math.PI);
    ctx.fillStyle = count ? CLUSTER_COLOR : POINT_COLOR;
    ctx.fill();
    if (count) {
      ctx.fillStyle = "#fff";
      ctx.font = "bold 11px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillText(feature.properties.point_count_abbreviated || String(count), x, y);
    }
  }
  if (reachable) drawReachable();
}

function drawGraticule(width, height) {
  const [west, north] = fromScreen(0, 0), [east, south] = fromScreen(width, height);
  // The finest step that draws at most 12 lines across.
  const step = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30]
    .find((s) => (east - west) / s <= 12) || 30;
  ctx.strokeStyle = "#d9d4c7";
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let lon = Math.ceil(west / step) * step; lon <= east; lon += step) {
    const x = Math.round(toScreen(lon, 0)[0]) + 0.5;
    ctx.moveTo(x, 0); ctx.lineTo(x, height);
  }
  for (let lat = Math.ceil(south / step) * step; lat <= north; lat += step) {
    const y = Math.round(toScreen(0, lat)[1]) + 0.5;
    ctx.moveTo(0, y); ctx.lineTo(width, y);
  }
  ctx.stroke();
}

function drawReachable() {
  for (const place of reachable.reachable || []) {
    const [x, y] = toScreen(place.lon, place.lat);
    ctx.beginPath();
    ctx.arc(x, y, 4, 0, 2 * Math.PI);
    ctx.fillStyle = REACHABLE_COLOR;
    ctx.fill();
  }
  const station = reachable.station;
  if (station) {
    const [x, y] = toScreen(station.lon, station.lat);
    ctx.fillStyle = "#000";
    ctx.fillRect(x - 5, y - 5, 10, 10);
  }
}

function setZoom(zoom, anchorX, anchorY) {
  zoom = clamp(zoom, 0, MAX_ZOOM);
  if (zoom === view.zoom) return;
  if (anchorX !== undefined) { // keep the place under the pointer where it is
    const [lon, lat] = fromScreen(anchorX, anchorY), [ax, ay] = project(lon, lat, zoom);
    [view.lon, view.lat] = unproject(ax - anchorX + canvas.clientWidth / 2, ay - anchorY + canvas.clientHeight / 2, zoom);
  }
  view.zoom = zoom;
  load();
}

function featureAt(x, y) {
  for (let i = features.length - 1; i >= 0; i--) {
    const s = features[i].screen;
    if (s && (x - s[0]) ** 2 + (y - s[1]) ** 2 <= (s[2] + 2) ** 2) return features[i];
  }
  return null;
}

async function clicked(x, y) {
  const feature = featureAt(x, y);
  if (!feature) return;
  const [lon, lat] = feature.geometry.coordinates;
  if (feature.properties && feature.properties.cluster) {
    try {
      const answer = await api(layerPath(layer.name) + "/clusters/" + feature.properties.cluster_id + "/expansion-zoom");
      view.lon = lon; view.lat = lat;
      view.zoom = clamp(answer.expansion_zoom, 0, MAX_ZOOM);
      load();
    } catch (error) { showError(error); }
  } else {
    $("info").textContent = (feature.id !== undefined ? feature.id + "\n" : "") + JSON.stringify(feature.properties, null, 1);
  }
}

let drag = null;
canvas.addEventListener("pointerdown", (e) => {
  drag = { x: e.clientX, y: e.clientY, center: project(view.lon, view.lat, view.zoom), moved: false };
  canvas.setPointerCapture(e.pointerId);
});
canvas.addEventListener("pointermove", (e) => {
  if (!drag) return;
  const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
  if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
  if (!drag.moved) return;
  [view.lon, view.lat] = unproject(drag.center[0] - dx, drag.center[1] - dy, view.zoom);
  canvas.style.cursor = "grabbing";
  draw();
});
canvas.addEventListener("pointerup", (e) => {
  if (!drag) return;
  const moved = drag.moved;
  drag = null;
  canvas.style.cursor = "";
  if (moved) load(); else clicked(e.clientX, e.clientY);
});
canvas.addEventListener("wheel", (e) => {
  e.preventDefault();
  setZoom(view.zoom + (e.deltaY < 0 ? 1 : -1), e.clientX, e.clientY);
}, { passive: false });
$("zoom-in").onclick = () => setZoom(view.zoom + 1);
$("zoom-out").onclick = () => setZoom(view.zoom - 1);
// A resized window shows more or less of the map: redraw at once, then ask for the new view.
let resizing = null;
window.addEventListener("resize", () => {
  if (!layer) return;
  draw();
  clearTimeout(resizing);
  resizing = setTimeout(load, 150);
});

function fitBounds(bounds) {
  if (!bounds) return;
  const [west, south, east, north] = bounds;
  view.lon = (west + east) / 2;
  view.lat = unproject(0, (project(0, south, 0)[1] + project(0, north, 0)[1]) / 2, 0)[1];
  const [x0, y0] = project(west, north, 0), [x1, y1] = project(east, south, 0);
  const fit = Math.min(canvas.clientWidth / Math.max(x1 - x0, 1e-9), canvas.clientHeight / Math.max(y1 - y0, 1e-9));
  view.zoom = clamp(Math.floor(Math.log2(fit)), 0, 16);
}

function fillSelect(select, items, selected) {
  select.replaceChildren(...items.map(([value, label]) => new Option(label, value, false, value === selected)));
}

async function loadStations() {
  const name = $("stations-layer").value;
  if (!name) return;
  try {
    const all = await api(layerPath(name) + "/clusters?bbox=-180,-85,180,85&zoom=" + MAX_ZOOM);
    fillSelect($("station"), all.features.map((f) => [String(f.id), (f.properties && f.properties.name) || String(f.id)])
      .sort((a, b) => a[1].localeCompare(b[1])));
  } catch (error) { showError(error); }
}

// RFC 3339 with the browser's UTC offset, as `/v1/reachable` wants it.
function rfc3339(date) {
  const pad = (n) => String(Math.floor(Math.abs(n))).padStart(2, "0"), offset = -date.getTimezoneOffset();
  return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + "T" + pad(date.getHours()) +
    ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds()) + (offset < 0 ? "-" : "+") + pad(offset / 60) + ":" +
    pad(offset % 60);
}

// `departure` and `now` are RFC 3339 text; without them, the form's time and the browser's clock.
async function showReachable(departure, now) {
  if (typeof departure !== "string") {
    const chosen = new Date($("departure").value);
    if (isNaN(chosen)) { showError("choose a departure time"); return; }
    departure = rfc3339(chosen);
  }
  const query = new URLSearchParams({ layer: $("places-layer").value, stations_layer: $("stations-layer").value,
                                      station: $("station").value, departure,
                                      now: typeof now === "string" ? now : rfc3339(new Date()), limit: 500 });
  try {
    reachable = await api("/v1/reachable?" + query);
    showError(null);
    $("info").textContent = reachable.status + ": " + reachable.reason + "\n" + (reachable.total || 0) + " places reachable";
    $("status").dataset.reachable = (reachable.reachable || []).length;
    if (reachable.station) { view.lon = reachable.station.lon; view.lat = reachable.station.lat; view.zoom = 14; }
    await load();
  } catch (error) { reachable = null; showError(error); draw(); }
}
$("reach-go").onclick = showReachable;
$("reach-clear").onclick = () => { reachable = null; $("info").textContent = ""; draw(); };
$("stations-layer").onchange = loadStations;

async function start() {
  const soon = new Date(Date.now() + 2 * 3600 * 1000);
  soon.setMinutes(0, 0, 0);
  $("departure").value = rfc3339(soon).slice(0, 16);
  try {
    layers = (await api("/v1/layers")).layers;
  } catch (error) { showError(error); return; }
  if (layers.length === 0) { showError("no layers are loaded"); return; }
  const names = layers.map((l) => [l.name, l.name + " (" + l.kind + ", " + l.count + ")"]);
  layer = layers.find((l) => l.name === params.get("layer")) || layers[0];
  fillSelect($("layer"), names, layer.name);
  const ofKind = (kind) => layers.filter((l) => l.kind === kind).map((l) => [l.name, l.name]);
  fillSelect($("stations-layer"), ofKind("stations"));
  fillSelect($("places-layer"), ofKind("places"), layer.kind === "places" ? layer.name : undefined);
  $("layer").onchange = () => {
    layer = layers.find((l) => l.name === $("layer").value);
    fitBounds(layer.bounds);
    load();
  };
  if (!params.has("lon") && !params.has("lat") && !params.has("zoom")) fitBounds(layer.bounds);
  await load();
  await loadStations();
  // A view with a station shows what is reachable from it:
  // `/?station=seoul&stations_layer=stations&places=places&departure=…&now=…`.
  if (params.has("station")) {
    if (params.has("stations_layer")) { $("stations-layer").value = params.get("stations_layer"); await loadStations(); }
    if (params.has("places")) $("places-layer").value = params.get("places");
    $("station").value = params.get("station");
    $("reach").open = true;
    await showReachable(params.get("departure") || undefined, params.get("now") || undefined);
  }
}
start();
</script>
</body>
</html>
"""#
}

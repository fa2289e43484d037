import Foundation
import Hummingbird

/// The map viewer that `GET /` serves: one HTML document with its own script inline, on
/// Leaflet (Debian's `libjs-leaflet`, served by this binary under `/viewer/`, see
/// ``ViewerAssets``), so the page loads nothing but this API (its Content-Security-Policy
/// allows nothing else).
///
/// Leaflet rather than OpenLayers or MapLibre GL: it is in Debian (so `make run` installs it
/// and the page works offline), it draws GeoJSON and HTML markers without WebGL (headless
/// browsers and old phones draw it), and it is what many frontends put in front of a
/// supercluster-style API, so the page shows how one would use this service.
///
/// The page draws a layer's clusters for the view (asking for Leaflet's zoom minus one at
/// the usual extent of 512, so that the layer's radius is that many pixels on screen) over
/// the base map (`basemap.geojson` of the
/// data directory: land, lakes and borders) as a frontend draws supercluster's output:
/// circles sized by count and never wider than the layer's radius, labelled with
/// `point_count_abbreviated`; a click zooms to the cluster's expansion zoom; single points
/// carry their name (Korean first). Sightings clusters show their aggregates (individuals,
/// top species in Korean) on hover; sightings filter by species (Korean, English or
/// scientific name) and months, places by category. The travel screen ("출발 전
/// 둘러보기") picks a station by name and a departure time and shows the status, the whole
/// minutes left with the 2-hour bar, and the reachable places coloured by slack with their
/// names and leave-by times; a click opens a place's details and its walking route.
///
/// The view is in the URL (`/?layer=stations&lon=127.5&lat=36.3&zoom=7`, Leaflet's zoom, with `species`,
/// `months`, `category`); a URL with `station` (and optionally `stations_layer`, `places`,
/// `departure`, `now`, `network`) opens the travel screen for it. After each drawing
/// `#status` carries `data-clusters`, `data-points`, `data-zoom` (the API's) and `data-bbox`
/// of what was drawn, `data-basemap` whether the base map was drawn, and `data-reachable` the
/// number of reachable places listed; `data-moving` is there while the map moves;
/// `window.viewer.map` is the Leaflet map.
enum ViewerPage {
    /// The page as a response; it is not cached, so a new binary's page is used at once.
    static func response(assets: ViewerAssets) -> Response {
        var response = JSONResponse.response(bytes: assets.page, mediaType: .html)
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        + "img-src 'self' data:; connect-src 'self'"

    /// The page, saying `leafletProblem` (HTML-escaped) when Leaflet is missing.
    static func html(leafletProblem: String?) -> String {
        let escaped = (leafletProblem ?? "").replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: "\"", with: "&quot;")
        return template.replacingOccurrences(of: "@@LEAFLET_PROBLEM@@", with: escaped)
    }

    private static let template = #"""
<!doctype html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>geo-cluster</title>
<link rel="stylesheet" href="/viewer/leaflet.css">
<script src="/viewer/leaflet.js"></script>
<style>
  html, body { margin: 0; height: 100%; overflow: hidden;
               font: 13px "Noto Sans CJK KR", "Noto Sans KR", "Apple SD Gothic Neo", "Malgun Gothic", NanumGothic, system-ui, sans-serif; }
  #map { position: absolute; inset: 0; background: #a9cbe0; }
  .leaflet-container { font: inherit; background: #a9cbe0; }
  #panel { position: absolute; z-index: 1000; left: 8px; top: 8px; width: 290px; max-height: calc(100% - 40px); overflow: auto;
           background: rgba(255, 255, 255, 0.95); border: 1px solid #999; border-radius: 4px; padding: 6px 8px; }
  #panel label { display: block; margin: 3px 0; }
  #panel select, #panel input[type=text], #panel input:not([type]), #panel input[type=datetime-local] { max-width: 180px; }
  #panel details { margin-top: 4px; border-top: 1px solid #ddd; padding-top: 3px; }
  #panel summary { cursor: pointer; font-weight: bold; }
  #months label { display: inline-block; margin: 0 3px 0 0; }
  #info { white-space: pre-wrap; color: #333; margin-top: 4px; }
  #error { color: #b00; }
  #missing { position: absolute; z-index: 2000; inset: 30% 20% auto 20%; background: #fff; border: 2px solid #b00; padding: 12px; }
  .cluster { display: flex; align-items: center; justify-content: center; border-radius: 50%;
             background: rgba(230, 85, 13, 0.9); border: 2px solid #fff; box-sizing: border-box; color: #fff;
             font-weight: bold; font-size: 11px; letter-spacing: -0.5px; text-shadow: 0 0 2px #7a2b00; }
  .cluster.long { font-size: 9px; }
  .label { background: rgba(255, 255, 255, 0.85); border: 0; box-shadow: none; padding: 0 3px; font-size: 12px; color: #111; }
  .label::before { display: none; }
  #trip-status { font-weight: bold; margin: 3px 0; }
  #trip-status.ok { color: #1a7f37; } #trip-status.tight { color: #b36200; } #trip-status.too_late, #trip-status.departed { color: #b00; }
  #progress { width: 100%; }
  #place-list { margin: 4px 0; padding-left: 20px; }
  #place-list li { cursor: pointer; margin: 2px 0; }
  #place-list li:hover { text-decoration: underline; }
  .slack { display: inline-block; width: 9px; height: 9px; border-radius: 50%; margin-right: 4px; }
  #details { white-space: pre-wrap; margin: 4px 0; padding: 3px 0; border-top: 1px solid #ddd; border-bottom: 1px solid #ddd; }
  #details:empty { display: none; }
</style>
</head>
<body>
<div id="map" data-problem="@@LEAFLET_PROBLEM@@"></div>
<div id="panel">
  <label>레이어 <select id="layer"></select></label>
  <span id="status" data-clusters="0" data-points="0"></span>
  <div id="filters">
    <div id="species-filter" hidden>
      <label>종 <input id="species" list="species-list" placeholder="국명, 영명 또는 학명" autocomplete="off"></label>
      <datalist id="species-list"></datalist>
      <div id="months">월 </div>
    </div>
    <div id="category-filter" hidden>
      <label>분류 <select id="category"><option value="">전체</option></select></label>
    </div>
  </div>
  <details id="reach">
    <summary>출발 전 둘러보기</summary>
    <label>역 <input id="station-name" list="station-list" placeholder="역 이름 (서울, Busan…)" autocomplete="off"></label>
    <datalist id="station-list"></datalist>
    <label>출발 <input id="departure" type="datetime-local"></label>
    <label>역 레이어 <select id="stations-layer"></select></label>
    <label>장소 레이어 <select id="places-layer"></select></label>
    <label>이동 <select id="travel"><option value="">직선 거리</option></select></label>
    <button id="reach-go">보기</button> <button id="reach-clear">지우기</button>
    <div id="trip" hidden>
      <div id="trip-status"></div>
      <div>남은 시간 <b id="remaining"></b>분 · 갈 수 있는 곳 <b id="reachable-total"></b>곳</div>
      <progress id="progress" max="120" value="0"></progress>
      <div id="details"></div>
      <ol id="place-list"></ol>
    </div>
  </details>
  <div id="error"></div>
  <div id="info"></div>
</div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const MAX_ZOOM = 20;
const COLOR = { point: "#3182bd", station: "#222222", route: "#6a3d9a", slackHigh: "#1a9850", slackMid: "#f39c12", slackLow: "#d73027" };
let layers = [], layer = null, generation = 0, speciesList = [], speciesByName = new Map();
let map = null, basemap = null, streets = {}, networks = [], featureLayer = null, tripLayer = null, routeLayer = null, trip = null;

function num(text, fallback) { const v = parseFloat(text); return Number.isFinite(v) ? v : fallback; }
function clamp(v, lo, hi) { return Math.min(hi, Math.max(lo, v)); }
function text(value) { return value === undefined || value === null ? "" : String(value); }
function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "class") node.className = value; else if (key.startsWith("data-")) node.setAttribute(key, value); else node[key] = value;
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

async function api(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? body.error.code + ": " + body.error.message : response.statusText);
  return body;
}
function showError(error) { $("error").textContent = error ? String(error.message || error) : ""; }
const layerPath = (name) => "/v1/layers/" + encodeURIComponent(name);

// A feature's name, Korean first.
function nameOf(properties, id) {
  const p = properties || {};
  return text(p.name || p.species_ko || p.name_en || p.species_en || p.species || id);
}

// What the page shows is in its URL, so that a view can be shared and reloaded.
function keepInURL(values) {
  const query = new URLSearchParams(location.search);
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === "") query.delete(key); else query.set(key, value);
  }
  history.replaceState(null, "", "?" + query);
}

// ---- Filters: species (by Korean, English or scientific name) and months for sightings, category for places.
function speciesFilter() {
  const typed = $("species").value.trim();
  if (!typed) return "";
  const found = speciesByName.get(typed.toLowerCase());
  if (!found) throw new Error("알 수 없는 종: " + typed);
  return found.scientific;
}
function monthsFilter() {
  return [...document.querySelectorAll("#months input:checked")].map((box) => box.value).join(",");
}
function filterQuery() {
  const query = new URLSearchParams();
  if (layer.kind === "sightings") {
    const species = speciesFilter(), months = monthsFilter();
    if (species) query.set("species", species);
    if (months) query.set("months", months);
  }
  if (layer.kind === "places" && $("category").value) query.set("category", $("category").value);
  return query;
}
async function loadFilters() {
  $("species-filter").hidden = layer.kind !== "sightings";
  $("category-filter").hidden = layer.kind !== "places";
  if (layer.kind === "sightings") {
    try {
      speciesList = (await api(layerPath(layer.name) + "/species?lang=ko")).species;
    } catch (error) { speciesList = []; }
    speciesByName = new Map();
    for (const s of speciesList) for (const n of [s.ko, s.en, s.scientific]) if (n) speciesByName.set(n.toLowerCase(), s);
    $("species-list").replaceChildren(...speciesList.map((s) => element("option", { value: s.ko || s.scientific,
                                                                                  label: [s.en, s.scientific].filter(Boolean).join(" · ") })));
  }
  if (layer.kind === "places") {
    // The categories of the layer's records (the first 5000 of them).
    try {
      const sample = await api(layerPath(layer.name) + "/points?bbox=-180,-85,180,85&limit=5000");
      const categories = [...new Set(sample.features.map((f) => f.properties && f.properties.category).filter(Boolean))].sort();
      $("category").replaceChildren(element("option", { value: "" }, "전체"), ...categories.map((c) => element("option", { value: c }, c)));
    } catch (error) { showError(error); }
  }
}
function koreanMonth(m) { return m + "월"; }

// ---- Clusters for the view, drawn as a frontend draws supercluster's answers.
function viewBox() {
  const b = map.getBounds();
  return [clamp(b.getWest(), -180, 180), clamp(b.getSouth(), -85.051129, 85.051129),
          clamp(b.getEast(), -180, 180), clamp(b.getNorth(), -85.051129, 85.051129)].map((v) => v.toFixed(6)).join(",");
}
// The zoom to ask the API for. A layer clusters at zoom z on a world `extent` * 2^z pixels wide
// and Leaflet's world is 256 * 2^zoom pixels wide: asking for zoom + log2(256 / extent) (one less
// at extent 512) makes the layer's radius that many pixels on screen (docs/FRONTENDS.md).
function zoomOffset() { return Math.log2(256 / ((layer.options || {}).extent || 512)); }
function apiZoom() { return Math.max(0, Math.floor(map.getZoom() + zoomOffset())); }
// The layer's clustering radius in screen pixels: clusters lie about that far apart, so a
// circle at most that wide never covers its neighbour's centre.
function radiusPixels() {
  const options = layer.options || {};
  return (options.radius || 40) * 256 * 2 ** map.getZoom() / ((options.extent || 512) * 2 ** apiZoom());
}
function clusterDiameter(count) {
  return Math.round(Math.min(Math.max(18, radiusPixels()), 14 + 4 * Math.log2(count)));
}

async function load() {
  if (!layer) return;
  const current = ++generation, zoom = apiZoom(), box = viewBox(), center = map.getCenter();
  keepInURL({ layer: layer.name, lon: center.lng.toFixed(5), lat: center.lat.toFixed(5), zoom: map.getZoom() });
  let features = [];
  try {
    const filters = filterQuery();
    const answer = await api(layerPath(layer.name) + "/clusters?bbox=" + box + "&zoom=" + zoom + (filters.size ? "&" + filters : ""));
    if (current !== generation) return;
    features = answer.features;
    showError(null);
  } catch (error) {
    if (current !== generation) return;
    showError(error);
  }
  draw(features);
  const clusters = features.filter((f) => f.properties && f.properties.cluster).length;
  const status = $("status");
  status.dataset.clusters = clusters;
  status.dataset.points = features.length - clusters;
  status.dataset.zoom = zoom;
  status.dataset.bbox = box;
  status.textContent = "z" + zoom + ": 클러스터 " + clusters + ", 지점 " + (features.length - clusters);
}

function draw(features) {
  featureLayer.clearLayers();
  const points = features.filter((f) => !(f.properties && f.properties.cluster));
  const label = points.length <= 60; // names on the map while they stay readable
  for (const feature of features) {
    const [lon, lat] = feature.geometry.coordinates, p = feature.properties || {};
    if (p.cluster) {
      const d = clusterDiameter(p.point_count);
      const marker = L.marker([lat, lon], {
        icon: L.divIcon({ className: "", iconSize: [d, d],
                          html: '<div class="cluster" style="width:' + d + "px;height:" + d + 'px"></div>' }),
        keyboard: false });
      marker.on("add", () => {
        const disc = marker.getElement().firstChild;
        disc.textContent = p.point_count_abbreviated || String(p.point_count);
        if (disc.textContent.length > 3) disc.classList.add("long");
        disc.dataset.clusterId = p.cluster_id;
      });
      if (layer.kind === "sightings") marker.bindTooltip(() => sightingsSummary(p), { direction: "top", offset: [0, -d / 2] });
      marker.on("click", () => expand(p.cluster_id, lat, lon));
      featureLayer.addLayer(marker);
    } else {
      const marker = L.circleMarker([lat, lon], { radius: 5, color: "#fff", weight: 1, fillColor: COLOR.point, fillOpacity: 1 });
      marker.bindTooltip(nameOf(p, feature.id), label ? { permanent: true, direction: "right", className: "label", offset: [5, 0] }
                                                       : { direction: "top" });
      marker.on("click", () => showFeature(feature));
      featureLayer.addLayer(marker);
    }
  }
}

function koreanSpecies(scientific) {
  const s = speciesList.find((item) => item.scientific === scientific);
  return s ? (s.ko || s.en || scientific) : scientific;
}
// A sightings cluster's aggregates, in Korean.
function sightingsSummary(p) {
  const lines = ["기록 " + p.point_count.toLocaleString("ko-KR") + "건"];
  if (p.individuals !== undefined) lines.push("개체 수 " + p.individuals.toLocaleString("ko-KR"));
  if (p.species_count !== undefined) lines.push("종 " + p.species_count + "종");
  for (const top of p.top_species || []) lines.push("· " + koreanSpecies(top.species) + " " + top.count + "건");
  if (p.latest_observed_at) lines.push("최근 관찰 " + p.latest_observed_at.slice(0, 10));
  const box = element("div", { class: "aggregates" });
  lines.forEach((line, i) => { if (i) box.append(element("br")); box.append(line); });
  return box;
}

async function expand(clusterId, lat, lon) {
  try {
    const filters = filterQuery();
    const answer = await api(layerPath(layer.name) + "/clusters/" + clusterId + "/expansion-zoom" + (filters.size ? "?" + filters : ""));
    map.setView([lat, lon], clamp(answer.expansion_zoom - zoomOffset(), 0, MAX_ZOOM));
  } catch (error) { showError(error); }
}

function showFeature(feature) {
  const p = feature.properties || {}, lines = [nameOf(p, feature.id)];
  if (p.species_ko) lines.push([p.species_en, p.species].filter(Boolean).join(" · "), "개체 수 " + text(p.count),
                               "관찰 " + text(p.observed_at), text(p.site));
  else for (const [key, value] of Object.entries(p)) if (key !== "name") lines.push(key + ": " + (typeof value === "object" ? JSON.stringify(value) : value));
  $("info").textContent = lines.filter(Boolean).join("\n");
}

// ---- The travel app's screen.
async function loadStations() {
  const name = $("stations-layer").value;
  if (!name) return;
  try {
    const all = await api(layerPath(name) + "/clusters?bbox=-180,-85,180,85&zoom=" + MAX_ZOOM);
    const stations = all.features.map((f) => ({ id: String(f.id), name: nameOf(f.properties, f.id), en: text(f.properties && f.properties.name_en) }))
      .sort((a, b) => a.name.localeCompare(b.name, "ko"));
    $("station-list").replaceChildren(...stations.map((s) => element("option", { value: s.name, label: s.en })));
    $("station-list").stations = stations;
  } catch (error) { showError(error); }
}
// The station the form names: by id, or found by its Korean or English name.
async function chosenStation() {
  const typed = $("station-name").value.trim();
  if (!typed) throw new Error("역을 고르세요");
  const known = ($("station-list").stations || []).find((s) => s.id === typed || s.name === typed);
  if (known) return known.id;
  // Any other name as typed: /v1/reachable resolves it, and answers ambiguous_station with
  // the candidates when it names several (the first of a list would pick one silently).
  return typed;
}

// RFC 3339 with the browser's UTC offset, as `/v1/reachable` wants it.
function rfc3339(date) {
  const pad = (n) => String(Math.floor(Math.abs(n))).padStart(2, "0"), offset = -date.getTimezoneOffset();
  return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + "T" + pad(date.getHours()) +
    ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds()) + (offset < 0 ? "-" : "+") + pad(offset / 60) + ":" +
    pad(offset % 60);
}
// "14:43" from an RFC 3339 time, in the time's own offset (the layer's local time).
function clockOf(timestamp) { return text(timestamp).slice(11, 16); }
function slackColor(minutes) { return minutes >= 30 ? COLOR.slackHigh : minutes >= 10 ? COLOR.slackMid : COLOR.slackLow; }

function tripQuery(station, departure, now) {
  const query = new URLSearchParams({ layer: $("places-layer").value, stations_layer: $("stations-layer").value,
                                      station, departure, now, lang: "ko" });
  if ($("travel").value) { query.set("travel", "network"); query.set("network", $("travel").value); }
  return query;
}

// `departure` and `now` are RFC 3339 text; without them, the form's time and the browser's clock.
async function showReachable(departure, now) {
  try {
    if (typeof departure !== "string") {
      const chosen = new Date($("departure").value);
      if (isNaN(chosen)) throw new Error("출발 시각을 고르세요");
      departure = rfc3339(chosen);
    }
    now = typeof now === "string" ? now : rfc3339(new Date());
    const query = tripQuery(await chosenStation(), departure, now);
    query.set("limit", 500);
    const answer = await api("/v1/reachable?" + query);
    const station = String(answer.station.id);
    trip = { answer, station, departure, now };
    keepInURL({ station, stations_layer: $("stations-layer").value, places: $("places-layer").value, departure,
                now: params.get("now") ? now : "", network: $("travel").value });
    showError(null);
    drawTrip();
  } catch (error) { showError(error); }
}

function drawTrip() {
  const answer = trip.answer, places = answer.reachable || [];
  tripLayer.clearLayers(); routeLayer.clearLayers(); $("details").textContent = "";
  $("trip").hidden = false;
  const status = $("trip-status");
  status.className = answer.status;
  status.textContent = answer.reason;
  $("remaining").textContent = answer.remaining_minutes;
  $("reachable-total").textContent = answer.total || 0;
  $("progress").value = clamp(answer.remaining_minutes, 0, 120);
  $("status").dataset.reachable = places.length;
  const list = $("place-list");
  list.replaceChildren(...places.map((place) => {
    const item = element("li", { "data-id": place.id },
                         element("span", { class: "slack", style: "background:" + slackColor(place.slack_minutes) }),
                         place.name + " · " + text(place.category_label) + " · " + clockOf(place.leave_by) + "까지 출발 · 여유 " +
                         Math.floor(place.slack_minutes) + "분");
    item.onclick = () => openPlace(place);
    return item;
  }));
  if (answer.station) {
    const s = answer.station;
    L.marker([s.lat, s.lon], { icon: L.divIcon({ className: "", iconSize: [14, 14],
                                                 html: '<div style="width:14px;height:14px;background:#222;border:2px solid #fff;box-sizing:border-box"></div>' }) })
      .bindTooltip(s.name, { permanent: true, direction: "left", className: "label station-label", offset: [-8, 0] })
      .addTo(tripLayer);
  }
  // The trip replaces the layer's clusters on the map until it is cleared.
  map.removeLayer(featureLayer);
  for (const place of places) {
    L.circleMarker([place.lat, place.lon], { radius: 6, color: "#fff", weight: 1, fillColor: slackColor(place.slack_minutes), fillOpacity: 1 })
      .bindTooltip(place.name + " (" + clockOf(place.leave_by) + ")", { permanent: places.length <= 15, direction: "right",
                                                                          className: "label place-label", offset: [6, 0] })
      .on("click", () => openPlace(place)).addTo(tripLayer);
  }
  if (answer.station && !map.getBounds().contains([answer.station.lat, answer.station.lon])) {
    map.setView([answer.station.lat, answer.station.lon], 15);
  } else if (answer.station) {
    map.setView([answer.station.lat, answer.station.lon], Math.max(map.getZoom(), 14));
  }
}

// A place's details (`GET /v1/layers/{layer}/points/{id}`) and its walking route (`/v1/route`).
async function openPlace(place) {
  delete $("details").dataset.routePoints;
  try {
    const [record, route] = await Promise.all([
      api(layerPath($("places-layer").value) + "/points/" + encodeURIComponent(place.id)),
      api("/v1/route?" + tripQuery(trip.station, trip.departure, trip.now) + "&place=" + encodeURIComponent(place.id)),
    ]);
    const p = record.properties || {};
    const lines = [place.name, text(p.name_en), text(place.category_label), "걷기 편도 " + place.walk_minutes + "분 (" +
                   Math.round(place.distance_m) + " m) · 머무는 시간 " + place.dwell_minutes + "분",
                   clockOf(place.leave_by) + "까지 출발 · 여유 " + Math.floor(place.slack_minutes) + "분"];
    if (p.opening_hours) lines.push("영업시간 " + p.opening_hours);
    $("details").textContent = lines.filter(Boolean).join("\n");
    $("details").dataset.place = place.id;
    routeLayer.clearLayers();
    const geometry = route.place && route.place.route;
    if (geometry) {
      const line = L.geoJSON(geometry, { style: { color: COLOR.route, weight: 4, opacity: 0.85 } }).addTo(routeLayer);
      $("details").dataset.routePoints = geometry.coordinates.length;
      // Clear of the panel on the left.
      map.fitBounds(line.getBounds(), { paddingTopLeft: [$("panel").offsetWidth + 30, 30], paddingBottomRight: [30, 30],
                                        maxZoom: 17 });
    }
  } catch (error) { showError(error); }
}

// ---- The base map: land, lakes and borders from the server, streets of its walking networks.
async function loadBasemap() {
  try {
    const land = await api("/viewer/basemap.geojson");
    basemap = L.geoJSON(land, { pane: "basemap", interactive: false, renderer: L.canvas({ pane: "basemap" }),
                                // Land (lakes are holes in it) and borders.
                                style: (f) => f.properties.kind === "border" ? { color: "#8a7f8e", weight: 1, dashArray: "4 3", fill: false }
                                  : { color: "#9fb7c4", weight: 0.7, fillColor: "#f2efe9", fillOpacity: 1 } }).addTo(map);
    if (land.attribution) map.attributionControl.addAttribution(text(land.attribution));
    $("status").dataset.basemap = "drawn";
  } catch (error) { $("status").dataset.basemap = "missing"; }
}
// Every walking network's streets, fetched once the map is zoomed in far enough to show them.
async function showStreets() {
  if (map.getZoom() < 12) return;
  for (const network of networks) {
    if (streets[network.name]) continue;
    streets[network.name] = "loading";
    try {
      const lines = await api("/viewer/streets-" + encodeURIComponent(network.name) + ".geojson");
      streets[network.name] = L.geoJSON(lines, { pane: "basemap", interactive: false, renderer: L.canvas({ pane: "basemap" }),
                                                 style: { color: "#ffffff", weight: 2, opacity: 0.9 } }).addTo(map);
      $("status").dataset.streets = Object.keys(streets).filter((n) => streets[n] !== "loading").sort().join(",");
    } catch (error) { showError(error); }
  }
}

function setAttribution() {
  for (const l of layers) map.attributionControl.removeAttribution(l.attribution);
  if (layer && layer.attribution) map.attributionControl.addAttribution(layer.attribution);
}

function fitBounds(bounds) {
  if (!bounds) return;
  const [west, south, east, north] = bounds;
  map.fitBounds([[south, west], [north, east]], { maxZoom: 16, animate: false });
}

function fillSelect(select, items, selected) {
  select.replaceChildren(...items.map(([value, label]) => new Option(label, value, false, value === selected)));
}

async function start() {
  if (typeof L === "undefined") {
    document.body.append(element("div", { id: "missing" }, $("map").dataset.problem || "Leaflet did not load"));
    return;
  }
  map = L.map("map", { zoomSnap: 1, zoomDelta: 1, minZoom: 0, maxZoom: MAX_ZOOM, wheelPxPerZoomLevel: 120,
                       attributionControl: true, zoomControl: false });
  L.control.zoom({ position: "topright" }).addTo(map);
  map.attributionControl.setPrefix("Leaflet");
  map.createPane("basemap").style.zIndex = 250;
  featureLayer = L.layerGroup().addTo(map);
  tripLayer = L.layerGroup().addTo(map);
  routeLayer = L.layerGroup().addTo(map);
  for (let m = 1; m <= 12; m++) {
    const box = element("input", { type: "checkbox", value: String(m) });
    box.onchange = () => { keepInURL({ months: monthsFilter() }); load(); };
    $("months").append(element("label", {}, box, koreanMonth(m)));
  }
  const soon = new Date(Date.now() + 2 * 3600 * 1000);
  soon.setMinutes(0, 0, 0);
  $("departure").value = rfc3339(soon).slice(0, 16);
  let catalog;
  try {
    catalog = await api("/v1/layers");
  } catch (error) { showError(error); return; }
  layers = catalog.layers;
  if (layers.length === 0) { showError("불러온 레이어가 없습니다"); return; }
  fillSelect($("travel"), [["", "직선 거리"], ...(catalog.networks || []).map((n) => [n.name, "보행 네트워크 " + n.name])], params.get("network") || "");
  layer = layers.find((l) => l.name === params.get("layer")) || layers[0];
  fillSelect($("layer"), layers.map((l) => [l.name, l.name + " (" + l.kind + ", " + l.count.toLocaleString("ko-KR") + ")"]), layer.name);
  const ofKind = (kind) => layers.filter((l) => l.kind === kind).map((l) => [l.name, l.name]);
  fillSelect($("stations-layer"), ofKind("stations"), params.get("stations_layer"));
  fillSelect($("places-layer"), ofKind("places"), params.get("places") || (layer.kind === "places" ? layer.name : undefined));
  if (params.has("species")) $("species").value = params.get("species");
  for (const m of (params.get("months") || "").split(",")) {
    const box = document.querySelector('#months input[value="' + CSS.escape(m) + '"]');
    if (box) box.checked = true;
  }
  $("layer").onchange = async () => {
    layer = layers.find((l) => l.name === $("layer").value);
    setAttribution();
    await loadFilters();
    fitBounds(layer.bounds);
    load();
  };
  $("species").onchange = () => { keepInURL({ species: $("species").value.trim() }); load(); };
  $("category").onchange = () => { keepInURL({ category: $("category").value }); load(); };
  $("stations-layer").onchange = loadStations;
  $("reach-go").onclick = () => showReachable();
  $("reach-clear").onclick = () => { trip = null; tripLayer.clearLayers(); routeLayer.clearLayers(); $("trip").hidden = true;
                                     featureLayer.addTo(map);
                                     $("details").textContent = ""; keepInURL({ station: "", departure: "", now: "" }); };
  setAttribution();
  if (params.has("lon") && params.has("lat")) {
    map.setView([num(params.get("lat"), 36.3), num(params.get("lon"), 127.8)], clamp(Math.round(num(params.get("zoom"), 7)), 0, MAX_ZOOM),
                { animate: false });
  } else fitBounds(layer.bounds);
  await Promise.all([loadBasemap(), loadFilters(), loadStations()]);
  if (params.has("category")) $("category").value = params.get("category");
  networks = catalog.networks || [];
  map.on("zoomend", showStreets);
  showStreets();
  // `data-moving` is there while the map pans or zooms (animated), for tests and screenshots.
  map.on("movestart zoomstart", () => { $("status").dataset.moving = "1"; });
  map.on("moveend", () => { delete $("status").dataset.moving; load(); });
  await load();
  // A view with a station shows what is reachable from it:
  // `/?station=seoul&stations_layer=stations&places=places&departure=…&now=…`.
  if (params.has("station")) {
    const id = params.get("station"), known = ($("station-list").stations || []).find((s) => s.id === id);
    $("station-name").value = known ? known.name : id;
    $("reach").open = true;
    await showReachable(params.get("departure") || undefined, params.get("now") || undefined);
  }
}
window.viewer = { get map() { return map; }, get trip() { return trip; }, load, expand };
start();
</script>
</body>
</html>
"""#
}

// The server a user might write instead of geo-cluster, for Benchmarks/wrk_vs_node.sh:
// plain Node `http` and supercluster 8.0.1, answering
//
//   GET /v1/layers/<layer>/clusters?bbox=w,s,e,n&zoom=z   supercluster's getClusters as a
//                                                         GeoJSON FeatureCollection
//   GET /healthz                                          ok
//
// or, with --lines 1, the same index over JSON lines on stdin and stdout instead of HTTP
// (for Benchmarks/lines_vs_node.sh), in geo-cluster query's envelope:
//
//   {"id":1,"op":"clusters","bbox":[w,s,e,n],"zoom":z}      -> {"id":1,"ok":true,"result":{"type":"FeatureCollection","features":[...]}}
//   {"id":2,"op":"expansion_zoom","cluster_id":c}           -> {"id":2,"ok":true,"result":{"cluster_id":c,"expansion_zoom":z}}
//   {"id":3,"op":"leaves","cluster_id":c,"limit":10,"offset":0}
//                                                           -> {"id":3,"ok":true,"result":{"type":"FeatureCollection","features":[...]}}
//
// (leaves has no `total`, which supercluster does not give; a bad line or an unknown
// cluster answers {"id":..,"ok":false,"error":{"message":..}}).
//
// gzip through Node's zlib (level 4 by default, asynchronously, on libuv's thread pool)
// when Accept-Encoding names gzip and the body is 1024 bytes or more (geo-cluster's
// threshold); no ETag, no answer cache. supercluster and kdbush are read at run time from
// the peers folder (--peers, default ../shared/peers beside the checkout; see below for how
// supercluster finds kdbush); their code is never copied into this repository.
//
//   node Benchmarks/node_supercluster_server.mjs --data korea.geojson --layer korea --port 8090 \
//       [--radius 40 --extent 512 --min-zoom 0 --max-zoom 16 --min-points 2] [--gzip-level 4]
//
// The defaults are geo-cluster's layer defaults (supercluster's own radius is also 40).
// It listens only once the points are indexed, so /healthz answering means ready.
import fs from 'node:fs';
import http from 'node:http';
import {register} from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import zlib from 'node:zlib';
import {fileURLToPath, pathToFileURL} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const settings = {
    data: null, layer: 'korea', port: 8090, host: '127.0.0.1',
    peers: path.resolve(here, '../../shared/peers'),
    radius: 40, extent: 512, minZoom: 0, maxZoom: 16, minPoints: 2, gzipLevel: 4, lines: 0,
};
const numeric = new Set(['port', 'radius', 'extent', 'minZoom', 'maxZoom', 'minPoints', 'gzipLevel', 'lines']);
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(name in settings) || argv[i + 1] === undefined) {
        console.error(`unknown option or missing value: ${argv[i]}`);
        process.exit(2);
    }
    settings[name] = numeric.has(name) ? Number(argv[i + 1]) : argv[i + 1];
    if (numeric.has(name) && !Number.isFinite(settings[name])) {
        console.error(`${argv[i]} ${argv[i + 1]}: expected a number`);
        process.exit(2);
    }
}
if (!settings.data) {
    console.error('--data <GeoJSON FeatureCollection of points> is required');
    process.exit(2);
}

const entry = path.join(settings.peers, 'supercluster', 'index.js');
if (!fs.existsSync(entry)) {
    console.error(`supercluster not found at ${entry} (give --peers)`);
    process.exit(3);
}
// supercluster imports the bare name 'kdbush'. Its node_modules/kdbush is meant as a link to
// ../../kdbush; where that link was checked out as a plain file holding its target (as in
// /work/shared/peers), Node cannot follow it, so a resolve hook maps 'kdbush' to that target.
const link = path.join(settings.peers, 'supercluster', 'node_modules', 'kdbush');
if (!(fs.existsSync(link) && fs.statSync(link).isDirectory())) {
    const target = fs.existsSync(link) ? path.resolve(path.dirname(link), fs.readFileSync(link, 'utf8').trim())
        : path.join(settings.peers, 'kdbush');
    const kdbush = pathToFileURL(path.join(target, 'index.js')).href;
    if (!fs.existsSync(fileURLToPath(kdbush))) {
        console.error(`kdbush not found at ${fileURLToPath(kdbush)}`);
        process.exit(3);
    }
    register('data:text/javascript,' + encodeURIComponent(
        `export async function resolve(specifier, context, next) {
            return specifier === 'kdbush' ? {url: ${JSON.stringify(kdbush)}, shortCircuit: true} : next(specifier, context);
        }`));
}
const {default: Supercluster} = await import(pathToFileURL(entry).href);

const started = process.hrtime.bigint();
const points = JSON.parse(fs.readFileSync(settings.data, 'utf8')).features;
const index = new Supercluster({
    radius: settings.radius, extent: settings.extent, minZoom: settings.minZoom,
    maxZoom: settings.maxZoom, minPoints: settings.minPoints,
}).load(points);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.error(`node: ${points.length} points read and indexed in ${seconds.toFixed(1)} s ` +
    `(radius ${settings.radius}, extent ${settings.extent}, zooms ${settings.minZoom}-${settings.maxZoom}, ` +
    `minPoints ${settings.minPoints})`);

if (settings.lines) {
    // One answer line per request line, written in chunks of about 64 KiB.
    const answer = (request) => {
        switch (request.op) {
        case 'clusters': return {type: 'FeatureCollection', features: index.getClusters(request.bbox, request.zoom)};
        case 'expansion_zoom': return {cluster_id: request.cluster_id,
            expansion_zoom: index.getClusterExpansionZoom(request.cluster_id)};
        case 'leaves': return {type: 'FeatureCollection',
            features: index.getLeaves(request.cluster_id, request.limit ?? 10, request.offset ?? 0)};
        default: throw new Error(`unknown op ${request.op}`);
        }
    };
    // Answers are written when 64 KiB are pending and, at the latest, once the lines of
    // the chunk just read are answered (as geo-cluster query writes once per chunk read).
    // While stdout's buffer is full, reading waits for it to drain (without that, writes
    // queue up until Node fails with ENOBUFS).
    let pending = [], size = 0, scheduled = false;
    const flush = () => {
        scheduled = false;
        if (!pending.length) return;
        const drained = process.stdout.write(pending.join(''));
        pending = []; size = 0;
        if (!drained) {
            input.pause();
            process.stdout.once('drain', () => input.resume());
        }
    };
    const input = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
    input.on('line', (line) => {
        if (!line.trim()) return;
        let text;
        try {
            const request = JSON.parse(line);
            try {
                text = JSON.stringify({id: request.id, ok: true, result: answer(request)});
            } catch (failure) {
                text = JSON.stringify({id: request.id, ok: false, error: {message: String(failure.message)}});
            }
        } catch (failure) {
            text = JSON.stringify({id: null, ok: false, error: {message: `bad line: ${failure.message}`}});
        }
        pending.push(text, '\n');
        size += text.length + 1;
        if (size >= 65536) flush();
        else if (!scheduled) { scheduled = true; setImmediate(flush); }
    });
    input.on('close', flush);
} else {
    serve();
}

function serve() {
    const clustersPath = `/v1/layers/${settings.layer}/clusters`;

    function send(response, status, type, body) {
        response.writeHead(status, {'Content-Type': type, 'Content-Length': body.length});
        response.end(body);
    }

    function error(response, status, message) {
        send(response, status, 'application/json', Buffer.from(JSON.stringify({error: {message}})));
    }

    function acceptsGzip(header) {
        // gzip or x-gzip listed with a q other than 0 (enough for a benchmark; '*' is not read).
        return (header || '').split(',').some(item => {
            const [coding, ...parameters] = item.split(';').map(part => part.trim().toLowerCase());
            const q = parameters.find(part => part.startsWith('q='));
            return (coding === 'gzip' || coding === 'x-gzip') && (q === undefined || Number(q.slice(2)) > 0);
        });
    }

    const server = http.createServer((request, response) => {
        const url = new URL(request.url, 'http://localhost');
        if (request.method !== 'GET') return error(response, 405, 'only GET');
        if (url.pathname === '/healthz') return send(response, 200, 'text/plain', Buffer.from('ok\n'));
        if (url.pathname !== clustersPath) return error(response, 404, 'no such route or layer');

        const bbox = (url.searchParams.get('bbox') || '').split(',').map(Number);
        const zoom = Number(url.searchParams.get('zoom'));
        if (bbox.length !== 4 || !bbox.every(Number.isFinite) || !url.searchParams.has('zoom') || !Number.isFinite(zoom)) {
            return error(response, 400, 'expected bbox=w,s,e,n and zoom=z');
        }
        const body = Buffer.from(JSON.stringify({type: 'FeatureCollection', features: index.getClusters(bbox, zoom)}));
        const headers = {'Content-Type': 'application/geo+json', 'Vary': 'Accept-Encoding'};
        if (body.length < 1024 || !acceptsGzip(request.headers['accept-encoding'])) {
            response.writeHead(200, {...headers, 'Content-Length': body.length});
            return response.end(body);
        }
        zlib.gzip(body, {level: settings.gzipLevel}, (failure, compressed) => {
            if (failure) return error(response, 500, String(failure));
            response.writeHead(200, {...headers, 'Content-Encoding': 'gzip', 'Content-Length': compressed.length});
            response.end(compressed);
        });
    });
    server.keepAliveTimeout = 60_000;
    server.listen(settings.port, settings.host, () => {
        console.error(`node: listening on http://${settings.host}:${settings.port}${clustersPath}`);
    });
}

-- wrk script for Benchmarks/wrk_viewport.sh: each request asks for the clusters of a
-- 1280x800-pixel viewport (Web Mercator, 256-pixel tiles) at a random zoom 3-16,
-- centred on a random point of the data set. CENTRES names a Lua file returning
-- {{lon, lat}, ...}; each thread seeds its own generator from its number, so runs repeat.

local centres = dofile(os.getenv("CENTRES"))
local maxLatitude = 85.0511287798 -- atan(sinh(pi))
local threadCount = 0

function setup(thread)
    threadCount = threadCount + 1
    thread:set("id", threadCount)
end

function init(args)
    math.randomseed(1000 + id)
end

local function worldPixel(lon, lat, size)
    local sine = math.sin(lat * math.pi / 180)
    return (lon + 180) / 360 * size, (0.5 - math.log((1 + sine) / (1 - sine)) / (4 * math.pi)) * size
end

local function coordinate(x, y, size)
    local n = math.pi * (1 - 2 * y / size)
    return x / size * 360 - 180, (2 * math.atan(math.exp(n)) - math.pi / 2) * 180 / math.pi
end

local function clamp(value, low, high) return math.max(low, math.min(high, value)) end

function request()
    local centre = centres[math.random(#centres)]
    local zoom = math.random(3, 16)
    local size = 256 * 2 ^ zoom
    local x, y = worldPixel(centre[1], centre[2], size)
    local west, north = coordinate(x - 640, y - 400, size)
    local east, south = coordinate(x + 640, y + 400, size)
    local path = string.format("/v1/layers/korea/clusters?bbox=%.6f,%.6f,%.6f,%.6f&zoom=%d",
        clamp(west, -180, 180), clamp(south, -maxLatitude, maxLatitude),
        clamp(east, -180, 180), clamp(north, -maxLatitude, maxLatitude), zoom)
    return wrk.format("GET", path)
end

-- Errors must not pass as throughput: wrk counts non-2xx answers in errors.status.
function done(summary, latency, requests)
    io.write(string.format("non-2xx or socket errors: %d\n",
        summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
        + summary.errors.timeout))
end

-- wrk script for Benchmarks/wrk_vs_node.sh's "304" runs: each request asks again for a
-- view the client already holds, with the entity tag it was given (`If-None-Match`), as
-- a map app does when it pans back or reloads. REVALIDATE names a Lua file returning
-- {{path, etag}, ...}; each thread seeds its own generator from its number, so runs repeat.
-- Any status other than 304 is counted and printed: the run measures revalidation only.

local views = dofile(os.getenv("REVALIDATE"))
local threads = {}

function setup(thread)
    table.insert(threads, thread)
    thread:set("id", #threads)
end

function init(args)
    math.randomseed(2000 + id)
    other = 0
end

function request()
    local view = views[math.random(#views)]
    return wrk.format("GET", view[1], { ["If-None-Match"] = view[2] })
end

function response(status, headers, body)
    if status ~= 304 then other = other + 1 end
end

function done(summary, latency, requests)
    local others = 0
    for _, thread in ipairs(threads) do others = others + thread:get("other") end
    io.write(string.format("non-2xx or socket errors: %d\n",
        summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
        + summary.errors.timeout))
    io.write(string.format("answers other than 304: %d\n", others))
end

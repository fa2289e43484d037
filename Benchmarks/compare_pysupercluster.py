#!/usr/bin/env python3
"""geo-cluster's radius index and live index against pysupercluster 0.7.7 (the C++ port of
supercluster), on the same machine, in the same run, on the same bits.

The point sets and viewports come from Benchmarks/BenchmarkSupport/PointSets.swift, written
to raw float64 files by `bench-radius points`; the first points of each file are checked
against a Python port of the generator. Every measurement runs in a process of its own:
`bench-radius measure` for geo-cluster, `python3 compare_pysupercluster.py measure-peer`
for pysupercluster. Both report the same figures, read the same way:

- build time: wall clock of the index constructor (input validation or conversion,
  projection, every zoom level), and the process's CPU time over the same span, which
  a loaded machine disturbs less;
- index memory: resident memory after the build minus before it, both read from
  /proc/self/statm after glibc's malloc_trim(0), with the input points already loaded;
- peak RSS: ru_maxrss of the measuring process at its end (runtime, input, index, queries);
- viewport query: time of one query call per sample, read right around the call,
  by the wall clock (CLOCK_MONOTONIC) in some passes over the viewports and by the
  thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) in as many others; the CPU figures are
  the ones a loaded machine does not stretch by preempting the process. geo-cluster: `clusters(in:zoom:)`,
  which returns a new array of features. pysupercluster: `getClusters(...)`, which
  returns a new list of dicts (argument parsing and building the dicts happen inside the
  call and are included). A box crossing the antimeridian takes two getClusters calls,
  one per side, as geo-cluster does inside its one call; both are inside the sample.
  Freeing the result happens outside the sample in both; Python's cycle collector is
  off during the queries. Each harness first answers one untimed query of a small box at
  the first zoom (a process's first call pays what it pays once: in bench-radius, 0.2-0.3
  ms, half of it the Swift runtime's type lookups, the rest lazy symbol binding and cold
  caches). The first pass is reported apart, by the wall clock:
  the live index forms and keeps the display groups of the views' blocks there;
- live-writes: the live index again, with a point added about 100 m from a random input
  point before every 10th timed query, the steady stream of writes of a layer in use:
  its query figures include forming again what each write changed.

Run through Benchmarks/compare_pysupercluster.sh, which installs pysupercluster and builds
bench-radius first.
"""

import argparse
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

SEED = 20_261_122
SETS = {
    "korea-1m": ("korea", 1_000_000),
    "uniform-1m": ("uniform", 1_000_000),
    "korea-100k": ("korea", 100_000),
    "uniform-100k": ("uniform", 100_000),
}
OPTIONS = {"radius": 60.0, "extent": 512, "min_zoom": 0, "max_zoom": 16}
VERIFIED_PREFIX = 20_000


# --- A port of PointSets.points, to check the files bench-radius writes. ------------------

MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def unit(self):
        return float(self.next() >> 11) * 2.0**-53

    def uniform(self, low, high):
        return low + (high - low) * self.unit()

    def gaussian_pair(self):
        u1 = max(self.unit(), 2.0**-53)
        u2 = self.unit()
        r = math.sqrt(-2 * _series_log(u1))
        angle = 2 * math.pi * u2
        return r * _series_cos(angle), r * _series_sin(angle)


def _series_log(x):
    m, e = x, 0.0
    while m < 0.5:
        m *= 2
        e -= 1
    while m >= 1:
        m /= 2
        e += 1
    t = (m - 1) / (m + 1)
    t2 = t * t
    term, total, k = t, 0.0, 1.0
    for _ in range(40):
        total += term / k
        term *= t2
        k += 2
    return 2 * total + e * 0.6931471805599453


def _series_sin(x):
    x = math.fmod(x, 2 * math.pi)
    if x > math.pi:
        x -= 2 * math.pi
    if x < -math.pi:
        x += 2 * math.pi
    term, total = x, 0.0
    for n in range(1, 21):
        total += term
        term *= -x * x / float((2 * n) * (2 * n + 1))
    return total


def _series_cos(x):
    return _series_sin(x + math.pi / 2)


def generated_points(distribution, count):
    """The first `count` points of PointSets.points(distribution, ...), as (lon, lat)."""
    random = SplitMix64(SEED)
    if distribution == "uniform":
        return [(random.uniform(-180, 180), random.uniform(-85, 85)) for _ in range(count)]
    hotspots = []
    for _ in range(50):
        lon = random.uniform(126.3, 129.2)
        lat = random.uniform(34.3, 38.2)
        sigma = random.uniform(0.01, 0.15)
        hotspots.append((lon, lat, sigma))
    points = []
    for _ in range(count):
        if random.unit() < 0.1:
            lon = random.uniform(126, 129.5)
            points.append((lon, random.uniform(34, 38.5)))
            continue
        lon, lat, sigma = hotspots[random.next() % len(hotspots)]
        gx, gy = random.gaussian_pair()
        points.append((min(180.0, max(-180.0, lon + gx * sigma)), min(85.0, max(-85.0, lat + gy * sigma))))
    return points


# --- Shared helpers. -----------------------------------------------------------------------

def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_resident_bytes():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def malloc_trim():
    import ctypes
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def wrap_longitude(longitude):
    # BoundingBox.wrapLongitude: truncatingRemainder is C's fmod.
    return math.fmod(math.fmod(longitude + 180, 360) + 360, 360) - 180


def spans(west, south, east, north):
    """BoundingBox.spans: one box, or two when it crosses the antimeridian (east part first)."""
    south = max(-90.0, min(90.0, south))
    north = max(-90.0, min(90.0, north))
    if east - west >= 360:
        return [(-180.0, south, 180.0, north)]
    wrapped_west = wrap_longitude(west)
    wrapped_east = 180.0 if east == 180 else wrap_longitude(east)
    if wrapped_west > wrapped_east:
        return [(wrapped_west, south, 180.0, north), (-180.0, south, wrapped_east, north)]
    return [(wrapped_west, south, wrapped_east, north)]


def nearest_rank(sorted_values, fraction):
    return sorted_values[max(0, math.ceil(fraction * len(sorted_values)) - 1)]


# --- The peer's measuring process. --------------------------------------------------------

def measure_peer(args):
    import numpy
    import pysupercluster

    start_rss = resident_bytes()
    points = numpy.fromfile(args.points, dtype="<f8").reshape(-1, 2)
    views = numpy.fromfile(args.viewports, dtype="<f8").reshape(-1, 5).tolist()
    calls = [[((w, n), (e, s), int(view[4])) for (w, s, e, n) in spans(*view[:4])] for view in views]

    malloc_trim()
    before_build = resident_bytes()
    start, start_cpu = time.perf_counter(), time.process_time()
    index = pysupercluster.SuperCluster(points, min_zoom=OPTIONS["min_zoom"], max_zoom=OPTIONS["max_zoom"],
                                        radius=OPTIONS["radius"], extent=float(OPTIONS["extent"]))
    build_seconds, build_cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    malloc_trim()
    after_build = resident_bytes()

    get = index.getClusters
    features = 0
    first_samples = []
    samples = []
    cpu_samples = []
    # Python's cycle collector would otherwise run now and then inside a sample, triggered
    # by the dicts getClusters makes; it has nothing to collect here.
    gc.disable()
    # One untimed query of a small box at the first zoom, as bench-radius makes: a process's
    # first call pays what it pays once, which is not the cost of a first look at a view.
    get(top_left=(0.0, 0.001), bottom_right=(0.001, 0.0), zoom=OPTIONS["min_zoom"])
    # Pass 0 warms up and counts features; then `rounds` passes timed by the wall clock and
    # `rounds` by the thread's CPU clock, which preemption on a loaded machine does not stretch.
    for round_number in range(2 * args.rounds + 1):
        clock = time.thread_time_ns if round_number > args.rounds else time.perf_counter_ns
        for view_calls in calls:
            if len(view_calls) == 1:
                (top_left, bottom_right, zoom), = view_calls
                t0 = clock()
                result = get(top_left=top_left, bottom_right=bottom_right, zoom=zoom)
                t1 = clock()
                count = len(result)
            else:
                (top_left, bottom_right, zoom), (top_left2, bottom_right2, zoom2) = view_calls
                t0 = clock()
                result = get(top_left=top_left, bottom_right=bottom_right, zoom=zoom)
                result2 = get(top_left=top_left2, bottom_right=bottom_right2, zoom=zoom2)
                t1 = clock()
                count = len(result) + len(result2)
                result2 = None
            result = None
            if round_number == 0:
                features += count
                first_samples.append(t1 - t0)
            elif round_number <= args.rounds:
                samples.append(t1 - t0)
            else:
                cpu_samples.append(t1 - t0)

    print(json.dumps({
        "implementation": "pysupercluster", "points": len(points),
        "build_seconds": build_seconds,
        "build_cpu_seconds": build_cpu_seconds,
        "start_rss_bytes": start_rss,
        "before_build_rss_bytes": before_build,
        "index_bytes": after_build - before_build,
        "peak_rss_bytes": peak_resident_bytes(),
        "features": features,
        "first_pass_nanoseconds": first_samples,
        "query_nanoseconds": samples,
        "query_cpu_nanoseconds": cpu_samples,
    }))


# --- The driver. --------------------------------------------------------------------------

def write_points(bench_radius, name, data_dir):
    distribution, count = SETS[name]
    points_path = os.path.join(data_dir, f"{name}.points.f64")
    viewports_path = os.path.join(data_dir, f"{name}.viewports.f64")
    subprocess.run([bench_radius, "points", "--distribution", distribution, "--count", str(count),
                    "--points", points_path, "--viewports", viewports_path], check=True)
    import numpy
    written = numpy.fromfile(points_path, dtype="<f8").reshape(-1, 2)
    if len(written) != count:
        sys.exit(f"{points_path}: {len(written)} points, expected {count}")
    prefix = min(count, VERIFIED_PREFIX)
    expected = numpy.array(generated_points(distribution, prefix), dtype="<f8")
    if expected.tobytes() != written[:prefix].tobytes():
        sys.exit(f"{points_path}: the first {prefix} points differ from the Python port of PointSets")
    viewports = numpy.fromfile(viewports_path, dtype="<f8").reshape(-1, 5)
    crossing = sum(1 for v in viewports.tolist() if len(spans(*v[:4])) > 1)
    print(f"{name}: {count} points, first {prefix} equal bit for bit to the Python port; "
          f"{len(viewports)} viewports, {crossing} crossing the antimeridian", flush=True)
    return points_path, viewports_path


def run_json(command):
    output = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


# What `bench-radius measure` runs for each geo-cluster column: live-writes is the live
# index with a point added before every 10th timed query (the queries read the new
# version), the steady stream of writes of a layer in use.
ALGORITHMS = {
    "radius": ["--algorithm", "radius"],
    "live": ["--algorithm", "live"],
    "live-writes": ["--algorithm", "live", "--write-every", "10"],
}


def summarize(runs):
    """Medians over the processes; query percentiles are taken per process first, so that
    one process disturbed by the machine's other work does not decide the p99."""
    per_process = [sorted(run["query_nanoseconds"]) for run in runs]
    per_process_cpu = [sorted(run["query_cpu_nanoseconds"]) for run in runs]
    return {
        "build": statistics.median(r["build_seconds"] for r in runs),
        "build_cpu": statistics.median(r["build_cpu_seconds"] for r in runs),
        "index": statistics.median(r["index_bytes"] for r in runs),
        "peak": statistics.median(r["peak_rss_bytes"] for r in runs),
        "start": statistics.median(r["start_rss_bytes"] for r in runs),
        "median": statistics.median(nearest_rank(samples, 0.5) for samples in per_process),
        "p99": statistics.median(nearest_rank(samples, 0.99) for samples in per_process),
        "cpu_median": statistics.median(nearest_rank(samples, 0.5) for samples in per_process_cpu),
        "cpu_p99": statistics.median(nearest_rank(samples, 0.99) for samples in per_process_cpu),
        "first_median": statistics.median(nearest_rank(sorted(run["first_pass_nanoseconds"]), 0.5) for run in runs),
        "first_p99": statistics.median(nearest_rank(sorted(run["first_pass_nanoseconds"]), 0.99) for run in runs),
        "features": runs[0]["features"],
        "builds": [r["build_seconds"] for r in runs],
    }


def table(name, ours, theirs, runs, rounds):
    """`ours` maps each measured algorithm to its summary."""
    rows = [
        (f"build, median of {runs} processes", "build", lambda v: f"{v * 1000:,.0f} ms"),
        ("build CPU time (user + system), median", "build_cpu", lambda v: f"{v * 1000:,.0f} ms"),
        ("index memory (RSS growth over the build)", "index", lambda v: f"{v / 1e6:,.0f} MB"),
        ("peak RSS of the measuring process", "peak", lambda v: f"{v / 1e6:,.0f} MB"),
        ("RSS at process start (runtime only)", "start", lambda v: f"{v / 1e6:,.0f} MB"),
        (f"viewport query median ({rounds * 200:,} samples a process)", "median", lambda v: f"{v / 1000:,.1f} µs"),
        ("viewport query p99, median over the processes", "p99", lambda v: f"{v / 1000:,.1f} µs"),
        ("viewport query CPU time median", "cpu_median", lambda v: f"{v / 1000:,.1f} µs"),
        ("viewport query CPU time p99", "cpu_p99", lambda v: f"{v / 1000:,.1f} µs"),
        ("first, untimed pass: median (wall clock)", "first_median", lambda v: f"{v / 1000:,.1f} µs"),
        ("first, untimed pass: p99", "first_p99", lambda v: f"{v / 1000:,.1f} µs"),
        ("features returned by the 200 viewports", "features", lambda v: f"{v:,}"),
    ]
    algorithms = list(ours)
    lines = [f"### {name}", "",
             "| | " + " | ".join(f"geo-cluster {a}" for a in algorithms) + " | pysupercluster 0.7.7 | "
             + " | ".join(f"{a} / theirs" for a in algorithms) + " |",
             "|---|" + "---:|" * (2 * len(algorithms) + 1)]
    for label, key, fmt in rows:
        b = theirs[key]
        values = [fmt(ours[a][key]) for a in algorithms]
        ratios = [f"{ours[a][key] / b:.2f}" if b else "n/a" for a in algorithms]
        lines.append(f"| {label} | " + " | ".join(values) + f" | {fmt(b)} | " + " | ".join(ratios) + " |")
    lines.append("")
    lines.append("builds (s): " + "; ".join(f"geo-cluster {a} " + ", ".join(f"{v:.3f}" for v in ours[a]["builds"])
                                            for a in algorithms)
                 + "; pysupercluster " + ", ".join(f"{v:.3f}" for v in theirs["builds"]))
    return "\n".join(lines)


def environment():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import numpy
    import pysupercluster  # noqa: F401, checks that it imports
    return (f"{cpu}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; "
            f"Python {platform.python_version()}, numpy {numpy.__version__}")


def drive(args):
    here = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(args.data_dir, exist_ok=True)
    print(environment(), flush=True)
    print(f"options: radius {OPTIONS['radius']:g}, extent {OPTIONS['extent']}, "
          f"zooms {OPTIONS['min_zoom']}-{OPTIONS['max_zoom']}; {args.runs} processes per implementation "
          f"and set, {args.rounds} passes over the viewports timed by each clock", flush=True)
    reports = []
    for name in args.sets.split(","):
        if name not in SETS:
            sys.exit(f"unknown set {name}; choose from {', '.join(SETS)}")
        points_path, viewports_path = write_points(args.bench_radius, name, args.data_dir)
        algorithms = args.algorithms.split(",")
        for algorithm in algorithms:
            if algorithm not in ALGORITHMS:
                sys.exit(f"unknown algorithm {algorithm}; choose from {', '.join(ALGORITHMS)}")
        ours_commands = {algorithm: [args.bench_radius, "measure", "--points", points_path,
                                     "--viewports", viewports_path,
                                     "--radius", str(OPTIONS["radius"]), "--extent", str(OPTIONS["extent"]),
                                     "--min-zoom", str(OPTIONS["min_zoom"]), "--max-zoom", str(OPTIONS["max_zoom"]),
                                     "--rounds", str(args.rounds)] + ALGORITHMS[algorithm]
                         for algorithm in algorithms}
        theirs_command = [sys.executable, os.path.join(here, "compare_pysupercluster.py"), "measure-peer",
                          "--points", points_path, "--viewports", viewports_path, "--rounds", str(args.rounds)]
        ours = {algorithm: [] for algorithm in algorithms}
        theirs = []
        for run in range(args.runs):
            # Alternate which goes first, so that drift in the machine's load hits all.
            order = [(ours[a], ours_commands[a]) for a in algorithms] + [(theirs, theirs_command)]
            for results, command in (order if run % 2 == 0 else reversed(order)):
                results.append(run_json(command))
            builds = ", ".join(f"geo-cluster {a} {ours[a][-1]['build_seconds']:.3f} s" for a in algorithms)
            print(f"{name}: run {run + 1}/{args.runs}: build {builds}, "
                  f"pysupercluster {theirs[-1]['build_seconds']:.3f} s", flush=True)
        report = table(name, {a: summarize(ours[a]) for a in algorithms}, summarize(theirs), args.runs, args.rounds)
        reports.append(report)
        print("\n" + report + "\n", flush=True)
    if len(reports) > 1:
        print("\n\n".join(reports))
    print(f"load average {os.getloadavg()[0]:.2f} at the end", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="write the point sets, measure both, print the tables")
    run.add_argument("--bench-radius", required=True, help="path of the release-built bench-radius")
    run.add_argument("--sets", default="korea-1m", help=f"comma-separated, from {', '.join(SETS)}")
    run.add_argument("--runs", type=int, default=3, help="measuring processes per implementation and set")
    run.add_argument("--algorithms", default="radius,live,live-writes",
                     help=f"comma-separated geo-cluster algorithms: {', '.join(ALGORITHMS)}")
    run.add_argument("--rounds", type=int, default=10,
                     help="passes over the 200 viewports per process timed by each clock")
    run.add_argument("--data-dir", default=".build/compare-pysupercluster", help="where the point files go")
    peer = commands.add_parser("measure-peer", help="one pysupercluster measurement (used by run)")
    peer.add_argument("--points", required=True)
    peer.add_argument("--viewports", required=True)
    peer.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if args.command == "run":
        drive(args)
    else:
        measure_peer(args)


if __name__ == "__main__":
    main()

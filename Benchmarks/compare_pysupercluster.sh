#!/usr/bin/env bash
# geo-cluster's radius and live indexes against pysupercluster 0.7.7 on this machine, in
# one run: installs pysupercluster when it is missing, builds bench-radius in release mode,
# then runs Benchmarks/compare_pysupercluster.py, which prints one table per point set.
#
#   Benchmarks/compare_pysupercluster.sh                                  # 1M Korea: radius, live, live under writes
#   Benchmarks/compare_pysupercluster.sh --sets korea-1m,uniform-1m
#   Benchmarks/compare_pysupercluster.sh --algorithms radius
#   Benchmarks/compare_pysupercluster.sh --sets korea-100k --runs 5 --rounds 20
#
# Needs python3 with pip, and a C++ compiler for pysupercluster's extension (g++).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

if ! "$PYTHON" -c 'import pysupercluster' 2>/dev/null; then
    echo "installing pysupercluster 0.7.7 (with numpy, setuptools and wheel, which its setup.py needs)"
    # setup.py imports numpy, and --no-use-pep517 needs setuptools and wheel already there.
    "$PYTHON" -m pip install --quiet numpy setuptools wheel
    "$PYTHON" -m pip install --quiet --no-build-isolation --no-use-pep517 pysupercluster==0.7.7
fi
installed=$("$PYTHON" -m pip show pysupercluster 2>/dev/null | sed -n 's/^Version: //p')
if [ "$installed" != "0.7.7" ]; then
    echo "pysupercluster $installed is installed; this comparison is for 0.7.7" >&2
    exit 1
fi

swift build --package-path Benchmarks -c release --product bench-radius
exec "$PYTHON" Benchmarks/compare_pysupercluster.py run --bench-radius Benchmarks/.build/release/bench-radius "$@"

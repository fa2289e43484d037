#!/usr/bin/env bash
# Runs a `swift` command (e.g. `build --build-tests`) and runs it once more when the build
# tool itself crashed rather than the code failing to compile: SwiftPM or a compiler
# process killed by a signal (the toolchain occasionally crashes in libdispatch,
# "Bad pointer dereference", on a busy machine). A compile error fails at once.
set -uo pipefail
swift=${SWIFT:-swift}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

crashed() {
    local status=$1
    # 128+N: the process itself died of signal N.
    [ "$status" -gt 128 ] && return 0
    grep -Eq 'failed due to signal|Bad pointer dereference|Stack dump:|PLEASE submit a bug report' "$log"
}

for attempt in 1 2; do
    "$swift" "$@" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] && exit 0
    if [ "$attempt" -eq 1 ] && crashed "$status"; then
        echo "swift $*: the build tool crashed (exit status $status), not the code; running it once more" >&2
        continue
    fi
    exit "$status"
done

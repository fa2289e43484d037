# Sourced by the scripts that measure geo-cluster against Node + supercluster
# (wrk_vs_node.sh, lines_vs_node.sh), from the checkout's root, with $servers (binaries,
# space-separated; empty for this checkout's release build) and $peers set:
# - builds what is missing: this checkout's release geo-cluster when $servers is empty,
#   and bench-radius, which writes the points; checks every binary of $servers;
# - sets with_node to "yes" when node and supercluster + kdbush in $peers are there, and
#   else to "" after saying why geo-cluster is measured alone.
if [ -z "$servers" ]; then
    servers=.build/release/geo-cluster
    [ -x "$servers" ] || swift build -c release --product geo-cluster
fi
for binary in $servers; do
    [ -x "$binary" ] || { echo "no geo-cluster binary at $binary" >&2; exit 1; }
done
[ -x Benchmarks/.build/release/bench-radius ] \
    || swift build --package-path Benchmarks -c release --product bench-radius

with_node=yes
if ! command -v node >/dev/null; then
    echo "node is not installed: measuring geo-cluster alone"; with_node=""
elif [ ! -f "$peers/supercluster/index.js" ] || [ ! -f "$peers/kdbush/index.js" ]; then
    echo "no supercluster and kdbush in $peers (--peers): measuring geo-cluster alone"; with_node=""
else
    echo "node $(node --version), supercluster $(sed -n 's/^ *"version": *"\(.*\)".*/\1/p' "$peers/supercluster/package.json") from $peers"
fi

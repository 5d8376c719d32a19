#!/bin/sh
# Record the shipped memory traces with valgrind's lackey tool.
#
#   sh record.sh                      ls-lackey.txt.gz: /bin/ls / with every access, as first shipped
#   sh record.sh OUT.txt.gz CMD ...   any command, every access (plain valgrind and gzip)
#   sh record.sh programs             gups-, stream- and chase-lackey.txt.gz from programs/*.c, data
#                                     accesses only, through `pagesim trace record` (needs cc and pagesim)
#
# Needs valgrind (Debian: apt-get install valgrind). The programs' traces were recorded on 2026-11-22
# with gcc 12.2.0 and valgrind 3.19.0 on Debian 12, x86_64, by `sh record.sh programs`.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = "programs" ]; then
    pagesim=${PAGESIM:-pagesim}
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    cc -O2 -o "$work/gups" "$here/programs/gups.c"
    cc -O3 -mavx2 -o "$work/stream" "$here/programs/stream.c"   # AVX2: one 32-byte access per 4 doubles
    cc -O2 -o "$work/chase" "$here/programs/chase.c"
    cd "$work"
    # 60,000 random read-modify-writes over a calloc'ed 256 MiB table
    "$pagesim" trace record --data-only --quiet-program -o "$here/gups-lackey.txt.gz" -- ./gups 256 60000
    # STREAM triad over three arrays of 131,072 doubles (1 MiB each), 2 passes
    "$pagesim" trace record --data-only --quiet-program -o "$here/stream-lackey.txt.gz" -- ./stream 131072 2
    # a linked list of 8,192 nodes of 2 KiB in random order (16 MiB), 60,000 hops
    "$pagesim" trace record --data-only --quiet-program -o "$here/chase-lackey.txt.gz" -- ./chase 8192 2048 60000
    exit 0
fi
out=${1:-ls-lackey.txt.gz}
[ $# -gt 0 ] && shift
[ $# -eq 0 ] && set -- /bin/ls /
tmp=$(mktemp)
valgrind --tool=lackey --trace-mem=yes --log-file="$tmp" "$@" > /dev/null
gzip -9 -n -c "$tmp" > "$out.part" && mv "$out.part" "$out"
rm -f "$tmp"
echo "$out: $(gzip -dc "$out" | grep -c '^[ I][ LSM]') accesses"

#!/bin/sh
# Record a memory trace of a real program with valgrind's lackey tool, as traces/ls-lackey.txt.gz was.
# Usage: sh record.sh [output.txt.gz] [command ...]     (default: /bin/ls /)
# Needs valgrind (Debian: apt-get install valgrind). A longer trace: pass a longer-running command,
# e.g. sh record.sh sort-lackey.txt.gz /usr/bin/sort /usr/share/dict/words
set -eu
out=${1:-ls-lackey.txt.gz}
[ $# -gt 0 ] && shift
[ $# -eq 0 ] && set -- /bin/ls /
tmp=$(mktemp)
valgrind --tool=lackey --trace-mem=yes --log-file="$tmp" "$@" > /dev/null
gzip -9 -n -c "$tmp" > "$out.part" && mv "$out.part" "$out"
rm -f "$tmp"
echo "$out: $(gzip -dc "$out" | grep -c '^[ I][ LSM]') accesses"

#!/usr/bin/env bash
# "The project's locks" table of docs/results.md (Validation) under model 3: the lwsim example's
# 95/5 mix (cs 50 ns, think 200 ns), 2 ms virtual, ten seeds per cell; Mops/s median (min-max)
# and the lock line's transfers per operation (median). Run from the repository root after
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p lwlock --example lwsim
set -euo pipefail
B=${B:-target/lwsim/release/examples/lwsim}
cells() { # LOCK PROFILE CORES -> "cores|cell" lines
    "$B" --lock "$1" --profile "$2" --cores "$3" --duration-us 2000 --seeds 10 2>&1 |
        awk -F'|' '/^\| [0-9]+ \|/ {gsub(/ /, ""); printf "%s|%.2f (%.2f–%.2f) (%.1f)\n", $2, $4, $5, $6, $7}'
}
echo "| profile | cores | atomic | classic | user TTAS (exclusive) |"
echo "|---|---:|---|---|---|"
for pc in xeon-2s-broadwell:1,2,4,8,16,32,64 epyc-2s-genoa:8,16,64,128 xeon-4s-westmere-ex:10,20,40,80; do
    p=${pc%:*} c=${pc#*:}
    a=$(cells atomic "$p" "$c")
    k=$(cells classic "$p" "$c")
    u=""
    [ "$p" = xeon-2s-broadwell ] && u=$(cells user "$p" "$c")
    first=1
    for n in ${c//,/ }; do
        ca=$(grep "^$n|" <<<"$a" | cut -d'|' -f2)
        ck=$(grep "^$n|" <<<"$k" | cut -d'|' -f2)
        cu=$( [ -n "$u" ] && grep "^$n|" <<<"$u" | cut -d'|' -f2 || true)
        label=$([ $first = 1 ] && echo "$p" || echo "")
        echo "| $label | $n | $ca | $ck | $cu |"
        first=0
    done
done

#!/usr/bin/env bash
# Instruction and allocation counts of the hot paths, which do not depend on the machine's load:
# each workload of `pushfleet-hotpath` runs under valgrind at two sizes, and the difference
# divided by the difference in items is the cost of one item (set-up and tear-down drop out).
#
#   benchmarks/hotpaths.sh                      # every workload
#   benchmarks/hotpaths.sh apns-send            # one workload
#
# Counts: 2,000 and 12,000 notifications; 20 and 120 chunks of 1,000 tokens.
#
# Instructions: callgrind's Ir (instructions executed, every thread). Allocations: DHAT's total
# blocks and bytes. Prints one Markdown table row per workload; benchmarks/results/hotpaths.md
# keeps them with the machine and the commit they were measured on.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { sudo -n true 2>/dev/null && SUDO=sudo || SUDO=; $SUDO apt-get install -y -q valgrind; }

# The release build the tests use (scripts/test.sh), unless BIN_DIR names another.
BUILD_FLAGS=(-c release -Xswiftc -enable-testing)
BIN_DIR=${BIN_DIR:-$(swift build "${BUILD_FLAGS[@]}" --show-bin-path)}
[[ -n "${SKIP_BUILD:-}" ]] || swift build "${BUILD_FLAGS[@]}" --product pushfleet-hotpath >&2
WORKLOADS=("$@")
((${#WORKLOADS[@]})) || WORKLOADS=(apns-send chunk-encode chunk-decode)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 cannot read the DWARF 5 of Swift binaries: a copy without it keeps the symbols.
cp "$BIN_DIR/pushfleet-hotpath" "$work/pushfleet-hotpath"
strip --strip-debug "$work/pushfleet-hotpath"

instructions() {
  # Swift seeds its hashing per process unless told not to: the same count on every run.
  SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$work/pushfleet-hotpath" "$1" "$2" \
    >/dev/null 2>"$work/cg.err"
  grep -E '^summary:|^totals:' "$work/cg.out" | head -1 | awk '{print $2}'
}

allocations() {
  SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=dhat --dhat-out-file=/dev/null "$work/pushfleet-hotpath" "$1" "$2" \
    >/dev/null 2>"$work/dhat.err"
  # "==pid== Total:     123,456 bytes in 789 blocks"
  sed -n 's/.*Total: *\([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p' "$work/dhat.err" | tr -d ,
}

echo "| workload | instructions per item | allocations per item | bytes allocated per item | counts |"
echo "|---|---:|---:|---:|---|"
for workload in "${WORKLOADS[@]}"; do
  case "$workload" in
    chunk-*) SMALL=20 LARGE=120 ;;
    *) SMALL=2000 LARGE=12000 ;;
  esac
  small_ir=$(instructions "$workload" "$SMALL")
  large_ir=$(instructions "$workload" "$LARGE")
  read -r small_bytes small_blocks <<<"$(allocations "$workload" "$SMALL")"
  read -r large_bytes large_blocks <<<"$(allocations "$workload" "$LARGE")"
  items=$((LARGE - SMALL))
  awk -v w="$workload" -v si="$small_ir" -v li="$large_ir" -v sb="$small_blocks" -v lb="$large_blocks" \
    -v sy="$small_bytes" -v ly="$large_bytes" -v n="$items" -v s="$SMALL" -v l="$LARGE" \
    'BEGIN { printf "| %s | %.0f | %.2f | %.0f | %d and %d |\n", w, (li - si) / n, (lb - sb) / n, (ly - sy) / n, s, l }'
done

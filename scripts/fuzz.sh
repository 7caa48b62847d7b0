#!/usr/bin/env bash
# Coverage-guided fuzzing of the decoders with libFuzzer (on demand; CI runs the seeded mutation
# fuzzer of Tests/FuzzTests instead). Builds Sources/PushFleetFuzz with -sanitize=fuzzer into its
# own build directory and runs one target for a while:
#
#   ./scripts/fuzz.sh job 300          # target (json|job|chunk|feedback|dead-letter|config), seconds
#   ./scripts/fuzz.sh all 120          # every target, 120 s each
#
# The corpus starts from Tests/FuzzTests/corpus/<target> and the repository's example messages;
# what libFuzzer finds worth keeping goes to .build/fuzz-corpus/<target> (kept between runs). A
# broken rule stops the run, prints the rule and saves the input as .build/fuzz-crashes/<target>-*;
# replay one without the sanitizer with `swift run pushfleet-fuzz <target> <file>`, and add it to
# Tests/FuzzTests/corpus/<target>/ so the mutation fuzzer keeps it as a regression case.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(json job chunk feedback dead-letter config)
target=${1:-job}
seconds=${2:-60}
if [[ "$target" == all ]]; then
  for each in "${TARGETS[@]}"; do "$0" "$each" "$seconds"; done
  exit 0
fi
if [[ ! " ${TARGETS[*]} " == *" $target "* ]]; then
  echo "unknown target '$target'; one of: ${TARGETS[*]} all" >&2
  exit 2
fi

SCRATCH=.build/libfuzzer
swift build -c release --scratch-path "$SCRATCH" --product pushfleet-fuzz \
  -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DLIBFUZZER
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/pushfleet-fuzz"

corpus=.build/fuzz-corpus/$target
crashes=.build/fuzz-crashes
mkdir -p "$corpus" "$crashes"
seeds=("Tests/FuzzTests/corpus/$target")
case "$target" in
  json | job) seeds+=(schemas/examples schemas/examples/invalid schemas/messages) ;;
  chunk | feedback | dead-letter) seeds+=(schemas/messages) ;;
  config) seeds+=(deploy/config) ;;
esac
existing=()
for seed in "${seeds[@]}"; do [[ -d "$seed" ]] && existing+=("$seed"); done

echo "== libFuzzer: $target for $seconds s (corpus $corpus)"
PUSHFLEET_FUZZ_TARGET=$target "$BIN" "$corpus" "${existing[@]}" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$crashes/$target-" -print_final_stats=1 -print_funcs=0

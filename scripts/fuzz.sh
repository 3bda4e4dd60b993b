#!/usr/bin/env bash
# Fuzzes every parser of attacker-controlled bytes with libFuzzer + AddressSanitizer.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 s, every target)
#   scripts/fuzz.sh merge [TARGET...]                     (adds what runs found to the committed corpus)
#
# Targets: cbor authenticator-data attestation-object cose-key public-key signature client-data.
# Seeds are committed in Fuzz/corpus/<target>/ (scripts/fuzz_corpus.py made them from the WebAuthn spec's test
# vectors); inputs libFuzzer finds go to artifacts/fuzz/corpus-<target>/, crashes to artifacts/fuzz/<target>-crash-*.
# Exits non-zero on the first crash, AddressSanitizer report, failed precondition, timeout (10 s) or input using over
# 2 GB. Leak detection is off: LeakSanitizer reports the process-lifetime statics of swift-crypto keys as leaks. To reproduce a crash in a normal
# build: `swift run touchstone-fuzz <target> artifacts/fuzz/<target>-crash-...`.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
if [[ ${1:-} == merge ]]; then
  mode=merge
  shift
  seconds=0
else
  seconds=${1:-60}
  shift || true
fi
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(cbor authenticator-data attestation-object cose-key public-key signature client-data dpop-proof)
fi

# Its own build directory: every Swift module is instrumented, which a normal build must not be. SwiftPM calls the
# executable's entry point touchstone_fuzz_main, which hands over to libFuzzer's driver (-DFUZZING); lld links it.
swift build --scratch-path .build-fuzz --product touchstone-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -parse-as-library -Xswiftc -use-ld=lld \
  2> >(grep -v "Cannot export local symbol" >&2)
binary=.build-fuzz/debug/touchstone-fuzz

mkdir -p artifacts/fuzz
if [[ $mode == merge ]]; then
  # libFuzzer's merge keeps only the found inputs that reach code the committed corpus does not.
  for target in "${targets[@]}"; do
    before=$(ls "Fuzz/corpus/$target" | wc -l)
    ASAN_OPTIONS=detect_leaks=0 TOUCHSTONE_FUZZ_TARGET=$target "$binary" -merge=1 \
      "Fuzz/corpus/$target" "artifacts/fuzz/corpus-$target" >"artifacts/fuzz/$target-merge.log" 2>&1
    echo "$target: $before -> $(ls "Fuzz/corpus/$target" | wc -l) inputs"
  done
  exit 0
fi
for target in "${targets[@]}"; do
  seeds=Fuzz/corpus/$target
  [[ -d $seeds ]] || { echo "no seed corpus $seeds" >&2; exit 2; }
  found=artifacts/fuzz/corpus-$target
  mkdir -p "$found"
  echo "== $target: $seconds s (corpus: $(ls "$seeds" | wc -l) inputs)"
  status=0
  ASAN_OPTIONS=detect_leaks=0 TOUCHSTONE_FUZZ_TARGET=$target "$binary" "$found" "$seeds" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=10 -detect_leaks=0 \
    -artifact_prefix="artifacts/fuzz/$target-" -print_final_stats=1 >"artifacts/fuzz/$target.log" 2>&1 || status=$?
  tail -n 8 "artifacts/fuzz/$target.log"
  if ((status != 0)); then
    grep -A 30 -m 1 -E "ERROR|Precondition|Fatal error" "artifacts/fuzz/$target.log" >&2 || true
    echo "FUZZ FAILURE in $target (exit $status); see artifacts/fuzz/$target.log and artifacts/fuzz/$target-*" >&2
    exit 1
  fi
done
echo "fuzzing passed: ${targets[*]} ($seconds s each)"

#!/usr/bin/env bash
# The Android SDK (android/): type-checks every Kotlin source (core, Android adapters, sample app) against the Android
# API 36 signatures, compiles the platform-neutral core and its JUnit tests with the Kotlin 2.3 compiler, and runs the
# tests on the JVM against a real `touchstone serve`.
#
#   scripts/android.sh [PATH_TO_touchstone]      # default: swift build's debug binary (built if missing)
#   scripts/android.sh --bench [PATH]            # the SDK's own CPU per sign-in ceremony (docs/performance.md)
#
# Tools: ../shared/tools/android-typecheck (the Kotlin compiler from PyPI's kotlin-jupyter-kernel wheel, the API 36
# stub jar from chaquopy-stubs-android), Debian's junit4 and hamcrest, and libandroid-json-java (AOSP's org.json for
# the JVM; the stub jar is never on a test classpath: its bodies throw). The last line is "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mode=test
if [ "${1:-}" = "--bench" ]; then mode=bench; shift; fi
binary=${1:-}
if [ -z "$binary" ]; then
  binary=.build/debug/touchstone
  [ -x "$binary" ] || swift build --product touchstone
fi
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
[ -x "$binary" ] || { echo "android.sh: $binary is not an executable" >&2; exit 2; }

need=()
command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
[ -f /usr/share/java/junit4.jar ] || need+=(junit4)
[ -f /usr/share/java/hamcrest.jar ] || need+=(libhamcrest-java)
[ -f /usr/share/java/com.android.json.jar ] || need+=(libandroid-json-java)
if ((${#need[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${need[@]}"
fi

typecheck=${ANDROID_TYPECHECK:-$root/../shared/tools/android-typecheck/android-typecheck}
[ -x "$typecheck" ] || typecheck="python3 $typecheck"

# 1. Everything against the Android API 36 signatures: the core, the adapters and the sample app.
echo "== android-typecheck: touchstone-kit (core and adapters) and sample"
$typecheck android/touchstone-kit/src/main/kotlin android/sample/src/main/kotlin

# 2. The core on the JVM: the same sources minus the Android adapters, with the standard library and AOSP's org.json.
classpath=$($typecheck --print-classpath)
stdlib=${classpath#*:}
kotlin_dir=$(dirname "$stdlib")
compiler_cp=$(ls "$kotlin_dir"/*.jar | tr '\n' ':')
json=/usr/share/java/com.android.json.jar
junit=/usr/share/java/junit4.jar:/usr/share/java/hamcrest.jar
out=${ANDROID_BUILD_DIR:-$root/.build-android}
rm -rf "$out/main" "$out/test"
mkdir -p "$out/main" "$out/test"

kotlinc() {
  nice -n 10 java -Xmx2g -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xss8m -cp "$compiler_cp" \
    org.jetbrains.kotlin.cli.jvm.K2JVMCompiler -no-stdlib -no-reflect -Xsuppress-version-warnings -nowarn "$@"
}

echo "== kotlinc: the core for the JVM"
mapfile -t core < <(find android/touchstone-kit/src/main/kotlin -name '*.kt' -not -path '*/kit/android/*' | sort)
kotlinc -classpath "$stdlib:$json" -d "$out/main" "${core[@]}"
echo "== kotlinc: the JVM tests"
mapfile -t tests < <(find android/touchstone-kit/src/test/kotlin -name '*.kt' | sort)
kotlinc -classpath "$stdlib:$json:$junit:$out/main" -Xfriend-paths="$out/main" -d "$out/test" "${tests[@]}"

run_cp="$out/test:$out/main:$stdlib:$json:$junit"
props=(-Dtouchstone.binary="$binary" -Dtouchstone.repo="$root")
if [ "$mode" = bench ]; then
  exec java "${props[@]}" -cp "$run_cp" dev.touchstone.kit.SdkBenchKt
fi
echo "== JUnit on the JVM (the server: $binary)"
java "${props[@]}" -cp "$run_cp" dev.touchstone.kit.TestMainKt

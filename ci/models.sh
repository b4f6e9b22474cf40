#!/usr/bin/env bash
# Model checking: every loom and shuttle model, then the proof that the models can fail (each
# deliberately broken variant must be reported by its model). Prints per-step timings and, at the
# end, the table of models and the table of caught mutants.
#
# Each configuration has its own target directory (RUSTFLAGS changes rebuild everything):
#   target/loom            --cfg loom                         the loom models
#   target/shuttle         --cfg shuttle                      the shuttle models
#   target/loom-mutants    --cfg loom, mutants selectable at run time (LWLOCK_MUTANT), plus the
#                          two flexlock variants that touch disjoint paths (flex_no_recheck:
#                          last-releaser policy; clog_ignore_key: CLOG key check)
#   target/loom-mutant-done  --cfg loom, flex_done_before_apply (affects every group pass)
#
# Usage: ci/models.sh [loom|shuttle|mutants]...   (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(loom shuttle mutants)

report_dir="$PWD/target/models-report"
mkdir -p "$report_dir"
: >"$report_dir/models.md"
: >"$report_dir/mutants.md"
export MODELS_REPORT="$report_dir/models.md"
export MUTANTS_REPORT="$report_dir/mutants.md"
export SHUTTLE_SILENCE_WARNINGS=1
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS

start=$SECONDS
timings=()
step() {
    local name=$1
    shift
    local t0=$SECONDS
    echo "== $name"
    "$@"
    local dt=$((SECONDS - t0))
    timings+=("$(printf '%-44s %4d s' "$name" "$dt")")
    echo "== $name: ${dt} s"
}

cargo_models() { # target-dir rustflags cargo-test-args...
    local dir=$1 flags=$2
    shift 2
    RUSTFLAGS="$flags" CARGO_TARGET_DIR="$dir" cargo test --release -p models "$@"
}

for s in "${steps[@]}"; do
    case $s in
    loom)
        step "loom: build" cargo_models target/loom "--cfg loom" --tests --no-run
        # Mutation tests belong to the mutant builds only (in a clean build they must fail).
        step "loom: models" cargo_models target/loom "--cfg loom" --tests -- --skip mutant_
        ;;
    shuttle)
        step "shuttle: build" cargo_models target/shuttle "--cfg shuttle" --tests --no-run
        step "shuttle: models" cargo_models target/shuttle "--cfg shuttle" --tests -- --skip mutant_
        ;;
    mutants)
        flags='--cfg loom --cfg lwlock_mutant="runtime" --cfg lwlock_mutant="flex_no_recheck" --cfg lwlock_mutant="clog_ignore_key"'
        step "mutants: build (runtime-selected)" cargo_models target/loom-mutants "$flags" --tests --no-run
        step "mutants: caught (runtime-selected)" cargo_models target/loom-mutants "$flags" --tests -- mutant_
        flags='--cfg loom --cfg lwlock_mutant="flex_done_before_apply"'
        step "mutants: build (flex_done_before_apply)" cargo_models target/loom-mutant-done "$flags" --no-run
        step "mutants: caught (flex_done_before_apply)" cargo_models target/loom-mutant-done "$flags" --test loom_flexlock -- mutant_
        ;;
    *)
        echo "unknown step: $s (expected loom, shuttle or mutants)" >&2
        exit 2
        ;;
    esac
done

echo
echo "## Models"
echo "| model | proves | checker | threads | bound | executions | seconds |"
echo "|---|---|---|---|---|---|---|"
sort "$MODELS_REPORT"
if [ -s "$MUTANTS_REPORT" ]; then
    echo
    echo "## Mutants (each must be reported by its model)"
    echo "| mutant | caught by | failure | seconds |"
    echo "|---|---|---|---|"
    sort "$MUTANTS_REPORT"
fi
echo
echo "## Timings"
printf '%s\n' "${timings[@]}"
echo "total: $((SECONDS - start)) s"

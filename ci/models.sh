#!/usr/bin/env bash
# Model checking: every loom and shuttle model, then the proof that the models can fail (each
# deliberately broken variant must be reported by its model). Prints per-step timings and, at the
# end, the table of models and the table of caught mutants.
#
# Each configuration has its own target directory (RUSTFLAGS changes rebuild everything):
#   target/loom            --cfg loom                         the loom models
#   target/shuttle         --cfg shuttle                      the shuttle models
#   target/loom-mutants    --cfg loom, mutants selectable at run time (LWLOCK_MUTANT), plus the
#                          flexlock variant clog_ignore_key (it touches only the CLOG key check,
#                          which none of the models the other mutants of this build re-run uses)
#   target/loom-mutant-done  --cfg loom, flex_done_before_apply (affects every group pass)
#   target/shuttle-mutants --cfg shuttle, mutants selectable at run time: the ones only a shuttle
#                          model reaches (shuttle_locks.rs's mutant_* tests)
#   target/loom-mutant-recheck  --cfg loom, flex_no_recheck (affects every last-releaser
#                          submitter, so it cannot share the runtime build: the last-releaser
#                          fault model there must run on the correct protocol)
# The two single-variant builds compile only the test binary whose model catches them.
#
# The mutants step ends with the CI sample of the mutation score (ci/mutation.sh --sample: the
# runtime mutants of ci/mutation.list against their hinted loom models, on the same build).
#
# Usage: ci/models.sh [loom|shuttle|mutants]...   (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(loom shuttle mutants)

report_dir="$PWD/target/models-report"
mkdir -p "$report_dir"
# The previous run's table orders the loom models (see `loom_models`).
previous_models=""
[ -s "$report_dir/models.md" ] && previous_models=$(cat "$report_dir/models.md")
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

# Every loom model as its own process, `MODELS_JOBS` (default: one per core) at a time, longest
# first: by the previous run's seconds, or, without a previous run, the slowest models known
# first. Processes, not libtest's test threads: loom maps a stack for every model thread of every
# execution, and two tests mapping and unmapping stacks in one process slow each other down (on
# the 2-core machine five models took 86 s on two libtest threads and 68 s on one, the
# difference all system time), while two processes each run at full speed.
# Mutation tests (`mutant_*`) belong to the mutant builds only (in a clean build they must fail).
# Every test binary of models/tests is found here, so models/tests/loom_variants.rs (the reader-
# biased LWLock and the holder-serves FlexLock: 5 models, about 2 s) runs with the rest, and its
# runtime mutants (bravo_no_fence, bravo_draining_is_off, flex_holder_sleeps_on_op) with the
# runtime-selected mutant step below.
jobs=${MODELS_JOBS:-$(nproc)}
# Seconds of the slowest models on the 2-core machine, to order a first run.
known_slow="
loom_atomic::wait_for_var3 330
loom_variants::holder_detached_chain3 169
loom_atomic::exclusive_exclusive 73
loom_atomic::exclusive_shared_shared 58
loom_flexlock::flex_leader_reader3 51
loom_atomic::wait_for_var 50
loom_atomic::acquire_or_wait3 43
loom_atomic::exclusive3 41
loom_flexlock::flex_leader_release_unwinds2 15
loom_dropin::handoff_not_overtaken 32
loom_dropin::taskfair_not_overtaken 18
loom_atomic::var_requeue3 26
loom_atomic::var_wake_bound3 24
loom_flexlock::flex_leader_repush3 36
loom_mutex_condvar::notify_one_racing_wait 29
loom_adaptive::adaptive_late_writers_order 121
loom_adaptive::adaptive_writer_behind_readers 42
loom_fair::fair_exclusive_no_barging 24
loom_adaptive::adaptive_bound_handoff 20
loom_dropin::handoff_timed_writer_gives_up 13
loom_once::once_three_callers 13
"
loom_models() { # target-dir
    local dir=$1 bin name test cost
    local -a bins list=()
    mapfile -t bins < <(RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$dir" \
        cargo test --release -p models --tests --no-run --message-format=json 2>/dev/null |
        grep -o '"executable":"[^"]*"' | sed 's/^"executable":"//; s/"$//')
    [ ${#bins[@]} -gt 0 ] || { echo "no loom test binaries in $dir" >&2; return 1; }
    for bin in "${bins[@]}"; do
        name=${bin##*/}
        name=${name%-*}
        while read -r test; do
            case $test in *mutant_*) continue ;; esac
            cost=$(grep -F "| \`$name::$test\` |" <<<"$previous_models" |
                awk -F'|' 'NR == 1 {gsub(/ /, "", $(NF-1)); print $(NF-1)}' || true)
            [ -n "$cost" ] || cost=$(awk -v m="$name::$test" '$1 == m {print $2}' <<<"$known_slow")
            [ -n "$cost" ] || cost=0
            list+=("$cost $bin $test")
        done < <("$bin" --list --format terse 2>/dev/null | sed -n 's/: test$//p')
    done
    echo "${#list[@]} models, $jobs at a time"
    printf '%s\n' "${list[@]}" | sort -g -r -k1,1 | cut -d' ' -f2,3 |
        xargs -P "$jobs" -n 2 bash -c '
            log=$(mktemp)
            t0=$SECONDS
            name=${1##*/}
            if "$1" "$2" --exact --quiet >"$log" 2>&1; then
                echo "ok     ${name%-*}::$2 ($((SECONDS - t0)) s)"
                rm -f "$log"
            else
                echo "FAILED ${name%-*}::$2 ($((SECONDS - t0)) s):"
                cat "$log"
                rm -f "$log"
                exit 1
            fi' _
}

for s in "${steps[@]}"; do
    case $s in
    loom)
        step "loom: build" cargo_models target/loom "--cfg loom" --tests --no-run
        step "loom: models" loom_models target/loom
        ;;
    shuttle)
        step "shuttle: build" cargo_models target/shuttle "--cfg shuttle" --tests --no-run
        step "shuttle: models" cargo_models target/shuttle "--cfg shuttle" --tests -- --skip mutant_
        ;;
    mutants)
        flags='--cfg loom --cfg lwlock_mutant="runtime" --cfg lwlock_mutant="clog_ignore_key"'
        step "mutants: build (runtime-selected)" cargo_models target/loom-mutants "$flags" --tests --no-run
        step "mutants: caught (runtime-selected)" cargo_models target/loom-mutants "$flags" --tests -- mutant_
        # The mutation score's CI sample: the same build, every runtime mutant of
        # ci/mutation.list against its hinted loom models (the full run: ci/mutation.sh).
        step "mutants: mutation sample (ci/mutation.sh --sample)" ci/mutation.sh --sample
        flags='--cfg loom --cfg lwlock_mutant="flex_done_before_apply"'
        step "mutants: build (flex_done_before_apply)" cargo_models target/loom-mutant-done "$flags" --test loom_flexlock --no-run
        step "mutants: caught (flex_done_before_apply)" cargo_models target/loom-mutant-done "$flags" --test loom_flexlock -- mutant_
        flags='--cfg loom --cfg lwlock_mutant="flex_no_recheck"'
        step "mutants: build (flex_no_recheck)" cargo_models target/loom-mutant-recheck "$flags" --test loom_flexlock --no-run
        step "mutants: caught (flex_no_recheck)" cargo_models target/loom-mutant-recheck "$flags" --test loom_flexlock -- mutant_
        # The runtime mutants only shuttle reaches (the empty-yield exit: loom cannot interleave
        # the 14 scheduling points of the PAUSE rounds before it): one shuttle build with them.
        flags='--cfg shuttle --cfg lwlock_mutant="runtime"'
        step "mutants: build (shuttle, runtime-selected)" cargo_models target/shuttle-mutants "$flags" --test shuttle_locks --no-run
        step "mutants: caught (shuttle, runtime-selected)" cargo_models target/shuttle-mutants "$flags" --test shuttle_locks -- mutant_
        ;;
    *)
        echo "unknown step: $s (expected loom, shuttle or mutants)" >&2
        exit 2
        ;;
    esac
done

# The report rows, one per line, sorted. The rows are appended concurrently (parallel loom
# processes, libtest's test threads), each row and its newline in one O_APPEND write. Reports
# written by an older build wrote them in two, so two rows could land back to back
# ("…| 0.02 || `b` |…"): split such a pair again and drop empty lines.
table_rows() { # report file
    sed 's/|| `/|\n| `/g' "$1" | { grep -v '^[[:space:]]*$' || true; } | sort
}

echo
echo "## Models"
echo "| model | proves | checker | threads | bound | executions | seconds |"
echo "|---|---|---|---|---|---|---|"
table_rows "$MODELS_REPORT"
if [ -s "$MUTANTS_REPORT" ]; then
    echo
    echo "## Mutants (each must be reported by its model)"
    echo "| mutant | caught by | failure | seconds |"
    echo "|---|---|---|---|"
    table_rows "$MUTANTS_REPORT"
fi
echo
echo "## Timings"
printf '%s\n' "${timings[@]}"
echo "total: $((SECONDS - start)) s"

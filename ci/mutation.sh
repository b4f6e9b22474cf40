#!/usr/bin/env bash
# The mutation score: applies each mutant of a list (ci/mutation.list) one at a time and reports
# which checker kills it: a loom model, the shuttle models, the unit/integration tests of lwlock
# and flexlock (without features, then with the `stats` counters), or the release stress test. Nothing in the tree is modified: the script works
# on a scratch copy (target/mutation/src, or $MUTATION_DIR/src), with its own target directories.
#
#   ci/mutation.sh                 every mutant, every checker (after the hints) until one kills
#   ci/mutation.sh --sample        the CI sample (ci/models.sh): the runtime mutants with a loom
#                                  hint, on the tree itself, hinted loom models only
#   ci/mutation.sh --hints-only    every mutant, its hinted checkers only
#   ci/mutation.sh NAME...         only these mutants
#   ci/mutation.sh --check-list    lists `mutant!` names in the source that the list lacks, and
#                                  patched mutants whose patch does not apply to the tree
#   MUTATION_DIR=target/mutation-b ci/mutation.sh --hints-only NAME
#                                  a second run beside another one (its own copy and builds)
#
# A checker must pass on the unmutated code first (it is run once, as the baseline); a mutant is
# killed when a checker then fails. A checker that runs past its time limit does not count as a
# kill (conservative: a model that explores longer is not a model that reports the bug). A
# survivor's row says "not run" if no checker's baseline passed, "timed out" if every checker
# that ran timed out, "crashed" if they timed out or died with no verdict of their own (no race,
# deadlock, panic, failing test or memory error (SIGSEGV, SIGBUS) in the output: not a kill
# either), "build failed" if the mutant did not build.
# Output: one line per mutant, then the table ($MUTATION_DIR/report.md) and the score.
# Hints (ci/mutation.list): loom:BINARY::MODEL, shuttle, unit (the whole lwlock/flexlock debug
# suite), test:PACKAGE:BINARY (one integration test binary of that suite, e.g.
# test:flexlock:serve_limit), stats (the same suite with `--features stats`, the LWLOCK_STATS
# counters: the only checker that reads them), stats:PACKAGE:BINARY (one binary of it), stress.
# Environment:
#   MUTATION_DIR            the scratch copy, its builds and the report (default
#                           target/mutation): two runs at once need two directories
#   MUTATION_LOOM_SWEEP=0   after the hints, skip the sweep over every loom model and go on
#                           with shuttle, unit, stress
#   MUTATION_SAMPLE_TARGET  the sample's loom build (default target/loom-mutants)
#   MUTATION_LOOM_TIMEOUT   s, per loom model (default: twice the model's last time in
#                           target/models-report/models.md plus 30, else 120; a baseline,
#                           which explores the whole model, gets three times that)
#   MUTATION_TIMEOUT        s, per other checker (default 1500: the debug tests of lwlock and
#                           flexlock take minutes)
set -euo pipefail
cd "${MUTATION_ROOT:-$(dirname "$0")/..}"
root=$PWD

list=ci/mutation.list
sample=0
hints_only=0
check_list=0
only=()
for a in "$@"; do
    case $a in
    --sample) sample=1 hints_only=1 ;;
    --hints-only) hints_only=1 ;;
    --check-list) check_list=1 ;;
    --list=*) list=${a#--list=} ;;
    -*)
        echo "unknown option: $a" >&2
        exit 2
        ;;
    *) only+=("$a") ;;
    esac
done

# name kind hints patch (patch may contain spaces: everything after the third field)
entries() {
    sed -e 's/#.*$//' -e '/^[[:space:]]*$/d' "$list" |
        sed -E 's/^[[:space:]]*([^[:space:]]+)[[:space:]]+([^[:space:]]+)[[:space:]]+([^[:space:]]+)[[:space:]]*/\1\t\2\t\3\t/'
}

# Applies FILE|OLD|NEW to the scratch copy $src (first occurrence); fails if OLD is not found.
# With a second argument, only checks that it would apply to that tree.
apply_patch() { # spec [root: only check that it applies to that tree]
    python3 - "${2:-$src}" "$1" "${2:+check}" <<'EOF'
import re, sys
src, spec, check = sys.argv[1], sys.argv[2], sys.argv[3]
# `\|` in OLD or NEW is a literal `|` (C-style flag masks), `\n` a newline.
parts = re.split(r'(?<!\\)\|', spec)
if len(parts) != 3:
    sys.exit(f"patch is not FILE|OLD|NEW ({len(parts) - 1} unescaped '|'; "
             f"write a literal one as '\\|'): {spec!r}")
path, old, new = (x.replace('\\|', '|').replace('\\n', '\n') for x in parts)
p = f"{src}/{path}"
text = open(p).read()
if old not in text:
    sys.exit(f"patch text not found in {path}: {old!r}")
if not check:
    open(p, 'w').write(text.replace(old, new, 1))
EOF
}

if [ $check_list -eq 1 ]; then
    missing=0
    while read -r m; do
        if ! entries | cut -f1 | grep -qx "$m"; then
            echo "not in $list: $m"
            missing=1
        fi
    done < <(grep -rhoE --exclude=mutant.rs 'mutant!\("[a-z0-9_]+"\)' lwlock/src flexlock/src harness/src |
        sed -E 's/.*\("([a-z0-9_]+)"\)/\1/' | sort -u)
    # Every patched mutant must apply to the tree as it is (a stale or malformed patch would
    # count as a build failure, or silently as the wrong mutant).
    while IFS=$'\t' read -r name kind hints patch; do
        [ "$kind" = patch ] || continue
        apply_patch "$patch" "$root" || {
            echo "patch of $name does not apply"
            missing=1
        }
    done < <(entries)
    exit $missing
fi

mdir=${MUTATION_DIR:-$root/target/mutation}
mkdir -p "$mdir"
mdir=$(cd "$mdir" && pwd)
src=$mdir/src
report=$mdir/report.md
: >"$report"
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS
# The checkers run models under mutants: keep their rows out of ci/models.sh's tables.
unset MODELS_REPORT MUTANTS_REPORT
export SHUTTLE_SILENCE_WARNINGS=1
other_timeout=${MUTATION_TIMEOUT:-1500}
previous_models=$root/target/models-report/models.md

# The scratch copy: the working tree as it is now (tracked and untracked files, not target/).
sync_copy() {
    rm -rf "$src"
    mkdir -p "$src"
    local -a skip=(--exclude=./target --exclude=./.git)
    # A MUTATION_DIR inside the tree must not copy itself.
    case $mdir in "$root"/*) skip+=("--exclude=./${mdir#"$root"/}") ;; esac
    tar -C "$root" "${skip[@]}" -cf - . | tar -C "$src" -xf -
}

restore_file() { # FILE|...
    local f=${1%%|*}
    cp "$root/$f" "$src/$f"
}

# Builds of the copy. CONFIG: loom, shuttle, unit, stats, stress. EXTRA: extra rustflags. A
# `test:` check is a `unit` build restricted to one test binary, a `stats:` check a `stats` build
# (the unit suites with `--features stats`, in a target directory of their own) restricted so.
flags_of() { # config extra
    case $1 in
    loom) echo "--cfg loom $2" ;;
    shuttle) echo "--cfg shuttle $2" ;;
    unit | stats | stress) echo "$2" ;;
    esac
}
tdir_of() { # config tag
    if [ $sample -eq 1 ]; then
        # The sample runs on the tree itself with ci/models.sh's runtime-mutant loom build.
        echo "${MUTATION_SAMPLE_TARGET:-$root/target/loom-mutants}"
        return
    fi
    echo "$mdir/target-$1-$2"
}
runtime_flags='--cfg lwlock_mutant="runtime"'
if [ $sample -eq 1 ]; then
    runtime_flags='--cfg lwlock_mutant="runtime" --cfg lwlock_mutant="clog_ignore_key"'
fi
test_target() { # BINARY of a test:PACKAGE:BINARY hint → cargo's target selection (`lib`: the unit tests)
    if [ "$1" = lib ]; then echo --lib; else echo --test "$1"; fi
}

build() { # config tag extra-flags [test-binary] → prints nothing; fails on a build error
    local config=$1 tag=$2 extra=$3 only=${4:-}
    local -a args
    case $config in
    loom | shuttle) args=(test --release -p models --tests --no-run) ;;
    esac
    # A mutant's own loom build compiles only the test binary of the model it runs.
    [ "$config" = loom ] && [ -n "$only" ] && args=(test --release -p models --test "$only" --no-run)
    case $config in
    unit)
        args=(test -p lwlock -p flexlock --tests --no-run)
        # test:PACKAGE:BINARY: only that binary.
        [ -n "$only" ] && args=(test -p "${only%%:*}" $(test_target "${only#*:}") --no-run)
        ;;
    stats)
        args=(test -p lwlock -p flexlock --features stats --tests --no-run)
        [ -n "$only" ] && args=(test -p "${only%%:*}" --features stats $(test_target "${only#*:}") --no-run)
        ;;
    stress) args=(test --release -p lwlock --test stress --no-run) ;;
    esac
    (cd "$src" && RUSTFLAGS="$(flags_of "$config" "$extra")" CARGO_TARGET_DIR="$(tdir_of "$config" "$tag")" \
        cargo "${args[@]}" >"$mdir/build.log" 2>&1) || {
        echo "build failed ($config, $tag):" >&2
        tail -20 "$mdir/build.log" >&2
        return 1
    }
}
binary() { # config tag name → path of the newest test binary `name-*`
    ls -t "$(tdir_of "$1" "$2")"/release/deps/"$3"-* 2>/dev/null | grep -v '\.d$' | head -1
}

loom_timeout() { # bin::model
    if [ -n "${MUTATION_LOOM_TIMEOUT:-}" ]; then
        echo "$MUTATION_LOOM_TIMEOUT"
        return
    fi
    local s
    s=$(grep -F "| \`$1\` |" "$previous_models" 2>/dev/null |
        awk -F'|' 'NR == 1 {gsub(/ /, "", $(NF-1)); print int($(NF-1))}' || true)
    echo $((${s:-45} * 2 + 30))
}

# Runs one checker; 0 = passed, 1 = failed (killed), 2 = timed out.
run_check() { # config tag mutant check
    local config=$1 tag=$2 mutant=$3 check=$4 rc=0 bin
    local log=$mdir/check.log
    case $check in
    loom:*)
        local spec name model
        spec=${check#loom:}
        name=${spec%%::*}
        model=${spec#*::}
        bin=$(binary loom "$tag" "$name")
        [ -n "$bin" ] || { echo "no loom binary $name" >&2; return 3; }
        # --nocapture: a loom deadlock aborts the process, and captured output would be lost.
        # (Two commands in the subshell: its shell, not ours, reports a model that aborted.)
        # A baseline explores the whole model (a mutant usually fails early): three times the
        # limit, so that a loaded machine does not turn a slow baseline into a skipped checker.
        local limit
        limit=$(loom_timeout "$spec")
        [ "${in_baseline:-0}" = 1 ] && [ -z "${MUTATION_LOOM_TIMEOUT:-}" ] && limit=$((limit * 3))
        (LWLOCK_MUTANT=$mutant timeout "$limit" "$bin" "$model" --exact \
            --test-threads=1 --nocapture; exit $?) >"$log" 2>&1 || rc=$?
        # A hint that names no test runs nothing and passes: report it, never count it a pass.
        if [ $rc -eq 0 ] && ! grep -q '^running 1 test' "$log"; then
            echo "loom hint $spec names no test of $name" >&2
            return 3
        fi
        ;;
    shuttle)
        (cd "$src" && LWLOCK_MUTANT=$mutant RUSTFLAGS="$(flags_of shuttle "$5")" \
            CARGO_TARGET_DIR="$(tdir_of shuttle "$tag")" timeout "$other_timeout" \
            cargo test --release -p models --tests -- --skip mutant_ >"$log" 2>&1) || rc=$?
        ;;
    unit)
        (cd "$src" && LWLOCK_MUTANT=$mutant RUSTFLAGS="$(flags_of unit "$5")" \
            CARGO_TARGET_DIR="$(tdir_of unit "$tag")" timeout "$other_timeout" \
            cargo test -p lwlock -p flexlock --tests >"$log" 2>&1) || rc=$?
        ;;
    test:*)
        local pkg_bin=${check#test:}
        (cd "$src" && LWLOCK_MUTANT=$mutant RUSTFLAGS="$(flags_of unit "$5")" \
            CARGO_TARGET_DIR="$(tdir_of unit "$tag")" timeout "$other_timeout" \
            cargo test -p "${pkg_bin%%:*}" $(test_target "${pkg_bin#*:}") -- --nocapture --test-threads=1 \
            >"$log" 2>&1) || rc=$?
        ;;
    stats)
        (cd "$src" && LWLOCK_MUTANT=$mutant RUSTFLAGS="$(flags_of stats "$5")" \
            CARGO_TARGET_DIR="$(tdir_of stats "$tag")" timeout "$other_timeout" \
            cargo test -p lwlock -p flexlock --features stats --tests >"$log" 2>&1) || rc=$?
        ;;
    stats:*)
        local pkg_bin=${check#stats:}
        (cd "$src" && LWLOCK_MUTANT=$mutant RUSTFLAGS="$(flags_of stats "$5")" \
            CARGO_TARGET_DIR="$(tdir_of stats "$tag")" timeout "$other_timeout" \
            cargo test -p "${pkg_bin%%:*}" --features stats $(test_target "${pkg_bin#*:}") -- \
            --nocapture --test-threads=1 >"$log" 2>&1) || rc=$?
        ;;
    stress)
        (cd "$src" && LWLOCK_MUTANT=$mutant RUSTFLAGS="$(flags_of stress "$5")" \
            CARGO_TARGET_DIR="$(tdir_of stress "$tag")" timeout "$other_timeout" \
            cargo test --release -p lwlock --test stress >"$log" 2>&1) || rc=$?
        ;;
    esac
    last_rc=$rc
    case $rc in
    0) return 0 ;;
    124 | 137) return 2 ;;
    *) return 1 ;;
    esac
}

# Every loom model of the build, slowest last (cheap kills first).
all_loom_checks() { # tag
    local bin name
    for bin in "$(tdir_of loom "$1")"/release/deps/loom_*; do
        case $bin in *.d) continue ;; esac
        [ -x "$bin" ] || continue
        name=${bin##*/}
        name=${name%-*}
        "$bin" --list --format terse 2>/dev/null | sed -n 's/: test$//p' | grep -v '^mutants::\|mutant_' |
            while read -r m; do
                echo "$(loom_timeout "$name::$m") loom:$name::$m"
            done
    done | sort -n | cut -d' ' -f2 | awk '!seen[$0]++'
}

checks_for() { # hints tag → the checks to run, in order
    local hints=$1 tag=$2
    [ "$hints" = "-" ] || tr ',' '\n' <<<"$hints"
    if [ $hints_only -eq 0 ]; then
        [ "${MUTATION_LOOM_SWEEP:-1}" = 0 ] || all_loom_checks "$tag"
        printf '%s\n' shuttle unit stats stress
    fi
}

config_of() { # check → config
    case $1 in loom:*) echo loom ;; test:*) echo unit ;; stats:*) echo stats ;; *) echo "$1" ;; esac
}
only_of() { # check → the one test binary its build needs (loom: BINARY, test:/stats: PACKAGE:BINARY)
    local c
    case $1 in
    loom:*)
        c=${1#loom:}
        echo "${c%%::*}"
        ;;
    test:*) echo "${1#test:}" ;;
    stats:*) echo "${1#stats:}" ;;
    esac
}

declare -A built=() baseline=()
ensure_built() { # config tag extra [test-binary]
    local key="$1/$2/${4:-}"
    [ -n "${built[$key]:-}" ] && return 0
    echo "   build $1 ($2${4:+, $4})" >&2
    # Explicit: callers test this function (`|| …`), which turns `set -e` off inside it, and a
    # failed build must not leave the previous mutant's binary to be run as this one's.
    build "$1" "$2" "$3" "${4:-}" || return 1
    built[$key]=1
}
# A check's result on the unmutated runtime build, cached: a checker that fails there is skipped.
baseline_ok() { # check
    local c=$1 r
    # The sample's baselines are the loom step of ci/models.sh, which ran every model already.
    [ $sample -eq 1 ] && return 0
    if [ -z "${baseline[$c]:-}" ]; then
        r=0
        in_baseline=1 run_check "$(config_of "$c")" runtime "" "$c" "$runtime_flags" || r=$?
        baseline[$c]=$r
        [ $r -eq 0 ] || echo "   baseline of $c does not pass (status $r): skipped" >&2
    fi
    [ "${baseline[$c]}" -eq 0 ]
}

if [ $sample -eq 1 ]; then
    src=$root
else
    sync_copy
fi
start=$SECONDS
# The baselines of the cargo-run checkers, before any patch touches the copy (cargo would
# rebuild the runtime build from a patched copy); loom baselines run the built binaries later.
selected() { # the entries this run applies (all, or the NAMEs given)
    entries | awk -F'\t' -v only=" ${only[*]} " 'only == "  " || index(only, " " $1 " ")'
}
needed=$(selected | cut -f3 | tr ',' '\n' | grep -vx -- '-' | grep -v '^loom:' || true)
[ $hints_only -eq 0 ] && needed=$(printf '%s\n' $needed shuttle unit stats stress)
[ $sample -eq 1 ] && needed=""
# The loom runtime build too (every binary: the sweep runs them all), unless no check is loom.
if [ $hints_only -eq 0 ] || [ -n "$(selected | cut -f3 | grep 'loom:' || true)" ]; then
    ensure_built loom runtime "$runtime_flags"
fi
for c in $(sort -u <<<"$needed"); do
    ensure_built "$(config_of "$c")" runtime "$runtime_flags" "$(only_of "$c")"
    baseline_ok "$c" || true
done
total=0
killed=0
survivors=()
while IFS=$'\t' read -r name kind hints patch; do
    if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$name"; then
        continue
    fi
    # The sample: runtime mutants with a loom hint, and only their loom hints.
    if [ $sample -eq 1 ]; then
        [ "$kind" = runtime ] || continue
        hints=$(tr ',' '\n' <<<"$hints" | grep '^loom:' | paste -sd, || true)
        [ -n "$hints" ] || continue
    fi
    total=$((total + 1))
    t0=$SECONDS
    case $kind in
    runtime) tag=runtime extra=$runtime_flags sel=$name ;;
    build) tag=build-$name extra="--cfg lwlock_mutant=\"$name\"" sel="" ;;
    patch)
        tag=patch extra='--cfg lwlock_mutant="runtime"' sel=""
        if ! apply_patch "$patch"; then
            echo "| \`$name\` | $kind | bad patch | - | - | 0 |" | tee -a "$report"
            continue
        fi
        for k in "${!built[@]}"; do
            [[ $k == */patch/* ]] && unset "built[$k]"
        done
        ;;
    *)
        echo "mutant $name: unknown kind $kind" >&2
        exit 2
        ;;
    esac
    verdict="survived"
    by="-"
    ran=0
    skipped=()
    timed_out=()
    crashed=()
    mapfile -t checks < <(
        # A build-kind mutant needs its own builds; only loom ones are cheap enough to list all.
        if [ "$kind" = build ] && [ $hints_only -eq 0 ]; then
            checks_for "$hints" runtime | grep '^loom:' || true
        else
            checks_for "$hints" runtime
        fi
    )
    for c in "${checks[@]}"; do
        [ -n "$c" ] || continue
        config=$(config_of "$c")
        # The runtime build of a loom check is every binary (the sweep runs them all); a
        # `test:` check builds its one binary.
        case $c in
        test:* | stats:*) ensure_built "$config" runtime "$runtime_flags" "$(only_of "$c")" ;;
        *) ensure_built "$config" runtime "$runtime_flags" ;;
        esac
        baseline_ok "$c" || {
            skipped+=("$c")
            continue
        }
        if [ "$tag" != runtime ]; then
            ensure_built "$config" "$tag" "$extra" "$(only_of "$c")" ||
                { verdict="build failed"; break; }
        fi
        r=0
        ran=$((ran + 1))
        run_check "$config" "$tag" "$sel" "$c" "$extra" || r=$?
        if [ $r -eq 1 ]; then
            verdict="killed"
            by=$c
            if grep -q 'Causality violation' "$mdir/check.log"; then
                how="race"
            elif grep -q 'deadlock' "$mdir/check.log"; then
                how="deadlock"
            else
                # The failing test's own panic: under --nocapture the expected panics of tests
                # that passed print too, so take the first test libtest lists under "failures:"
                # and the message of its thread (the first panic otherwise).
                failed=$(awk '/^failures:$/ { f = 1; next } f && /^    [^ ]/ { print $1; exit }' \
                    "$mdir/check.log" || true)
                how=""
                if [ -n "$failed" ]; then
                    how=$(grep -F -m1 -A1 "thread '$failed'" "$mdir/check.log" | tail -1 | cut -c1-80 || true)
                fi
                [ -n "$how" ] || how=$(grep -m1 -A1 'panicked at' "$mdir/check.log" | tail -1 | cut -c1-80 || true)
            fi
            if [ -z "$how" ] && { [ "$last_rc" = 139 ] || [ "$last_rc" = 135 ]; }; then
                # The model followed a pointer the mutant left stale (a record published with a
                # Relaxed store, read through before its fields): the memory error is its verdict.
                how="memory error (signal $((last_rc - 128)) in the model)"
            fi
            if [ -z "$how" ]; then
                # No checker's verdict in its output (no race, deadlock, panic, failing test or
                # memory error): the process died of something else (an allocation failure, a
                # signal from outside). Like a time-out, that is not a kill.
                echo "   $name: $c exited $last_rc with no verdict of its own (not a kill)" >&2
                verdict="survived"
                by="-"
                crashed+=("$c")
                continue
            fi
            break
        elif [ $r -eq 2 ]; then
            echo "   $name: $c timed out (not a kill)" >&2
            timed_out+=("$c")
        fi
    done
    # A survivor whose checkers never ran, or only timed out, says so (it is not a survivor of
    # a model that explored everything).
    if [ "$verdict" = survived ]; then
        if [ $ran -eq 0 ] && [ ${#skipped[@]} -gt 0 ]; then
            verdict="not run"
            by="baseline of \`${skipped[0]}\` did not pass"
        elif [ $ran -gt 0 ] && [ $ran -eq $((${#timed_out[@]} + ${#crashed[@]})) ]; then
            if [ ${#crashed[@]} -gt 0 ]; then
                verdict="crashed"
                by="\`${crashed[0]}\` exited with no verdict"
            else
                verdict="timed out"
                by="\`${timed_out[0]}\`"
            fi
        fi
    fi
    [ "$kind" = patch ] && restore_file "$patch"
    dt=$((SECONDS - t0))
    if [ "$verdict" = killed ]; then
        killed=$((killed + 1))
        line="| \`$name\` | $kind | killed | \`$by\` | ${how//|/\\|} | $dt |"
    else
        survivors+=("$name")
        line="| \`$name\` | $kind | $verdict | $by | - | $dt |"
    fi
    echo "$line" | tee -a "$report"
done < <(entries)

echo
echo "## Mutation score"
echo "| mutant | kind | verdict | killed by | failure | seconds |"
echo "|---|---|---|---|---|---|"
cat "$report"
echo
echo "score: $killed of $total killed in $((SECONDS - start)) s"
if [ ${#survivors[@]} -gt 0 ]; then
    echo "survivors: ${survivors[*]}"
fi
if [ $sample -eq 1 ] && [ $killed -ne $total ]; then
    echo "the CI sample must kill every mutant it runs" >&2
    exit 1
fi

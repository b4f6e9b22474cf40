#!/usr/bin/env python3
"""Each lock's throughput over a reference lock's, trial by trial, with a confidence interval:
for a run of lwbench on a host whose speed drifts (a VM whose vCPUs change mode), where a ratio of
two medians moves between runs by more than the gaps it should show.

Usage: bench/scripts/paired-ratios.py DIR --over LOCK [--threshold X] [--level P] [--against BASE]
  DIR            holds the results.csv (and meta.json) lwbench wrote; best with --interleave, so
                 that trial k of every lock at a point ran side by side
  --over LOCK    the reference lock (parking-lot, std, ...)
  --threshold X  the ratio a verdict is about (default 0.9)
  --level P      the confidence wanted for the interval (default 0.95)
  --against BASE a run of the same command by another binary (before a change), trial k of BASE
                 run next to trial k of DIR: per trial, DIR's ratio to LOCK over BASE's ratio to
                 LOCK, with the same interval; verdict `lower` / `higher` when the whole
                 interval is below / above 1, else `no change shown`

For each point (workload, layout/snapshot, threads) and each other lock, the ratios of trial k's TPS to
the reference's trial k; their median, and the interval between two order statistics of the
ratios that covers the median ratio with at least the wanted confidence (the sign test's
distribution-free interval: no assumption about the noise's shape). Its actual coverage is
printed; with too few trials for the level, the widest interval (the lowest and highest ratio)
and its lower coverage. Verdict: `below` when the whole interval is below X, `at or above` when
it is at or above X, else `undecided` (the run cannot tell). A run without --interleave is
paired by trial number and says so. --self-test checks the arithmetic. Exits 2 on a bad argument
or a missing file.
"""
import csv
import json
import math
import os
import statistics
import sys


def fail(msg):
    print(f"paired-ratios: {msg}", file=sys.stderr)
    sys.exit(2)


def interval(n, level):
    """(lo, hi, coverage): 1-based order statistics x(lo) <= median <= x(hi) with coverage >=
    level, the narrowest the sign test allows; (1, n, coverage) when none reaches the level."""
    def tail(k):  # P(Binomial(n, 1/2) <= k)
        return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    best = (1, n, 1 - 2 * 0.5 ** n)
    for k in range(1, n // 2 + 1):
        cov = 1 - 2 * tail(k - 1)
        if cov >= level:
            best = (k, n - k + 1, cov)
        else:
            break
    return best


def load(d):
    path = os.path.join(d, "results.csv")
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    if not rows:
        fail(f"{path} has no rows")
    interleaved = False
    try:
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
        # A simulated trial k runs with the same seed for every lock: paired by construction.
        interleaved = bool(meta.get("settings", {}).get("interleave")) or meta.get("engine") == "sim"
    except (OSError, ValueError):
        pass
    table = {}
    for r in rows:
        layout_snapshot = "/".join(x for x in (r.get("layout", ""), r.get("snapshot", "")) if x)
        point = (r["workload"], layout_snapshot, int(r["threads"]))
        table.setdefault(point, {}).setdefault(r["lock"], {})[int(r["trial"])] = float(r["txn_per_sec"])
    return table, interleaved


def summary(xs, level, verdict_of):
    """(median, lo, hi, coverage, n, verdict) of the sorted ratios `xs`."""
    lo, hi, cov = interval(len(xs), level)
    a, b = xs[lo - 1], xs[hi - 1]
    return (statistics.median(xs), a, b, cov, len(xs), verdict_of(a, b))


def rows_for(table, over, threshold, level):
    out = []
    for point in table:
        locks = table[point]
        if over not in locks:
            continue
        ref = locks[over]
        for lock, trials in locks.items():
            if lock == over:
                continue
            ratios = sorted(trials[k] / ref[k] for k in trials if k in ref and ref[k] > 0)
            if not ratios:
                continue
            out.append((point, lock) + summary(
                ratios, level,
                lambda a, b: "below" if b < threshold else "at or above" if a >= threshold else "undecided"))
    return out


def against_rows(table, base, over, level):
    """Per point and lock: trial k's ratio to `over` in `table` divided by the same in `base`."""
    out = []
    for point, locks in table.items():
        blocks = base.get(point, {})
        if over not in locks or over not in blocks:
            continue
        ref, bref = locks[over], blocks[over]
        for lock, trials in locks.items():
            if lock == over or lock not in blocks:
                continue
            b = blocks[lock]
            xs = sorted((trials[k] / ref[k]) / (b[k] / bref[k]) for k in trials
                        if k in ref and k in b and k in bref and ref[k] > 0 and bref[k] > 0 and b[k] > 0)
            if not xs:
                continue
            out.append((point, lock) + summary(
                xs, level, lambda a, c: "lower" if c < 1 else "higher" if a > 1 else "no change shown"))
    return out


def table_text(rows, value_header, verdict_header, verdicts, preface=()):
    lines = list(preface)
    lines.append(f"| workload | layout/snapshot | threads | lock | {value_header} "
                 f"| interval (coverage) | trials | {verdict_header} |")
    lines.append("|---|---|--:|---|--:|--:|--:|---|")
    for (w, v, t), lock, med, a, b, cov, n, verdict in rows:
        lines.append(f"| {w} | {v or '–'} | {t} | {lock} | {med:.2f} | {a:.2f}–{b:.2f} "
                     f"({cov * 100:.0f} %) | {n} | {verdict} |")
    counts = {}
    for r in rows:
        counts[r[-1]] = counts.get(r[-1], 0) + 1
    lines.append("\n" + ", ".join(f"{k}: {counts[k]}" for k in verdicts if k in counts))
    return "\n".join(lines)


def render_against(rows, over):
    return table_text(rows, f"÷ {over}, this run ÷ the base, median", "change",
                      ("lower", "no change shown", "higher"))


def render(rows, over, threshold, interleaved):
    preface = () if interleaved else (
        "(not --interleave: trial k of each lock did not run side by side; paired by "
        "trial number only)\n",)
    return table_text(rows, f"÷ {over}, median of the trials' ratios", f"vs {threshold}",
                      ("below", "undecided", "at or above"), preface)


def self_test():
    assert interval(9, 0.95)[:2] == (2, 8), interval(9, 0.95)
    assert abs(interval(9, 0.95)[2] - (1 - 2 * 10 / 512)) < 1e-12
    assert interval(3, 0.95) == (1, 3, 0.75), interval(3, 0.95)
    assert interval(20, 0.95)[:2] == (6, 15), interval(20, 0.95)
    table = {("w", "", 2): {
        "ref": {k: 10.0 for k in range(1, 10)},
        "a": {k: 10.0 * x for k, x in zip(range(1, 10), [.5, .6, .7, .8, .8, .8, .85, .88, 1.5])},
        "b": {k: 10.0 * x for k, x in zip(range(1, 10), [.5, .95, 1, 1, 1, 1, 1, 1.1, 2])},
        "c": {k: 10.0 * x for k, x in zip(range(1, 10), [.5, .6, .9, 1, 1, 1, 1, 1.1, 2])},
    }}
    got = {r[1]: r for r in rows_for(table, "ref", 0.9, 0.95)}
    assert got["a"][-1] == "below" and abs(got["a"][2] - 0.8) < 1e-12, got["a"]
    assert got["b"][-1] == "at or above", got["b"]
    assert got["c"][-1] == "undecided", got["c"]
    text = render(list(got.values()), "ref", 0.9, True)
    assert "| w | – | 2 | a | 0.80 | 0.60–0.88 (96 %) | 9 | below |" in text, text
    assert "below: 1, undecided: 1, at or above: 1" in text, text
    # --against: the base run's ratios are 0.8 for `a`; this run's are table's.
    base = {("w", "", 2): {
        "ref": {k: 20.0 for k in range(1, 10)},
        "a": {k: 16.0 for k in range(1, 10)},
    }}
    got = against_rows(table, base, "ref", 0.95)
    assert len(got) == 1 and got[0][1] == "a", got
    assert abs(got[0][2] - 1.0) < 1e-12 and got[0][-1] == "no change shown", got
    base[("w", "", 2)]["a"] = {k: 40.0 for k in range(1, 10)}
    assert against_rows(table, base, "ref", 0.95)[0][-1] == "lower"
    base[("w", "", 2)]["a"] = {k: 2.0 for k in range(1, 10)}
    assert against_rows(table, base, "ref", 0.95)[0][-1] == "higher"
    text = render_against(against_rows(table, base, "ref", 0.95), "ref")
    assert "| w | – | 2 | a | 8.00 | 6.00–8.80 (96 %) | 9 | higher |" in text, text
    print("paired-ratios: self-test passed")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return
    args, over, threshold, level, against = [], None, 0.9, 0.95, None
    it = iter(argv[1:])
    for a in it:
        if a == "--against":
            against = next(it, None) or fail("--against needs a directory")
        elif a == "--over":
            over = next(it, None) or fail("--over needs a lock")
        elif a in ("--threshold", "--level"):
            v = next(it, None) or fail(f"{a} needs a number")
            try:
                x = float(v)
            except ValueError:
                fail(f"{a} {v}: not a number")
            if a == "--level" and not 0 < x < 1:
                fail(f"--level {v}: a confidence between 0 and 1")
            if a == "--threshold" and not 0 < x < math.inf:
                fail(f"--threshold {v}: a ratio above 0")
            if a == "--threshold":
                threshold = x
            else:
                level = x
        elif a.startswith("-"):
            fail(f"unknown option {a}")
        else:
            args.append(a)
    if len(args) != 1 or over is None:
        fail("usage: paired-ratios.py DIR --over LOCK [--threshold X] [--level P] [--against BASE]")
    table, interleaved = load(args[0])
    if not any(over in locks for locks in table.values()):
        fail(f"--over {over}: no such lock in the run")
    if against is not None:
        base, _ = load(against)
        if not any(over in locks for locks in base.values()):
            fail(f"--against {against}: --over {over} is no lock of that run")
        print(render_against(against_rows(table, base, over, level), over))
        return
    print(render(rows_for(table, over, threshold, level), over, threshold, interleaved))


if __name__ == "__main__":
    main(sys.argv)

#!/usr/bin/env python3
"""Sets a rerun with the stats counters uncharged against the committed run it repeats.

Usage: bench/assets/stats-uncharged/compare.py [--summary] [--base=DIR] [--rerun=DIR] RUN [RUN ...]

RUN is a path under bench/assets/ (e.g. experiments/group-clear): the committed run is
bench/assets/RUN/points.csv, the rerun bench/assets/stats-uncharged/RUN/points.csv (same seeds,
same command; the only difference is the build: each counted acquire no longer adds a charged
read-modify-write on the lock's line). For every point (workload, lock, layout, snapshot,
clients) it prints the median TPS before and after and after/before, and each lock's ratio to
the run's first lock at the same workload and clients, before and after (the comparisons the
verdicts rest on), with the top wait event after. A point is marked `moved` when the rerun's
median lies outside the committed run's slowest-fastest range. Exits 2 on a bad argument or a
missing file, 1 if a point of the rerun is missing from the committed run. With --summary, one
row per run instead: its points, how many moved, the median and the largest change (and where).
--base=DIR and --rerun=DIR (directories under bench/assets/; defaults: none, the committed run,
and stats-uncharged) set any other pair, e.g. --base=stats-uncharged --rerun=write-wal.
"""
import csv
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
KEY = ("workload", "lock", "layout", "snapshot", "threads")


def points(path):
    try:
        with open(path, newline="") as f:
            return {tuple(r[k] for k in KEY): r for r in csv.DictReader(f)}
    except OSError as e:
        print(f"compare.py: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def matched(run, old, new):
    """The rerun's points with their committed counterparts; a missing one is reported."""
    pairs, missing = [], 0
    for k, r in new.items():
        if k in old:
            pairs.append((k, old[k], r))
        else:
            print(f"compare.py: {run}: point {k} not in the committed run", file=sys.stderr)
            missing += 1
    return pairs, missing


def tps(r, col="median_txn_per_sec"):
    v = r.get(col, "")
    return float(v) if v else float("nan")


def main(argv):
    summary = "--summary" in argv
    base, rerun = "", "stats-uncharged"
    runs = []
    for a in argv:
        if a.startswith("--base="):
            base = a[len("--base="):]
        elif a.startswith("--rerun="):
            rerun = a[len("--rerun="):]
        elif a != "--summary":
            runs.append(a)
    if any(a.startswith("-") for a in runs):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if not runs:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    missing = 0
    for run in runs:
        old = points(os.path.join(ROOT, base, run, "points.csv"))
        new = points(os.path.join(ROOT, rerun, run, "points.csv"))
        first = {}
        for k in new:
            first.setdefault((k[0], k[2], k[3], k[4]), k[1])
        pairs, lost = matched(run, old, new)
        missing += lost
        if summary:
            changes = []
            for k, o, r in pairs:
                a, lo, hi = tps(r), tps(o, "min_txn_per_sec"), tps(o, "max_txn_per_sec")
                changes.append((a / tps(o), not lo <= a <= hi, k))
            if run == runs[0]:
                print("| run | points | moved (outside the committed slowest–fastest) "
                      "| median after/before | largest change (point) |")
                print("|---|--:|--:|--:|---|")
            ch = sorted(c[0] for c in changes)
            big = max(changes, key=lambda c: abs(c[0] - 1))
            where = f"{big[2][0]} {big[2][1]} {big[2][4]} clients"
            print(f"| `{run}` | {len(changes)} | {sum(c[1] for c in changes)} "
                  f"| {ch[len(ch) // 2]:.2f} | {big[0]:.2f} ({where}) |")
            continue
        print(f"\n{run}\n")
        print("| workload | lock | layout/snapshot | clients | TPS before (min–max) | after | after/before "
              "| ÷ first lock before | after | top wait after |")
        print("|---|---|---|--:|--:|--:|--:|--:|--:|---|")
        for k, o, r in pairs:
            b, a = tps(o), tps(r)
            lo, hi = tps(o, "min_txn_per_sec"), tps(o, "max_txn_per_sec")
            moved = "" if lo <= a <= hi else " moved"
            fk = (k[0], first[(k[0], k[2], k[3], k[4])], k[2], k[3], k[4])
            rb = b / tps(old[fk]) if fk in old else float("nan")
            ra = a / tps(new[fk])
            wait = f"{r['top_wait_event'] or 'none'} {float(r['top_wait_share'] or 0) * 100:.0f} %"
            ls = "/".join(x for x in (k[2], k[3]) if x) or "–"
            print(f"| {k[0]} | {k[1]} | {ls} | {k[4]} | {b:,.0f} ({lo:,.0f}–{hi:,.0f}) | {a:,.0f} "
                  f"| {a / b:.2f}{moved} | {rb:.2f} | {ra:.2f} | {wait} |")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Holds a rerun of committed simulated points against the committed run.

Usage: bench/assets/timescale/compare.py OLD_DIR NEW_DIR [OLD_DIR NEW_DIR ...]

OLD_DIR holds a committed results.csv (its ctx_switches the simulator's run-queue dispatches,
ctx_switch_source `lwsim`), NEW_DIR a rerun of some of its points by a binary that counts
context switches as Linux does (ctx_switch_source `lwsim-linux`). For every trial of NEW_DIR
(matched by workload, lock, layout, snapshot, threads, procs, trial) every column the two files
share must be equal, except the switch columns (ctx_switches, ctx_switch_source, cs_per_thread,
fair_short): the count changed, the simulation must not have. Prints one line per point:
clients, trials, the median switches per client before (dispatches) and after (Linux's count),
fair_short before and after (trials flagged), and `identical` or the first column that differs.
A NEW_DIR written by an lwbench that counts dispatches (source `lwsim`) has only the last column.
Exits 1 if any row differs or is missing from OLD_DIR, 2 on a bad argument or a missing file.
"""
import csv
import os
import statistics
import sys

SWITCH_COLUMNS = {"ctx_switches", "ctx_switch_source", "cs_per_thread", "fair_short"}
KEY = ("workload", "lock", "layout", "snapshot", "threads", "procs", "trial")


def rows(d):
    path = os.path.join(d, "results.csv")
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        print(f"compare.py: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    bad = 0
    print("| run | workload | lock (snapshot) | clients | trials | switches/client before (dispatches) "
          "| after (Linux) | fair_short before | after | simulation |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for old_dir, new_dir in zip(argv[0::2], argv[1::2]):
        old = {tuple(r[k] for k in KEY): r for r in rows(old_dir)}
        points = {}
        for r in rows(new_dir):
            k = tuple(r[k] for k in KEY)
            points.setdefault(k[:6], []).append((k, r))
        for p, trials in points.items():
            verdict = "identical"
            before, after, fs_before, fs_after = [], [], 0, 0
            linux = True
            for k, r in trials:
                o = old.get(k)
                if o is None:
                    verdict = "missing from the committed run"
                    continue
                linux = linux and r["ctx_switch_source"] == "lwsim-linux"
                for c in r.keys() & o.keys():
                    if c not in SWITCH_COLUMNS and r[c] != o[c] and verdict == "identical":
                        verdict = f"differs: {c} {o[c]} -> {r[c]} (trial {k[-1]})"
                before.append(float(o["cs_per_thread"]))
                after.append(float(r["cs_per_thread"]))
                fs_before += o["fair_short"] == "true"
                fs_after += r["fair_short"] == "true"
            if verdict != "identical":
                bad += 1
            med = lambda xs: f"{statistics.median(xs):.1f}" if xs else "-"
            n = len(trials)
            if not linux:
                # NEW_DIR counts dispatches too (an older lwbench): only the simulation is held.
                after, fs_after = [], "-"

            lock = p[1] + (" " + p[3] if p[3] else "")
            print(f"| {os.path.basename(os.path.normpath(new_dir))} | {p[0]} | {lock} | {p[4]} "
                  f"| {n} | {med(before)} | {med(after)} | {fs_before}/{n} | {fs_after}/{n} "
                  f"| {verdict} |")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main(sys.argv[1:])

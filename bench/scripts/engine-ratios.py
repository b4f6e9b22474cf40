#!/usr/bin/env python3
"""Compares two lwbench runs of the same sweep, one on real threads and one simulated, by the
ratios between locks: for each workload and thread count, every pair of locks (A, B) gives the
real TPS ratio A/B and the simulated one, and the pair agrees when the simulated ratio is within
the band (default +-25 %) of the real one. Absolute rates are not compared: the simulated machine
charges no application code beyond the workload's, so only the ratios between locks run on one
engine can be set beside each other.

Usage: bench/scripts/engine-ratios.py REAL_DIR SIM_DIR [--band 0.25]
(each directory holds the points.csv lwbench wrote); --self-test checks the counting on two
made-up runs. Prints a markdown table of every pair and a
closing line with the count within the band. Exits 2 on a bad argument or a missing file.
"""
import csv
import itertools
import sys


def load(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"engine-ratios: cannot read {path}: {e}", file=sys.stderr)
        sys.exit(2)
    out = {}
    for r in rows:
        out[(r["workload"], int(r["threads"]), r["lock"])] = float(r["median_txn_per_sec"])
    return out


def self_test():
    """Two made-up runs: one pair agrees, one is off by 1.5x, one is within the band's edge."""
    import os
    import tempfile

    def write(d, rows):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "points.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["workload", "lock", "threads", "median_txn_per_sec"])
            w.writerows(rows)

    with tempfile.TemporaryDirectory() as t:
        real, sim = os.path.join(t, "real"), os.path.join(t, "sim")
        write(real, [("null", "a", 1, 100), ("null", "b", 1, 100), ("null", "c", 1, 100)])
        # a/b 1.0 (agrees), a/c 1.5 (off), b/c 1.5 (off); with a band of 0.5 all agree.
        write(sim, [("null", "a", 1, 300), ("null", "b", 1, 300), ("null", "c", 1, 200)])
        import contextlib
        import io

        for band, expect in ((0.25, "1 of 3"), (0.5, "3 of 3")):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                main([real, sim, "--band", str(band)])
            last = out.getvalue().strip().splitlines()[-1]
            if not last.endswith(expect):
                print(f"engine-ratios self-test: band {band}: {last!r}, expected {expect}")
                sys.exit(1)
    print("engine-ratios self-test: ok")


def main(argv):
    args = list(argv)
    if args == ["--self-test"]:
        self_test()
        return
    band = 0.25
    if "--band" in args:
        i = args.index("--band")
        try:
            band = float(args[i + 1])
            if not 0 < band < 1:
                raise ValueError
        except (IndexError, ValueError):
            print("engine-ratios: --band needs a number between 0 and 1", file=sys.stderr)
            sys.exit(2)
        del args[i : i + 2]
    if len(args) != 2:
        print("usage: engine-ratios.py REAL_DIR SIM_DIR [--band 0.25]", file=sys.stderr)
        sys.exit(2)
    real = load(args[0] + "/points.csv")
    sim = load(args[1] + "/points.csv")
    keys = sorted({(w, t) for (w, t, _) in real} & {(w, t) for (w, t, _) in sim})
    if not keys:
        print("engine-ratios: the two runs share no workload and thread count", file=sys.stderr)
        sys.exit(2)
    print("| workload | threads | A / B | real | simulated | sim / real | within |")
    print("|---|---:|---|---:|---:|---:|---|")
    within = total = 0
    for w, t in keys:
        locks = sorted({l for (w2, t2, l) in real if (w2, t2) == (w, t)}
                       & {l for (w2, t2, l) in sim if (w2, t2) == (w, t)})
        for a, b in itertools.combinations(locks, 2):
            rr = real[(w, t, a)] / real[(w, t, b)]
            sr = sim[(w, t, a)] / sim[(w, t, b)]
            q = sr / rr
            ok = abs(q - 1) <= band
            within += ok
            total += 1
            print(f"| {w} | {t} | {a} / {b} | {rr:.2f} | {sr:.2f} | {q:.2f} | {'yes' if ok else '**no**'} |")
    print()
    print(f"within +-{band * 100:.0f} %: {within} of {total}")


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Turns an lwbench sensitivity run (`--engine sim --sensitivity KEY,...`) into one table per
claim: every point of the sweep with its figure in the base run and in each arm (a key halved or
doubled, the same seeds), side by side, so that a verdict resting on several points (a peak, a
ratio between two locks, a shape) can be read off every arm at once.

Usage: bench/scripts/sens-matrix.py DIR [--rel] [--over LOCK] [--wait EVENT] [--cpu] [--only WORKLOAD:LOCK,...]
  DIR          holds the sensitivity.csv (and sensitivity-waits.csv) lwbench wrote
  --rel        each series' figure over its own figure at its fewest threads in the same arm (a
               curve's shape, whatever the units: the seeds' "rel." columns)
  --over LOCK  each lock's figure over LOCK's at the same workload and threads in the same arm
               (LOCK's own rows are left out)
  --wait EVENT each point's samples in the wait event EVENT (`LWLock:XactSLRU`, or the event
               alone), in percent of all its samples (`(running)` included), from
               sensitivity-waits.csv: a verdict about waits read off every arm
  --cpu        each point's CPU busy (percent of the machine's cores over the window, median over
               the trials) in every arm, from sensitivity.csv: a verdict about idle CPU read off
               every arm (simulated runs; a run written before the CPU columns existed exits 2)
  --only ...   keep only these workload:lock series
--self-test checks the arithmetic on a made-up run. Cells are medians over the run's trials
(seeds); `*` marks a point lwbench found bimodal in that arm's base. Exits 2 on a bad argument or
a missing file.
"""
import csv
import gzip
import os
import sys


def fail(msg):
    print(f"sens-matrix: {msg}", file=sys.stderr)
    sys.exit(2)


def read_rows(path):
    """The rows of a CSV file lwbench wrote, or of its gzip-compressed copy (`path.gz`, as the
    committed runs keep their per-trial files) when `path` is absent; exits 2 when neither can
    be read or the file is empty."""
    gz = not os.path.exists(path) and os.path.exists(path + ".gz")
    if gz:
        path += ".gz"
    try:
        with (gzip.open if gz else open)(path, "rt", newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    if not rows:
        fail(f"{path} has no rows")
    return rows


def point(r):
    """A row's point: (workload, lock, layout_snapshot, threads), the proc-array layout and
    snapshot strategy as `layout/snapshot`."""
    layout_snapshot = "/".join(x for x in (r["layout"], r["snapshot"]) if x)
    return (r["workload"], r["lock"], layout_snapshot, int(r["threads"]))


def arm_label(r, side):
    """The arm's column: `KEY x0.5` / `KEY x2` for a parameter; for a structural option (its arm
    at its other choice, not at half its base) `KEY=VALUE`, and None for its unused second side."""
    half, base = r.get("half_value", ""), r.get("base_value", "")
    structural = half != "" and base != "" and abs(float(half) - 0.5 * float(base)) > 1e-9
    if structural:
        if side == "double":
            return None
        v = float(half)
        return f"{r['key']}={int(v) if v == int(v) else v}"
    return f"{r['key']} x{'0.5' if side == 'half' else '2'}"


def load(path):
    """{(workload, lock, layout_snapshot, threads): {arm: value}} and the arms in order
    (layout_snapshot is the proc-array layout and snapshot strategy, `layout/snapshot`, empty when the sweep has
    none)."""
    rows = read_rows(path)
    table, arms, bimodal = {}, ["base"], set()
    for r in rows:
        k = point(r)
        cell = table.setdefault(k, {})
        cell["base"] = float(r["base"])
        if r["base_bimodal"] == "true":
            bimodal.add(k)
        for side in ("half", "double"):
            arm = arm_label(r, side)
            if arm is None:
                continue
            if arm not in arms:
                arms.append(arm)
            if r[side] != "":
                cell[arm] = float(r[side])
    return table, arms, bimodal


def load_cpu(path):
    """CPU busy per point and arm, in percent, as load() shapes it; exits 2 when the run has no
    CPU columns or no point recorded it."""
    rows = read_rows(path)
    if "base_cpu_busy_pct" not in rows[0]:
        fail(f"--cpu: {path} has no CPU columns (written before lwbench recorded them)")
    table, arms, seen = {}, ["base"], False
    for r in rows:
        k = point(r)
        cell = table.setdefault(k, {})
        if r["base_cpu_busy_pct"] != "":
            cell["base"] = float(r["base_cpu_busy_pct"])
            seen = True
        for side in ("half", "double"):
            arm = arm_label(r, side)
            if arm is None:
                continue
            if arm not in arms:
                arms.append(arm)
            v = r[f"{side}_cpu_busy_pct"]
            if v != "":
                cell[arm] = float(v)
    if not seen:
        fail("--cpu: no point of the run recorded CPU busy (a real-engine run?)")
    return table, arms


def load_waits(path, event):
    """The share of `event` per point and arm, in percent, as load() shapes it: {(workload,
    lock, layout_snapshot, threads): {arm: percent}} and the arms in order. A point with samples but none
    in `event` is 0."""
    rows = read_rows(path)
    table, arms, seen = {}, [], False
    for r in rows:
        k = point(r)
        if r["arm"] not in arms:
            arms.append(r["arm"])
        cell = table.setdefault(k, {})
        cell.setdefault(r["arm"], 0.0)
        full = f"{r['wait_event_type']}:{r['wait_event']}" if r["wait_event_type"] else r["wait_event"]
        if event in (full, r["wait_event"]):
            cell[r["arm"]] += float(r["share"]) * 100.0
            seen = True
    if not seen:
        fail(f"--wait {event}: no point of the run sampled it")
    return table, arms


def derive(table, arms, rel=False, over=None, only=None):
    """The cells to print: {(workload, lock, layout_snapshot, threads): {arm: value or None}}."""
    keys = sorted(table)
    if only:
        keys = [k for k in keys if f"{k[0]}:{k[1]}" in only]
    out = {}
    for k in keys:
        w, lock, ls, t = k
        if over is not None and lock == over:
            continue
        row = {}
        for a in arms:
            v = table[k].get(a)
            if v is not None and rel:
                t0 = min(x[3] for x in table if x[:3] == (w, lock, ls))
                base = table[(w, lock, ls, t0)].get(a)
                v = v / base if base else None
            if v is not None and over is not None:
                d = table.get((w, over, ls, t), {}).get(a)
                if d is None:
                    fail(f"--over {over}: no {w} point at {t} threads")
                v = v / d if d else None
            row[a] = v
        out[k] = row
    return out


def fmt(v, ratio, pct=False):
    if v is None:
        return "–"
    if pct:
        return f"{v:.1f} %"
    if ratio:
        return f"{v:.2f}"
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def render(cells, arms, bimodal, ratio, pct=False):
    layouts = any(k[2] for k in cells)
    lines = ["| workload | lock | " + ("layout/snapshot | " if layouts else "") + "threads | "
             + " | ".join(arms) + " |",
             "|---|---|" + ("---|" if layouts else "") + "--:|" + "--:|" * len(arms)]
    for (w, lock, ls, t), row in cells.items():
        star = "*" if (w, lock, ls, t) in bimodal else ""
        lines.append(f"| {w} | {lock} | " + (f"{ls} | " if layouts else "") + f"{t}{star} | "
                     + " | ".join(fmt(row.get(a), ratio, pct) for a in arms) + " |")
    return "\n".join(lines)


def self_test():
    import tempfile
    d = tempfile.mkdtemp()
    head = ("key,base_value,half_value,double_value,workload,lock,layout,snapshot,threads,trials,"
            "unit,base,base_min,base_max,base_bimodal,half,double,half_ratio,double_ratio,note\n")
    rows = [
        "jitter,0.2,0.1,0.4,w,a,,,1,10,TPS,10,10,10,false,10,10,1,1,",
        "jitter,0.2,0.1,0.4,w,a,,,8,10,TPS,40,39,41,false,60,20,1.5,0.5,",
        "jitter,0.2,0.1,0.4,w,b,,,1,10,TPS,5,5,5,false,5,5,1,1,",
        "jitter,0.2,0.1,0.4,w,b,,,8,10,TPS,80,70,90,true,30,40,0.375,0.5,",
        "jitter,0.2,0.1,0.4,w,a,dense,scan,1,10,TPS,20,20,20,false,20,20,1,1,",
        "jitter,0.2,0.1,0.4,w,a,dense,scan,8,10,TPS,60,60,60,false,60,60,1,1,",
    ]
    with open(os.path.join(d, "sensitivity.csv"), "w") as f:
        f.write(head + "\n".join(rows) + "\n")
    table, arms, bimodal = load(os.path.join(d, "sensitivity.csv"))
    assert arms == ["base", "jitter x0.5", "jitter x2"], arms
    rel = derive(table, arms, rel=True)
    assert rel[("w", "a", "", 8)] == {"base": 4.0, "jitter x0.5": 6.0, "jitter x2": 2.0}, rel
    assert rel[("w", "b", "", 8)]["base"] == 16.0, rel
    assert rel[("w", "a", "dense/scan", 8)]["base"] == 3.0, rel
    over = derive(table, arms, over="a")
    assert ("w", "a", "", 8) not in over
    assert over[("w", "b", "", 8)] == {"base": 2.0, "jitter x0.5": 0.5, "jitter x2": 2.0}, over
    text = render(over, arms, bimodal, True)
    assert "| w | b | 8* | 2.00 | 0.50 | 2.00 |" in text, text
    assert "| w | a | dense/scan | 8 | 3.00 |" in render(rel, arms, bimodal, True)
    whead = ("arm,key,value,workload,lock,layout,snapshot,threads,wait_event_type,wait_event,"
             "samples,share\n")
    wrows = [
        "base,,,w,a,,,8,,(running),6,0.6",
        "base,,,w,a,,,8,LWLock,XactSLRU,3,0.3",
        "base,,,w,a,,,8,Spin,XactSLRU,1,0.1",
        "base,,,w,b,,,8,,(running),10,1",
        "jitter x2,jitter,0.4,w,a,,,8,LWLock,XactSLRU,2,0.2",
        "jitter x2,jitter,0.4,w,a,,,8,,(running),8,0.8",
    ]
    with open(os.path.join(d, "sensitivity-waits.csv"), "w") as f:
        f.write(whead + "\n".join(wrows) + "\n")
    wt, warms = load_waits(os.path.join(d, "sensitivity-waits.csv"), "LWLock:XactSLRU")
    assert warms == ["base", "jitter x2"], warms
    assert wt[("w", "a", "", 8)] == {"base": 30.0, "jitter x2": 20.0}, wt
    assert wt[("w", "b", "", 8)] == {"base": 0.0}, wt
    # The event alone matches every type.
    wt, _ = load_waits(os.path.join(d, "sensitivity-waits.csv"), "XactSLRU")
    assert abs(wt[("w", "a", "", 8)]["base"] - 40.0) < 1e-9, wt
    assert "| w | b | 8 | 0.0 % | – |" in render(wt, warms, set(), False, pct=True)
    chead = head.replace(",note", ",base_cpu_busy_pct,half_cpu_busy_pct,double_cpu_busy_pct,note")
    crows = [
        "jitter,0.2,0.1,0.4,w,a,,,8,10,TPS,40,39,41,false,60,20,1.5,0.5,25.0,50.5,12.5,",
        "instruction_ns,0.1,0.05,0.2,w,a,,,8,10,TPS,40,39,41,false,41,39,1.02,0.98,25.0,,30.0,",
    ]
    cdir = tempfile.mkdtemp()
    with open(os.path.join(cdir, "sensitivity.csv"), "w") as f:
        f.write(chead + "\n".join(crows) + "\n")
    ct, carms = load_cpu(os.path.join(cdir, "sensitivity.csv"))
    assert carms == ["base", "jitter x0.5", "jitter x2", "instruction_ns x0.5",
                     "instruction_ns x2"], carms
    assert ct[("w", "a", "", 8)] == {"base": 25.0, "jitter x0.5": 50.5, "jitter x2": 12.5,
                                     "instruction_ns x2": 30.0}, ct
    text = render(derive(ct, carms), carms, set(), False, pct=True)
    assert "| w | a | 8 | 25.0 % | 50.5 % | 12.5 % | – | 30.0 % |" in text, text
    # A structural option: its one arm is its other choice, `KEY=VALUE`, no second column.
    srows = [
        "residency_after_store,1.0,0.0,,w,a,,,8,10,TPS,40,39,41,false,30,,0.75,,",
        "residency_after_store,1.0,0.0,,w,b,,,8,10,TPS,80,70,90,false,90,,1.125,,",
    ]
    sdir = tempfile.mkdtemp()
    with open(os.path.join(sdir, "sensitivity.csv"), "w") as f:
        f.write(head + "\n".join(srows) + "\n")
    st, sarms, _ = load(os.path.join(sdir, "sensitivity.csv"))
    assert sarms == ["base", "residency_after_store=0"], sarms
    assert st[("w", "a", "", 8)] == {"base": 40.0, "residency_after_store=0": 30.0}, st
    only = derive(table, arms, only={"w:b"})
    assert list(only) == [("w", "b", "", 1), ("w", "b", "", 8)], only
    print("sens-matrix: self-test passed")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return
    args, rel, over, only, wait, cpu = [], False, None, None, None, False
    it = iter(argv[1:])
    for a in it:
        if a == "--rel":
            rel = True
        elif a == "--cpu":
            cpu = True
        elif a == "--over":
            over = next(it, None) or fail("--over needs a lock")
        elif a == "--wait":
            wait = next(it, None) or fail("--wait needs an event")
        elif a == "--only":
            v = next(it, None) or fail("--only needs workload:lock,...")
            only = set(v.split(","))
            if any(":" not in s for s in only):
                fail(f"--only {v}: each item is workload:lock")
        elif a.startswith("-"):
            fail(f"unknown option {a}")
        else:
            args.append(a)
    if len(args) != 1:
        fail("usage: sens-matrix.py DIR [--rel] [--over LOCK] [--wait EVENT] [--cpu] "
             "[--only WORKLOAD:LOCK,...]")
    if cpu:
        if rel or over is not None or wait is not None:
            fail("--cpu: a share is printed as it is (no --rel, --over or --wait)")
        table, arms = load_cpu(os.path.join(args[0], "sensitivity.csv"))
        print(render(derive(table, arms, only=only), arms, set(), False, pct=True))
        return
    if wait is not None:
        if rel or over is not None:
            fail("--wait: a share is printed as it is (no --rel or --over)")
        table, arms = load_waits(os.path.join(args[0], "sensitivity-waits.csv"), wait)
        cells = derive(table, arms, only=only)
        print(render(cells, arms, set(), False, pct=True))
        return
    table, arms, bimodal = load(os.path.join(args[0], "sensitivity.csv"))
    if over is not None and not any(k[1] == over for k in table):
        fail(f"--over {over}: no such lock in the run")
    cells = derive(table, arms, rel=rel, over=over, only=only)
    print(render(cells, arms, bimodal, rel or over is not None))


if __name__ == "__main__":
    main(sys.argv)

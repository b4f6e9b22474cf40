#!/usr/bin/env python3
"""The published-curve tables under model 3 and each structural option at its other choice:
reads the published_curves example's output of each arm (run.sh part h, one .md per arm in DIR) and
prints one table per curve (ratios sim / published, * outside +-30 %; the torture curve's values,
its unit being per run). Usage: published-table.py DIR"""
import re, sys, os
if len(sys.argv) != 2 or not os.path.isfile(os.path.join(sys.argv[1], "default.md")):
    sys.exit(print("usage: published-table.py DIR (DIR holding default.md and the arms' files)", file=sys.stderr) or 2)
D = sys.argv[1]
ARMS = [("default", "model 3"), ("model2", "model 2"), ("residency_after_store-1", "`residency_after_store=1`"),
        ("shared_load_llc-0", "`shared_load_llc=0`"), ("wake_placement-0", "`wake_placement=0`"),
        ("pair_latency-0", "`pair_latency=0`"), ("ownership_until_snoop-1", "`ownership_until_snoop=1`"),
        ("home_node-1", "`home_node=1`")]
def parse(path):
    curves = {}; cur = None
    for line in open(path):
        if line.startswith(("folly_", "stock ")):
            # A curve's header: keyed by its name and write share, before " on PROFILE".
            cur = line.split(" on ")[0].strip()
            curves[cur] = {"rows": {}, "head": line.strip(), "shape": ""}
            continue
        m = re.match(r"^\| (\d+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| (yes|no) \|", line)
        if m and cur:
            curves[cur]["rows"][int(m.group(1))] = (m.group(2).strip(), m.group(3).strip(), m.group(4).strip(), m.group(5))
        if line.startswith("shape:") and cur:
            curves[cur]["shape"] = line.strip()
    return curves
runs = {a: parse(os.path.join(D, a + ".md")) for a, _ in ARMS if os.path.exists(os.path.join(D, a + ".md"))}
base = runs["default"]
for key, c in base.items():
    print(f"**{c['head']}**\n")
    cols = [lab for a, lab in ARMS if a in runs and key in runs[a]]
    if "torture" in key:
        print("| threads | published | model 3 | (ratio) | (±30 %) | " + " | ".join(cols[1:]) + " |")
    else:
        print("| threads | published | model 3 | ratio | ±30 % | " + " | ".join(cols[1:]) + " |")
    print("|---:|---:|---:|---:|---|" + "---:|" * (len(cols) - 1))
    for t, (pub, sim, ratio, band) in sorted(c["rows"].items()):
        cells = []
        for a, lab in ARMS[1:]:
            if a in runs and key in runs[a]:
                r = runs[a][key]["rows"].get(t)
                if "torture" in key:
                    cells.append(r[1] if r else "–")
                else:
                    cells.append(f"{r[2]}{'' if r[3]=='yes' else '*'}" if r else "–")
        print(f"| {t} | {pub} | {sim} | {ratio} | {band} | " + " | ".join(cells) + " |")
    if "torture" in key:
        print()
        for a, lab in ARMS:
            if a in runs and key in runs[a]:
                print(f"- {lab}: {runs[a][key]['shape']}")
        print()
        continue
    n = {a: sum(1 for r in runs[a][key]["rows"].values() if r[3] == "yes") for a, _ in ARMS if a in runs and key in runs[a]}
    tot = len(c["rows"])
    print("| within ±30 % | | | | " + f"{n['default']} of {tot}" + " | " + " | ".join(f"{n[a]} of {tot}" for a, _ in ARMS[1:] if a in n) + " |")
    print()
    for a, lab in ARMS:
        if a in runs and key in runs[a]:
            print(f"- {lab}: {runs[a][key]['shape']}")
    print()

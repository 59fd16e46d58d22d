#!/usr/bin/env python3
"""Measures the gate's power on a real run: how often a known drop in safe success is FAILED.

Usage: python3 scripts/gate_power.py CANDIDATE_RUN BASELINE_RUN [--drop 0.10] [--draws 20]
                                      [--strategies C,D] [--bin target/release/compaction-eval]

CANDIDATE_RUN and BASELINE_RUN are two run folders of the same configuration with different seeds
(`run --seed 1`), so the comparison carries the real seed-to-seed noise. For each draw, the script
copies CANDIDATE_RUN, turns `--drop` × (cells of the strategy × destination) successful cells of each
listed strategy into failures (chosen at random, seeded by the draw number), runs `gate --baseline`
and reads each `safe_success` comparison's verdict. It prints, per strategy × destination, how many
draws were FAILED, INCONCLUSIVE or held, and per strategy in how many draws at least one of its
comparisons FAILED. Only reads the two folders; writes a scratch copy under the system temp folder.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("candidate")
    ap.add_argument("baseline")
    ap.add_argument("--drop", type=float, default=0.10)
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--strategies", default="C,D")
    ap.add_argument("--bin", default="target/release/compaction-eval")
    a = ap.parse_args()
    strategies = a.strategies.split(",")
    with open(os.path.join(a.candidate, "results.jsonl")) as f:
        base = [json.loads(line) for line in f]
    models = sorted({r["model"] for r in base})
    verdicts = {}
    scratch = os.path.join(tempfile.gettempdir(), "compaction-eval-gate-power")
    for d in range(a.draws):
        rs = [json.loads(json.dumps(r)) for r in base]
        rnd = random.Random(1000 + d)
        for s in strategies:
            for m in models:
                cells = [i for i, r in enumerate(rs) if r.get("strategy") == s and r.get("model") == m]
                ok = [i for i in cells if rs[i]["metrics"]["task_success"]]
                for i in rnd.sample(ok, min(len(ok), round(a.drop * len(cells)))):
                    rs[i]["metrics"]["task_success"] = False
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(a.candidate, scratch)
        for name in os.listdir(scratch):
            if name.startswith("gate"):
                os.remove(os.path.join(scratch, name))
        with open(os.path.join(scratch, "results.jsonl"), "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rs)
        out = subprocess.run([a.bin, "gate", scratch, "--baseline", a.baseline],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.match(r"^(FAILED|INCONCLUSIVE|held)\s+(\S+) · (\S+): safe_success", line)
            if m and m.group(2) in strategies:
                verdicts.setdefault((m.group(2), m.group(3)), []).append(m.group(1))
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"drop {a.drop:.2f} in safe success, {a.draws} draws")
    for (s, m), v in sorted(verdicts.items()):
        counts = ", ".join(f"{k} {v.count(k)}" for k in ("FAILED", "INCONCLUSIVE", "held"))
        print(f"  {s} · {m}: {counts}")
    for s in strategies:
        failed = sum(1 for d in range(a.draws)
                     if any(verdicts.get((s, m), ["held"] * a.draws)[d] == "FAILED" for m in models))
        print(f"  {s}: a comparison FAILED in {failed} of {a.draws} draws")


if __name__ == "__main__":
    main()

"""Generated C in batch beside the peers, from a run of the shared benchmark harness
(``../shared/bench``, its README): renders the results of ``bench_c.py`` with this folder's
``rulegen_candidate.py`` plugged in as the "Generated C in batch, side by side" section.

    cd ../shared/bench
    RG_BENCH_RESULTS=/tmp/rgbench/results python bench_c.py \\
        --models dt_d8_bin,rf100_d10_bin,xgb500_d6_bin --exporters emlearn,m2cgen,tl2cgen --flags O2 \\
        --candidate candidates/flat_forest.py --candidate /path/to/rulegen/benchmarks/rulegen_candidate.py \\
        --tag c_batch --fresh --rounds 5
    python /path/to/rulegen/benchmarks/bench_c_shared.py /tmp/rgbench/results/c_batch.jsonl \\
        --rulegen-commit $(git -C /path/to/rulegen rev-parse --short HEAD) [--write]

The harness times every library of one model round-robin in the same run (``--rounds``), so
the ratio to its ``flat_complete`` reference kernel is the figure to compare; absolute ns/row
move with the machine's load. Nothing is measured here: this only reads the JSON lines.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

TITLE = "Generated C in batch, side by side (shared harness)"
ORDER = ["rulegen", "rulegen_f32", "rulegen_f32_nested", "rulegen_rowloop", "flat_complete", "flat_naive",
         "emlearn", "m2cgen", "tl2cgen"]
LABEL = {
    "rulegen": "rulegen, double profile, `NAME_predict_batch_f`",
    "rulegen_f32": "rulegen, `precision=\"float32\"`, `NAME_predict_batch`",
    "rulegen_f32_nested": "rulegen, `precision=\"float32\"`, `form=\"nested\"`, `NAME_predict_batch`",
    "rulegen_rowloop": "rulegen, double profile, loop of `NAME_predict_f`",
    "flat_complete": "flat_complete (harness reference, 16-row blocks)",
    "flat_naive": "flat_naive (harness reference, node loop)",
}


def _ver(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:  # e.g. xgboost installed as another distribution name
        try:
            return __import__(dist.replace("scikit-learn", "sklearn")).__version__
        except ImportError:
            return "missing"


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gcc() -> str:
    try:
        out = subprocess.run(["gcc", "--version"], check=False, capture_output=True, text=True).stdout
        return out.splitlines()[0].strip()
    except (OSError, IndexError):
        return "gcc ?"


def _exact(r: dict) -> str:
    mm = r.get("label_mismatch")
    if r.get("max_abs_diff") is None:
        return f"labels only: {mm:,} of {r['n_rows']:,} differ" if mm is not None else "-"
    d = r["max_abs_diff"]
    head = "yes (max abs diff 0)" if d == 0 else f"max abs diff {d:.1e}"
    return head + ("" if not mm else f", {mm} labels differ")


def _ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def render(rows: list[dict], commit: str) -> str:
    last: dict[tuple, dict] = {}
    models: list[str] = []
    for r in rows:
        last[(r["model"], r["exporter"])] = r
        if r["model"] not in models:
            models.append(r["model"])
    flags = sorted({r.get("flags") for r in rows if r.get("flags")})
    rounds = max((r.get("rounds") or 0 for r in rows), default=0)
    out = ["| model | implementation | batch ns/row | ratio to flat_complete | single-row ns | exact |",
           "|---|---|---:|---:|---:|---|"]
    for m in models:
        ref = last.get((m, "flat_complete"), {}).get("batch_ns_row")
        names = sorted({e for (mm, e) in last if mm == m},
                       key=lambda e: (ORDER.index(e) if e in ORDER else len(ORDER), e))
        for e in names:
            r = last[(m, e)]
            label = LABEL.get(e, e)
            if r.get("status") != "ok":
                why = (r.get("error") or r.get("status") or "").replace("|", "/").replace("\n", " ")[:90]
                out.append(f"| {m} | {label} | {r.get('status')} | - | - | {why} |")
                continue
            ratio = f"{r['batch_ns_row'] / ref:.2f}" if ref else "-"
            out.append(f"| {m} | {label} | {_ns(r['batch_ns_row'])} | {ratio} | "
                       f"{r['single_ns']:,.0f} | {_exact(r)} |")
    n_rows = next((r.get("n_rows") for r in rows if r.get("n_rows")), None)
    timer = next((r.get("timer_overhead_ns") for r in rows if r.get("timer_overhead_ns")), None)
    head = (f"{_cpu()}, {platform.machine()}, {_ncpu()} cores, "
            f"{_gcc()} `-{'/-'.join(flags)}`, Python {platform.python_version()}; scikit-learn "
            f"{_ver('scikit-learn')}, xgboost {_ver('xgboost')}, emlearn {_ver('emlearn')}, m2cgen "
            f"{_ver('m2cgen')}, tl2cgen {_ver('tl2cgen')} (treelite {_ver('treelite')}); rulegen at "
            f"{commit}. {n_rows:,} test rows x 20 float32 features (`syn_bin`), single thread; "
            f"batch = median ns/row over {rounds} round-robin rounds x 3 passes; single-row = median "
            f"of 5,000 individually timed calls (timer overhead about {timer} ns included). Exact: "
            "outputs against the original model's predict_proba (emlearn returns a class label only). "
            "Commands: `cd ../shared/bench && RG_BENCH_RESULTS=/tmp/rgbench/results python bench_c.py "
            "--models dt_d8_bin,rf100_d10_bin,xgb500_d6_bin --exporters emlearn,m2cgen,tl2cgen "
            "--flags O2 --candidate candidates/flat_forest.py --candidate "
            "/path/to/rulegen/benchmarks/rulegen_candidate.py --tag c_batch --fresh --rounds 5`, then "
            "`python benchmarks/bench_c_shared.py /tmp/rgbench/results/c_batch.jsonl --rulegen-commit "
            f"{commit} --write`.\n")
    return head + "\n" + "\n".join(out) + "\n"


def _ncpu() -> int:
    import os
    return os.cpu_count() or 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("results", help="the harness's results/<tag>.jsonl of a bench_c.py run")
    ap.add_argument("--rulegen-commit", default="?", help="the rulegen commit the run generated C with")
    ap.add_argument("--write", action="store_true", help="put the table into docs/BENCHMARKS.md")
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.results).read_text().splitlines() if line.strip()]
    if not rows:
        print(f"no results in {args.results}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from docsection import publish

    publish(TITLE, render(rows, args.rulegen_commit), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

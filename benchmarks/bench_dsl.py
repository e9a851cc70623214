"""The rules language: parse and print time against file size, to show both are linear.

    python benchmarks/bench_dsl.py                  # 100, 300, 1000 trees + a deep chain
    python benchmarks/bench_dsl.py --trees 100 3000 --repeat 1

Models are the test fixtures' boosted ensembles (``tests/irfixtures.big_ensemble``:
depth-5 trees over 10 features, some comparisons in float32) and a degenerate chain.
Prints a markdown table with microseconds per tree node, which stays flat when the cost
is linear. Timings are the best of ``--repeat`` runs (wall clock, one thread).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from irfixtures import big_ensemble, chain

from rulegen.dsl import check, dumps, parse


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def row(label: str, model, repeat: int, with_check: bool) -> str:
    nodes = sum(len(t.nodes) for t in model.trees)
    text = dumps(model)
    assert parse(text) == model
    t_print = best(lambda: dumps(model), repeat)
    t_parse = best(lambda: parse(text), repeat)
    t_check = best(lambda: check(text), 1) if with_check else float("nan")
    return (f"| {label} | {nodes:,} | {len(text) / 1e6:.2f} | {t_parse:.3f} | {t_print:.3f} | "
            f"{t_check:.3f} | {1e6 * t_parse / nodes:.1f} | {1e6 * t_print / nodes:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trees", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--depth", type=int, default=2500, help="chain depth (0 to skip)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-check", action="store_true", help="do not time check()")
    args = ap.parse_args()
    print(f"Python {platform.python_version()}, {platform.machine()}, "
          f"best of {args.repeat}\n")
    print("| model | nodes | MB | parse s | print s | check s | parse µs/node | print µs/node |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.trees:
        print(row(f"{n} trees", big_ensemble(n), args.repeat, not args.no_check), flush=True)
    if args.depth:
        print(row(f"chain, depth {args.depth}", chain(args.depth), args.repeat,
                  not args.no_check), flush=True)


if __name__ == "__main__":
    main()

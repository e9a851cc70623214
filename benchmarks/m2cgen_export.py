"""m2cgen's code for the shared harness's live models, for the benchmarks beside m2cgen.

m2cgen is installed only in the harness's virtual environment (``--m2cgen-python``), where
``models.get_model(name)`` (``../shared/bench``) loads the live estimator from the cache; one
run of that interpreter exports every job. m2cgen recurses once per tree level (and per
ensemble member), so it runs in a thread with a 1 GB stack; an exception there fails the run.
"""

from __future__ import annotations

import json
import subprocess

_SCRIPT = r"""
import json, os, sys, threading
spec = json.loads(sys.argv[1])
os.environ["RG_BENCH_CACHE"] = spec["cache"]
sys.path.insert(0, spec["bench_dir"])
import m2cgen, models
sys.setrecursionlimit(1_000_000)
threading.stack_size(1024 * 1024 * 1024)
failed = []
def run():
    try:
        for job in spec["jobs"]:
            export = getattr(m2cgen, "export_to_" + job["language"])
            code = export(models.get_model(job["model"]).model, **job["options"])
            with open(job["out"], "w") as f:
                f.write(job["head"] + code)
    except BaseException as e:
        failed.append(repr(e))
t = threading.Thread(target=run)
t.start()
t.join()
if failed:
    sys.exit("m2cgen export failed: " + failed[0])
print(m2cgen.__version__)
"""


def job(model: str, language: str, out, head: str = "", **options) -> dict:
    """One export: ``m2cgen.export_to_<language>(model, **options)``, ``head`` + the code to ``out``."""
    return {"model": model, "language": language, "out": str(out), "head": head, "options": options}


def export(python: str, bench_dir: str, cache: str, jobs: list[dict]) -> str:
    """Run every job in ``python`` (the interpreter with m2cgen); m2cgen's version."""
    spec = json.dumps({"bench_dir": str(bench_dir), "cache": str(cache), "jobs": jobs})
    proc = subprocess.run([python, "-c", _SCRIPT, spec], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "m2cgen export failed")
    return proc.stdout.strip()

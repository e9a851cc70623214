"""Firmware size on a Cortex-M4: text / data / bss of rulegen's generated C per model, beside
emlearn's C for the same scikit-learn CART and forest, all compiled with the same flags.

    python benchmarks/bench_firmware.py [--precision float64 --precision float32] [--write]

Models (tests/test_c_cortex_m4.py's, fixed seeds): scikit-learn CART depth 8, a 10-tree random
forest (3 classes), XGBoost 100 rounds depth 6 (binary), on 2,000 synthetic float32 rows of 20
features. Sizes are of the model's own objects (``arm-none-eabi-size``; text holds code and
constants, so flash is text + data and static RAM data + bss), from
``arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os`` (rulegen's
with ``-std=c99 -Wall -Wextra -Werror -pedantic``). Library code a model calls (libgcc's double
helpers, newlib's exp/expf) is not counted: the symbols are listed.

rulegen's profiles: ``float64`` is the generator's default (double inputs and sums);
``float32`` passes ``precision="float32"`` to ``rulegen.generate``, and is reported as refused
when the generator does not take it. emlearn (when importable: install it in a virtual
environment, e.g. ``python3 -m venv --system-site-packages /tmp/fwvenv && /tmp/fwvenv/bin/pip
install emlearn``, then run this script with that python) is converted with
``method="inline", dtype="float"``: its default majority vote (class only) and ``leaf_bits=8``
(class proportions in 8 bits); its code is compiled with the same ARM flags and -Os under
``-std=c99`` alone (it does not build under -Wextra -Werror: unused parameters).
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent)]

from run_arm import (
    ARM_FLAGS,
    _run,
    arm_size,
    have_arm,
    toolchain_version,
    undefined_symbols,
)
from test_c_cortex_m4 import fit_estimators, to_ir

import rulegen
from rulegen.errors import RulegenError

TITLE = "Firmware size on a Cortex-M4"
LABELS = {"cart8": "CART depth 8 (scikit-learn)", "forest10": "random forest, 10 trees (scikit-learn)",
          "xgb100": "XGBoost, 100 rounds depth 6"}


def forms(files: dict[str, str]) -> str:
    found: dict[str, int] = {}
    for text in files.values():
        for m in re.finditer(r"^/\* tree \d+: [^\n]*?, (nested|goto|blend|table) form", text, re.MULTILINE):
            found[m.group(1)] = found.get(m.group(1), 0) + 1
    return ", ".join(f"{k}" if len(found) == 1 else f"{k} {v}" for k, v in sorted(found.items()))


def helpers(symbols: set[str]) -> str:
    libm = sorted(s for s in symbols if not s.startswith("__"))
    aeabi = sorted(s for s in symbols if s.startswith("__aeabi_"))
    dbl = [s for s in aeabi if s.startswith("__aeabi_d") or s in ("__aeabi_f2d", "__aeabi_i2d")]
    parts = []
    if dbl:
        parts.append(f"{len(dbl)} double helpers")
    other = [s for s in aeabi if s not in dbl]
    if other:
        parts.append(", ".join(other))
    if libm:
        parts.append(", ".join(libm))
    return "; ".join(parts) or "none"


def rulegen_row(key: str, label: str, model, precision: str, opt: str):
    options = {} if precision == "float64" else {"precision": precision}
    try:
        files = rulegen.generate(model, "c", name=key, **options)
    except RulegenError as e:
        return None, f"rulegen {precision}: refused by the generator ({e})"
    size = arm_size(files, key, opt=opt)
    syms = undefined_symbols(files, key, opt=opt)
    return (f"| {label} | rulegen C ({forms(files)} form) | {precision} | {size['text']:,} | "
            f"{size['data']:,} | {size['bss']:,} | {size['text'] + size['data']:,} | {helpers(syms)} |"), None


def emlearn_size(est, key: str, opt: str, leaf_bits) -> tuple[dict, set[str]]:
    import emlearn

    kwargs = {} if leaf_bits is None else {"leaf_bits": leaf_bits}
    conv = emlearn.convert(est, method="inline", dtype="float", **kwargs)
    with tempfile.TemporaryDirectory(prefix="rulegen_emlearn_") as tmp:
        work = Path(tmp)
        conv.save(name=f"em_{key}", file=str(work / f"em_{key}.h"))
        (work / "em.c").write_text(f'#include "em_{key}.h"\n')
        _run(["arm-none-eabi-gcc", *ARM_FLAGS, "-std=c99", opt, "-I", str(Path(emlearn.__file__).parent),
              "-c", "em.c", "-o", "em.o"], work)
        out = _run(["arm-none-eabi-size", "-B", "em.o"], work).splitlines()[1].split()
        syms = {line.split()[1] for line in _run(["arm-none-eabi-nm", "-u", "em.o"], work).splitlines()
                if len(line.split()) == 2}
    return {"text": int(out[0]), "data": int(out[1]), "bss": int(out[2])}, syms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--precision", action="append", choices=["float64", "float32"],
                    help="rulegen's C profile(s) (default: both; one the generator refuses is noted)")
    ap.add_argument("--opt", default="-Os")
    ap.add_argument("--write", action="store_true", help="put the table into docs/BENCHMARKS.md")
    args = ap.parse_args()
    if not have_arm():
        print("needs arm-none-eabi-gcc with newlib (and binutils)", file=sys.stderr)
        return 2
    precisions = args.precision or ["float64", "float32"]
    estimators = fit_estimators()
    try:
        import emlearn
        em_version = getattr(emlearn, "__version__", "?")
    except ImportError:
        em_version = None
    rows = ["| model | code | precision | text | data | bss | flash (text+data) | calls |",
            "|---|---|---|---|---|---|---|---|"]
    notes = []
    for key, est in estimators.items():
        model = to_ir(key, est)
        label = f"{LABELS[key]}, {sum(len(t.nodes) for t in model.trees):,} nodes"
        for precision in precisions:
            row, note = rulegen_row(key, label, model, precision, args.opt)
            if row:
                rows.append(row)
            if note and note not in notes:
                notes.append(note)
            print(row or note, file=sys.stderr, flush=True)
        if em_version and not key.startswith("xgb"):
            for leaf_bits, what in ((None, "majority vote"), (8, "leaf_bits=8")):
                size, syms = emlearn_size(est, key, args.opt, leaf_bits)
                rows.append(f"| {label} | emlearn {em_version} inline ({what}) | float32 | "
                            f"{size['text']:,} | {size['data']:,} | {size['bss']:,} | "
                            f"{size['text'] + size['data']:,} | {helpers(syms)} |")
                print(rows[-1], file=sys.stderr, flush=True)
    if not em_version:
        notes.append("emlearn is not importable here: its rows are missing")
    head = (f"{toolchain_version()}, `{' '.join(ARM_FLAGS)} {args.opt}`; {platform.machine()} host. "
            "Bytes of each model's own objects (text is code and constants); `calls` are the "
            "library functions and compiler helpers the model code needs, not counted. "
            f"Command: `python benchmarks/bench_firmware.py{' --opt ' + args.opt if args.opt != '-Os' else ''}`"
            " (with emlearn installed).\n")
    text = head + "\n" + "\n".join(rows) + ("\n\n" + "\n".join(f"- {n}" for n in notes) if notes else "") + "\n"
    from docsection import publish

    publish(TITLE, text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

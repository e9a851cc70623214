"""Executor for generated C (the tests' name for :mod:`rulegen.verify.c`, which `rulegen
verify` uses too): compile the files with ``cc`` and run them on rows, exactly.

    from run_c import run_c, have_cc
    res = run_c(CTarget().generate(model, name="m"), "m", X)
    res["raw"], res["out"], res["class"], res["out_f"]
"""

from rulegen.verify.c import STRICT, BuildError, build, cc_path, have_cc, run_c  # noqa: F401

CompileError = BuildError

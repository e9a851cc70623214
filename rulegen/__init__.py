"""rulegen: compile decision trees and tree ensembles to exact, dependency-free Python, C and SQL.

The public API::

    from rulegen import load_model, save_model, generate, evaluate
    from rulegen.learn import CARTClassifier
"""

__version__ = "0.1.0"

from rulegen.errors import RulegenError  # noqa: E402
from rulegen.ir import evaluate  # noqa: E402
from rulegen.ir.serialize import dumps, loads  # noqa: E402
from rulegen.ir.validate import validate  # noqa: E402
from rulegen.modelio import load_model, save_model  # noqa: E402


def generate(model, target: str, *, name: str = "model", **options) -> dict[str, str]:
    """Generate code for ``model``: a dict of {file name: text}. See ``rulegen compile --help``."""
    from rulegen.codegen.registry import generate as _generate

    return _generate(model, target, name=name, **options)


__all__ = ["RulegenError", "dumps", "evaluate", "generate", "load_model", "loads", "save_model",
           "validate", "__version__"]

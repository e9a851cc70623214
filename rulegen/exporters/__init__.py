"""Writers of standard model files that other runtimes score (ONNX, PMML).

Unlike a target, an exporter produces a data file, not code, and the format decides what can be
said exactly: each exporter refuses (``UnsupportedFeatureError``) what its format cannot express
exactly, unless the caller asks for ``approximate``, in which case it returns notes saying what
was approximated and by how much. ``rulegen convert model -o out.<suffix>`` picks the exporter
by the output's suffix.
"""

from __future__ import annotations

import importlib

from rulegen.ir.nodes import Model

# output suffix -> module with ``export(model, *, approximate=False) -> (bytes, list[str])``
EXPORTERS: dict[str, str] = {
    ".onnx": "rulegen.exporters.onnx",
    ".pmml": "rulegen.exporters.pmml",
}


def export(model: Model, suffix: str, *, approximate: bool = False) -> tuple[bytes, list[str]]:
    """The file's bytes for ``suffix`` and the notes about anything approximated."""
    module = importlib.import_module(EXPORTERS[suffix])
    return module.export(model, approximate=approximate)

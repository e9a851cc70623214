"""What every target provides. A target is one module, one template folder and
one line in :data:`rulegen.codegen.registry.TARGETS`."""

from __future__ import annotations

from rulegen.ir.nodes import Model


class Target:
    name: str = ""
    description: str = ""
    dialects: tuple[str, ...] = ()  # SQL only

    def generate(self, model: Model, *, name: str = "model", **options) -> dict[str, str]:
        """Return {relative file name: text}. Must be deterministic: the same model and
        options give byte-identical files. Raise UnsupportedFeatureError for anything the
        target cannot express exactly."""
        raise NotImplementedError

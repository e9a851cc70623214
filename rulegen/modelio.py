"""Reading model files (format detected from the content) and writing outputs atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from rulegen.errors import ModelFormatError, RulegenError
from rulegen.ir import serialize
from rulegen.ir.nodes import Model


def detect_format(text: str) -> str:
    """'ir-json', 'xgboost-json', 'lightgbm-text', 'rules' or 'unknown', from the content."""
    head = text.lstrip()[:4096]
    if head.startswith("{"):
        if '"rulegen-ir"' in head:
            return "ir-json"
        if '"learner"' in head or '"gradient_booster"' in text[:200000]:
            return "xgboost-json"
        return "json"
    if head.startswith("tree\n") or "\nversion=v" in head[:200]:
        return "lightgbm-text"
    if head.startswith(("model", "#", "features", "rules")):
        return "rules"
    return "unknown"


def load_model(path: str | Path) -> Model:
    """Load IR JSON (other formats are recognised and reported until their importer lands)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ModelFormatError(f"{path}: no such file") from None
    except OSError as e:
        raise ModelFormatError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelFormatError(f"{path}: not a text model file (binary data; UBJSON models "
                               "are not supported yet)") from None
    kind = detect_format(text)
    if kind in ("ir-json", "json"):
        if kind == "json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict) and "format" not in data:
                raise ModelFormatError(f"{path}: JSON without a \"format\" key; expected a rulegen "
                                       "IR model ({\"format\": \"rulegen-ir\", ...})")
        return serialize.loads(text, str(path))
    if kind == "xgboost-json":
        raise ModelFormatError(f"{path}: this looks like an XGBoost model; importing XGBoost "
                               "models is not supported yet (expected rulegen IR JSON)")
    if kind == "lightgbm-text":
        raise ModelFormatError(f"{path}: this looks like a LightGBM text model; importing LightGBM "
                               "models is not supported yet (expected rulegen IR JSON)")
    raise ModelFormatError(f"{path}: not a model file rulegen reads (expected rulegen IR JSON, "
                           "which starts with '{')")


def save_model(model: Model, path: str | Path) -> None:
    write_files({Path(path): serialize.dumps(model)})


def write_files(files: dict[Path, str]) -> None:
    """Write every file or none: each goes to a temporary file beside its destination,
    and only when all are written are they renamed into place."""
    staged: list[tuple[str, Path]] = []
    try:
        for dest, text in files.items():
            dest = Path(dest)
            parent = dest.parent if str(dest.parent) else Path(".")
            if dest.is_dir():
                raise RulegenError(f"{dest}: is a directory, expected a file path")
            if not parent.is_dir():
                raise RulegenError(f"{dest}: cannot write: directory {parent} does not exist")
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=parent)
            except OSError as e:
                raise RulegenError(f"{dest}: cannot write: {e.strerror or e}") from None
            staged.append((tmp, dest))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        for tmp, dest in staged:
            os.replace(tmp, dest)
        staged = []
    except OSError as e:
        raise RulegenError(f"cannot write output: {e.strerror or e}") from None
    finally:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except OSError:
                pass

"""Reading model files (format detected from the content) and writing outputs atomically."""

from __future__ import annotations

import json
import os
import stat
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
        if '"features_info"' in text and ('"oblivious_trees"' in text or '"trees"' in text):
            return "catboost-json"
        return "json"
    if head.startswith("tree\n") or "\nversion=v" in head[:200]:
        return "lightgbm-text"
    from rulegen.dsl import looks_like_rules

    if looks_like_rules(text):
        return "rules"
    return "unknown"


def load_model(path: str | Path, *, forest: str | None = None) -> Model:
    """Load any model file rulegen reads, detecting the format from the content:
    rulegen IR JSON, a rules file, XGBoost JSON or UBJSON, or a LightGBM text model; an ONNX
    tree ensemble by its suffix ``.onnx``; or the directory a Spark ML tree model (or a
    pipeline ending in one) was saved to. ``forest`` is ``sparkml.load``'s (Spark only)."""
    path = Path(path)
    if forest is not None and not path.is_dir():
        raise ModelFormatError(f"{path}: --forest applies to a Spark ML model directory only")
    if path.is_dir():
        from rulegen.importers import sparkml

        if sparkml.is_model_dir(path):
            return sparkml.load(path, forest=forest or "probability")
        raise ModelFormatError(f"{path}: is a directory, expected a model file (or a Spark ML "
                               "model directory, which holds metadata/part-00000)")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ModelFormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ModelFormatError(f"{path}: is a directory, expected a model file") from None
    except OSError as e:
        raise ModelFormatError(f"{path}: cannot read: {e.strerror or e}") from None
    if raw[:4] == b"CBM1":  # CatBoost's native binary model
        from rulegen.importers import catboost

        return catboost.load(path)
    if path.suffix.lower() == ".onnx":  # binary protobuf: nothing in the content says "ONNX"
        from rulegen.importers import onnx

        return onnx.loads(raw, source=str(path))
    if _is_ubjson(raw):
        from rulegen.importers import xgboost

        return xgboost.loads(raw, source=str(path))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelFormatError(f"{path}: binary data that is not an XGBoost UBJSON model; "
                               "expected rulegen IR JSON, XGBoost JSON/UBJSON or LightGBM text") from None
    kind = detect_format(text)
    if kind == "rules":
        from rulegen import dsl

        return dsl.parse(text, source=str(path))
    if kind == "xgboost-json":
        from rulegen.importers import xgboost

        return xgboost.loads(raw, source=str(path))
    if kind == "catboost-json":
        from rulegen.importers import catboost

        return catboost.loads(raw, source=str(path))
    if kind == "lightgbm-text":
        from rulegen.importers import lightgbm

        return lightgbm.loads(text, source=str(path))
    if kind in ("ir-json", "json"):
        if kind == "json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict) and "format" not in data:
                raise ModelFormatError(f"{path}: JSON that is neither a rulegen IR model (\"format\": "
                                       "\"rulegen-ir\") nor an XGBoost model (\"learner\")")
        return serialize.loads(text, str(path))
    raise ModelFormatError(f"{path}: not a model file rulegen reads (expected rulegen IR JSON, "
                           "a rules file starting 'rulegen rules 1', XGBoost JSON/UBJSON or a "
                           "LightGBM text model)")


def _is_ubjson(raw: bytes) -> bool:
    """UBJSON objects start with '{' followed by a type marker, where JSON has a quote or space."""
    return raw[:1] == b"{" and raw[1:2] not in (b'"', b"}", b" ", b"\n", b"\r", b"\t", b"")


def save_model(model: Model, path: str | Path, *, flat: bool = False,
               approximate: bool = False) -> list[str]:
    """IR JSON, the rules language when the path ends in ``.rules``, or a standard model file
    when its suffix is an exporter's (``rulegen.exporters``); returns the exporter's notes."""
    from rulegen.exporters import EXPORTERS, export

    path = Path(path)
    if path.suffix.lower() in EXPORTERS:
        data, notes = export(model, path.suffix.lower(), approximate=approximate)
        write_files({path: data})
        return notes
    if path.suffix == ".rules":
        from rulegen import dsl

        text = dsl.dumps(model, flat=flat)
    else:
        text = serialize.dumps(model)
    write_files({path: text})
    return []


def write_files(files: dict[Path, str | bytes]) -> None:
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
            if isinstance(text, bytes):
                with os.fdopen(fd, "wb") as fh:
                    fh.write(text)
            else:
                with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                    fh.write(text)
            # mkstemp creates 0600; the file gets what a plain open() would have given it:
            # the mode of the file it replaces, else 0666 less the umask
            os.chmod(tmp, _mode_for(dest))
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


def _mode_for(dest: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(dest).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask

"""The Java target: one class (Java 11 source level, no dependencies), exact bit for bit.

The class always holds the model as tables (:mod:`rulegen.targets.java.table`) that one
loop walks: a Java method stops at 64 KB of bytecode and a class at 65,535 constants, so
branchy code would have to be split for any big tree or ensemble; tables, decoded from
string literals at class load, compile in constant time for any depth and size, and one
form means one thing to test.

Exactness notes (docs/IR.md is the specification, docs/targets/java.md the summary):

- Every comparison is ``x <= bound`` in double: float32 tests take the exact float64 bound
  of :func:`rulegen.codegen.lower.float64_bound`, and ``x < b`` becomes ``x <= nextDown(b)``.
- Java never contracts ``a + b * c`` into an FMA (only ``Math.fma`` fuses), so oblique sums
  and blend weights round as the IR says. The class is ``strictfp``: on Java 17+ every
  class is, and on a Java 11 JVM it rules out x87 extended exponents on old 32-bit x86.
- float32 models accumulate as ``(float) a + (float) c``: Java float arithmetic rounds each
  operation to float, and the double holding it represents it exactly.
- Links call ``Math.exp`` (float32 links: ``(float) Math.exp(x)``, as Java has no expf). On
  1e6 inputs it differs from glibc's exp on 0.25% (by 1 ulp), where ``StrictMath.exp``
  (fdlibm, the same bits on every JVM) differs on 9.8%; HotSpot runs one exp stub in the
  interpreter and compiled code, so a result does not change as a program warms up. Outputs
  after a link may differ from the evaluator's in the last place(s): ``EXP_ULPS`` is the
  bound tests/test_target_java.py measures, and every generated header states it.
"""

from __future__ import annotations

import textwrap

import numpy as np

import rulegen
from rulegen.codegen import lower
from rulegen.codegen.jinja import render
from rulegen.codegen.literals import java_comment, java_identifier
from rulegen.errors import RulegenError
from rulegen.ir.nodes import Model
from rulegen.targets.base import Target
from rulegen.targets.java.table import Tables, encode

# Measured by tests/test_target_java.py (test_exp_difference_is_bounded) against glibc 2.36 on
# OpenJDK 17 (x86-64): float64 sigmoid/softmax outputs within 2 ulps, float32 ones within 1.
EXP_ULPS = {"float64": 2, "float32": 1}
EXP_NOTE = ("exp is Java's Math.exp, not the C library's: raw scores are exact, and "
            "outputs after the {link} link may differ from rulegen's evaluator (glibc) by at "
            "most {ulps} {dtype} ulp(s) on rows where the two exp functions disagree")
DOC_FEATURES, DOC_CATEGORIES = 50, 10


class JavaTarget(Target):
    name = "java"
    description = "one Java 11 class, no dependencies"

    def generate(self, model: Model, *, name: str = "model", comments: bool = True, **options) -> dict[str, str]:
        if options:
            raise RulegenError(f"unknown option(s) for the java target: {', '.join(sorted(options))}")
        cls = java_identifier(str(name))
        return {f"{cls}.java": render("java/model.java.j2", self.context(model, cls, comments))}

    def context(self, model: Model, cls: str, comments: bool = True) -> dict:
        m = model
        f32 = m.dtype == "float32"
        classifier = m.target.task == "classification"
        tables = Tables(m)
        ints = dict(tables.ints, NCAT=[len(f.categories) for f in m.features])
        doubles = dict(tables.doubles, BASE=[float(lower_round(b, m.dtype)) for b in m.base_score])
        divide = m.aggregation in ("mean", "vote")
        if divide:
            d = len(m.trees) if m.aggregation == "mean" else lower.total_weight(m)
            doubles["DIV"] = [lower_round(d, m.dtype)]
        sections = [(k, "ints", "i", v) for k, v in ints.items()]
        sections += [(k, "doubles", "d", v) for k, v in doubles.items()]
        sections += [("FEATURES", "strings", "s", [f.name for f in m.features]),
                     ("CLASSES", "strings", "s", [str(c) for c in m.target.classes] if classifier else []),
                     ("CATEGORIES", "strings", "s", [str(c) for f in m.features for c in f.categories])]
        links = link_lines(m.link, f32)
        text = "\n".join(links)
        return {
            "cls": cls, "version": rulegen.__version__,
            "header": self.header(m, cls, comments),
            "n_features": len(m.features), "n_raw": m.n_raw, "n_trees": len(m.trees),
            "n_outputs": len(m.target.classes) if classifier else m.n_raw,
            "n_classes": len(m.target.classes), "classifier": classifier, "dtype": m.dtype,
            "binary": classifier and m.n_raw == 1 and len(m.target.classes) == 2,
            "f32": f32, "vote": m.aggregation == "vote", "divide": divide,
            "int_names": list(ints), "double_names": list(doubles),
            "data": encode([(kind, values) for _n, _r, kind, values in sections]),
            "sections": [(n, reader) for n, reader, _k, _v in sections],
            "link_lines": links, "exp": "exp(" in text, "expf": "expf(" in text,
        }

    @staticmethod
    def header(m: Model, cls: str, comments: bool) -> list[str]:
        t, p = m.target, m.provenance
        classifier = t.task == "classification"
        about = [p.algorithm, f"trained with {p.library}" if p.library else "",
                 f"{p.n_samples} samples" if p.n_samples is not None else ""]
        lines = [f"{'Classifier' if classifier else 'Regressor'} for {t.name!r}: {len(m.trees)} tree(s), "
                 f"aggregation {m.aggregation}, link {m.link}, accumulated in {m.dtype}."]
        if any(about):
            lines.append("Model: " + ", ".join(a for a in about if a) + ".")
        if p.params:
            lines.append("Parameters: " + ", ".join(f"{k}={v!r}" for k, v in p.params) + ".")
        lines += [
            "",
            "Java 11 or later; no dependencies; static methods only, reentrant and thread-safe:",
            f"  {cls}.predict(double[] x)     {'class probabilities' if classifier else 'the predicted values'}",
        ]
        if classifier:
            lines += [f"  {cls}.predictClass(x)         index of the most probable class ({cls}.classes())",
                      f"  {cls}.predictLabel(x)         its label"]
        lines += [f"  {cls}.predictRaw(x)           scores before the link",
                  f"  {cls}.predictBatch(double[][] rows), and each call with a Double[] row (null = missing)",
                  "x holds the features in order (features()); NaN is missing. A categorical feature takes",
                  "its category code (an index into categories(j)); any other number is an unseen category.",
                  ""]
        lines += textwrap.wrap("Results equal rulegen's reference evaluator bit for bit" + (
            "." if m.link == "identity" else ", except: " + EXP_NOTE.format(
                link=m.link, ulps=EXP_ULPS[m.dtype], dtype=m.dtype) + "."), 92)
        lines += ["The model is held as tables (node arrays) decoded from the string literals below when",
                  "the class loads; rulegen/targets/java/table.py documents their layout."]
        if comments:
            lines += ["", "Features:"]
            for j, f in enumerate(m.features[:DOC_FEATURES]):
                text = f"  [{j}] {f.name!r} ({f.kind})"
                if f.categories:
                    codes = ", ".join(f"{k} = {c!r}" for k, c in enumerate(f.categories[:DOC_CATEGORIES]))
                    text += f": {codes}" + (", ..." if len(f.categories) > DOC_CATEGORIES else "")
                lines.append(text)
            if len(m.features) > DOC_FEATURES:
                lines.append(f"  ... and {len(m.features) - DOC_FEATURES} more (features())")
            if classifier:
                lines.append("Classes: " + ", ".join(f"[{k}] {c!r}" for k, c in enumerate(t.classes[:DOC_FEATURES])))
        return [java_comment(line) for line in lines]


def lower_round(v: float, dtype: str) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(v)) if dtype == "float32" else float(v)


def link_lines(link: str, f32: bool) -> list[str]:
    """predict's statements from ``raw`` to ``out`` (docs/IR.md; XGBoost's float link for f32)."""
    loop = "for (int k = 0; k < N_RAW; k++) "
    if link == "identity":
        return ["System.arraycopy(raw, 0, out, 0, N_RAW);"]
    if link == "exp":
        return [loop + ("out[k] = expf((float) raw[k]);" if f32 else "out[k] = exp(raw[k]);")]
    if link == "sigmoid" and f32:  # 1 / (expf(min(-x, 88.7f)) + 1); std::min keeps a NaN -x
        return [loop + "{", "    float v = -(float) raw[k];", "    if (88.7f < v) v = 88.7f;",
                "    out[k] = 1.0f / (expf(v) + 1.0f);", "}"]
    if link == "sigmoid":
        return [loop + "out[k] = 1.0 / (1.0 + exp(-raw[k]));"]
    if f32:  # softmax: fmaxf maximum (NaN passed over), float terms summed in double
        return ["float m = (float) raw[0];",
                "for (int k = 1; k < N_RAW; k++) if (m != m || (float) raw[k] > m) m = (float) raw[k];",
                "double s = 0.0;",
                loop + "{", "    float e = expf((float) raw[k] - m);", "    out[k] = e;",
                "    s = s + e;", "}",
                "float fs = (float) s;",
                loop + "out[k] = (float) out[k] / fs;"]
    return ["double m = raw[0];",  # numpy's max: NaN if any score is NaN
            "for (int k = 1; k < N_RAW; k++) if (raw[k] > m || raw[k] != raw[k]) m = raw[k];",
            loop + "out[k] = exp(raw[k] - m);",
            "double s = out[0];",
            "for (int k = 1; k < N_RAW; k++) s = s + out[k];",
            loop + "out[k] = out[k] / s;"]

"""`rulegen show`: the page rendered in a real browser (headless Chromium, from the project's
set-up), read back as the DOM after its script ran: nothing on the console, the trees and nodes
expected, the highlighted path the evaluator's, a search that opens the way to its matches,
user text that stays text. Screenshots go to $RULEGEN_ARTIFACTS (default: the test's tmp dir)."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import irfixtures as F
import numpy as np
import pytest

from rulegen.cli import main
from rulegen.ir.nodes import Feature
from rulegen.show import page
from rulegen.verify.explain import walk

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium (.ci/setup installs Debian's chromium)")
ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--enable-logging=stderr", "--v=0"]  # the page's console messages on stderr, as CONSOLE lines


class _Dom(HTMLParser):
    """The node rows, the tree options and the error box of a dumped page."""

    def __init__(self):
        super().__init__()
        self.nodes: list[dict] = []
        self.options = 0
        self.errors_hidden = None
        self.errors_text = ""
        self.ready = False
        self.attrs_seen: list[dict] = []
        self._in_errors = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.attrs_seen.append(a)
        if tag == "body" and a.get("data-ready") == "1":
            self.ready = True
        if tag == "div" and "node" in (a.get("class") or "").split():
            self.nodes.append({"id": int(a["data-node"]), "depth": int(a["data-depth"]),
                               "class": a["class"].split(), "text": ""})
        if tag == "option":
            self.options += 1
        if tag == "div" and a.get("id") == "errors":
            self.errors_hidden = "hidden" in a
            self._in_errors = True

    def handle_endtag(self, tag):
        if tag == "div":
            self._in_errors = False

    def handle_data(self, data):
        if self._in_errors:
            self.errors_text += data
        if self.nodes:
            self.nodes[-1]["text"] += data


def render(tmp_path, html: str, name: str, fragment: str = "", shot: bool = False) -> _Dom:
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    url = path.as_uri() + (f"#{fragment}" if fragment else "")
    out = subprocess.run([BROWSER, *FLAGS, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    console = [line for line in out.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console[:5]  # no error, warning or log from the page at all
    dom = _Dom()
    dom.feed(out.stdout)
    dom.raw = out.stdout
    assert dom.ready, "the page's script did not finish"
    assert dom.errors_hidden and not dom.errors_text.strip(), dom.errors_text
    if shot:
        folder = Path(os.environ.get("RULEGEN_ARTIFACTS", tmp_path))
        folder.mkdir(parents=True, exist_ok=True)
        png = folder / f"show_{name}.png"
        subprocess.run([BROWSER, *FLAGS, f"--screenshot={png}", "--window-size=1280,900", url],
                       capture_output=True, timeout=120, check=True)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return dom


def _path(model, x, t: int) -> list[int]:
    return [s[0] for s in walk(model, np.asarray(x, dtype=np.float64).reshape(1, -1), t)]


@pytest.mark.parametrize("name", ["every_construct", "big_ensemble", "chain"])
def test_page_renders_and_highlights_the_evaluators_path(tmp_path, name):
    model = {"every_construct": F.every_construct, "big_ensemble": lambda: F.big_ensemble(40),
             "chain": lambda: F.chain(2500)}[name]()
    X = F.probe_rows(model, n_random=20)
    x = X[len(X) // 3] if name != "chain" else np.full(3, 1e9)  # to the chain's last leaf
    t = len(model.trees) - 1
    dom = render(tmp_path, page(model, x, title=name), name, f"tree={t}", shot=True)
    assert dom.options == len(model.trees)
    want = _path(model, x, t)
    assert [n["id"] for n in dom.nodes if "path" in n["class"]] == want
    assert dom.nodes[0]["id"] == 0 and dom.nodes[0]["depth"] == 0
    shown = {n["id"] for n in dom.nodes}
    assert set(want) <= shown  # the path is open however deep it goes
    if name == "chain":
        assert len(want) == 2501
    else:  # the top levels are open, deeper splits closed
        assert max(n["depth"] for n in dom.nodes if "path" not in n["class"]) <= 4


def test_search_opens_the_way_to_every_match(tmp_path):
    model = F.big_ensemble(20)
    data = page(model, None, title="s")
    nodes = json.loads(re.search(r'id="model">(.*?)</script>', data, re.S).group(1))["trees"][5]["nodes"]
    want = {i for i, n in enumerate(nodes) if "x3" in (n.get("t") or n.get("v"))}
    assert want
    dom = render(tmp_path, data, "search", "tree=5&search=x3")
    assert {n["id"] for n in dom.nodes if "match" in n["class"]} == want
    assert all("x3" in n["text"] for n in dom.nodes if "match" in n["class"])


def test_user_text_stays_text(tmp_path):
    """A feature name and a title that try to close the script and open markup are shown as
    the text they are: the page's summary lists the name, escaped, and nothing runs."""
    model = F.hostile_model()
    evil = '</script><script>document.body.dataset.pwned = "1"</script><b onmouseover=alert(1)>&amp;'
    used = sorted({n.test.feature for t in model.trees for n in t.nodes if hasattr(n, "test")})[0]
    feats = list(model.features)
    feats[used] = Feature(evil, feats[used].kind, feats[used].categories)
    model = dataclasses.replace(model, features=tuple(feats))
    dom = render(tmp_path, page(model, None, title=evil), "hostile")
    assert not any("data-pwned" in a or "onmouseover" in a for a in dom.attrs_seen)
    assert html.escape(evil, quote=False) in dom.raw  # the name as text, in the summary


def test_cli_show(tmp_path, capsys):
    iris = ROOT / "examples" / "iris.csv"
    model = tmp_path / "iris.json"
    assert main(["fit", str(iris), "--target", "class", "--param", "random_state=0", "-o", str(model)]) == 0
    out = tmp_path / "iris.html"
    assert main(["show", str(model), "-o", str(out), "--data", str(iris), "--index", "70"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text  # nothing fetched from a network
    dom = render(tmp_path, text, "iris", shot=True)
    assert any("path" in n["class"] and "leaf" in n["class"] for n in dom.nodes)
    capsys.readouterr()
    assert main(["show", str(model), "-o", str(out), "--row", "petal=1"]) == 2
    assert "no feature 'petal'" in capsys.readouterr().err
    assert main(["show", "--help"]) == 0 and "Examples:" in capsys.readouterr().out

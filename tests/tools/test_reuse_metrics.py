"""tools/reuse_metrics.py on a small fixture tree with counts worked out by hand."""

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("reuse_metrics", ROOT / "tools" / "reuse_metrics.py")
rm = importlib.util.module_from_spec(_spec)
sys.modules["reuse_metrics"] = rm  # dataclasses look their module up
_spec.loader.exec_module(rm)

CORE_FILES = {
    "__init__.py": '''
        """Fixture core."""
        from . import ops, numeric  # comment
        from .runtime import sync
    ''',  # 2 statements
    "runtime.py": '''
        """Runtime."""


        def sync():
            # a comment
            """Doc."""
            return 1
    ''',  # 2
    "ops/__init__.py": '''
        from .registry import defop
        from . import elementwise, reduction
    ''',  # 2
    "ops/registry.py": '''
        OPS = {}


        def defop(name, family, rule, lower):
            OPS[name] = (family, rule, lower)
            return name
    ''',  # 4
    "ops/elementwise.py": '''
        """Elementwise."""
        from .registry import defop


        def _unary(name, lower):
            return defop(name, "elementwise", None, lower)


        neg = _unary("neg", None)
        exp = _unary("exp", None)
        add = defop("add", "elementwise", None, None)
    ''',  # 6; ops neg, exp, add
    "ops/reduction.py": '''
        from .registry import defop

        _REDUCERS = {
            "reduce_sum": 0,
            "reduce_max": 1,
        }

        for _name in _REDUCERS:
            defop(_name, "reduction", None, None)

        for _name in ("argmax",):
            defop(f"{_name}_index", "reduction", None, None)
    ''',  # 6; ops reduce_sum, reduce_max, argmax_index
    "numeric.py": '''
        """Composites namespace."""
        from .composites.nn import relu, softmax
        from .composites.red import total as sum_all
    ''',  # 2; composites relu, softmax, sum_all
    "composites/__init__.py": "",
    "composites/nn.py": '''
        from .. import ops
        from .red import total


        def relu(x):
            return ops.add(x, x)


        def softmax(x):
            e = ops.exp(x)
            return _normalize(e)


        def _normalize(e):
            return total(e)
    ''',  # 9
    "composites/red.py": '''
        from .. import ops


        def total(x):
            return ops.reduce_sum(x)
    ''',  # 3
    "sharding.py": '''
        def shard(x):
            return x
    ''',  # 2, imported by nobody
}

FRONTEND_A = '''
    """Frontend A."""
    import lazycore as lc

    num = lc.numeric

    TABLE = {"plus": "add"}


    def softmax(x):
        return num.softmax(x)


    def negative(x):
        return lc.ops.neg(x)
'''  # 7 statements


@pytest.fixture
def repo(tmp_path):
    core = tmp_path / "packages" / "lazycore" / "src" / "lazycore"
    for rel, text in CORE_FILES.items():
        path = core / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    a = tmp_path / "packages" / "lazy_a" / "src" / "lazy_a"
    a.mkdir(parents=True)
    (a / "__init__.py").write_text(textwrap.dedent(FRONTEND_A).lstrip("\n"))
    # an alias defined in one module and imported by another
    (a / "_common.py").write_text("import lazycore as lc\nnum = lc.numeric\n")  # 2
    (a / "nn.py").write_text("from ._common import num\n\n\ndef relu(x):\n"
                             "    return num.relu(x)\n")  # 3
    b = tmp_path / "packages" / "lazy_b" / "src" / "lazy_b"
    b.mkdir(parents=True)
    (b / "__init__.py").write_text('"""Placeholder: nothing here yet."""\n')
    return tmp_path


def test_logical_lines_skip_blanks_comments_docstrings_and_join_continuations():
    src = textwrap.dedent('''
        """Module doc."""
        # comment

        x = [1,
             2]  # trailing comment
        def f():
            """Doc."""
            return x
    ''')
    assert rm.logical_lines(src) == 3


def test_core_counts(repo):
    data = rm.analyse(repo)
    core = data["core"]
    assert core["lines"] == 38
    assert core["ops"] == 6 and core["composites"] == 3
    assert core["ops_by_family"] == {"elementwise": 3, "reduction": 3}
    assert core["components"] == {"ops (primitives)": 18, "composites": 14, "runtime": 2,
                                  "sharding": 2, "other": 2}


def test_declared_ops_follow_wrappers_loops_and_fstrings(repo):
    core = rm.load_core(repo / "packages" / "lazycore" / "src" / "lazycore")
    assert sorted(core.ops) == ["add", "argmax_index", "exp", "neg", "reduce_max", "reduce_sum"]
    assert core.composites == {"relu": ("composites/nn.py", "relu"),
                               "softmax": ("composites/nn.py", "softmax"),
                               "sum_all": ("composites/red.py", "total")}


def test_frontend_reach_and_shared_fraction(repo):
    a = rm.analyse(repo)["frontends"]["lazy_a"]
    assert a["status"] == "ok" and a["lines"] == 12
    assert a["ops_direct"] == 2            # "add" (a table string) and lc.ops.neg
    assert a["ops_reached"] == 4           # + exp, reduce_sum through softmax
    assert a["composites_direct"] == 2    # softmax; relu through nn.py's imported alias
    assert a["composites_reached"] == 3   # + sum_all, used by softmax
    # infrastructure (__init__ 2, runtime 2, ops/__init__ 2, registry 4, numeric 2) = 12,
    # + the reached functions relu 2, softmax 3, _normalize 2, total 2 = 9,
    # + op families by share: elementwise 6 * 3/3, reduction 6 * 1/3 (reduce_sum) = 8
    assert a["core_lines_used"] == 29
    assert a["shared_fraction"] == round(29 / 41, 4)
    # the older measure counted every module holding a reached name whole: all but sharding
    assert a["core_lines_by_module"] == 36
    assert a["shared_fraction_by_module"] == round(36 / 48, 4)
    assert a["api_entries"] is None        # not asked for (--entries)


def test_one_name_reached_does_not_count_its_module_whole(repo):
    """A frontend calling only ``relu`` counts relu's lines, not composites/nn.py's."""
    a = repo / "packages" / "lazy_a" / "src" / "lazy_a"
    (a / "__init__.py").write_text("import lazycore as lc\n\n\ndef f(x):\n"
                                   "    return lc.numeric.relu(x)\n")  # 3
    (a / "nn.py").unlink()
    (a / "_common.py").unlink()
    report = rm.analyse(repo)["frontends"]["lazy_a"]
    assert report["composites_reached"] == 1 and report["ops"] == ["add"]
    # 12 infrastructure + relu's 2 lines + elementwise 6 * 1/3 (add) = 16
    assert report["core_lines_used"] == 16
    assert report["core_lines_by_module"] == 12 + 9 + 6  # nn.py and elementwise.py whole


def test_module_level_op_aliases_are_followed(repo):
    """``_and = ops.get("neg")`` at module level, called in a composite: neg is reached."""
    core = repo / "packages" / "lazycore" / "src" / "lazycore"
    (core / "composites" / "red.py").write_text(
        "from .. import ops\n\n_neg = ops.get(\"neg\")\n\n\n"
        "def total(x):\n    return _neg(ops.reduce_sum(x))\n")
    loaded = rm.load_core(core)
    ops_hit, _, _ = rm.reach(loaded, set(), {"sum_all"})
    assert ops_hit == {"neg", "reduce_sum"}


def test_placeholder_frontend_degrades_gracefully(repo):
    b = rm.analyse(repo)["frontends"]["lazy_b"]
    assert b["status"] == "placeholder" and b["lines"] == 0 and b["shared_fraction"] is None
    assert "| `lazy_b` | lazy_b | 0 | - | - | - | - | - | placeholder |" in rm.markdown(
        rm.analyse(repo))


def test_cli_writes_json_and_markdown(repo, tmp_path):
    out_json, out_md = tmp_path / "out" / "reuse.json", tmp_path / "out" / "reuse.md"
    assert rm.main(["--root", str(repo), "--json", str(out_json), "--markdown", str(out_md)]) == 0
    data = json.loads(out_json.read_text())
    assert data["frontends"]["lazy_a"]["core_lines_used"] == 29
    md = out_md.read_text()
    assert "| `lazy_a` | lazy_a | 12 | 29 | 71% | 75% | 4 / 6 | 3 / 3 | n/a |" in md
    assert "## The core: 38 logical lines, 6 ops, 3 composites" in md
    assert "| ops (primitives) | 18 | 47% |" in md


def test_static_op_and_composite_lists_match_the_real_registry():
    """On this repository, the static scan finds exactly the ops lazycore registers."""
    lc = pytest.importorskip("lazycore")
    core = rm.load_core(Path(lc.__file__).parent)
    # ops other tests register at run time (family "test") are not the core's
    assert set(core.ops) == {n for n, d in lc.ops.OPS.items() if d.family != "test"}
    public = {n for n in dir(lc.numeric) if not n.startswith("_")
              and callable(getattr(lc.numeric, n))}
    assert set(core.composites) == public


def test_real_repository_report_has_every_frontend():
    data = rm.analyse(ROOT)
    assert set(data["frontends"]) >= {"lazy_numpy", "lazy_torch", "lazy_tf"}
    assert data["core"]["ops"] > 50 and data["core"]["lines"] > 1000
    for f in data["frontends"].values():
        assert f["status"] in ("ok", "placeholder")
        if f["status"] == "ok":
            assert 0 < f["shared_fraction"] < 1 and f["ops_reached"] >= f["ops_direct"]

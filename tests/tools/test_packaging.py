"""Packaging: each distribution builds, ships all of its modules, and installs on its own.

The install test builds wheels from a copy of the sources, creates a fresh virtual
environment (no system site-packages), installs the core plus ONE frontend from those
wheels (dependencies pinned by constraints.txt) and runs a smoke program there.
lazy_numpy runs in CI; torch and TensorFlow need GB-sized installs and are marked slow
(run them with ``LAZYTENSOR_SLOW=1``).
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "packages"
slow = pytest.mark.skipif(not os.environ.get("LAZYTENSOR_SLOW"),
                          reason="slow: set LAZYTENSOR_SLOW=1 (installs a whole framework)")

pytest.importorskip("setuptools", reason="building wheels needs setuptools")

SMOKE = {
    "lazy_numpy": """
        import numpy as np, lazy_numpy as lnp
        a = lnp.asarray(np.arange(6.0))
        b = np.exp(-a) * 2 + a.sum()
        np.testing.assert_allclose(np.asarray(b), np.exp(-np.arange(6.0)) * 2 + 15.0)
    """,
    "lazy_torch": """
        import torch, lazy_torch as lt
        x = torch.ones(3, device=lt.device())
        y = (x * 2 + 1).sum()
        lt.mark_step()
        assert y.item() == 9.0
    """,
    "lazy_tf": """
        import numpy as np, tensorflow as tf, lazy_tf as ltf
        x = ltf.constant([1.0, 2.0, 3.0])
        y = tf.math.reduce_sum(x * 2.0)
        assert float(np.asarray(y.numpy())) == 12.0
    """,
}


def build_wheel(name: str, out: Path, work: Path) -> Path:
    """Wheel of ``packages/<name>`` built from a copy (keeps build/ out of the tree)."""
    src = work / name
    shutil.copytree(PACKAGES / name, src, ignore=shutil.ignore_patterns(
        "*.egg-info", "build", "dist", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(src)], check=True, capture_output=True, text=True)
    (wheel,) = out.glob(f"{name}-*.whl")
    return wheel


@pytest.fixture(scope="module")
def core_wheel(tmp_path_factory):
    work = tmp_path_factory.mktemp("build")
    return build_wheel("lazycore", work / "wheels", work)


def test_core_wheel_ships_every_module_and_depends_on_jax_numpy_only(core_wheel):
    with zipfile.ZipFile(core_wheel) as z:
        names = set(z.namelist())
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = z.read(meta).decode()
    src = PACKAGES / "lazycore" / "src"
    expected = {p.relative_to(src).as_posix() for p in src.rglob("*.py")
                if "__pycache__" not in p.parts and ".egg-info" not in p.as_posix()}
    assert expected <= names, sorted(expected - names)
    assert not any(n.startswith("tests/") for n in names)
    requires = {line.split()[1].split(">")[0].split("<")[0].split("=")[0].lower()
                for line in metadata.splitlines() if line.startswith("Requires-Dist:")}
    assert requires == {"jax", "jaxlib", "numpy"}


def _install_and_smoke(frontend: str, core_wheel: Path, tmp_path: Path, extra: str = "") -> str:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    shutil.copy(core_wheel, wheels)
    frontend_wheel = build_wheel(frontend, wheels, tmp_path)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, clear=True)
    python = env_dir / "bin" / "python"
    requested = [str(core_wheel), str(frontend_wheel) + (f"[{extra}]" if extra else "")]
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "-c", str(ROOT / "constraints.txt"), *requested],
                   check=True, capture_output=True, text=True)
    program = textwrap.dedent(SMOKE[frontend]) + textwrap.dedent(f"""
        import importlib.util, lazycore, {frontend}
        for mod in (lazycore, {frontend}):
            assert "site-packages" in mod.__file__, mod.__file__  # the wheel, not the repo
        others = {{"lazy_numpy": [], "lazy_torch": ["tensorflow"], "lazy_tf": ["torch"]}}
        for name in ["lazy_numpy", "lazy_torch", "lazy_tf"]:
            if name != {frontend!r}:
                assert importlib.util.find_spec(name) is None, name
        for name in others[{frontend!r}]:
            assert importlib.util.find_spec(name) is None, name
        print("smoke ok")
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([str(python), "-c", program], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_lazy_numpy_installs_alone_from_wheels_and_runs(core_wheel, tmp_path):
    assert "smoke ok" in _install_and_smoke("lazy_numpy", core_wheel, tmp_path)


@slow
def test_lazy_torch_installs_alone_from_wheels_and_runs(core_wheel, tmp_path):
    assert "smoke ok" in _install_and_smoke("lazy_torch", core_wheel, tmp_path)


@slow
@pytest.mark.parametrize("extra,distribution", [("cpu", "tensorflow-cpu"),
                                                ("tensorflow", "tensorflow")])
def test_lazy_tf_installs_alone_from_wheels_and_runs(core_wheel, tmp_path, extra, distribution):
    """Either TensorFlow package, and only that one (a user with ``tensorflow`` does not
    get ``tensorflow-cpu`` too)."""
    out = _install_and_smoke("lazy_tf", core_wheel, tmp_path, extra)
    assert "smoke ok" in out
    python = tmp_path / "venv" / "bin" / "python"
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"],
                            capture_output=True, text=True, check=True).stdout.lower()
    names = {line.split("==")[0].replace("_", "-") for line in listed.splitlines()}
    assert distribution in names
    assert ({"tensorflow", "tensorflow-cpu"} - {distribution}).isdisjoint(names)


# -- metadata: license, classifiers, URLs, pins, versions, READMEs --------------------------

FRONTENDS = ("lazy_numpy", "lazy_torch", "lazy_tf")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _pyproject(name: str) -> dict:
    import tomllib

    return tomllib.loads((PACKAGES / name / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def frontend_wheels(tmp_path_factory):
    work = tmp_path_factory.mktemp("frontends")
    return {name: build_wheel(name, work / name, work) for name in FRONTENDS}


def _metadata(wheel: Path) -> tuple[str, set]:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        return z.read(meta).decode(), names


def test_every_wheel_has_license_classifiers_urls_and_frontends_pin_the_core(
        core_wheel, frontend_wheels):
    core_version = _pyproject("lazycore")["version"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    for name, wheel in {"lazycore": core_wheel, **frontend_wheels}.items():
        metadata, files = _metadata(wheel)
        header = metadata.split("\n\n", 1)[0]
        assert "License-Expression: MIT" in header, name
        assert any(f.endswith(".dist-info/licenses/LICENSE") for f in files), name
        assert (PACKAGES / name / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
        assert "Classifier: Programming Language :: Python :: 3.11" in header, name
        assert "Classifier: Development Status ::" in header, name
        urls = dict(line[len("Project-URL: "):].split(", ", 1)
                    for line in header.splitlines() if line.startswith("Project-URL: "))
        assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls), name
        assert all(u.startswith("https://") for u in urls.values()), name
        requires = [line.split(": ", 1)[1] for line in header.splitlines()
                    if line.startswith("Requires-Dist: ")]
        if name != "lazycore":
            assert f"lazycore=={core_version}" in requires, (name, requires)
            assert _pyproject(name)["version"] == core_version
            init = (PACKAGES / name / "src" / name / "__init__.py").read_text()
            assert f'__version__ = "{core_version}"' in init, name
    tf_requires = [line for line in _metadata(frontend_wheels["lazy_tf"])[0].splitlines()
                   if line.startswith("Requires-Dist: ")]
    unconditional = [r for r in tf_requires if "extra ==" not in r]
    assert not any("tensorflow" in r for r in unconditional), unconditional
    assert any(r.startswith("Requires-Dist: tensorflow-cpu") and 'extra == "cpu"' in r
               for r in tf_requires)
    assert any(r.startswith("Requires-Dist: tensorflow<") and 'extra == "tensorflow"' in r
               for r in tf_requires)


def test_package_readmes_use_absolute_links_and_their_examples_run():
    """A README is the PyPI page: repo-relative links would be dead there."""
    for name in ("lazycore", *FRONTENDS):
        text = (PACKAGES / name / "README.md").read_text()
        links = _LINK.findall(text)
        assert links, name
        assert all(link.startswith("https://") for link in links), (name, links)
        module = {"lazycore": "lazycore", "lazy_numpy": "lazy_numpy",
                  "lazy_torch": "torch", "lazy_tf": "tensorflow"}[name]
        if name != "lazycore" and (importlib_util_find(module) is None
                                   or importlib_util_find(name) is None):
            continue
        for code in re.findall(r"```python\n(.*?)```", text, re.S):
            env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="2")
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 env=env, timeout=300)
            assert out.returncode == 0, (name, out.stderr[-2000:])


def importlib_util_find(module: str):
    import importlib.util

    return importlib.util.find_spec(module)


def test_lazy_tf_without_tensorflow_names_the_packages_to_install():
    if importlib_util_find("lazy_tf") is None:
        pytest.skip("lazy_tf is not installed here")
    program = ("import sys; sys.modules['tensorflow'] = None\n"
               "try:\n    import lazy_tf\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env=dict(os.environ, JAX_PLATFORMS="cpu"), timeout=300)
    assert "lazy_tf[cpu]" in out.stdout and "lazy_tf[tensorflow]" in out.stdout, out

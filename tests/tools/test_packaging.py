"""Packaging: each distribution builds, ships all of its modules, and installs on its own.

The install test builds wheels from a copy of the sources, creates a fresh virtual
environment (no system site-packages), installs the core plus ONE frontend from those
wheels (dependencies pinned by constraints.txt) and runs a smoke program there.
lazy_numpy runs in CI; torch and TensorFlow need GB-sized installs and are marked slow
(run them with ``LAZYTENSOR_SLOW=1``).
"""

import os
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


def _install_and_smoke(frontend: str, core_wheel: Path, tmp_path: Path) -> str:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    shutil.copy(core_wheel, wheels)
    build_wheel(frontend, wheels, tmp_path)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, clear=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "-c", str(ROOT / "constraints.txt"), *map(str, sorted(wheels.glob("*.whl")))],
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
def test_lazy_tf_installs_alone_from_wheels_and_runs(core_wheel, tmp_path):
    assert "smoke ok" in _install_and_smoke("lazy_tf", core_wheel, tmp_path)

"""nox sessions for the lazytensor monorepo.

Bare `nox` runs the five test sessions and lint. Every install is pinned with
`-c constraints.txt` so a fresh virtualenv never resolves an unpinned (e.g. CUDA) torch.
Arguments after `--` are passed to pytest: `nox -s tests_core -- -k foo`.
"""

import nox

nox.options.sessions = [
    "tests_core",
    "tests_numpy",
    "tests_torch",
    "tests_tf",
    "tests_cross",
    "lint",
]

CONSTRAINTS = ("-c", "constraints.txt")

CORE = ("-e", "packages/lazycore")
NUMPY = ("-e", "packages/lazy_numpy")
TORCH = ("-e", "packages/lazy_torch")
TF = ("-e", "packages/lazy_tf")
ALL_PACKAGES = CORE + NUMPY + TORCH + TF

TEST_DEPS = ("pytest", "hypothesis", "pytest-xdist")

TEST_ENV = {"PYTHONHASHSEED": "0", "JAX_PLATFORMS": "cpu"}


def _install(session: nox.Session, *args: str) -> None:
    session.install(*CONSTRAINTS, *args)


def _pytest(session: nox.Session, test_dir: str) -> None:
    # Exit code 5 = no tests collected: an empty test directory is not a failure.
    session.run("pytest", test_dir, *session.posargs, env=TEST_ENV, success_codes=[0, 5])


@nox.session
def tests_core(session: nox.Session) -> None:
    _install(session, *CORE, *TEST_DEPS)
    _pytest(session, "tests/core")


@nox.session
def tests_numpy(session: nox.Session) -> None:
    _install(session, *CORE, *NUMPY, *TEST_DEPS, "array-api-strict", "numexpr")
    _pytest(session, "tests/numpy")


@nox.session
def tests_torch(session: nox.Session) -> None:
    _install(session, *CORE, *TORCH, *TEST_DEPS, "expecttest")
    _pytest(session, "tests/torch")


@nox.session
def tests_tf(session: nox.Session) -> None:
    _install(session, *CORE, *TF, *TEST_DEPS)
    _pytest(session, "tests/tf")


@nox.session
def tests_cross(session: nox.Session) -> None:
    _install(session, *ALL_PACKAGES, *TEST_DEPS)
    _pytest(session, "tests/cross")


@nox.session
def lint(session: nox.Session) -> None:
    _install(session, "ruff")
    session.run("ruff", "check", ".", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    _install(session, *CORE, *TORCH)
    session.run("python", "demo/demo.py", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    _install(session, *ALL_PACKAGES, "numexpr")
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session
def reuse(session: nox.Session) -> None:
    # tools/reuse_metrics.py is expected to be stdlib-only (it inspects the source tree).
    session.run("python", "tools/reuse_metrics.py", *session.posargs)

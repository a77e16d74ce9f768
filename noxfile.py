"""nox sessions for the lazytensor monorepo.

Bare `nox` runs every tests_* session and lint. Every install is pinned with
`-c constraints.txt` so a fresh virtualenv never resolves an unpinned (e.g. CUDA) torch.
Arguments after `--` are passed to pytest: `nox -s tests_core -- -k foo`.

Under CI (``CI`` set, as on the CI machine) each session deletes its virtualenv and
scratch files when it ends: a venv with torch, TensorFlow and JAX is ~3 GB, the seven
together ~14 GB, more than a CI machine's disk may hold.
"""

import functools
import os
import shutil

import nox

nox.options.sessions = [
    "tests_core",
    "tests_numpy",
    "tests_torch",
    "tests_tf",
    "tests_integration",
    "tests_tools",
    "tests_models",
    "lint",
]

CONSTRAINTS = ("-c", "constraints.txt")

CORE = ("-e", "packages/lazycore")
NUMPY = ("-e", "packages/lazy_numpy")
TORCH = ("-e", "packages/lazy_torch")
TF = ("-e", "packages/lazy_tf[cpu]")  # the extra brings tensorflow-cpu (lazy_tf depends on no TF package)
ALL_PACKAGES = CORE + NUMPY + TORCH + TF

TEST_DEPS = ("pytest", "hypothesis", "pytest-xdist")

TEST_ENV = {"PYTHONHASHSEED": "0", "JAX_PLATFORMS": "cpu"}


PRUNE_AFTER_SESSION = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def session(func):
    """A nox session whose scratch files live in its venv, and that frees its venv in CI."""

    @functools.wraps(func)
    def run(session: nox.Session) -> None:
        scratch = os.path.abspath(session.create_tmp())  # sets TMPDIR: pytest's tmp_path, compiler caches
        session.env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(scratch, "inductor")
        try:
            func(session)
        finally:
            if PRUNE_AFTER_SESSION and session.virtualenv.location:
                shutil.rmtree(session.virtualenv.location, ignore_errors=True)

    return nox.session(run)


def _install(session: nox.Session, *args: str) -> None:
    session.install(*CONSTRAINTS, *args)


# Two pytest-xdist workers, one test file each at a time (module fixtures and a file's
# order hold): the tests are single-threaded Python and XLA compiles, so the second of CI's
# two cores would otherwise idle. Every suite passes with and without it (`-n 0` turns it off).
PARALLEL = ("-n", "2", "--dist", "loadfile")
# the slowest tests of each session in CI's log: what to trim when CI nears its 45 minutes
DURATIONS = ("--durations=15",)


def _pytest(session: nox.Session, *test_dirs: str, env: dict | None = None,
            parallel: tuple[str, ...] = PARALLEL) -> None:
    # Exit code 5 = no tests collected: an empty test directory is not a failure.
    session.run("pytest", *parallel, *DURATIONS, *test_dirs, *session.posargs,
                env={**TEST_ENV, **(env or {})}, success_codes=[0, 5])


@session
def tests_core(session: nox.Session) -> None:
    _install(session, *CORE, *TEST_DEPS)
    _pytest(session, "tests/core")


@session
def tests_numpy(session: nox.Session) -> None:
    _install(session, *CORE, *NUMPY, *TEST_DEPS, "array-api-strict", "numexpr")
    _pytest(session, "tests/numpy")


@session
def tests_torch(session: nox.Session) -> None:
    _install(session, *CORE, *TORCH, *TEST_DEPS, "expecttest")
    _pytest(session, "tests/torch")


@session
def tests_models(session: nox.Session) -> None:
    # Suites written by others: Hugging Face transformers models (tiny random-init configs,
    # built from config objects; HF_HUB_OFFLINE: nothing is downloaded) trained and
    # generating on the lazy device against eager.
    # Test by test, not file by file: one file's seven models took ~7 of its minutes on
    # one worker while the other idled (the model tests share no module state).
    _install(session, *CORE, *TORCH, *TEST_DEPS, "transformers")
    _pytest(session, "tests/models", env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
            parallel=("-n", "2", "--dist", "load"))


@session
def tests_tf(session: nox.Session) -> None:
    _install(session, *CORE, *TF, *TEST_DEPS)
    _pytest(session, "tests/tf")


def _cross(session: nox.Session) -> None:
    # one trace across frontends, and robustness (fuzzing, soak, bad input) of each
    _pytest(session, "tests/cross", "tests/robustness")


@session
def tests_cross(session: nox.Session) -> None:
    _install(session, *ALL_PACKAGES, *TEST_DEPS)
    _cross(session)


@session
def fuzz(session: nox.Session) -> None:
    """The long differential-fuzzing profile (thousands of programs per frontend)."""
    _install(session, *ALL_PACKAGES, *TEST_DEPS)
    examples = session.posargs[0] if session.posargs else "3000"
    session.run("pytest", "tests/robustness", "-k", "fuzz", env={**TEST_ENV,
                "FUZZ_EXAMPLES": examples})


@session
def soak(session: nox.Session) -> None:
    """The long soak (10000 training steps; CI runs 3000)."""
    _install(session, *CORE, *TORCH, *TEST_DEPS)
    steps = session.posargs[0] if session.posargs else "10000"
    session.run("pytest", "tests/robustness/test_soak.py", env={**TEST_ENV, "SOAK_STEPS": steps})


@session
def array_api_conformance(session: nox.Session) -> None:
    """The public Array API suite (data-apis/array-api-tests) against lazy_numpy, NumPy and
    array-api-strict: pass counts and lazy_numpy-only failures (~15 min on 2 cores; not in
    CI's list). `nox -s array_api_conformance -- --suite DIR` uses a checkout you have."""
    _install(session, *CORE, *NUMPY, "pytest", "hypothesis", "ndindex", "pytest-json-report",
             "array-api-strict")
    session.run("python", "tools/array_api_conformance.py", *session.posargs, env=TEST_ENV)


def _sharding(session: nox.Session) -> None:
    # Its own process: XLA must see the flag before jax starts (tests/sharding/conftest.py
    # sets it too, for a plain `pytest tests/sharding`).
    env = {**TEST_ENV, "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    session.run("pytest", *PARALLEL, *DURATIONS, "tests/sharding", *session.posargs, env=env)


@session
def tests_sharding(session: nox.Session) -> None:
    _install(session, *ALL_PACKAGES, *TEST_DEPS)
    _sharding(session)


@session
def lint(session: nox.Session) -> None:
    _install(session, "ruff")
    session.run("ruff", "check", ".", *session.posargs)


@session
def demo(session: nox.Session) -> None:
    _install(session, *CORE, *TORCH)
    session.run("python", "demo/demo.py", *session.posargs)


BENCH_DEPS = ("numexpr",)  # torch.compile (inductor, CPU) needs only torch and a C compiler


@session
def tests_bench(session: nox.Session) -> None:
    # Runs `python -m benchmarks --quick` in a subprocess: proves the suite runs, no timing.
    _install(session, *ALL_PACKAGES, *BENCH_DEPS, *TEST_DEPS)
    _pytest(session, "tests/bench")


@session
def tests_integration(session: nox.Session) -> None:
    """tests_cross, tests_sharding and tests_bench in one virtualenv, each in its own
    process: the default list (CI) installs every framework once instead of three times
    (~5 of CI's minutes went to those two extra installs)."""
    _install(session, *ALL_PACKAGES, *BENCH_DEPS, *TEST_DEPS)
    _cross(session)
    _sharding(session)
    _pytest(session, "tests/bench")


@session
def bench(session: nox.Session) -> None:
    # `nox -s bench -- --quick` for tiny sizes; `-- --update-docs` refreshes docs/performance.md.
    _install(session, *ALL_PACKAGES, *BENCH_DEPS)
    session.run("python", "-m", "benchmarks", *session.posargs,
                env={"PYTHONHASHSEED": "0", "JAX_PLATFORMS": "cpu"})


DOCS_DEPS = ("sphinx", "myst-parser")
PACKAGES = ("lazycore", "lazy_numpy", "lazy_torch", "lazy_tf")
REUSE_OUT = ("--markdown", "docs/_generated/reuse.md", "--json", "docs/_generated/reuse.json",
             "--coverage", "docs/_generated/coverage.md")


@session
def tests_tools(session: nox.Session) -> None:
    # Cheap: reuse-metrics fixture test, the lazy_numpy wheel-install test, the docs
    # build (warnings as errors) and every docs example that needs no torch/TF.
    _install(session, *CORE, *NUMPY, *TEST_DEPS, *DOCS_DEPS, "setuptools")
    _pytest(session, "tests/tools")


@session
def reuse(session: nox.Session) -> None:
    # tools/reuse_metrics.py is stdlib-only (it reads the source tree); the frameworks are
    # installed only so that --entries can count each frontend's registered API entries.
    # Refreshes docs/_generated/reuse.{md,json}; pass your own arguments after `--`.
    _install(session, *ALL_PACKAGES)
    session.run("python", "tools/reuse_metrics.py", *(session.posargs or ("--entries", *REUSE_OUT)))


@session
def build(session: nox.Session) -> None:
    # A wheel and an sdist for every package, into dist/.
    _install(session, "build")
    for name in PACKAGES:
        session.run("python", "-m", "build", "--sdist", "--wheel", "--outdir", "dist",
                    f"packages/{name}")


@session
def docs(session: nox.Session) -> None:
    # Refresh the generated tables, build the site with warnings as errors into
    # docs/_build/html, then execute every code example with every framework installed.
    _install(session, *ALL_PACKAGES, *TEST_DEPS, *DOCS_DEPS)
    session.run("python", "tools/reuse_metrics.py", "--entries", *REUSE_OUT)
    session.run("sphinx-build", "-W", "--keep-going", "-q", "-b", "html", "docs",
                "docs/_build/html", env=TEST_ENV)
    session.run("pytest", "tests/tools/test_docs.py", *session.posargs, env=TEST_ENV)

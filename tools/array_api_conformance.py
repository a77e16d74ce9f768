"""The public Array API conformance suite against lazy_numpy, NumPy and array-api-strict.

Runs data-apis/array-api-tests (with its ``array-api`` spec submodule checked out) once
per namespace, each in its own pytest process with the same hypothesis seed and example
count, and prints each namespace's pass count and the tests lazy_numpy fails that the
reference (NumPy) passes, with the first line of each failure. Exit status 1 when
lazy_numpy passes fewer tests than the reference, so the bar of issue 18 ("at least as
many as NumPy itself") is a command, not a claim.

Usage::

    python tools/array_api_conformance.py --suite DIR [--max-examples 20] [--seed 0]
        [--tier auto|compile|interpret] [--deadline] [--only lazy_numpy.array_api,numpy]
        [--json OUT] [-- extra pytest args, e.g. -k test_special_cases]

``DIR`` is a checkout of https://github.com/data-apis/array-api-tests with submodules
(``git clone --recurse-submodules``); without ``--suite`` the script clones it into the
temporary directory (needs the network and git). The suite's own requirements
(``hypothesis``, ``ndindex``, ``pytest-json-report``) and ``array-api-strict`` must be
importable (``nox -s array_api_conformance`` installs them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

SUITE_URL = "https://github.com/data-apis/array-api-tests"
API_VERSION = "2024.12"
LAZY = "lazy_numpy.array_api"
REFERENCE = "numpy"
NAMESPACES = (LAZY, REFERENCE, "array_api_strict")


def _clone(dest: Path) -> Path:
    if not (dest / "array_api_tests").is_dir():
        subprocess.run(["git", "clone", "--depth", "1", "--recurse-submodules",
                        "--shallow-submodules", SUITE_URL, str(dest)], check=True)
    return dest


def _suite_commit(suite: Path) -> str:
    out = subprocess.run(["git", "-C", str(suite), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def run_suite(suite: Path, module: str, args: argparse.Namespace, report: Path) -> float:
    """Run the suite against ``module``; the per-test outcomes land in ``report`` (JUnit XML)."""
    env = {**os.environ, "ARRAY_API_TESTS_MODULE": module, "ARRAY_API_TESTS_VERSION": API_VERSION,
           "PYTHONHASHSEED": "0", "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    if args.tier:
        env["LAZYCORE_TIER"] = args.tier
    cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider",
           "-p", "no:xdist", "--max-examples", str(args.max_examples),
           "--hypothesis-seed", str(args.seed), "--junitxml", str(report),
           *(() if args.deadline else ("--disable-deadline",)), *args.pytest_args]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=suite, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def outcomes(report: Path) -> dict[str, tuple[str, str]]:
    """``{test id: (passed|failed|skipped, first line of the message)}`` from a JUnit report."""
    result = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status, message = "failed", (child.get("message") or "").strip()
            elif child.tag == "skipped":
                status = "skipped"
        result[name] = (status, message.splitlines()[0][:160] if message else "")
    return result


def compare(results: dict[str, dict[str, tuple[str, str]]]) -> dict:
    """Pass counts per namespace and the tests only lazy_numpy fails (the reference passes)."""
    counts = {m: sum(s == "passed" for s, _ in r.values()) for m, r in results.items()}
    lazy, ref = results.get(LAZY, {}), results.get(REFERENCE, {})
    lazy_only = {t: lazy[t][1] for t in sorted(lazy)
                 if lazy[t][0] == "failed" and ref.get(t, ("",))[0] == "passed"}
    ref_only = sorted(t for t in ref if ref[t][0] == "failed" and lazy.get(t, ("",))[0] == "passed")
    return {"total": max((len(r) for r in results.values()), default=0), "passed": counts,
            "lazy_only_failures": lazy_only, "reference_only_failures": ref_only}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, help="array-api-tests checkout (cloned if absent)")
    parser.add_argument("--max-examples", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tier", choices=("auto", "compile", "interpret"),
                        help="LAZYCORE_TIER for the lazy_numpy run (default: the user's default)")
    parser.add_argument("--deadline", action="store_true",
                        help="keep hypothesis' 800 ms deadline (off by default: it times "
                             "first calls, which include lazycore's compiles)")
    parser.add_argument("--only", default=",".join(NAMESPACES),
                        help="comma-separated namespaces to run")
    parser.add_argument("--json", type=Path, help="write the comparison here")
    parser.add_argument("--reports", type=Path, help="where the JUnit reports go (a temporary dir)")
    parser.add_argument("--suite-commit", help="the suite's commit, when DIR is not a git checkout")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args(argv)

    scratch = Path(tempfile.gettempdir())
    suite = (args.suite or _clone(scratch / "array-api-tests")).resolve()
    args.reports = args.reports or Path(tempfile.mkdtemp(prefix="array-api-reports-"))
    args.reports.mkdir(parents=True, exist_ok=True)
    results = {}
    for module in args.only.split(","):
        report = args.reports / f"{module}.xml"
        seconds = run_suite(suite, module, args, report)
        results[module] = outcomes(report)
        print(f"{module}: ran in {seconds:.0f} s", flush=True)
    summary = compare(results)
    summary.update(suite_commit=args.suite_commit or _suite_commit(suite), api_version=API_VERSION,
                   max_examples=args.max_examples, seed=args.seed, tier=args.tier or "default",
                   deadline=args.deadline)
    print(f"array-api-tests {summary['suite_commit']} (API {API_VERSION}, --max-examples "
          f"{args.max_examples}, --hypothesis-seed {args.seed}, tier {summary['tier']}, "
          f"deadline {'on' if args.deadline else 'off'}): "
          f"{summary['total']} tests")
    for module, passed in summary["passed"].items():
        print(f"  {module:24s} {passed} passed")
    print(f"lazy_numpy-only failures ({len(summary['lazy_only_failures'])}):")
    for test, message in summary["lazy_only_failures"].items():
        print(f"  {test}\n      {message}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    passed = summary["passed"]
    if LAZY in passed and REFERENCE in passed and passed[LAZY] < passed[REFERENCE]:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

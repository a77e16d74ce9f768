"""numexpr's classic expression set on 1e6-element float64 arrays.

Each expression is one source string evaluated four ways: by NumPy (``eval`` with
``np`` functions), by lazy_numpy (the same ``eval`` over ``lnp.asarray`` inputs: NumPy's
own functions dispatch to it), by ``numexpr.evaluate``, and inside ``jax.jit`` (the same
``eval`` with ``jax.numpy`` functions). The set follows numexpr's ``bench/timing.py`` /
``bench/poly.py``: linear forms, a comparison, trigonometry, polynomials (expanded and
Horner), a large integer power and a select.
"""

from __future__ import annotations

import numpy as np

from ._harness import geomean, measure, row

BENCH = "numexpr_expr"

EXPRESSIONS = {
    "linear": "2*a+3*b",
    "linear2": "a*b+4.1*a",
    "compare": "a*b-4.1*a > 2.5*b",
    "trig": "sin(a)**2+cos(b)**2",
    "poly": "0.25*a**3 + 0.75*a**2 - 1.5*a - 2",
    "horner": "((0.25*a + 0.75)*a - 1.5)*a - 2",
    "pow50": "(a+1)**50",
    "where": "where(a > 0.5, sqrt(a*a + b*b), exp(-b))",
}

FUNCS = ("sin", "cos", "sqrt", "exp", "where")


def size(quick: bool) -> int:
    return 1000 if quick else 1_000_000


def expressions(quick: bool) -> dict[str, str]:
    if quick:
        return {k: EXPRESSIONS[k] for k in ("compare", "trig", "where")}
    return EXPRESSIONS


def inputs(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"a": rng.uniform(0.0, 1.0, n), "b": rng.uniform(0.0, 1.0, n)}


def _namespace(mod, arrays) -> dict:
    ns = {name: getattr(mod, name) for name in FUNCS}
    ns.update(arrays)
    return ns


# --- implementations: setup(expr, arrays) -> step() returning a host NumPy array ----------

def numpy_impl(expr, arrays):
    code = compile(expr, "<expr>", "eval")
    ns = _namespace(np, arrays)
    return lambda: np.asarray(eval(code, ns))


def lazy_numpy(expr, arrays):
    import lazy_numpy as lnp

    code = compile(expr, "<expr>", "eval")
    ns = _namespace(np, {k: lnp.asarray(v) for k, v in arrays.items()})
    lnp.sync()
    return lambda: np.asarray(eval(code, ns))


def numexpr_impl(expr, arrays):
    import numexpr as ne

    return lambda: ne.evaluate(expr, local_dict=arrays)


def jax_jit(expr, arrays):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)  # float64, as in the other three
    code = compile(expr, "<expr>", "eval")
    names = sorted(arrays)

    def f(*xs):
        return eval(code, _namespace(jnp, dict(zip(names, xs, strict=True))))

    jf = jax.jit(f)
    xs = [jax.device_put(arrays[k]) for k in names]
    return lambda: np.asarray(jf(*xs))


IMPLS = {"numpy": numpy_impl, "lazy_numpy": lazy_numpy, "numexpr": numexpr_impl,
         "jax_jit": jax_jit}


def make_step(case: str, impl: str, quick: bool):
    """The probe's entry point: one implementation of one expression (see ``_probe``)."""
    return IMPLS[impl](EXPRESSIONS[case], inputs(size(quick)))


def run(quick: bool) -> list[dict]:
    arrays = inputs(size(quick))
    rows = []
    for case, expr in expressions(quick).items():
        reference = numpy_impl(expr, arrays)()
        for impl, make in IMPLS.items():
            r, _ = measure(BENCH, case, impl, lambda make=make, expr=expr: make(expr, arrays),
                           quick=quick, reference=reference, rtol=1e-9, atol=1e-9,
                           extra={"expr": expr, "n": size(quick)})
            rows.append(r)
    rows += _geomean_rows(rows)
    return rows


def _geomean_rows(rows) -> list[dict]:
    """Per implementation: geometric mean of its time over the expressions (only when
    it ran every expression, so the means compare the same set)."""
    cases = {r["case"] for r in rows}
    out = []
    for impl in IMPLS:
        times = [r["median_s"] for r in rows if r["impl"] == impl and r.get("median_s")]
        if len(times) == len(cases):
            out.append(row(BENCH, "geomean", impl, median_s=geomean(times), runs=len(times)))
    return out

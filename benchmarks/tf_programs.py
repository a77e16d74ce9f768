"""TensorFlow/Keras programs as TF users write them: lazy_tf against eager TF and
``tf.function(jit_compile=True)``, in one process, interleaved.

Cases (Keras 3 layers, ``SparseCategoricalCrossentropy(from_logits=True)``, Adam, the
loss read on the host every step):

* ``mlp`` 784-256-10 (batch 64), ``cnn`` two Conv2D+BatchNormalization blocks on 28x28x1
  (batch 32), ``lstm`` LSTM(64) over 20 steps of 16 features (batch 32),
  ``transformer`` one MultiHeadAttention block (d 64, 4 heads, seq 32, batch 16):
  a custom training step with ``eager`` (``tf.GradientTape``), ``tf_xla`` (the same
  step under ``tf.function(jit_compile=True)``), ``lazy_tf`` (``ltf.keras.enable()``
  models, ``ltf.GradientTape``, the batch on the device) and ``lazy_tf_fn`` (the lazy
  step under ``tf.function``: captured whole, one call node per step).
* ``fit_mlp``, ``fit_cnn``: one ``model.fit`` epoch (10 batches) with Keras's
  ``jit_compile=True`` (``keras_xla``), on lazy_tf with ``run_eagerly=True`` (``lazy_tf``:
  each step traced lazily) and with Keras's compiled steps (``lazy_tf_fn``: each step a
  captured call), times per epoch.

Every implementation starts from the same weights (``keras.utils.set_random_seed``) and
batch; the first step's loss must equal eager's (rtol 1e-4). After warm-up, rounds run
each implementation for a few steps in turn (rotating the order; lazy implementations
first wait for lazycore's background compile: the interpreter tier runs until it lands),
and the medians of the per-step times (wall and CPU) are reported, with the load average
before and after. ``--quick`` (CI:
proves the module runs) runs ``mlp`` and ``fit_mlp`` at toy sizes, one round.

``python -m benchmarks.tf_programs [--quick] [--rounds N] [--cases C,..] [--impls I,..]
[--out PATH]``
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from ._harness import row  # noqa: E402

BENCH = "tf_programs"
STEP_CASES = ("mlp", "cnn", "lstm", "transformer")
STEP_IMPLS = ("eager", "tf_xla", "lazy_tf", "lazy_tf_fn")
FIT_CASES = ("fit_mlp", "fit_cnn")
FIT_IMPLS = ("keras_xla", "lazy_tf", "lazy_tf_fn")
CLASSES = 10


def config(case: str, quick: bool) -> dict:
    full = {"mlp": {"batch": 64, "shape": (784,)}, "cnn": {"batch": 32, "shape": (28, 28, 1)},
            "lstm": {"batch": 32, "shape": (20, 16)},
            "transformer": {"batch": 16, "shape": (32,), "vocab": 1000}}
    tiny = {"mlp": {"batch": 4, "shape": (8,)}, "cnn": {"batch": 2, "shape": (8, 8, 1)},
            "lstm": {"batch": 2, "shape": (3, 4)},
            "transformer": {"batch": 2, "shape": (4,), "vocab": 20}}
    return (tiny if quick else full)[case.removeprefix("fit_")]


def model(case: str, cfg: dict, quick: bool):
    import keras
    from keras import layers

    case = case.removeprefix("fit_")
    width = 8 if quick else None
    inputs = keras.Input(cfg["shape"], dtype="int32" if case == "transformer" else "float32")
    if case == "mlp":
        h = layers.Dense(width or 256, activation="relu")(inputs)
    elif case == "cnn":
        h = inputs
        for filters in (width or 16, width or 32):
            h = layers.Conv2D(filters, 3, padding="same")(h)
            h = layers.ReLU()(layers.BatchNormalization()(h))
            h = layers.MaxPooling2D()(h)
        h = layers.GlobalAveragePooling2D()(h)
    elif case == "lstm":
        h = layers.LSTM(width or 64)(inputs)
    else:
        d = width or 64
        x = layers.Embedding(cfg["vocab"], d)(inputs)
        a = layers.MultiHeadAttention(num_heads=2 if quick else 4, key_dim=d // 4)(x, x)
        x = layers.LayerNormalization()(x + a)
        f = layers.Dense(d)(layers.Dense(2 * d, activation="relu")(x))
        h = layers.GlobalAveragePooling1D()(layers.LayerNormalization()(x + f))
    return keras.Model(inputs, layers.Dense(CLASSES)(h))


def data(case: str, cfg: dict, batches: int = 1):
    import numpy as np

    rng = np.random.default_rng(0)
    n = cfg["batch"] * batches
    if case.removeprefix("fit_") == "transformer":
        x = rng.integers(0, cfg["vocab"], (n, *cfg["shape"])).astype(np.int32)
    else:
        x = rng.standard_normal((n, *cfg["shape"])).astype(np.float32)
    return x, rng.integers(0, CLASSES, n).astype(np.int32)


def _mode(impl: str) -> None:
    """Lazy Keras variables (and the lazy trainer) for lazy_tf only; set before an
    implementation is built and before each of its timed blocks (not timed): Keras makes
    optimizer slots at the first step."""
    import lazy_tf as ltf

    (ltf.keras.enable if impl.startswith("lazy_tf") else ltf.keras.disable)()
    if impl.startswith("lazy_tf"):  # Keras's rnn as one loop node (lazy_tf._keras_rnn)
        from lazy_tf import _keras_rnn

        _keras_rnn.install()


def _built(case, cfg, quick, lazy: bool):
    import keras

    keras.utils.set_random_seed(0)
    return model(case, cfg, quick)


def step_impl(case: str, impl: str, cfg: dict, quick: bool):
    """A zero-argument step returning the loss as a Python float."""
    import keras
    import tensorflow as tf

    import lazy_tf as ltf

    lazy = impl.startswith("lazy_tf")
    m = _built(case, cfg, quick, lazy)
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = data(case, cfg)
    conv = ltf.convert_to_tensor if lazy else tf.constant
    x, y = conv(x), conv(y)
    tape_cls = ltf.GradientTape if lazy else tf.GradientTape

    def train(x, y):
        with tape_cls() as tape:
            loss = loss_fn(y, m(x, training=True))
        grads = tape.gradient(loss, m.trainable_variables)
        opt.apply_gradients(zip(grads, m.trainable_variables, strict=True))
        return loss

    if impl == "tf_xla":
        opt.build(m.trainable_variables)
        train = tf.function(train, jit_compile=True)
    elif impl == "lazy_tf_fn":  # whole-function capture: one call node per step
        train = tf.function(train)
    return lambda: float(train(x, y))


def fit_impl(case: str, impl: str, cfg: dict, quick: bool):
    """A zero-argument callable running one ``model.fit`` epoch; returns its loss."""
    import keras

    lazy = impl.startswith("lazy_tf")
    m = _built(case, cfg, quick, lazy)
    # lazy_tf: run_eagerly=True traces each step lazily; lazy_tf_fn keeps Keras's compiled
    # steps (a tf.function lazy_tf captures whole)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), run_eagerly=impl == "lazy_tf",
              jit_compile=not lazy,
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = data(case, cfg, batches=10)

    def epoch():
        return float(m.fit(x, y, batch_size=cfg["batch"], epochs=1, verbose=0,
                           shuffle=False).history["loss"][-1])
    return epoch


def _lazy_counters(step) -> dict:
    """lazycore's counters over one more lazy call (compiles, syncs, fallbacks)."""
    import lazycore as lc

    _mode("lazy_tf")
    lc.metrics.reset()
    step()
    keep = ("traced_ops", "syncs", "compiles", "fallbacks", "host_transfers")
    return {k: v for k, v in lc.metrics.counters().items() if k in keep}


def _load() -> float:
    return os.getloadavg()[0]


def interleaved(case: str, impls: tuple, make, cfg: dict, quick: bool, rounds: int,
                per_round: int) -> list[dict]:
    """Build every implementation, warm up, then ``rounds`` rounds of ``per_round`` calls
    each in rotating order; one row per implementation (median per call)."""
    steps, rows, first = {}, {}, {}
    load_before = _load()
    for impl in impls:
        try:
            _mode(impl)
            t0 = time.perf_counter()
            steps[impl] = make(case, impl, cfg, quick)
            first[impl] = steps[impl]()
            rows[impl] = {"compile_s": time.perf_counter() - t0}
            for _ in range(2 if quick else 3):
                steps[impl]()
            if impl.startswith("lazy_tf"):  # time the compiled program, not the
                import lazycore as lc  # interpreter tier that runs while it compiles

                lc.tiers.wait_compiles()
                steps[impl]()
        except Exception as exc:  # noqa: BLE001 - one error row, the run goes on
            rows[impl] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            steps.pop(impl, None)
    times: dict = {impl: [] for impl in steps}
    cpu: dict = {impl: [] for impl in steps}  # CPU time: less swayed by other processes
    for r in range(rounds):
        order = list(steps)[r % max(len(steps), 1):] + list(steps)[:r % max(len(steps), 1)]
        for impl in order:
            _mode(impl)
            for _ in range(per_round):
                t0, c0 = time.perf_counter(), time.process_time()
                steps[impl]()
                times[impl].append(time.perf_counter() - t0)
                cpu[impl].append(time.process_time() - c0)
    load_after = _load()
    out = []
    reference = first.get(impls[0])
    for impl in impls:
        fields = dict(rows[impl])
        if impl in times and times[impl]:
            ts = times[impl]
            fields.update(median_s=statistics.median(ts), runs=len(ts), min_s=min(ts),
                          cpu_median_s=statistics.median(cpu[impl]), cpu_min_s=min(cpu[impl]),
                          first_loss=first[impl])
            if reference is not None and abs(first[impl] - reference) > 1e-4 * abs(reference):
                fields["mismatch"] = f"first loss {first[impl]} vs {reference}"
            if impl.startswith("lazy_tf"):
                fields["counters"] = _lazy_counters(steps[impl])
        else:
            fields.update(median_s=None, runs=0)
        out.append(row(BENCH, case, impl, config=cfg, load_before=load_before,
                       load_after=load_after, **fields))
    _mode("eager")
    return out


def run(quick: bool, rounds: int | None = None) -> list[dict]:
    import lazy_tf  # noqa: F401  (dispatchers installed before Keras builds anything)

    rounds = rounds or (1 if quick else 5)
    rows = []
    step_cases, fit_cases = (STEP_CASES[:1], FIT_CASES[:1]) if quick else (STEP_CASES,
                                                                           FIT_CASES)
    for case in step_cases:
        rows += interleaved(case, STEP_IMPLS, step_impl, config(case, quick), quick, rounds,
                            per_round=2 if quick else 5)
        print(markdown(rows[-len(STEP_IMPLS):], header=not rows[:-len(STEP_IMPLS)]),
              file=sys.stderr, flush=True)
    for case in fit_cases:
        rows += interleaved(case, FIT_IMPLS, fit_impl, config(case, quick), quick, rounds,
                            per_round=1)
        print(markdown(rows[-len(FIT_IMPLS):], header=False), file=sys.stderr, flush=True)
    return rows


def markdown(rows: list[dict], header: bool = True) -> str:
    """One line per case: medians (ms) and lazy_tf's ratio to the compiled TF path."""
    lines = ["| case | eager | tf.function(jit_compile) / Keras jit | lazy_tf | "
             "lazy_tf under tf.function | lazy_tf ÷ compiled | under tf.function ÷ compiled "
             "| load |", "|---|---|---|---|---|---|---|---|"] if header else []
    by_case: dict = {}
    for r in rows:
        by_case.setdefault(r["case"], {})[r["impl"]] = r
    for case, impls in by_case.items():
        def ms(impl, impls=impls):
            r = impls.get(impl)
            return None if r is None or r.get("median_s") is None else r["median_s"] * 1e3
        compiled = ms("tf_xla") if "tf_xla" in impls else ms("keras_xla")
        lazy, fn = ms("lazy_tf"), ms("lazy_tf_fn")
        ratio = (lambda v, c=compiled: f"{v / c:.2f}×" if v and c else "—")
        cell = (lambda v: "—" if v is None else f"{v:.2f} ms")
        load = next(iter(impls.values()))
        lines.append(f"| {case} | {cell(ms('eager'))} | {cell(compiled)} | {cell(lazy)} | "
                     f"{cell(fn)} | {ratio(lazy)} | {ratio(fn)} | "
                     f"{load['load_before']:.1f} → {load['load_after']:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--cases", default=None, help="comma-separated subset")
    p.add_argument("--out", default=None, help="JSON path (a .md is written beside it)")
    p.add_argument("--impls", default=None, help="comma-separated subset, e.g. tf_xla,lazy_tf_fn")
    args = p.parse_args(argv)
    global STEP_CASES, FIT_CASES, STEP_IMPLS, FIT_IMPLS
    if args.impls:
        wanted = args.impls.split(",")
        STEP_IMPLS = tuple(i for i in STEP_IMPLS if i in wanted)
        FIT_IMPLS = tuple(i for i in FIT_IMPLS if i in wanted) or FIT_IMPLS
    if args.cases:
        wanted = args.cases.split(",")
        STEP_CASES = tuple(c for c in STEP_CASES if c in wanted)
        FIT_CASES = tuple(c for c in FIT_CASES if c in wanted)
    rows = run(args.quick, args.rounds)
    text = markdown(rows)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1, default=str)
        with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])

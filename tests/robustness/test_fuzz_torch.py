"""Differential fuzzing of lazy_torch against eager CPU PyTorch."""

import numpy as np
import pytest
from fuzz import FUZZ_SETTINGS, Frontend, Reducer, programs, run_program
from hypothesis import given

torch = pytest.importorskip("torch")
lazy_torch = pytest.importorskip("lazy_torch")
F = torch.nn.functional
DEV = lazy_torch.device()


def _inplace_copy(dst, src):
    dst.copy_(src)


TORCH = Frontend(
    name="torch",
    to_eager=lambda a: torch.from_numpy(a),
    to_lazy=lambda a: torch.from_numpy(a).to(DEV),
    to_numpy=lambda t: t.detach().cpu().numpy() if t.device.type != "cpu" else t.numpy(),
    sync=lazy_torch.sync,
    unary={
        "neg": torch.neg, "abs": torch.abs, "exp": lambda x: torch.exp(x.float()),
        "tanh": lambda x: torch.tanh(x.float()), "sigmoid": lambda x: torch.sigmoid(x.float()),
        "relu": F.relu, "sqrt_abs": lambda x: torch.sqrt(x.abs()),
        "sin": lambda x: torch.sin(x.float()), "floor": lambda x: torch.floor(x.float()),
        "scale": lambda x: x * 2.5, "shift": lambda x: x + 1, "rsub": lambda x: 3 - x,
        "sum0": lambda x: x.sum(0, keepdim=True), "mean_last": lambda x: x.float().mean(-1),
        "softmax": lambda x: torch.softmax(x.float(), -1), "t": lambda x: x.t(),
        "cumsum": lambda x: torch.cumsum(x, 0), "clamp": lambda x: x.clamp(-0.5, 0.5),
        "amax": lambda x: x.amax(-1), "to_int": lambda x: x.to(torch.int32),
        "square": lambda x: x * x, "flip": lambda x: torch.flip(x, (0,)),
    },
    binary={
        "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
        "maximum": torch.maximum, "minimum": torch.minimum, "matmul": torch.matmul,
        "where": lambda a, b: torch.where(a > b, a, b), "atan2": lambda a, b: torch.atan2(
            a.float(), b.float()), "cat0": lambda a, b: torch.cat([a, b], 0),
        "lt": lambda a, b: (a < b).float(),
    },
    inplace={
        "add_": lambda d, s: d.add_(s), "mul_": lambda d, s: d.mul_(s),
        "copy_": _inplace_copy, "sub_scalar": lambda d, s: d.sub_(1.5),
        "row_assign": lambda d, s: d.__setitem__(0, s.sum()),
    },
    views={
        "row0": lambda x: x[0], "cols": lambda x: x[..., 1:3], "t_view": lambda x: x.t(),
        "unsq": lambda x: x.unsqueeze(0), "reshape": lambda x: x.reshape(-1),
        "stride2": lambda x: x[..., ::2],
    },
    truth=bool,
    reduce_for_if=Reducer(lambda x: x.sum() > 0, lambda x: x.float().sum()),
    dtypes=(np.float32, np.float32, np.int64),
)


@given(programs(TORCH))
@FUZZ_SETTINGS
def test_random_programs_match_eager_torch(program):
    run_program(TORCH, program)

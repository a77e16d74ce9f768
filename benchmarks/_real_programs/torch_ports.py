# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""PyTorch ports of two of the programs, as a PyTorch user writes them, for eager
PyTorch against lazy_torch (the program's tensors on ``lazy_torch.device()``):
the CS231n softmax-regression SGD loop (``softmax_regression``) and Hill's explicit
2-D heat diffusion (``heat_diffusion``, the initial disc set cell by cell as in the
original). ``program(torch, device, inputs)``; inputs are the NumPy programs' own.
"""

from __future__ import annotations

import numpy as np

from . import heat_diffusion, softmax_regression

PORTS = {"softmax_regression_torch": softmax_regression,
         "heat_diffusion_torch": heat_diffusion}


def sizes(quick: bool) -> list[tuple[str, str]]:
    if quick:
        return [("heat_diffusion_torch", "tiny")]
    return [(p, s) for s in ("published", "10x") for p in PORTS]


def softmax_regression_program(torch, device, inputs):
    def softmax_loss_vectorized(W, X, y, reg):
        num_train = X.shape[0]
        scores = X.mm(W)
        scores -= scores.max(dim=1, keepdim=True).values
        exp_scores = torch.exp(scores)
        probs = exp_scores / exp_scores.sum(dim=1, keepdim=True)
        rows = torch.arange(num_train, device=device)
        loss = -torch.log(probs[rows, y]).sum()
        loss /= num_train
        loss += reg * (W * W).sum()
        dscores = probs
        dscores[rows, y] -= 1
        dscores /= num_train
        dW = X.t().mm(dscores)
        dW += 2 * reg * W
        return loss, dW

    def train(X, y, learning_rate, reg, num_iters, batch_size, verbose):
        num_train, dim = X.shape
        num_classes = int(y.max()) + 1
        W = (0.001 * torch.randn(dim, num_classes, dtype=torch.float64)).to(device)
        loss_history = []
        for it in range(num_iters):
            batch_indices = torch.randint(num_train, (batch_size,)).to(device)
            X_batch = X[batch_indices]
            y_batch = y[batch_indices]
            loss, grad = softmax_loss_vectorized(W, X_batch, y_batch, reg)
            loss_history.append(loss)
            W -= learning_rate * grad
            if verbose and it % 100 == 0:
                print('iteration %d / %d: loss %f' % (it, num_iters, loss))
        return W, loss_history

    torch.manual_seed(inputs["seed"])
    W, loss_hist = train(inputs["X"], inputs["y"], inputs["learning_rate"], inputs["reg"],
                         inputs["num_iters"], inputs["batch_size"], verbose=True)
    return W, loss_hist[-1]


def heat_diffusion_program(torch, device, inputs):
    w = h = inputs["w"]
    dx = dy = 0.1
    D = 4.
    Tcool, Thot = 300, 700
    nx, ny = int(w / dx), int(h / dy)
    dx2, dy2 = dx * dx, dy * dy
    dt = dx2 * dy2 / (2 * D * (dx2 + dy2))

    u0 = Tcool * torch.ones((nx, ny), dtype=torch.float64, device=device)
    u = u0.clone()

    r, cx, cy = 2, 5, 5
    r2 = r**2
    for i in range(nx):
        for j in range(ny):
            p2 = (i * dx - cx)**2 + (j * dy - cy)**2
            if p2 < r2:
                u0[i, j] = Thot

    def do_timestep(u0, u):
        u[1:-1, 1:-1] = u0[1:-1, 1:-1] + D * dt * (
            (u0[2:, 1:-1] - 2 * u0[1:-1, 1:-1] + u0[:-2, 1:-1]) / dx2
            + (u0[1:-1, 2:] - 2 * u0[1:-1, 1:-1] + u0[1:-1, :-2]) / dy2)
        u0 = u.clone()
        return u0, u

    for m in range(inputs["nsteps"]):
        u0, u = do_timestep(u0, u)
    return u0, u


class _Port:
    """A torch port seen as a program module (what ``real_programs.Impl`` needs)."""

    def __init__(self, base, program):
        self.base, self.program_fn = base, program
        self.SOURCE = base.SOURCE + " (PyTorch port)"
        self.SIZES, self.STATE = base.SIZES, base.STATE
        self.ITER_KEY = getattr(base, "ITER_KEY", None)
        self.make_inputs, self.iterations = base.make_inputs, base.iterations


class TorchImpl:
    def __init__(self, port: _Port, inputs: dict, lazy: bool):
        import torch

        self.torch, self.port, self.lazy = torch, port, lazy
        if lazy:
            import lazy_torch

            self.device, self._sync = lazy_torch.device(), lazy_torch.sync
        else:
            self.device, self._sync = torch.device("cpu"), (lambda: None)
        self.loaded = self._load(inputs)
        self._sync()

    def _load(self, inputs):
        return {k: (self.torch.from_numpy(np.array(v)).to(self.device)
                    if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}

    def run(self, inputs: dict | None = None) -> list[np.ndarray]:
        import contextlib
        import io

        inputs = self.loaded if inputs is None else self._load(inputs)
        with contextlib.redirect_stdout(io.StringIO()):
            result = self.port.program_fn(self.torch, self.device, inputs)
        return [r.detach().cpu().numpy() if isinstance(r, self.torch.Tensor) else np.asarray(r)
                for r in result]


PROGRAMS = {"softmax_regression_torch": softmax_regression_program,
            "heat_diffusion_torch": heat_diffusion_program}


def module(name: str) -> _Port:
    return _Port(PORTS[name], PROGRAMS[name])


def impls(mod, inputs):
    return TorchImpl(mod, inputs, lazy=False), TorchImpl(mod, inputs, lazy=True)

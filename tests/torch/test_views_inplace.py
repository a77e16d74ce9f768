"""In-place ops and views behave as in eager PyTorch: writes through a view change
the base, writes to the base are seen by live views, in-place view ops re-layout."""

from __future__ import annotations

import pytest
import torch


def both(fn, dev):
    """Run ``fn(make)`` eagerly on CPU and lazily; ``make(t)`` moves a CPU tensor over."""
    cpu = fn(lambda t: t.clone())
    lazy = fn(lambda t: t.clone().to(dev))
    return cpu, lazy


def check(fn, dev):
    cpu, lazy = both(fn, dev)
    if not isinstance(cpu, tuple | list):
        cpu, lazy = (cpu,), (lazy,)
    for c, z in zip(cpu, lazy, strict=True):
        assert z.device.type == "lazy"
        assert tuple(z.shape) == tuple(c.shape) and z.dtype == c.dtype
        torch.testing.assert_close(z.cpu(), c)


BASE = torch.arange(12.0).reshape(3, 4)


def prog_index_add(make):
    x = make(BASE)
    x[0] += 1
    return x


def prog_view_add(make):
    x = make(BASE)
    x.view(12).add_(5)
    return x


def prog_t_(make):
    x = make(BASE)
    x.t_()
    x[0, 1] = -1.0
    return x, x.contiguous()


def prog_slice_assign(make):
    x = make(BASE)
    x[1:, ::2] = make(torch.tensor([[100.0, 200.0], [300.0, 400.0]]))
    x[:, -1] = 7.0
    return x


def prog_view_sees_base(make):
    x = make(BASE)
    row = x[1]
    col = x[:, 2]
    x.mul_(2)
    x[1, 2] = 0.5
    return row, col, x


def prog_chain_of_views(make):
    x = make(torch.zeros(2, 3, 4))
    v = x.transpose(0, 2)[1:3]          # non-contiguous view of a view
    v.fill_(3.0)
    v[0, 0, 1] += 10
    return x, v


def prog_detach_aliases(make):
    x = make(BASE)
    d = x.detach()
    d.zero_()
    return x


def prog_unsqueeze_squeeze_(make):
    x = make(torch.arange(6.0))
    x.unsqueeze_(0)
    x.mul_(3)
    x.squeeze_()
    return x


def prog_split_views(make):
    x = make(torch.arange(10.0))
    a, b = x.split([4, 6])
    b.add_(100)
    a[0] = -5
    return x, a, b


def prog_diagonal_write(make):
    x = make(torch.zeros(4, 4))
    x.diagonal().copy_(make(torch.arange(4.0)))
    x.diagonal(1).fill_(9)
    return x


def prog_index_put_(make):
    x = make(BASE)
    idx = make(torch.tensor([0, 2]))
    x[idx] = 0.0
    x.index_put_((make(torch.tensor([1, 1])), make(torch.tensor([0, 0]))),
                 make(torch.tensor([1.0, 2.0])), accumulate=True)
    return x


def prog_mask_assign(make):
    x = make(BASE)
    x[x > 5] = -1.0
    return x


def prog_unbind_iteration(make):
    x = make(BASE)
    for row in x:
        row.add_(1)
    return x


def prog_expand_read(make):
    x = make(torch.arange(3.0))
    e = x.expand(2, 3)
    x.add_(1)
    return e + 0


def prog_out_kwarg(make):
    x = make(BASE)
    out = make(torch.zeros(3, 4))
    torch.add(x, 1, out=out)
    torch.mul(x, x, out=x[0:1].squeeze(0).unsqueeze(0).expand(3, 4)[0:1])
    return out, x


def prog_inplace_dtype(make):
    x = make(torch.arange(4))
    x += 2
    x *= 3
    y = make(torch.arange(4.0))
    y += x
    return x, y


def prog_detach_of_views_after_writes(make):
    # detach/alias copy their source's layout without re-deriving it: they must
    # still see the base's later writes, and their writes must reach the base
    x = make(BASE)
    col = x[:, 1]
    flat = x.view(12)
    col_d, flat_d, whole_d = col.detach(), flat.detach(), x.detach()
    x.mul_(2)
    col_d.add_(100)
    seen = col_d + 0, flat_d + 0, whole_d + 0
    flat_d[0] = -3.0
    return (x, col, col_d, flat_d, whole_d, *seen)


def prog_transpose_back_to_full(make):
    # t() of a t() view covers the whole storage in order: it aliases the base's value
    x = make(BASE)
    tt = x.t().t()
    x.add_(1)
    early = tt + 0
    tt.mul_(3)
    y = make(torch.zeros(3, 4)).t()
    back = y.t()
    back.fill_(2.0)
    return x, tt, early, y, back, x.view(12).view(3, 4) + 0


@pytest.mark.parametrize("prog", [
    prog_detach_of_views_after_writes, prog_transpose_back_to_full, prog_index_add, prog_view_add, prog_t_, prog_slice_assign, prog_view_sees_base,
    prog_chain_of_views, prog_detach_aliases, prog_unsqueeze_squeeze_, prog_split_views,
    prog_diagonal_write, prog_index_put_, prog_mask_assign, prog_unbind_iteration,
    prog_expand_read, prog_inplace_dtype,
], ids=lambda f: f.__name__[5:])
def test_view_inplace_semantics(prog, dev):
    check(prog, dev)


def test_view_of_noncontiguous_raises_like_eager(dev):
    x = torch.arange(6.0).reshape(2, 3).to(dev)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(6)
    assert x.t().reshape(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_inplace_cast_error_like_eager(dev):
    x = torch.arange(4).to(dev)
    with pytest.raises(RuntimeError, match="can't be cast"):
        x += 1.5


def test_inplace_broadcast_error_like_eager(dev):
    x = torch.zeros(1, 3).to(dev)
    with pytest.raises(RuntimeError):
        x.add_(torch.ones(3, 3).to(dev))


def test_autograd_through_inplace_view(dev):
    def run(make):
        w = make(torch.tensor([1.0, 2.0, 3.0])).requires_grad_()
        y = w * 2
        y[1:] *= w[1:]
        y.sum().backward()
        return w.grad
    c, z = both(run, dev)
    torch.testing.assert_close(z.cpu(), c)


def test_full_layout_views_share_version_and_grad(dev):
    w = torch.ones(2, 3).to(dev).requires_grad_()
    tt = w.t().t()
    d = w.detach()
    assert tt._version == d._version == w._version
    with torch.no_grad():
        d.add_(1.0)
    assert tt._version == w._version == d._version
    (tt * 2).sum().backward()
    torch.testing.assert_close(w.grad.cpu(), torch.full((2, 3), 2.0))
    torch.testing.assert_close(tt.detach().cpu(), torch.full((2, 3), 2.0))

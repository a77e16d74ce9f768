"""Idioms of PyTorch's vision tutorials on the lazy device, against eager CPU: the spatial
transformer network (``F.affine_grid`` + ``F.grid_sample`` with the tutorial's identity
initial ``theta``)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 1, 7, 9), (1, 2, 3, 4, 5)])
def test_affine_grid_matches_eager_bit_for_bit(dev, size, align_corners):
    d = len(size) - 2
    identity = torch.eye(d, d + 1).expand(size[0], d, d + 1)
    theta = identity + 0.1 * torch.randn(size[0], d, d + 1, generator=torch.Generator().manual_seed(0))
    eager = F.affine_grid(identity, size, align_corners=align_corners)
    assert torch.equal(F.affine_grid(identity.to(dev), size, align_corners=align_corners).cpu(), eager)
    torch.testing.assert_close(F.affine_grid(theta.to(dev), size, align_corners=align_corners).cpu(),
                               F.affine_grid(theta, size, align_corners=align_corners))


def test_spatial_transformer_theta_gradient_matches_eager(dev):
    """The tutorial's localisation head starts at the identity: every sampling point is a
    pixel centre, where the bilinear sampler's gradient with respect to the grid depends on
    which side of the centre the point rounds to (the base grid one ulp off flipped it)."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 1, 12, 12, generator=g)
    w = torch.randn(2, 1, 12, 12, generator=g)
    grads = []
    for device in ("cpu", dev):
        theta = torch.tensor([[1.0, 0, 0], [0, 1, 0]]).repeat(2, 1, 1).to(device).requires_grad_()
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        out = F.grid_sample(x.to(device), grid, align_corners=False)
        (out * w.to(device)).sum().backward()
        grads.append(theta.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])


def test_affine_grid_errors_are_eagers(dev):
    with pytest.raises(ValueError) as eager:
        F.affine_grid(torch.eye(2, 3)[None], (1, 1, 4, 4, 4), align_corners=False)
    with pytest.raises(ValueError) as lazy:
        F.affine_grid(torch.eye(2, 3)[None].to(dev), (1, 1, 4, 4, 4), align_corners=False)
    assert str(lazy.value) == str(eager.value)
    with pytest.raises(RuntimeError):
        torch.ops.aten.affine_grid_generator(torch.eye(2, 3)[None].to(dev), [2, 1, 4, 4], False)

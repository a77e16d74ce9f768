"""Vision models written by others (torchvision, timm; random init, tiny inputs) trained
two steps on the lazy device against eager CPU. Float64: in float32 the late BatchNorms of
these models see 1x1 maps of 4 samples, whose near-zero variances amplify rounding noise
after the first step. Skipped where the packages do not import (the only torchvision
0.28 wheel links CUDA libraries, so it fails to load next to the CPU build of torch)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import lazy_torch

try:
    import timm
    import torchvision
except (ImportError, OSError, RuntimeError) as e:  # a CUDA torchvision raises RuntimeError
    pytest.skip(f"torchvision/timm unavailable: {e}", allow_module_level=True)

MODELS = {
    "resnet18": lambda: torchvision.models.resnet18(num_classes=4),
    "timm_vit_tiny": lambda: timm.create_model("vit_tiny_patch16_224", pretrained=False,
                                               img_size=32, patch_size=8, num_classes=4),
}


def _train(make, device):
    torch.manual_seed(0)
    model = make().to(device, torch.float64)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(4, 3, 32, 32, generator=g, dtype=torch.float64), torch.arange(4)
    losses = []
    for _ in range(2):
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if torch.device(device).type == "lazy":
            lazy_torch.sync()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(x.to(device)).cpu()
    return losses, {k: v.cpu() for k, v in model.state_dict().items()}, out


@pytest.mark.parametrize("name", list(MODELS))
def test_vision_model_trains_as_eager(name):
    expected, got = _train(MODELS[name], "cpu"), _train(MODELS[name], lazy_torch.device())
    torch.testing.assert_close(got, expected, rtol=1e-7, atol=1e-9)

"""Image and sequence programs in the style of pytorch/examples (written here, tiny sizes;
the helpers are test_examples_pytorch's), run unchanged on
CPU and on the lazy device with the same seeds: losses, gradients, parameters after the
optimizer steps and outputs must agree, and no op may fall back to the CPU unless named."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .test_examples_pytorch import _gen, _state, _train, check


def test_fast_neural_style():
    """Reflection padding, instance norm, nearest upsampling, gram matrices, Adam."""
    class ConvLayer(nn.Module):
        def __init__(self, c_in, c_out, k, stride, upsample=None):
            super().__init__()
            self.upsample, self.pad = upsample, nn.ReflectionPad2d(k // 2)
            self.conv = nn.Conv2d(c_in, c_out, k, stride)

        def forward(self, x):
            if self.upsample:
                x = F.interpolate(x, mode="nearest", scale_factor=self.upsample)
            return self.conv(self.pad(x))

    def gram(y):
        b, c, h, w = y.size()
        f = y.view(b, c, w * h)
        return f.bmm(f.transpose(1, 2)) / (c * h * w)

    def program(device):
        net = nn.Sequential(ConvLayer(3, 4, 3, 2), nn.InstanceNorm2d(4, affine=True), nn.ReLU(),
                            ConvLayer(4, 3, 3, 1, upsample=2)).to(device)
        features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU()).to(device)
        opt = torch.optim.Adam(net.parameters(), 1e-3)
        g = _gen(1)
        x = torch.rand(2, 3, 8, 8, generator=g).mul(255).to(device)
        mean = torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1).to(device)
        with torch.no_grad():
            style = gram(features(torch.rand(1, 3, 8, 8, generator=g).to(device) - mean))

        def loss():
            fy, fx = features(net(x) / 255 - mean), features(x / 255 - mean)
            return 1e5 * F.mse_loss(fy, fx) + 1e10 * F.mse_loss(gram(fy), style.expand(2, 4, 4))
        losses = _train(opt, loss)
        # a conv bias before an instance norm has a zero gradient (rounding noise that
        # Adam scales to a step): not compared
        return losses, [(p, p.grad) for n, p in net.named_parameters() if 'conv.bias' not in n]

    check(program, rtol=1e-3, atol=1e-4)


def test_super_resolution_pixel_shuffle():
    def program(device):
        model = nn.Sequential(nn.Conv2d(1, 8, 5, 1, 2), nn.ReLU(), nn.Conv2d(8, 4, 3, 1, 1),
                              nn.PixelShuffle(2))
        nn.init.orthogonal_(model[0].weight, nn.init.calculate_gain("relu"))
        model.to(device)
        opt = torch.optim.Adam(model.parameters(), 1e-2)
        g = _gen(2)
        low = torch.rand(2, 1, 6, 6, generator=g).to(device)
        high = torch.rand(2, 1, 12, 12, generator=g).to(device)
        losses = _train(opt, lambda: F.mse_loss(model(low), high))
        with torch.no_grad():
            psnr = 10 * torch.log10(1 / F.mse_loss(model(low), high))
        return losses, psnr, F.pixel_unshuffle(high, 2), _state(model)

    check(program)


def test_time_sequence_prediction_lbfgs_double():
    """time_sequence_prediction: two LSTMCells in float64, LBFGS with a closure, future
    steps fed back."""
    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1, self.lstm2, self.linear = nn.LSTMCell(1, 4), nn.LSTMCell(4, 4), nn.Linear(4, 1)

        def forward(self, x, future=0):
            h = torch.zeros(x.size(0), 4, dtype=torch.double, device=x.device)
            c, h2, c2 = torch.zeros_like(h), torch.zeros_like(h), torch.zeros_like(h)
            out, outputs = None, []
            for step in [*x.split(1, dim=1)] + [None] * future:
                h, c = self.lstm1(out if step is None else step, (h, c))
                h2, c2 = self.lstm2(h, (h2, c2))
                out = self.linear(h2)
                outputs.append(out)
            return torch.cat(outputs, dim=1)

    def program(device):
        x = np.arange(5) + np.random.RandomState(0).randint(-80, 80, 4).reshape(4, 1)
        data = np.sin(x / 20.0).astype("float64")
        inp, target = torch.from_numpy(data[:3, :-1]).to(device), torch.from_numpy(data[:3, 1:]).to(device)
        seq = Sequence().double().to(device)
        opt = torch.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=2)
        losses = []

        def closure():
            opt.zero_grad()
            loss = F.mse_loss(seq(inp), target)
            losses.append(loss.item())
            loss.backward()
            return loss
        for _ in range(2):
            opt.step(closure)
        with torch.no_grad():
            pred = seq(torch.from_numpy(data[3:, :-1]).to(device), future=2)
        return losses, pred, _state(seq)

    check(program, rtol=1e-7, atol=1e-9)

"""Small models for the training-parity tests (CPU eager is the oracle)."""

from __future__ import annotations

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(),
                                 nn.Linear(32, 5))

    def forward(self, x):
        return self.net(x)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)  # BN follows
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.avg = nn.AvgPool2d(2)
        self.fc = nn.Linear(8 * 2 * 2, 4)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.avg(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(x.flatten(1))


class TinyTransformer(nn.Module):
    def __init__(self, vocab=11, d=16, heads=2, seq=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.1)
        self.layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=32, dropout=0.0,
                                                batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        h = self.embed(tokens) + self.pos
        h = self.layer(h)
        return self.head(self.norm(h)).mean(1)


def batches(kind: str, steps: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        if kind == "mlp":
            out.append((torch.randn(8, 16, generator=g), torch.randint(0, 5, (8,), generator=g)))
        elif kind == "cnn":
            out.append((torch.randn(4, 3, 8, 8, generator=g),
                        torch.randint(0, 4, (4,), generator=g)))
        else:
            out.append((torch.randint(0, 11, (4, 6), generator=g),
                        torch.randint(0, 11, (4,), generator=g)))
    return out


MODELS = {"mlp": MLP, "cnn": SmallCNN, "transformer": TinyTransformer}

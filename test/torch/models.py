"""Small models of the kinds the torch frontend must compile."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=32, hidden=64, d_out=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CNN(nn.Module):
    """Convolutions, batch norm, max pooling, a linear head. The
    convolutions before a batch norm have no bias, as usual: its gradient
    would be rounding noise, which Adam's normalization turns into steps
    of the learning rate's size in either direction."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 4 * 4, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


class Encoder(nn.Module):
    """nn.TransformerEncoderLayer with a classifier on the mean token."""

    def __init__(self, d=64, heads=4, ff=128, classes=5):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0,
                                                batch_first=True)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        return self.head(self.layer(x).mean(1))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        causal = torch.ones(s, s, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    """A GPT-style decoder in plain torch: token and position embeddings,
    causal attention, layer norm, GELU, the head tied to the embedding."""

    def __init__(self, vocab=97, d=64, heads=4, layers=2, seq=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        x = self.tok(ids) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.ln(x) @ self.tok.weight.t()

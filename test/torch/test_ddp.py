"""Data-parallel training with torch.distributed (gloo, two processes on
loopback) whose model is compiled by tcc: the same losses and parameters
as the uncompiled DDP loop. torch.distributed is the engine; tcc compiles
the graphs between DDP's gradient buckets."""

import copy
import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 5


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(256, 256) for _ in range(3))
        self.head = torch.nn.Linear(256, 4)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.head(x)


def run(model, rank):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(100 + rank)  # each rank's own data
    losses = []
    for _ in range(STEPS):
        x = torch.randn(8, 256, generator=gen)
        y = torch.randint(0, 4, (8,), generator=gen)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def worker(rank, port, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    base = Net()
    eager = DDP(copy.deepcopy(base), bucket_cap_mb=1)
    compiled_ddp = DDP(copy.deepcopy(base), bucket_cap_mb=1)
    compiled = torch.compile(compiled_ddp, backend="tcc", dynamic=False)
    import tcc.torch
    expected = run(eager, rank)
    got = run(compiled, rank)
    torch.save({"expected": expected, "got": got,
                "eager": [p.detach() for p in eager.parameters()],
                "compiled": [p.detach() for p in compiled_ddp.parameters()],
                "graphs": tcc.torch.stats.graphs}, f"{out}/rank{rank}.pt")
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_two_processes(tmp_path):
    mp.spawn(worker, args=(free_port(), str(tmp_path)), nprocs=2, join=True)
    results = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    for r in results:
        assert r["graphs"] >= 2  # tcc compiled the forward and backward
        torch.testing.assert_close(torch.tensor(r["got"]),
                                   torch.tensor(r["expected"]), rtol=1e-4,
                                   atol=0)
        for p, q in zip(r["compiled"], r["eager"]):
            torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
    # Both ranks hold the same parameters: gradients were all-reduced.
    for p, q in zip(results[0]["compiled"], results[1]["compiled"]):
        torch.testing.assert_close(p, q)

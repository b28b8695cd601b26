"""A mutation fuzzer of the TorchScript path (`tcc model.pt`): the torch
frontend's import of mutated TorchScript archives, in process.

    torchscript_fuzz.py --seconds S [--out DIR] [--seed N] [--tcc TCC]

Seeds are small modules saved here (traced and scripted: linear layers, a
convolution, constant control flow, tuple outputs). Each input is a seed
mutated at random — truncated, bytes flipped or replaced in one archive
member (the pickles, the code, the tensor data), a member dropped or
emptied, or the whole file's bytes flipped — and imported with
tcc.torch.torchscript.import_torchscript. The contract is the CLI's: the
import succeeds, or fails with its one diagnostic (InputError, Unsupported
or tcc.CompileError). Anything else — another exception, an input that
takes over 20 s — is a finding, kept in DIR/crashes/ (reproduce: tcc FILE
--input-shape x=... -o out.so). Some damaged archives crash torch's own
loader (torch.jit.load, a signal); tcc reads TorchScript in a child
process for that reason, so such an input is a finding only if `tcc` on it
gives anything but one diagnostic, exit 1 and no output; the ones it
contains are counted and kept in DIR/torch-crashes/.

The work runs in a child process, restarted after a crash, which writes
each input to DIR/current.pt before importing it. Prints executions and
findings; exits 1 if there was a finding.
"""

import argparse
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zipfile


def seeds():
    """(name, archive bytes, input shapes) of the seed modules."""
    import torch

    class Branchy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 4)
            self.flag = True

        def forward(self, x):
            y = self.fc(x)
            if self.flag:
                y = torch.relu(y)
            for _ in range(2):
                y = y * 2 + 1
            return y, y.sum(1)

    class Conv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(3)

        def forward(self, x):
            return torch.nn.functional.max_pool2d(
                torch.relu(self.bn(self.conv(x))), 2)

    out = []
    for name, model, shape in [("branchy", Branchy(), [2, 6]),
                               ("conv", Conv(), [1, 2, 8, 8])]:
        model.eval()
        x = torch.randn(*shape)
        for how, ts in [("script", torch.jit.script(model)),
                        ("trace", torch.jit.trace(model, x, strict=False))]:
            buf = io.BytesIO()
            torch.jit.save(ts, buf)
            out.append((f"{name}-{how}", buf.getvalue(), {"x": shape}))
    return out


def mutate(rng, data):
    """One random mutation of a TorchScript archive's bytes."""
    kind = rng.randrange(6)
    if kind == 0:  # truncated
        return data[:rng.randrange(len(data))]
    if kind == 1:  # bytes of the file flipped
        b = bytearray(data)
        for _ in range(rng.randint(1, 16)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return bytes(b)
    src = zipfile.ZipFile(io.BytesIO(data))
    names = src.namelist()
    victim = rng.choice(names)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n in names:
            member = src.read(n)
            if n == victim:
                if kind == 2:  # bytes of one member flipped
                    member = bytearray(member)
                    for _ in range(rng.randint(1, 8)):
                        if member:
                            member[rng.randrange(len(member))] ^= \
                                1 << rng.randrange(8)
                    member = bytes(member)
                elif kind == 3:  # one member replaced by random bytes
                    member = bytes(rng.randrange(256) for _ in
                                   range(rng.randrange(64)))
                elif kind == 4:  # one member dropped
                    continue
                else:  # one member truncated
                    member = member[:rng.randrange(len(member) + 1)]
            z.writestr(n, member)
    return out.getvalue()


class Hang(Exception):
    pass


def child(out, seconds, seed):
    import warnings

    warnings.simplefilter("ignore")
    from tcc import CompileError
    from tcc.torch.ops import Unsupported
    from tcc.torch.torchscript import InputError, import_torchscript

    def on_alarm(*_):
        raise Hang()
    signal.signal(signal.SIGALRM, on_alarm)
    rng = random.Random(seed)
    corpus = seeds()
    current = os.path.join(out, "current.pt")
    end = time.time() + seconds
    execs = 0
    while time.time() < end:
        name, data, shapes = rng.choice(corpus)
        data = mutate(rng, data)
        with open(current + ".part", "wb") as f:
            f.write(data)
        os.replace(current + ".part", current)
        with open(os.path.join(out, "current.shapes"), "w") as f:
            f.write(repr(shapes))
        signal.alarm(20)
        try:
            import_torchscript(current, shapes)
        except (InputError, Unsupported, CompileError):
            pass
        except Hang:
            keep(out, "hang", data, f"{name}: over 20 s")
        except Exception as e:  # the finding: not the one diagnostic
            keep(out, "exception", data, f"{name}: {type(e).__name__}: "
                                         f"{str(e).splitlines()[:1]}")
        finally:
            signal.alarm(0)
        execs += 1
        if execs % 100 == 0:
            print(f"#{execs} {time.time() - end + seconds:.0f}s", flush=True)
    print(f"@@EXECS {execs}", flush=True)


def keep(out, kind, data, why):
    crashes = os.path.join(out, "crashes")
    os.makedirs(crashes, exist_ok=True)
    n = len(os.listdir(crashes))
    path = os.path.join(crashes, f"{kind}-{n}.pt")
    with open(path, "wb") as f:
        f.write(data)
    print(f"FINDING {path}: {why}", flush=True)


def contained(tcc, path, shapes, out):
    """Whether `tcc` gives one diagnostic, exit 1 and no output for an
    input whose import crashed the process: tcc imports in a child
    process, so torch's loader crashing is its diagnostic, not tcc's."""
    target = os.path.join(out, "contained.so")
    if os.path.exists(target):
        os.remove(target)
    cmd = [tcc, path, "-o", target]
    for name, dims in shapes.items():
        cmd += ["--input-shape", f"{name}={'x'.join(map(str, dims))}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    return (proc.returncode == 1 and len(lines) == 1 and
            lines[0].startswith("error: ") and not os.path.exists(target))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--out", default="build/fuzz/torchscript")
    p.add_argument("--seed", type=int, default=0)
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    p.add_argument("--tcc", default=os.path.join(root, "build", "bin", "tcc"),
                   help="the tcc that must contain what crashes torch")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.child:
        child(a.out, a.seconds, a.seed)
        return 0
    shutil.rmtree(os.path.join(a.out, "crashes"), ignore_errors=True)
    end = time.time() + a.seconds
    execs, restarts, seed, torch_crashes = 0, 0, a.seed, 0
    while time.time() < end - 1:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", "--out", a.out,
             "--seconds", str(end - time.time()), "--seed", str(seed)],
            capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        for line in proc.stdout.splitlines():
            if line.startswith("@@EXECS "):
                execs += int(line.split()[1])
        if proc.returncode > 0 and not any(
                line.startswith("#") for line in proc.stdout.splitlines()):
            sys.stderr.write(proc.stderr)  # the harness itself failed
            return 2
        if proc.returncode < 0 or (proc.returncode != 0 and
                                   "@@EXECS" not in proc.stdout):
            current = os.path.join(a.out, "current.pt")
            if os.path.exists(current):
                data = open(current, "rb").read()
                shapes = eval(open(os.path.join(a.out,
                                                "current.shapes")).read())
                if contained(a.tcc, current, shapes, a.out):
                    torch_crashes += 1
                    kept = os.path.join(a.out, "torch-crashes")
                    os.makedirs(kept, exist_ok=True)
                    shutil.copy(current, os.path.join(
                        kept, f"signal{-proc.returncode}-{torch_crashes}.pt"))
                else:
                    keep(a.out, f"signal{-proc.returncode}", data,
                         f"the import died ({proc.returncode}) and tcc did "
                         "not give one diagnostic for it")
            restarts += 1
            seed += 1000
            execs += sum(1 for line in proc.stdout.splitlines()
                         if line.startswith("#")) * 100
    crashes = os.path.join(a.out, "crashes")
    found = len(os.listdir(crashes)) if os.path.isdir(crashes) else 0
    print(f"torchscript fuzz: {execs} executions in {a.seconds:.0f} s, "
          f"{restarts} restarts, {torch_crashes} inputs that crash torch's "
          f"loader (each one diagnostic from tcc, kept in "
          f"{a.out}/torch-crashes), {found} findings")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

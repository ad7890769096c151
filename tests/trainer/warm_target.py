"""What the warm runtime's tests run in place of training
(`python -m trainer.warm run --module tests.trainer.warm_target MODE ...`).

    report CODE        print what the process is (JSON on stdout), a line on stderr, exit CODE
    until-term FILE    write our pid to FILE, wait; on SIGTERM write "term" there, exit 143
    sleep FILE         write our pid and our children's pids to FILE, sleep (to be killed)
    interleave -       "out 1" on stdout, "err 2" on stderr, "out 3" on stdout
    cuda -             what CUDA this process sees, after a matrix product on each GPU (JSON)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType


def report(code: int) -> int:
    torch = sys.modules.get("torch")
    facts = {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "pgid": os.getpgid(0),
        "argv": sys.argv[1:],
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": os.umask(0o022),
        "torch_threads": torch.get_num_threads() if torch is not None else None,
        "comm": Path("/proc/self/comm").read_text().strip(),
        "main_file": getattr(sys.modules["__main__"], "__file__", None),
    }
    print(json.dumps(facts))
    print("a line on stderr", file=sys.stderr)
    return code


def until_term(marker: Path) -> int:
    def on_term(signum: int, frame: FrameType | None) -> None:
        marker.write_text("term")
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    marker.write_text(str(os.getpid()))
    time.sleep(60)
    return 1


def sleep(marker: Path) -> int:
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    marker.write_text(json.dumps({"pid": os.getpid(), "grandchild": grandchild.pid}))
    time.sleep(60)
    return 1


def interleave() -> int:
    print("out 1")
    print("err 2", file=sys.stderr)
    print("out 3")
    return 0


def cuda() -> int:
    import torch

    began = time.monotonic()
    count = torch.cuda.device_count()
    products = []
    for index in range(count):
        a = torch.ones(256, 256, device=f"cuda:{index}")
        products.append(float((a @ a).sum().item()))
    facts = {
        "available": torch.cuda.is_available(),
        "devices": count,
        "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "products": products,
        "first_use_s": round(time.monotonic() - began, 3),
    }
    print(json.dumps(facts))
    return 0


def main(argv: list[str]) -> int:
    mode, arg = argv[0], argv[1]
    if mode == "cuda":
        return cuda()
    if mode == "interleave":
        return interleave()
    if mode == "report":
        return report(int(arg))
    if mode == "until-term":
        return until_term(Path(arg))
    return sleep(Path(arg))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Reward-code attacks more than one sandbox test module mounts, as source text to paste
into a hostile reward module (which imports os and time itself): one copy of each body."""

from __future__ import annotations

# Each a function of the row's ground truth; the module that pastes them maps names to them.
LOOP_MEMORY_FORK = r"""
def infinite_loop(_):
    while True:
        pass


def memory_bomb(_):
    blocks = []
    try:
        while True:
            blocks.append(bytearray(4 << 20))
    except MemoryError:
        pass  # caught: keep holding it all and carry on
    while True:
        time.sleep(0.01)


def fork_bomb(_):
    while True:
        try:
            os.fork()
        except OSError:
            pass
"""

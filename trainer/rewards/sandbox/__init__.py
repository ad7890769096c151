"""The reward sandbox: everything that runs untrusted reward code, behind one boundary.

- `pool`: `SandboxPool`, `SandboxLimits`, `isolation_report` (the API); `scorers`:
  `make_scorer`.
- `worker`: one zygote process seen from the pool; `wire`: the pool <-> zygote messages.
- `zygote`: the warm per-worker process (user code never runs there).
- `supervise`: the zygote's watch over one chunk (deadlines, memory, kills).
- `child`: the hardened template and the per-call forks that run the user's code.
- `hardening`: namespaces, prctl, Landlock, seccomp; `proctree`: /proc helpers.
- `values`: what a reward may return, and the text checks on what crosses back.

Importing this package imports nothing else: the zygote imports `values` and must not
pull in subprocess, threading or logging (every page it holds makes each fork slower).
Start from `trainer.rewards.sandbox.pool` (or the names re-exported by `trainer.rewards`).
"""

"""The warm trainer runtime: a run's process forked from one that has imported torch.

A studio run is a Ray job whose process used to start cold: `python -m trainer run
--from-studio` spent seconds importing torch, transformers and the trainer before its
first request. On a small machine that was most of the time from Create to a first
metric. Now the job's entrypoint is `python -m trainer.warm run --from-studio`:

- `client` (what the job runs, stdlib only) connects to this node's runtime and sends
  its argv, environment, working directory and stdin/stdout/stderr; the runtime forks a
  child that becomes the job's process and runs the same code `python -m trainer run
  --from-studio` does. The client stays the job's process: it forwards Ray's SIGTERM or
  SIGINT to the run and exits with the run's exit code; if Ray SIGKILLs it, the runtime
  kills the run. So each run is still its own Ray job, under the same submission id,
  reserving the same resources, counted against the queue's caps as before, and it
  still reads its one-time secret from the file the job's environment names
  (studio/runs/handoff.py): the child has the job's environment.
- `server` (`python -m trainer.warm serve`, one per node, user and key) imports the
  trainer's run path, runs no torch operation and starts no thread, and forks. Children
  are reaped and their process groups killed when they end; none outlives the runtime.
- `preload`: what the runtime imports, one module at a time, checking that none starts
  a thread (a module that does is left to the child: the runtime starts again without it).
- `child`: what a forked child does to become the job's process (trainer.warm.child).
- `rendezvous`: the private folder (`/tmp/rlstudio-warm-<uid>`, mode 700, refused if
  anyone else could enter it) and the key naming a runtime: a digest of the Python, the
  trainer's source files and the environment its imports read, so a runtime of older
  code or of another environment is never used.
- `protocol`: length-prefixed JSON over a Unix socket, descriptors passed with SCM_RIGHTS;
  the runtime checks each peer's uid (SO_PEERCRED) against its own.

When no runtime answers, the client starts one (detached, so it outlives the job) and
that run starts cold, as before: the first run never waits for a runtime's imports, and
the next run finds it warm. RLSTUDIO_WARM_RUNTIME=0 makes every run start cold. A
runtime exits after RLSTUDIO_WARM_IDLE_S (900) without a run. `rlstudio up` starts one
as soon as the studio is up (`python -m trainer.warm start`). Each job's log says which
path it took: `warm runtime: forked pid N in X ms` or `cold start: <why>`.
"""

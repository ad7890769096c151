"""What the processes of a private head run with: Ray's metrics exporter off
(trainer.distributed.ray_settings says why: its thread crashed our driver at exit), and,
in the trainer's workers, what a crash leaves (trainer.distributed.crash_evidence); and
that a node we stop shuts itself down instead of draining until it is killed; and that a
driver joins its own head, by the address the head wrote.

What the exporter settings do inside Ray is measured by bench/ray_exporter_threads.py
(gdb); here, that the head's workers and this driver get them."""

from __future__ import annotations

import json
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests import crash_cores, live
from trainer.distributed.ray_settings import NO_METRICS_EXPORT_ENV, NODE_ENV
from trainer.distributed.ray_start import add_node_settings, drop_import_leftovers

pytestmark = pytest.mark.slow


def metrics_settings(env: dict[str, str] | os._Environ[str]) -> dict[str, str | None]:
    return {name: env.get(name) for name in NO_METRICS_EXPORT_ENV}


def test_a_driver_joins_the_head_at_the_address_the_head_wrote(ray_head: str) -> None:
    """trainer.distributed.cluster: the head is started once `ray start` has written its
    GCS address into its temp dir, and the driver joins that address, never Ray's "auto"
    (which, before the file exists, joins any Ray cluster running on the machine: in CI
    a driver joined another test's studio head that way and failed)."""
    import ray

    from trainer.distributed.cluster import written_gcs_address

    node: Any = ray._private.worker._global_node  # this driver's view of its cluster
    assert node.gcs_address == ray_head
    assert written_gcs_address(Path(node.get_temp_dir_path())) == ray_head


def test_the_driver_and_a_worker_run_without_rays_metrics_exporter(ray_head: str) -> None:
    import ray

    @ray.remote
    def worker_settings() -> dict[str, str | None]:
        return metrics_settings(os.environ)

    assert metrics_settings(os.environ) == NO_METRICS_EXPORT_ENV
    assert ray.get(worker_settings.remote()) == NO_METRICS_EXPORT_ENV


def test_a_worker_inherits_nothing_import_ray_sets_and_its_environ_0_stays_put(
    ray_head: str,
) -> None:
    """trainer.distributed.ray_start: a raylet that inherited RAY_CLIENT_MODE handed it to
    its workers, and where it came first the worker's `import ray` moved environ[0] to the
    heap, where Ray's setproctitle then walked (#46). Failed before the fix on the first
    check (every worker had it); the second held in about 45 heads of 46."""
    import ray

    @ray.remote
    def environment_block() -> tuple[list[str], bool]:
        import ctypes

        with open("/proc/self/environ", "rb") as f:  # as the raylet started this worker
            inherited = [item.split(b"=")[0].decode() for item in f.read().split(b"\0") if item]
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # from field 3 on
        start, end = int(fields[50 - 3]), int(fields[51 - 3])  # env_start, env_end
        environ = ctypes.c_void_p.in_dll(ctypes.CDLL(None), "environ").value or 0
        first = ctypes.c_void_p.from_address(environ).value or 0
        return inherited, start <= first < end

    inherited, environ_0_in_place = ray.get(environment_block.remote())
    assert "RAY_CLIENT_MODE" not in inherited  # what `import ray` sets (SET_BY_RAY_IMPORT)
    assert environ_0_in_place


def test_the_suites_head_has_the_trainers_workers_dump_core_when_they_crash(ray_head: str) -> None:
    """tests.crash_cores: a crashed trainer worker's core is read into the failing test's
    report. What a worker does at its start (trainer.distributed.crash_evidence) raises
    its core limit from the head's environment; Ray's own processes keep theirs."""
    import resource

    import ray

    @ray.remote
    def core_limits() -> tuple[tuple[int, int], tuple[int, int]]:
        from trainer.distributed import crash_evidence

        before = resource.getrlimit(resource.RLIMIT_CORE)
        crash_evidence.enable()
        return before, resource.getrlimit(resource.RLIMIT_CORE)

    before, after = ray.get(core_limits.remote())
    assert before == resource.getrlimit(resource.RLIMIT_CORE)  # as this process has it
    assert after[0] == after[1] and after[0] != 0


def test_a_trainer_worker_that_corrupts_its_heap_leaves_all_stacks_and_a_readable_core(
    ray_head: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heap abort of #46, made on purpose in a worker that starts as the trainer's do:
    its log has every thread's Python stack (written before Ray's own handler, which
    allocates and dies on the corrupt heap), and its core reads as the fastbin abort."""
    import ray

    from trainer.distributed import crash_evidence

    if crash_cores.core_place(Path.cwd()) is None:
        pytest.skip(f"core_pattern does not write files here: {crash_cores.core_pattern()!r}")
    if shutil.which("gdb") is None:
        pytest.skip("gdb is not installed")
    monkeypatch.setattr(crash_cores, "KEPT", tmp_path / "kept")

    @ray.remote(max_restarts=0)
    class Worker:
        def __init__(self) -> None:
            crash_evidence.enable()

        def pid(self) -> int:
            return os.getpid()

        def corrupt_the_heap(self) -> None:
            exec(crash_cores.WRITE_AFTER_FREE, {})

    started = time.time() - 1
    worker = Worker.remote()  # type: ignore[attr-defined]
    pid = ray.get(worker.pid.remote())
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(worker.corrupt_the_heap.remote())

    node: Any = ray._private.worker._global_node  # this driver's view of the head
    logs = Path(node.get_logs_dir_path())
    deadline = time.monotonic() + 30
    log = ""
    while "Current thread" not in log and time.monotonic() < deadline:
        log = "".join(p.read_text(errors="replace") for p in logs.glob(f"worker-*-{pid}.err"))
        time.sleep(0.2)
    assert "Fatal Python error: Aborted" in log, log[-3000:]
    assert "in corrupt_the_heap" in log and "Thread 0x" in log, log[-3000:]
    readings = [text for _, text in crash_cores.take_cores(started) if f"LWP {pid})" in text]
    assert len(readings) == 1
    assert "malloc_consolidate" in readings[0] and "= 0x4141414141414141" in readings[0]


def test_a_worker_late_past_its_timeout_writes_its_stacks_and_the_failure_says_so(
    ray_head: str,
) -> None:
    """A hang leaves where it hung: the group's deadline asks each late worker of its node
    (crash_evidence.STACKS_SIGNAL) for every thread's stack, which goes to its log, and,
    since this head's workers ask for cores, then makes it dump one (its native frames:
    gloo's or malloc's, where the Python stack shows only the call into C). Before it, a
    signal's handler in the caller (Ctrl-C, pytest-timeout's) ends the call's wait at
    once."""
    import threading

    import ray

    from trainer.config.resources_section import WorkerResources
    from trainer.distributed import crash_evidence
    from trainer.distributed.group import STACKS_FORWARD_S, ActorGroup, WorkerFailed
    from trainer.distributed.worker import WorkerInfo

    class Stuck:
        def __init__(self) -> None:
            crash_evidence.enable()

        def info(self) -> WorkerInfo:
            node_ip = ray.util.get_node_ip_address()
            return WorkerInfo(rank=0, pid=os.getpid(), node_ip=node_ip, device="cpu", num_params=0)

        def wait_for_a_peer_that_never_comes(self) -> None:
            threading.Event().wait()

    resources = WorkerResources(num_workers=1, cpus_per_worker=0.5, memory_gb=0.5)
    group = ActorGroup(Stuck, lambda rank: (), resources, 120.0, "PACK", role="stuck worker")
    started_at = time.time() - 1
    try:
        group.infos = group.call("info")  # within the start-up's 120 s
        pid = group.infos[0].pid
        # A signal's handler ends the wait within a second or so (Ctrl-C, pytest-timeout),
        # not when the phase's deadline comes: Ray's wait returns only then.
        stuck = "wait_for_a_peer_that_never_comes"
        interrupted_in = interrupt_after(1.0, lambda: group.call(stuck))
        assert interrupted_in < 10.0  # the phase's deadline is 120 s away
        group.timeout_s = 5.0
        started = time.monotonic()
        with pytest.raises(WorkerFailed) as failed:
            group.call(stuck, phase="a collective")
        waited = time.monotonic() - started
    finally:
        group.close()
    assert str(failed.value) == (
        "a collective: no answer within resources.worker_timeout_s=5 s from stuck worker "
        f"rank 0 (pid {pid} on {group.infos[0].node_ip}, cpu); their threads' stacks are "
        "in the run's log (rank 0); rank 0 was made to dump core"
    )
    # The deadline, the stacks' forwarding, the core's writing, load.
    assert waited < 5 + STACKS_FORWARD_S + 20
    node: Any = ray._private.worker._global_node  # this driver's view of the head
    log = "".join(
        p.read_text(errors="replace")
        for p in Path(node.get_logs_dir_path()).glob(f"worker-*-{pid}.err")
    )
    assert "Thread 0x" in log and "in wait_for_a_peer_that_never_comes" in log, log[-3000:]
    # Read here, so that the end of the run does not report it as a crash.
    readings = [text for _, text in crash_cores.take_cores(started_at) if f"LWP {pid})" in text]
    if crash_cores.core_place(Path.cwd()) is not None and shutil.which("gdb"):
        assert len(readings) == 1
        assert "PyThread_acquire_lock" in readings[0], readings[0][:3000]


def _started_as_a_background_job_without_cores() -> None:
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def test_a_late_worker_is_aborted_only_where_its_cores_are_asked_for() -> None:
    """group._dump_cores on a real process that starts as the trainer's workers do: with
    cores asked (crash_evidence.CORE_DUMPS_ENV in its environment) it ends by SIGQUIT's
    default action, which no handler of its own stands in front of; without, it is left
    running for the group's close. It starts with SIGQUIT ignored, as a shell's background
    job starts every descendant (a CI run started by `... &` had workers that never
    dumped), and its core limit is 0, so that no core is written here: the test above
    reads a worker's."""
    from trainer.distributed import crash_evidence
    from trainer.distributed.group import _dump_cores

    waits = (
        "from trainer.distributed import crash_evidence; crash_evidence.enable(); "
        "import threading; print('ready', flush=True); threading.Event().wait()"
    )
    for asked in (False, True):
        env = {k: v for k, v in os.environ.items() if k != crash_evidence.CORE_DUMPS_ENV}
        if asked:
            env[crash_evidence.CORE_DUMPS_ENV] = "1"
        child = subprocess.Popen(
            [sys.executable, "-c", waits],
            cwd=live.REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_started_as_a_background_job_without_cores,
        )
        try:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
            said = _dump_cores({0: psutil.Process(child.pid)})
            if not asked:
                assert said == "" and child.poll() is None
                continue
            assert said == "; rank 0 was made to dump core"
            assert child.wait(timeout=10) == -3  # SIGQUIT
            stderr = child.stderr.read() if child.stderr else ""
            assert "Fatal Python error" not in stderr  # no handler ran
        finally:
            child.kill()
            child.wait()


class Interrupted(Exception):
    pass


def interrupt_after(delay_s: float, call: Any) -> float:
    """Seconds from the start of `call()` until a SIGUSR1 handler's exception, raised
    `delay_s` in, ended it (Ray may wrap it in a SystemError)."""
    import signal
    import threading

    def interrupt(signum: int, frame: Any) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGUSR1, interrupt)
    timer = threading.Timer(delay_s, os.kill, (os.getpid(), signal.SIGUSR1))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises((Interrupted, SystemError)) as raised:
            call()
        took = time.monotonic() - started
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
    error: BaseException | None = raised.value
    while error is not None and not isinstance(error, Interrupted):
        error = error.__cause__ or error.__context__
    assert isinstance(error, Interrupted), raised.value
    return took


def test_ray_start_gives_a_node_our_settings_where_its_caller_chose_none() -> None:
    """What the trainer image's `ray` (KubeRay's and compose's nodes) and our own nodes
    start with: Ray's import leftover gone, every NODE_ENV setting in, an operator's own
    value kept."""
    environ = {"RAY_CLIENT_MODE": "0", "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "45"}
    add_node_settings(environ)
    drop_import_leftovers(environ)
    assert environ == {**NODE_ENV, "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "45"}


def test_a_stopped_ray_node_shuts_itself_down_without_draining(tmp_path: Path) -> None:
    """stop_ray_node: `ray start` exits by its own SIGTERM handler (code 1), not by the
    SIGKILL after the grace (-9), without first draining its node (ray_settings.
    NO_DRAIN_ENV; with the drain on, this fails on the log line), and nothing of its
    process group is left."""
    head = live.start_ray_head(tmp_path)
    group = live.group_members(head.proc.pid)
    assert len(group) > 5  # GCS, raylet, dashboard and its modules, agents
    head.stop()
    assert head.proc.returncode == 1, head.log()[-3000:]
    assert "Draining for up to" not in head.log()
    _, alive = psutil.wait_procs(group, timeout=10)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]


# Put first on the PYTHONPATH of a head's processes (a `sitecustomize`): the first process
# whose command line contains `part` sleeps before it starts, as one stuck or slow in its
# start would; the marker file says it happened.
FIRST_PROCESS_SLEEPS = """
import os, time
with open("/proc/self/cmdline", "rb") as f:
    chosen = {part!r}.encode() in f.read()
if chosen:
    try:
        os.close(os.open({marker!r}, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        pass
    else:
        time.sleep({seconds!r})
"""


def slow_first_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part: str, seconds: float
) -> Path:
    """FIRST_PROCESS_SLEEPS for every process started from now on; its marker file."""
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "a-process-slept"
    code = FIRST_PROCESS_SLEEPS.format(part=part, marker=str(marker), seconds=seconds)
    (site / "sitecustomize.py").write_text(code)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    return marker


def test_a_head_still_starting_at_its_deadline_says_where_its_threads_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cluster.ask_for_stacks: a `ray start` still starting when its caller gives up
    writes every thread's Python stack (trainer.distributed.ray_start registers the
    signal), and the failure carries them. A heap-check round's head once hung two
    minutes with its raylet never started and nothing in its log. Here the dashboard
    never answers, so `ray start` waits for its address."""
    from trainer.distributed.cluster import local_ray_head

    marker = slow_first_process(tmp_path, monkeypatch, "dashboard/dashboard.py", 600)
    with pytest.raises(RuntimeError) as failed, local_ray_head(start_timeout_s=15):
        pass
    said = str(failed.value)
    assert marker.exists()
    assert "`ray start` was still starting after 15 s; its threads' stacks:" in said, said
    assert "Current thread 0x" in said and " in start_api_server" in said, said


JOIN_AND_RUN_A_TASK = """
import json, os, sys
from pathlib import Path
from trainer.distributed.cluster import LocalHead
head = LocalHead(sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3]))
head.connect()
import ray
def pid(): return os.getpid()
print(ray.get(ray.remote(pid).remote()) != os.getpid(), flush=True)
"""


def test_a_worker_that_hangs_while_it_starts_does_not_hold_up_a_driver_joining(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ray_settings.NO_FIRST_DRIVER_PRESTART_ENV: with Ray's default, the raylet starts
    two workers for the first driver and answers its registration only once both have
    registered, so one stuck in its start holds `ray.init` forever (a heap-check round's
    driver waited in RegisterClient for 8 minutes). Here the first worker to start hangs:
    the driver joins at once and its task runs on another worker."""
    from trainer.distributed.cluster import local_ray_head

    marker = slow_first_process(tmp_path, monkeypatch, "default_worker.py", 600)
    # Ray gives up on a worker that has not registered after this long (60 s by default)
    # and starts another for the task waiting on it.
    monkeypatch.setenv("RAY_worker_register_timeout_seconds", "10")
    with local_ray_head() as head:
        monkeypatch.delenv("PYTHONPATH")  # the driver below starts as a plain process
        driver = [sys.executable, "-c", JOIN_AND_RUN_A_TASK, head.address, str(head.temp_dir)]
        driver.append(json.dumps(head.client_env))
        try:
            done = subprocess.run(driver, capture_output=True, text=True, timeout=150)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"the driver did not join: {exc.stderr!r}"[-3000:]) from exc
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr[-3000:]
    assert marker.exists()  # a worker did hang


def test_a_head_whose_raylet_gives_up_on_a_slow_agent_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """cluster.NODE_START_ATTEMPTS: Ray's raylet aborts when its dashboard agent has not
    written its ports within 15 s (a heap-check round's private head, at load 7). The
    first agent here takes 20 s: that start fails, and the head comes up on the next."""
    from trainer.distributed.cluster import local_ray_head, raylet_missed_its_agents

    marker = slow_first_process(tmp_path, monkeypatch, "dashboard/agent.py", 20)
    warnings = caplog.at_level(logging.WARNING, logger="trainer.distributed.cluster")
    with warnings, local_ray_head() as head:
        assert marker.exists() and not raylet_missed_its_agents(head.temp_dir)
    retries = [r.getMessage() for r in caplog.records if "gave up waiting" in r.getMessage()]
    assert len(retries) == 1 and "start 1 of 3" in retries[0], retries

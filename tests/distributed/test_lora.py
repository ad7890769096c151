"""LoRA (`actor.lora`) on two FSDP2 workers (gloo, CPU): only the adapters train, the
run matches one process, a checkpoint of the two workers resumes exactly, and the
merged export is the one process's."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from trainer.distributed.runtime import distributed_runtime
from trainer.training.checkpoint import latest_checkpoint
from trainer.training.loop import Trainer

from .conftest import RecordingReporter, small_run
from .test_checkpoints import COMPARED

pytestmark = pytest.mark.slow

# How far apart the one-process and two-worker adapters may end. Two batch layouts round
# their gradients differently, and Adam divides each gradient by its own running scale, so
# a rounding difference moves a weight by a fraction of one step (lr), largest where the
# gradient is near zero: the A matrices at the start, while B is still 0. Measured after 4
# steps at lr 2e-3: up to 1.8e-6 with oneDNN's linears on a Zen 4 EPYC, 7.6e-7 with
# PyTorch's (MKL). A wrong result (a rank's adapters left untrained, an optimizer state
# not restored) would move them by whole Adam steps, each near lr: 200 times this bound.
LR = 2e-3
ADAPTER_ATOL = LR / 200
LORA = (
    "actor.lora.rank=4",
    "actor.lora.alpha=8",
    f"actor.optim.lr={LR}",
    "trainer.total_steps=4",
    "checkpoint.save_every=2",
)


def adapters_of(states) -> dict[str, torch.Tensor]:
    return {name: weight.clone() for name, weight in states.actor.items()}


def test_lora_on_two_workers_trains_only_the_adapters_and_resumes_exactly(
    raw_demo, ray_head, tmp_path
):
    straight = RecordingReporter()
    alone = Trainer(small_run(raw_demo, tmp_path / "one", *LORA), straight)
    alone.fit()
    one_adapters = adapters_of(alone.roles.model_states())
    assert one_adapters and all(".lora_" in name for name in one_adapters)

    # Two workers train two steps and write a checkpoint, then stop.
    cfg = small_run(raw_demo, tmp_path / "two", *LORA, "resources.num_workers=2")
    first = RecordingReporter()
    with distributed_runtime(cfg, first) as runtime:
        Trainer(cfg, first, runtime).fit(stop_after=2)
        states = runtime.roles.model_states()
    # Only the adapters are trained: the optimizer holds them and nothing else, and the
    # checkpoint holds only them (the frozen base comes from model.path).
    assert states.actor.keys() == one_adapters.keys()
    assert len(states.actor_optim["param_groups"][0]["params"]) == len(one_adapters)
    assert len(states.actor_optim["state"]) == len(one_adapters)
    saved = latest_checkpoint(cfg.checkpoint.dir)
    assert saved is not None and saved.step == 2
    written = torch.load(saved.path / "actor.pt", weights_only=True)
    assert written.keys() == one_adapters.keys()
    for step in (1, 2):  # the same steps as one process
        for key in (*COMPARED, "actor/kl_loss"):
            expected = pytest.approx(straight.steps[step][key], rel=1e-5, abs=1e-5)
            assert first.steps[step][key] == expected, (step, key)

    # Two workers resume from it and finish like the uninterrupted run.
    resumed = RecordingReporter()
    with distributed_runtime(cfg, resumed) as runtime:
        Trainer(cfg, resumed, runtime).fit()
        two_adapters = adapters_of(runtime.roles.model_states())
        runtime.roles.save_pretrained(tmp_path / "two-hf")  # merged, the default
    assert any("resumed from" in message for _, message in resumed.logs)
    assert sorted(s for s in resumed.steps if s > 0) == [3, 4]
    for step in (3, 4):
        for key in (*COMPARED, "actor/kl_loss"):
            expected = pytest.approx(straight.steps[step][key], rel=1e-5, abs=1e-5)
            assert resumed.steps[step][key] == expected, (step, key)
    lora_b = [w for name, w in two_adapters.items() if ".lora_B." in name]
    assert max(float(w.abs().max()) for w in lora_b) > 1e-4  # B starts at 0: they trained
    for name, weight in one_adapters.items():
        torch.testing.assert_close(two_adapters[name], weight, atol=ADAPTER_ATOL, rtol=0, msg=name)

    # The merged export of the two workers' adapters is the one process's.
    alone.roles.save_pretrained(tmp_path / "one-hf")
    one_hf = load_file(tmp_path / "one-hf" / "model.safetensors")
    two_hf = load_file(tmp_path / "two-hf" / "model.safetensors")
    assert two_hf.keys() == one_hf.keys() and not any(".lora_" in name for name in two_hf)
    for name, weight in one_hf.items():
        torch.testing.assert_close(two_hf[name], weight, atol=1e-6, rtol=0, msg=name)

"""The sampling knobs have one definition (`SamplingParams`): training's rollout config,
the `trainer sample` command and the test-run API all default to it."""

from __future__ import annotations

import argparse

from studio.rewards import sampler
from studio.rewards.testrun_serializers import RewardTestRunCreateSerializer
from trainer.commands import sample as sample_command
from trainer.commands.sample import add_parser
from trainer.config.sampling import DEFAULT_SAMPLING
from trainer.config.schema import RolloutConfig

KNOBS = ("temperature", "top_p", "top_k", "max_new_tokens")


def expected(*names: str) -> dict[str, object]:
    return {name: getattr(DEFAULT_SAMPLING, name) for name in names}


def test_the_rollout_config_samples_like_sampling_params() -> None:
    # `n` is left out on purpose: training's n is the GRPO group size.
    fields = RolloutConfig.model_fields
    assert {name: fields[name].default for name in KNOBS} == expected(*KNOBS)


def test_the_sample_command_defaults_to_sampling_params() -> None:
    sub = argparse.ArgumentParser().add_subparsers()
    add_parser(sub)
    args = sub.choices["sample"].parse_args(["--model", "m", "--prompts", "p", "--out", "o"])
    assert {name: getattr(args, name) for name in ("n", *KNOBS)} == expected("n", *KNOBS)


def test_the_test_run_api_defaults_to_sampling_params() -> None:
    fields = RewardTestRunCreateSerializer().fields
    defaults = {name: fields[name].default for name in KNOBS}
    defaults["n"] = fields["samples_per_prompt"].default
    assert defaults == expected("n", *KNOBS)


def test_the_studio_reads_the_sample_commands_exit_statuses_as_they_are() -> None:
    assert (sampler.EXIT_BAD_INPUT, sampler.EXIT_TIME_LIMIT) == (
        sample_command.EXIT_BAD_INPUT,
        sample_command.EXIT_TIME_LIMIT,
    )

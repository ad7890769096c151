"""A reward's extra info through ingest: stored with the sample under the trainer's own
bounds, served by the samples API, and carried by the labelled export."""

from __future__ import annotations

import json

import pytest

from studio.telemetry.models import RolloutSample
from studio.telemetry.samples.export import verl_rows
from tests.telemetry.conftest import Lab, Trainer, sample, samples

EXTRA = {"pred": "42", "acc_note": None, "tried": ["41", "42"], "meta": {"len": 2}}


def test_ingest_stores_extras_with_the_sample_and_the_api_serves_them(
    lab: Lab, trainer: Trainer
) -> None:
    plain = sample(1)
    response = trainer.post([samples(0, 1, [sample(1, reward_extra=EXTRA), plain])])
    assert response.status_code == 200, response.json()
    with_extra, without = RolloutSample.objects.filter(run=trainer.run).order_by("position")
    assert with_extra.reward_extra == EXTRA
    assert without.reward_extra == {}
    detail = lab.user_client("viewer").get(f"/api/samples/{with_extra.pk}/").json()
    assert detail["reward_extra"] == EXTRA


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"pred": "x" * 3000}, "at most 2048 per row"),
        ({"pred": "a\x00"}, "extra info 'pred' contains a NUL character"),
    ],
)
def test_ingest_refuses_extras_beyond_the_rewards_own_bounds(
    trainer: Trainer, extra, message
) -> None:
    response = trainer.post([samples(0, 1, [sample(1, reward_extra=extra)])])
    assert response.status_code == 400
    assert message in str(response.json())
    assert not RolloutSample.objects.filter(run=trainer.run).exists()


def test_the_labelled_export_carries_the_extras(trainer: Trainer) -> None:
    response = trainer.post([samples(0, 1, [sample(1, reward_extra=EXTRA)])])
    assert response.status_code == 200, response.json()
    stored = list(RolloutSample.objects.filter(run=trainer.run))
    [row] = verl_rows(trainer.run, stored, "good")
    assert json.loads(row["extra_info"]["reward_extra_info"]) == EXTRA

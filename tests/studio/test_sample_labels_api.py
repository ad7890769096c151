"""Labels on a rollout sample: "good" and "bad" are one verdict per user, swapped and
removed through the labels endpoint; other labels stack."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from studio.projects.models import AuditEvent
from studio.telemetry.models import SampleLabel
from tests.studio.test_samples_api import make_run, make_sample


def labels_of(sample, user) -> list[str]:
    return sorted(
        SampleLabel.objects.filter(sample=sample, author=user).values_list("label", flat=True)
    )


def test_bad_replaces_good_and_other_labels_stay(world):
    sample = make_sample(make_run(world.project))
    url = f"/api/samples/{sample.pk}/labels/"
    member = world.client("member")
    assert member.post(url, {"label": "good"}, format="json").status_code == 201
    assert member.post(url, {"label": "reward-hacking"}, format="json").status_code == 201
    assert member.post(url, {"label": "bad"}, format="json").status_code == 201
    assert labels_of(sample, world.member) == ["bad", "reward-hacking"]
    unlabelled = AuditEvent.objects.filter(action="sample.unlabel", actor=world.member)
    assert [e.detail["label"] for e in unlabelled] == ["good"]

    detail = world.client("viewer").get(f"/api/samples/{sample.pk}/").json()
    assert sorted(row["label"] for row in detail["labels"]) == ["bad", "reward-hacking"]


def test_a_verdict_is_per_user_and_removing_it_leaves_none(world):
    sample = make_sample(make_run(world.project))
    url = f"/api/samples/{sample.pk}/labels/"
    member, owner = world.client("member"), world.client("owner")
    assert member.post(url, {"label": "good"}, format="json").status_code == 201
    assert owner.post(url, {"label": "bad"}, format="json").status_code == 201
    assert labels_of(sample, world.member) == ["good"]  # another user's verdict stays
    assert labels_of(sample, world.owner) == ["bad"]

    # Pressing "good" again removes it (the client sends DELETE for a label you have).
    assert member.delete(f"{url}?label=good").status_code == 204
    assert labels_of(sample, world.member) == []
    assert member.delete(f"{url}?label=good").status_code == 404


def test_the_database_refuses_two_verdicts_from_one_user(world):
    sample = make_sample(make_run(world.project))
    SampleLabel.objects.create(sample=sample, label="good", author=world.member)
    SampleLabel.objects.create(sample=sample, label="flag", author=world.member)
    with pytest.raises(IntegrityError), transaction.atomic():
        SampleLabel.objects.create(sample=sample, label="bad", author=world.member)

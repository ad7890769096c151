"""The new-run form shows every error the server names, wherever it points: a list of
sections edited as JSON (`reward.extra_models`) gets its item's error at the list's
field, and an error about a whole group (an extra reward model with no model chosen)
shows inside that group's section, opened. Nothing is created until the config is valid."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import expect

from .harness import sign_in
from .test_web_foundation import config_field

pytestmark = pytest.mark.browser


def test_errors_inside_a_list_and_about_a_whole_section_are_shown(
    studio: Any, page: Any, studio_orm: None
) -> None:
    user = studio.new_user("form")
    studio.demo_dataset(user)  # its one dataset: the form chooses it
    connections.close_all()  # see test_web_foundation: the ORM call's connection
    sign_in(page, studio, user)
    page.goto(f"{studio.url}/p/{user.project_slug}/runs/new")
    expect(page.get_by_role("heading", name="New run")).to_be_visible()
    page.get_by_label("Run name", exact=True).fill("judged")
    expect(page.get_by_label("Training data", exact=True)).to_have_value(re.compile(r"^d:\d+$"))
    create = page.get_by_role("button", name="Create run")

    # An extra reward model without a model chosen for it: an error about the section.
    models = config_field(page, "reward.extra_models")
    models.fill('[{"name": "judge"}]')
    expect(page.get_by_text("What differs from preset grpo-tiny-arith")).to_be_visible()
    create.click()
    reward = page.locator("details", has=page.locator("summary", has_text="Reward"))
    expect(reward.get_by_role("alert")).to_contain_text("reward.extra_models.0.path is empty")
    expect(reward.locator("summary")).to_contain_text("1 to fix")
    page.shot("run-form-section-error")

    # A bad value inside the list's item: at the list's field, naming the item's field.
    models.fill('[{"name": "judge", "weight": "x"}]')
    create.click()
    expect(models).to_have_attribute("aria-invalid", "true")
    item_error = page.get_by_text(re.compile(r"^0\.weight: Input should be a valid number"))
    expect(item_error).to_be_visible()
    page.shot("run-form-list-item-error", narrow=True)
    assert page.url.endswith("/runs/new")


def test_the_form_offers_every_verl_algorithm_and_the_inputs_each_needs(
    studio: Any, page: Any, studio_orm: None
) -> None:
    user = studio.new_user("algos")
    studio.demo_dataset(user)
    connections.close_all()
    sign_in(page, studio, user)
    page.goto(f"{studio.url}/p/{user.project_slug}/runs/new")
    expect(page.get_by_role("heading", name="New run")).to_be_visible()
    estimator = config_field(page, "algorithm.adv_estimator")
    offered = estimator.locator("option").all_inner_texts()
    for name in ("remax", "gpg", "opo", "grpo_passk", "optimal_token_baseline", "gae"):
        assert name in offered, offered
    loss = config_field(page, "actor.policy_loss")
    for name in ("cispo", "gpg", "sapo", "geo_mean", "clip_cov", "kl_cov", "bypass_mode"):
        assert name in loss.locator("option").all_inner_texts()

    # A critic is trained only by gae: its model picker shows then, not for ReMax.
    critic = page.get_by_label("Critic model", exact=True)
    estimator.select_option("remax")
    expect(critic).to_have_count(0)
    estimator.select_option("gae")
    expect(critic).to_be_visible()
    expect(critic.locator("option").first).to_have_text("(the run's model)")
    # A saved LoRA adapter is offered once LoRA is on; none exists in a new project.
    config_field(page, "actor.lora.rank").fill("8")
    expect(page.get_by_label("LoRA adapter", exact=True)).to_be_visible()
    expect(page.get_by_text("No adapters in this project")).to_be_visible()
    page.shot("run-form-gae-critic-and-lora-adapter")
    page.shot("run-form-gae-critic-and-lora-adapter", narrow=True)

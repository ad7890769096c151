"""The harness itself: the shared stack serves the app, and the page's problem filter
keeps what matters."""

from __future__ import annotations

from typing import Any

from tests.browser.harness import LiveStudio, console_error_is_problem


def test_a_4xx_resource_message_is_left_to_the_request_check() -> None:
    assert not console_error_is_problem(
        "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    )
    assert console_error_is_problem(
        "Failed to load resource: the server responded with a status of 502 (Bad Gateway)"
    )
    assert console_error_is_problem("Uncaught TypeError: x is undefined")


def test_the_live_studio_serves_the_app_and_its_api(page: Any, studio: LiveStudio) -> None:
    page.goto(studio.url + "/")
    page.wait_for_selector("#root *")
    page.shot("home")
    health = page.context.request.get(studio.url + "/api/health")
    assert health.status == 200, health.text()


def test_the_shared_demo_run_trains_and_reports_what_the_pages_show(
    trained_run: Any, studio: LiveStudio
) -> None:
    api = studio.api(trained_run.owner)
    base = f"{studio.url}/api/runs/{trained_run.id}"
    keys = api.get(f"{base}/metrics/keys", timeout=30).json()
    assert "critic/score/mean" in str(keys)
    samples = api.get(f"{studio.url}/api/samples/?run={trained_run.id}", timeout=30).json()
    assert samples["results"], samples

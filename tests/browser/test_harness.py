"""The harness itself: the shared stack serves the app, and the page's problem filter
keeps what matters."""

from __future__ import annotations

from typing import Any

from tests.browser.harness import LiveStudio, console_error_is_problem, response_is_problem


def test_a_resource_message_is_left_to_the_request_check_which_has_its_url() -> None:
    for status in ("400 (Bad Request)", "502 (Bad Gateway)"):
        assert not console_error_is_problem(
            f"Failed to load resource: the server responded with a status of {status}"
        )
    assert console_error_is_problem("Uncaught TypeError: x is undefined")


def test_every_server_error_is_a_problem_but_healths_designed_degraded_answer() -> None:
    assert response_is_problem("http://127.0.0.1:1/api/runs/", 500)
    assert response_is_problem("http://127.0.0.1:1/api/health", 500)
    assert response_is_problem("http://127.0.0.1:1/api/runs/?q=/api/health", 503)
    assert not response_is_problem("http://127.0.0.1:1/api/health", 503)
    assert not response_is_problem("http://127.0.0.1:1/api/runs/", 400)


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

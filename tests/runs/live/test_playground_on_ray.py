"""The playground on the live stack: a message to a project model starts its model server
as a Ray job holding half a CPU, the reply streams back in chunks over SSE, the warm
model answers the next message at once, and the server releases itself when idle."""

from __future__ import annotations

from tests.playground_client import chat
from tests.runs.conftest import Api, Stack, eventually
from tests.runs.live.conftest import PLAYGROUND_IDLE_S as IDLE_S
from workers.ray_jobs import RayJobsClient


def test_a_model_answers_in_streamed_chunks_stays_warm_and_is_released_when_idle(
    stack: Stack, api: Api
) -> None:
    model = api.model_id("model")
    sampling = {"temperature": 1.0, "max_new_tokens": 64, "min_new_tokens": 64, "seed": 1}
    cold = chat(api.url, api.session, api.project.slug, [{"model": model}], sampling)

    states = [s["state"] for s in cold.of("reply-status")]
    assert states == ["loading", "generating"], cold.events  # "loading model…" first
    [done] = cold.of("done")
    assert done["tokens"] == 64 and done["finish_reason"] == "length"
    reply = done["reply"]
    assert len(cold.of("chunk")) >= 2, "the reply came in one piece, not as it was written"
    assert cold.text(reply)

    # The server is one Ray job of our prefix, its entrypoint holding half a CPU (the
    # stack's earlier tests' servers are listed too, ended).
    [job] = [
        j for sid, j in stack.ray_jobs().items() if "-playground-" in sid and j.status == "RUNNING"
    ]
    cluster = RayJobsClient(stack.ray_address, 10)
    eventually(lambda: cluster.resources().available["cpus"] == 1.5, 20, "half a CPU held")
    listed = api.get(f"/api/playground/models/?project={api.project.slug}")
    assert [row["server"] for row in listed if row["id"] == model] == ["ready"]

    warm = chat(api.url, api.session, api.project.slug, [{"model": model}], sampling)
    assert [s["state"] for s in warm.of("reply-status")] == ["queued", "generating"]
    assert warm.first("chunk") < 5.0, f"warm first chunk after {warm.first('chunk'):.2f} s"
    print(f"first chunk: cold {cold.first('chunk'):.2f} s, warm {warm.first('chunk'):.3f} s")

    # Idle: the server releases itself and its job ends (its CPU share back to runs).
    def released() -> bool:
        jobs = stack.ray_jobs()
        return jobs[job.submission_id].status == "SUCCEEDED"

    eventually(released, IDLE_S + 30, "the idle model server's job ended")
    listed = api.get(f"/api/playground/models/?project={api.project.slug}")
    assert [row["server"] for row in listed if row["id"] == model] == [None]

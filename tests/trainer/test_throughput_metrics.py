"""trainer.training.metrics.throughput_metrics: the FLOP rate over the step, MFU over the update."""

from __future__ import annotations

import pytest

from trainer.training.metrics import throughput_metrics


def test_mfu_is_the_update_s_rate_against_the_peak() -> None:
    # 1e9 parameters x 1,000 tokens x 6 = 6e12 FLOPs: 2 s of update, 10 s of step.
    metrics = throughput_metrics(10**9, 1e13, 1000.0, step_s=10.0, update_s=2.0)
    assert metrics["perf/tflops_per_s"] == pytest.approx(0.6)
    assert metrics["perf/mfu/actor"] == pytest.approx(0.3)


@pytest.mark.parametrize(("peak", "update_s"), [(None, 2.0), (1e13, 0.0)])
def test_no_mfu_without_a_peak_or_an_update(peak: float | None, update_s: float) -> None:
    metrics = throughput_metrics(10**9, peak, 1000.0, step_s=10.0, update_s=update_s)
    assert "perf/mfu/actor" not in metrics
    assert metrics["perf/tflops_per_s"] == pytest.approx(0.6)

"""`DataSourceScorer`: scores each row with the built-in its data source resolves to
(`trainer.rewards.resolution`), for a config that chose no reward function.

Each built-in's scorer starts the first time a row needs it, so data of one source
starts one sandbox pool. Every result records the scorer that produced it in its extra
info (``scorer``), kept with the sample, so a sample says what scored it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from trainer.rewards.contract import RewardRequest, RewardResult, RewardScorer, error_result
from trainer.rewards.resolution import scorer_for, unresolved_message

SCORER_KEY = "scorer"  # the result's extra info key naming the built-in that scored it


class DataSourceScorer:
    def __init__(self, make_builtin: Callable[[str], RewardScorer]) -> None:
        self._make_builtin = make_builtin
        self._scorers: dict[str, RewardScorer] = {}

    def score_batch(self, requests: list[RewardRequest]) -> list[RewardResult]:
        results: list[RewardResult | None] = [None] * len(requests)
        rows_by_scorer: dict[str, list[int]] = {}
        for i, request in enumerate(requests):
            name = scorer_for(request.data_source)
            if name is None:  # data is checked at load; this guards any other caller
                results[i] = error_result(unresolved_message({request.data_source: 1}))
            else:
                rows_by_scorer.setdefault(name, []).append(i)
        for name, rows in rows_by_scorer.items():
            scored = self._scorer(name).score_batch([requests[i] for i in rows])
            for i, result in zip(rows, scored, strict=True):
                results[i] = replace(result, extra={**result.extra, SCORER_KEY: name})
        return [r for r in results if r is not None]

    def _scorer(self, name: str) -> RewardScorer:
        if name not in self._scorers:
            self._scorers[name] = self._make_builtin(name)
        return self._scorers[name]

    def close(self) -> None:
        scorers, self._scorers = list(self._scorers.values()), {}
        for scorer in scorers:
            scorer.close()

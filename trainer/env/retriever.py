"""The search retriever: an HTTP service the trainer process calls (never the sandbox).

The service is verl's retrieval server API (examples/sglang_multiturn/search_r1_like):
``POST {"queries": [...], "topk": k, "return_scores": true}`` answered by
``{"result": [[{"document": {"contents": "Title\\ntext"}, "score": s}, ...], ...]}``,
one list of passages per query. Its URL is an operator setting, the environment
variable `RETRIEVER_URL_ENV` of the trainer process, never part of a run's config: a
run config is written by studio users, and a URL in it would let them make the trainer
call any address its network reaches.

Each call is one request with a wall-clock limit and a bound on the bytes read (verl
retries ten times with growing delays; a rollout waits for its slowest call, so here a
failed request is the model's observation at once).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

RETRIEVER_URL_ENV = "RLSTUDIO_SEARCH_RETRIEVER_URL"
MAX_RESPONSE_BYTES = 1024 * 1024  # a larger answer is refused, not read
MAX_QUERIES = 16  # per call; a longer query_list is cut
MAX_QUERY_CHARS = 1000


class RetrieverError(Exception):
    """A request that did not give passages: the reason, shown to the model."""


def retriever_url_from_environment() -> str:
    """The operator's retriever URL; a clear error when it is not set."""
    url = os.environ.get(RETRIEVER_URL_ENV, "").strip()
    if not url:
        raise ValueError(
            f"the `search` environment calls a retriever, whose URL the operator sets in "
            f"{RETRIEVER_URL_ENV} (see docs/deploy.md); it is not set for this trainer"
        )
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise ValueError(f"{RETRIEVER_URL_ENV}={url!r}: expected an http:// or https:// URL")
    return url


@dataclass(frozen=True)
class Retriever:
    url: str
    timeout_s: float

    def search(self, queries: list[str], topk: int) -> list[list[dict[str, Any]]]:
        """Passages per query, in order; raises `RetrieverError` with the reason."""
        body = json.dumps({"queries": queries, "topk": topk, "return_scores": True}).encode()
        request = urllib.request.Request(
            self.url,
            data=body,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise RetrieverError(f"API Request Error: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
                message = f"Timeout Error: no answer within {self.timeout_s:g} s"
                raise RetrieverError(message) from None
            raise RetrieverError(f"Connection Error: {reason}") from None
        if len(raw) > MAX_RESPONSE_BYTES:
            raise RetrieverError(f"the answer is larger than {MAX_RESPONSE_BYTES} bytes")
        try:
            answer = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise RetrieverError(f"API Response JSON Decode Error: {exc}") from None
        results = answer.get("result", []) if isinstance(answer, dict) else None
        if not isinstance(results, list):
            raise RetrieverError("the answer has no `result` list")
        return results


def passages_text(passages: list[dict[str, Any]]) -> str:
    """One query's passages as verl's `_passages2string` writes them."""
    out = ""
    for index, item in enumerate(passages):
        content = str(item["document"]["contents"])
        lines = content.split("\n")
        out += f"Doc {index + 1} (Title: {lines[0]})\n" + "\n".join(lines[1:]) + "\n\n"
    return out.strip()


def search_result_text(results: list[list[dict[str, Any]]]) -> str:
    """The tool's response for a retriever answer, as verl's `perform_single_search_batch`."""
    if not results:
        return json.dumps({"result": "No search results found."}, ensure_ascii=False)
    try:
        text = "\n---\n".join(passages_text(r) for r in results)
    except (KeyError, TypeError, AttributeError) as exc:
        message = f"Error processing search results: {exc!r}"
        return json.dumps({"result": message}, ensure_ascii=False)
    return json.dumps({"result": text}, ensure_ascii=False)


def search_error_text(reason: str) -> str:
    return json.dumps({"result": f"Search error: API Call Failed: {reason}"}, ensure_ascii=False)

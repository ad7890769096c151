"""The model server: load one model, then answer chat requests until idle.

Read top to bottom: `main` redeems the job's secret (trainer.playground.link), loads the
model the studio resolved (a Hugging Face folder, or a trainer checkpoint on its base
model, as `trainer sample` and evaluations load them), says it is ready, then long-polls
the studio for the next request. Each reply is decoded token by token
(trainer.rollout.streaming) and posted in chunks, at most one post per
`chunk_interval_s`, so a fast model does not flood the studio and a slow one is still
read as it writes. With no request for `idle_seconds` the server asks the studio to
release it (refused while a request waits) and exits, which frees its Ray CPU share.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from typing import Any

import torch

from trainer.config.sampling import SamplingParams
from trainer.models.loading import load_policy, load_tokenizer, resolve_device
from trainer.models.sources import actor_state, resolve_model
from trainer.playground.link import LinkError, Replaced, ServerSettings, StudioLink
from trainer.playground.prompt import (
    Message,
    conversation,
    cut_at_next_speaker,
    encode,
    has_template,
)
from trainer.rollout.hf import HFEngine
from trainer.rollout.streaming import stream_completion

log = logging.getLogger(__name__)


@dataclass
class Loaded:
    engine: HFEngine
    max_positions: int | None  # the model's context length, when its config says


def load(settings: ServerSettings) -> Loaded:
    torch.set_num_threads(settings.threads)  # its Ray share, not every core of the node
    device = resolve_device("auto")
    source = resolve_model(settings.model_path)
    model = load_policy(source.base, source.dtype, device)
    if source.checkpoint is not None:
        model.load_state_dict(actor_state(source.checkpoint / "actor.pt", device))
    model.eval()
    tokenizer = load_tokenizer(source.base)
    limit = getattr(model.config, "max_position_embeddings", None)
    return Loaded(HFEngine(model, tokenizer, device), int(limit) if limit else None)


def sampling_of(request: dict[str, Any], prompt_tokens: int, limit: int | None) -> SamplingParams:
    s = request["sampling"]
    room = s["max_new_tokens"] if limit is None else min(s["max_new_tokens"], limit - prompt_tokens)
    return SamplingParams(
        temperature=float(s["temperature"]),
        top_p=float(s["top_p"]),
        max_new_tokens=int(room),
        seed=s.get("seed"),
    )


def answer(
    link: StudioLink, loaded: Loaded, settings: ServerSettings, request: dict[str, Any]
) -> None:
    """Generate one reply, posting its chunks; a failure is reported as the reply's error."""
    ids = {"exchange": request["exchange"], "reply": request["reply"]}
    tokenizer = loaded.engine.tokenizer
    messages: list[Message] = conversation(request["system"], request["messages"])
    prompt = encode(tokenizer, messages)
    limit = loaded.max_positions
    if limit is not None and len(prompt) >= limit:
        link.report(
            {
                **ids,
                "kind": "error",
                "message": f"The conversation is {len(prompt)} tokens; this model reads at most "
                f"{limit}. Start a new chat or shorten the system prompt.",
            }
        )
        return
    sampling = sampling_of(request, len(prompt), limit)
    minimum = min(int(request["sampling"]["min_new_tokens"]), sampling.max_new_tokens)
    link.report({**ids, "kind": "start", "prompt_tokens": len(prompt)})
    started = time.perf_counter()
    first_token_s: float | None = None
    sent, last_post, tokens, finish, text = 0, 0.0, 0, "length", ""
    transcript = not has_template(tokenizer)
    for step in stream_completion(loaded.engine, prompt, sampling, minimum):
        tokens += 1
        # A byte-level model can write a NUL, which JSON carries but the studio's text
        # fields refuse: shown as U+FFFD (one character for one, so offsets still hold).
        text = step.text.replace("\x00", "\ufffd")
        if first_token_s is None:
            first_token_s = time.perf_counter() - started
        if transcript and tokens > minimum:
            text, cut = cut_at_next_speaker(text)
            if cut:
                finish = "stop"
                break
        if step.finish_reason is not None:
            finish = step.finish_reason
            break
        now = time.perf_counter()
        if len(text) > sent and (sent == 0 or now - last_post >= settings.chunk_interval_s):
            stop = link.report({**ids, "kind": "chunk", "offset": sent, "text": text[sent:]})
            sent, last_post = len(text), now
            if stop.get("stop"):
                finish = "stopped"
                break
    seconds = time.perf_counter() - started
    end = min(sent, len(text))  # a transcript cut at the next speaker may end before `sent`
    link.report(
        {
            **ids,
            "kind": "done",
            "offset": end,
            "text": text[end:],
            "finish_reason": finish,
            "tokens": tokens,
            "seconds": round(seconds, 4),
            "first_token_s": round(first_token_s or seconds, 4),
        }
    )


def serve(link: StudioLink, settings: ServerSettings) -> None:
    link.report({"kind": "loading"})
    try:
        loaded = load(settings)
    except Exception as exc:  # any loader failure is the folder's; the studio shows why
        link.report({"kind": "failed", "message": f"{type(exc).__name__}: {str(exc)[:500]}"})
        raise
    link.report({"kind": "ready"})
    log.info("serving %s", settings.label)
    idle_since = time.monotonic()
    while True:
        left = settings.idle_seconds - (time.monotonic() - idle_since)
        if left <= 0:
            if link.report({"kind": "released"}).get("released"):
                return
            left = settings.poll_seconds  # a request came in meanwhile: keep serving
        request = link.next_request(min(settings.poll_seconds, max(left, 0.5)))
        if request is None:
            continue
        try:
            answer(link, loaded, settings, request)
        except Replaced:
            raise
        except Exception as exc:  # one bad reply (or report) must not take the model down
            log.exception("reply %s failed", request.get("reply"))
            error = {"kind": "error", "message": f"{type(exc).__name__}: {str(exc)[:500]}"}
            try:
                link.report({"exchange": request["exchange"], "reply": request["reply"], **error})
            except Replaced:
                raise
            except LinkError:
                log.warning("could not report the failure of reply %s", request.get("reply"))
        idle_since = time.monotonic()


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        link, secret = StudioLink.from_env()
        serve(link, link.bootstrap(secret))
    except Replaced as exc:
        log.info("the studio released this server: %s", exc)
        return 0
    except LinkError as exc:
        print(f"playground server error: {exc}", file=sys.stderr)
        return 1
    return 0

"""`VLLMEngine`: the vLLM rollout engine (optional extra: `pip install rlstudio[vllm]`).

Colocated with the FSDP2 actor in the distributed worker's process, on the same GPU:
- vLLM runs in-process (`VLLM_ENABLE_V1_MULTIPROCESSING=0`), so the worker can load
  weights straight into vLLM's model (`model.load_weights`, bucket by bucket, from the
  gathered FSDP2 parameters: `trainer.distributed.fsdp.full_parameter_buckets`);
- `sleep()` is vLLM's sleep mode level 1 (weights offloaded to CPU memory, KV cache
  dropped), so training gets the GPU; weights are woken first for a weight update and
  the KV cache last, in `wake()`, as verl does;
- every prompt's request carries its own seed (derived from the call's seed and the
  prompt's index), so samples do not depend on how requests are batched.

Sampling log-probabilities are vLLM's own (see its `logprobs_mode`); the trainer does
not use them for updates (it recomputes log-probs with the actor).

NOT VERIFIED in this repository: vLLM cannot be installed on its CPU build machines
(its wheel pins another torch and needs CUDA). The code follows vLLM's documented
Python API (`LLM`, `SamplingParams`, `TokensPrompt`, `LLM.sleep`, `LLM.wake_up`); the
path to the in-process model differs across vLLM versions and is looked up below.
Tests: tests/distributed/test_vllm_engine.py (marker `vllm`, skipped without vLLM).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch

from trainer.rollout.chunked import chunk_seed
from trainer.rollout.engine import Completion, FinishReason, SamplingParams

# Where vLLM versions keep the in-process model (newest first).
MODEL_PATHS = (
    "llm_engine.model_executor.driver_worker.worker.model_runner.model",
    "llm_engine.model_executor.driver_worker.model_runner.model",
    "llm_engine.engine_core.engine_core.model_executor.driver_worker.worker.model_runner.model",
)


def _finish_reason(reason: str | None, stop_reason: Any) -> FinishReason:
    if reason == "length":
        return "length"
    return "stop" if isinstance(stop_reason, str) else "eos"


class VLLMEngine:
    def __init__(
        self,
        model_path: str,
        *,
        seed: int = 0,
        dtype: str = "bfloat16",
        gpu_memory_utilization: float = 0.4,
        max_model_len: int | None = None,
        enforce_eager: bool = True,
        hf_overrides: dict[str, Any] | None = None,
    ) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # in-process engine
        try:
            from vllm import LLM
        except ImportError as exc:
            raise ImportError(
                "rollout.engine='vllm' needs the optional extra: pip install 'rlstudio[vllm]' "
                "(CUDA machines only)"
            ) from exc
        self.llm = LLM(
            model=model_path,
            tokenizer=model_path,
            dtype=dtype,
            seed=seed,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
            enable_sleep_mode=True,
            enforce_eager=enforce_eager,  # CUDA graphs would pin memory across sleep
            tensor_parallel_size=1,
            # model.config_overrides: the engine computes with the trainer's config.
            hf_overrides=hf_overrides or None,
        )
        self.tokenizer = self.llm.get_tokenizer()
        self.weights_asleep = False
        self.cache_asleep = False

    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Completion]:
        """len(prompts) * sampling.n completions, prompt-major."""
        from vllm import SamplingParams as VllmSampling
        from vllm.inputs import TokensPrompt

        if self.weights_asleep or self.cache_asleep:
            raise RuntimeError("VLLMEngine.generate() called while asleep; call wake() first")
        requests = [TokensPrompt(prompt_token_ids=list(p)) for p in prompts]
        params = [
            VllmSampling(
                n=sampling.n,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k if sampling.top_k > 0 else -1,
                max_tokens=sampling.max_new_tokens,
                stop=list(sampling.stop) or None,
                include_stop_str_in_output=True,  # our protocol keeps the stop string
                logprobs=0,  # the sampled token's log-prob only
                seed=chunk_seed(sampling.seed, i),
            )
            for i in range(len(prompts))
        ]
        outputs = self.llm.generate(requests, params, use_tqdm=False)
        completions: list[Completion] = []
        for prompt_index, output in enumerate(outputs):
            for choice in output.outputs:
                token_ids = list(choice.token_ids)
                logprobs = [
                    float(step[token].logprob) if step and token in step else float("nan")
                    for token, step in zip(token_ids, choice.logprobs or [], strict=False)
                ]
                completions.append(
                    Completion(
                        prompt_index=prompt_index,
                        token_ids=token_ids,
                        logprobs=logprobs,
                        text=choice.text,
                        finish_reason=_finish_reason(choice.finish_reason, choice.stop_reason),
                    )
                )
        return completions

    def _model(self) -> Any:
        for path in MODEL_PATHS:
            found: Any = self.llm
            for name in path.split("."):
                found = getattr(found, name, None)
            if found is not None and hasattr(found, "load_weights"):
                return found
        raise RuntimeError(
            "cannot reach vLLM's in-process model to load weights (looked at "
            f"{MODEL_PATHS}); is VLLM_ENABLE_V1_MULTIPROCESSING=0 set before vLLM starts?"
        )

    def update_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        """Load (a bucket of) full weights, HF names; any subset of the model's tensors."""
        if self.weights_asleep:
            self.llm.wake_up(tags=["weights"])
            self.weights_asleep = False
        self._model().load_weights(weights=list(state.items()))

    def sleep(self) -> None:
        if not (self.weights_asleep or self.cache_asleep):
            self.llm.sleep(level=1)
            self.weights_asleep = self.cache_asleep = True

    def wake(self) -> None:
        if self.weights_asleep and self.cache_asleep:
            self.llm.wake_up()
        elif self.cache_asleep:
            self.llm.wake_up(tags=["kv_cache"])
        self.weights_asleep = self.cache_asleep = False

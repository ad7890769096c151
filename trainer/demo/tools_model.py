"""The demo tools model: the demo model briefly warm-started on calling a calculator.

Built offline from the demo model folder (trainer.demo.model) into its own folder
(default ``var/demo-model-tools``), with the `tools-arith` toy dataset beside it:
two-digit additions and subtractions (``"37+48="``, ground truth ``"85"``), which the
tiny model cannot do in its head but can with the ``calculator`` tool.

Its tokenizer is the demo tokenizer with `TOOLS_CHAT_TEMPLATE`, our own ChatML
template that renders ``tools=`` (as one system line naming them: a tiny model cannot
read a JSON schema; real models' templates render the whole schema) and ``tool``
messages as their own ChatML role. Calls are written in the Hermes / Qwen2.5 format
that trainer.env.toolcalls parses; the tokenizer gains `CALL_TOKENS`, plain (not
special) tokens for the call's fixed markup, so a call is 11 tokens instead of ~70
byte-level ones (the model's embeddings grow by as many rows).

The warm start supervises two answer styles, like the arith demo: call the calculator
and copy its result, or answer directly. Its first `tool_only_steps` steps call the tool
every time (that is where copying the result is learnt), the rest only in
`tool_fraction` of the examples. Direct
answers are mostly wrong, so greedy accuracy starts low; GRPO with the calculator
environment learns to call the tool (preset ``grpo-tools-arith``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import torch
from tokenizers import AddedToken
from transformers import AutoTokenizer, LlamaForCausalLM, PreTrainedTokenizerBase

from trainer.demo.model import supervised_step
from trainer.demo.toy_data import arith_answer, arith_prompt, verl_row, write_rows
from trainer.env.chat import ObservationRenderer
from trainer.env.protocol import Observation, ToolCall
from trainer.env.toolcalls import format_tool_call
from trainer.env.tools import CALCULATOR

TOOLS_CHAT_TEMPLATE = (
    "{% if tools %}{{ '<|im_start|>system\ntools: ' }}"
    "{% for tool in tools %}{{ tool['function']['name'] if tool['function'] is defined "
    "else tool['name'] }}{% if not loop.last %}{{ ', ' }}{% endif %}{% endfor %}"
    "{{ '<|im_end|>\n' }}{% endif %}"
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


# Plain added tokens: they decode as their text, so parsing sees the usual markup.
CALL_TOKENS = (
    "<tool_call>",
    "</tool_call>",
    '{"name": "calculator"',
    ', "arguments": {"expression": "',
    '"}}',
)


@dataclass(frozen=True)
class ToolsWarmStart:
    steps: int = 150
    batch_size: int = 32
    lr: float = 1e-3
    lr_warmup_steps: int = 20
    # The first steps only call the tool: copying its result into the answer is learnt
    # there (mixed from the start, the model ignores the result and answers by itself).
    tool_only_steps: int = 60
    tool_fraction: float = 0.2  # share of examples that call the calculator afterwards


def tools_arith_problems(low: int = 10, high: int = 99) -> list[tuple[int, str, int]]:
    """Two-digit a+b and a-b (a >= b), in a fixed order."""
    return [
        (a, op, b)
        for op in ("+", "-")
        for a in range(low, high + 1)
        for b in range(low, high + 1)
        if op == "+" or a >= b
    ]


def write_tools_arith(
    out_dir: str | Path, n_train: int, n_test: int, seed: int
) -> tuple[Path, Path]:
    """`{out_dir}/tools-arith/{train,test}.parquet` (data_source "arith": its reward)."""
    problems = tools_arith_problems()
    rng = random.Random(seed)
    rng.shuffle(problems)
    test, train = problems[:n_test], problems[n_test : n_test + n_train]

    def rows(chosen: list[tuple[int, str, int]], split: str) -> list[dict[str, object]]:
        return [
            verl_row("arith", arith_prompt(a, op, b), str(arith_answer(a, op, b)), split, i)
            for i, (a, op, b) in enumerate(chosen)
        ]

    folder = Path(out_dir) / "tools-arith"
    return (
        write_rows(rows(train, "train"), folder / "train.parquet"),
        write_rows(rows(test, "test"), folder / "test.parquet"),
    )


def _example(
    tokenizer: PreTrainedTokenizerBase,
    renderer: ObservationRenderer,
    problem: tuple[int, str, int],
    tool: bool,
) -> tuple[list[int], list[int]]:
    """(ids, labels) of one episode; labels are -100 outside the model's own tokens."""
    a, op, b = problem
    question, answer = arith_prompt(a, op, b), str(arith_answer(a, op, b))
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": question}],
        tools=[CALCULATOR.spec.as_chat_template_tool()],
        add_generation_prompt=True,
        tokenize=False,
    )
    eos = str(tokenizer.eos_token)
    parts: list[tuple[str, bool]] = [(str(prompt), False)]
    if tool:
        call = format_tool_call(ToolCall("calculator", {"expression": question.rstrip("=")}))
        observation = renderer.render([Observation("tool", answer, name="calculator")])
        parts += [(call + eos, True), (observation, False)]
    parts.append((answer + eos, True))
    ids: list[int] = []
    labels: list[int] = []
    for text, supervised in parts:
        part = tokenizer(text, add_special_tokens=False)["input_ids"]
        ids += part
        labels += part if supervised else [-100] * len(part)
    return ids, labels


def warm_start_tools(
    model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerBase, cfg: ToolsWarmStart, seed: int
) -> float:
    """Supervised steps on both styles over the training problems; returns the last loss."""
    renderer = ObservationRenderer(tokenizer)
    rng = random.Random(seed)
    problems = tools_arith_problems()
    torch.manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: min(1.0, (step + 1) / cfg.lr_warmup_steps)
    )
    model.train()
    loss = torch.tensor(float("nan"))
    pad = int(tokenizer.pad_token_id)
    for step in range(cfg.steps):
        fraction = 1.0 if step < cfg.tool_only_steps else cfg.tool_fraction
        batch = [
            _example(tokenizer, renderer, rng.choice(problems), rng.random() < fraction)
            for _ in range(cfg.batch_size)
        ]
        width = max(len(ids) for ids, _ in batch)
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        lab = torch.full_like(ids, -100)
        for i, (seq, label) in enumerate(batch):
            ids[i, : len(seq)] = torch.tensor(seq)
            mask[i, : len(seq)] = 1
            lab[i, : len(seq)] = torch.tensor(label)
        loss = supervised_step(model, opt, sched, ids, mask, lab)
    model.eval()
    return float(loss.detach())


def build_demo_tools_model(
    demo_model_dir: str | Path,
    out_dir: str | Path,
    data_dir: str | Path,
    seed: int = 0,
    cfg: ToolsWarmStart = ToolsWarmStart(),
) -> float:
    """Write the tools model folder and the tools-arith dataset; returns the last loss."""
    tokenizer = AutoTokenizer.from_pretrained(demo_model_dir)
    tokenizer.chat_template = TOOLS_CHAT_TEMPLATE
    tokenizer.add_tokens([AddedToken(t, normalized=False, special=False) for t in CALL_TOKENS])
    model = LlamaForCausalLM.from_pretrained(demo_model_dir)
    model.resize_token_embeddings(len(tokenizer))
    write_tools_arith(data_dir, n_train=2000, n_test=200, seed=seed)
    loss = warm_start_tools(model, tokenizer, cfg, seed)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return loss

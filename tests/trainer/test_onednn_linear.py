"""oneDNN's linear layers (trainer.cpu_speed.onednn_linear) compute what PyTorch's do,
forward and backward, and the trainer's models use them on CPU where
`speed.cpu_linear_kernel` says: `onednn`, or `auto` on an AMD CPU with AVX-512."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from tests.trainer.batches import tiny_model
from trainer.config import load_config
from trainer.cpu_speed.onednn_linear import (
    ONEDNN_AVAILABLE,
    OneDnnLinear,
    auto_kernel,
    cpu_vendor,
    onednn_applies,
    onednn_linear,
    resolve_kernel,
    use_cpu_linear_kernel,
)
from trainer.demo.model import build_model, build_tokenizer
from trainer.models.converters import ModelConverters, build_converters
from trainer.models.loading import ValueModel, load_policy


def test_this_build_has_onednn() -> None:
    # PyTorch's x86 CPU wheels ship oneDNN; without it every other test here would only
    # check the fallback.
    assert ONEDNN_AVAILABLE


def _grads(linear: nn.Module, x: torch.Tensor, upstream: torch.Tensor) -> tuple[torch.Tensor, ...]:
    x = x.detach().requires_grad_()
    linear.zero_grad(set_to_none=True)
    out = linear(x)
    out.backward(upstream.to(out.dtype))
    bias = () if linear.bias is None else (linear.bias.grad,)
    return (out.detach(), x.grad, linear.weight.grad, *bias)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(
    "shape", [(64, 96), (3, 17, 96), (0, 96), (2, 0, 96)], ids=["2d", "3d", "empty", "empty3d"]
)
def test_forward_and_backward_match_float64(shape: tuple[int, ...], bias: bool) -> None:
    torch.manual_seed(0)
    plain = nn.Linear(96, 80, bias=bias)
    x = torch.randn(shape)
    upstream = torch.randn((*shape[:-1], 80))
    exact = nn.Linear(96, 80, bias=bias).double()
    exact.load_state_dict(plain.state_dict())
    fast = nn.Linear(96, 80, bias=bias)
    fast.load_state_dict(plain.state_dict())
    assert use_cpu_linear_kernel(fast, "onednn") == 1 and type(fast) is OneDnnLinear
    assert onednn_applies(x, fast.weight) == (x.numel() > 0)  # empty: torch's own
    expected = _grads(exact, x.double(), upstream)
    for got in (_grads(fast, x, upstream), _grads(plain, x, upstream)):
        for value, reference in zip(got, expected, strict=True):
            assert value is not None and reference is not None
            torch.testing.assert_close(value.double(), reference, rtol=1e-5, atol=1e-5)


def test_strided_inputs_multiply_as_their_values() -> None:
    torch.manual_seed(0)
    weight = torch.randn(8, 12)
    for x in (
        torch.randn(12, 5).t(),
        torch.randn(10, 12)[::2],
        torch.randn(2, 3, 12).transpose(0, 1),
    ):
        assert not x.is_contiguous()
        torch.testing.assert_close(onednn_linear(x, weight), x @ weight.t())
    # and through autograd, where the backward multiplies by transposed views
    x = torch.randn(12, 5).t().requires_grad_()
    w = weight.clone().requires_grad_()
    onednn_linear(x, w).pow(2).sum().backward()
    x2, w2 = x.detach().clone().requires_grad_(), weight.clone().requires_grad_()
    (x2 @ w2.t()).pow(2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(w.grad, w2.grad)


def test_other_dtypes_and_vector_inputs_keep_torchs_linear() -> None:
    fast = nn.Linear(16, 4).to(torch.bfloat16)
    use_cpu_linear_kernel(fast, "onednn")
    x = torch.randn(3, 16, dtype=torch.bfloat16)
    assert not onednn_applies(x, fast.weight)
    assert torch.equal(fast(x), nn.functional.linear(x, fast.weight, fast.bias))
    single = nn.Linear(16, 4)
    use_cpu_linear_kernel(single, "onednn")
    vector = torch.randn(16)
    assert not onednn_applies(vector, single.weight)
    assert torch.equal(single(vector), nn.functional.linear(vector, single.weight, single.bias))


def test_the_swap_keeps_parameters_names_and_subclasses() -> None:
    model, _, _ = tiny_model()

    class Wrapped(nn.Linear):  # a subclass may compute more: left alone
        pass

    model.lm_head.__class__ = Wrapped
    params = {name: id(p) for name, p in model.named_parameters()}
    keys = list(model.state_dict())
    assert use_cpu_linear_kernel(model, "torch") == 0
    assert use_cpu_linear_kernel(model, "onednn") == 14
    assert {name: id(p) for name, p in model.named_parameters()} == params
    assert list(model.state_dict()) == keys
    assert type(model.lm_head) is Wrapped
    assert use_cpu_linear_kernel(model, "onednn") == 0  # already swapped


def test_a_models_logits_and_gradients_match_torchs() -> None:
    torch.manual_seed(0)
    tokenizer = build_tokenizer()
    plain = build_model(tokenizer, "tiny", hidden_size=64, num_layers=2)
    fast = build_model(tokenizer, "tiny", hidden_size=64, num_layers=2)
    fast.load_state_dict(plain.state_dict())
    use_cpu_linear_kernel(fast, "onednn")
    ids = torch.randint(5, 60, (4, 23))
    results = []
    for model in (plain, fast):
        logits = model(input_ids=ids).logits
        logits.log_softmax(-1)[..., 7].sum().backward()
        grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
        results.append((logits.detach(), grads))
    (plain_logits, plain_grads), (fast_logits, fast_grads) = results
    torch.testing.assert_close(fast_logits, plain_logits, rtol=1e-5, atol=1e-5)
    assert plain_grads.keys() == fast_grads.keys()
    for name, grad in plain_grads.items():
        error = (fast_grads[name] - grad).abs().max() / grad.abs().max()
        assert error < 1e-5, (name, float(error))


def converters(kernel: str) -> ModelConverters:
    return build_converters(load_config(overrides=[f"speed.cpu_linear_kernel={kernel}"]))


def test_loaded_models_follow_the_config(demo_assets: Path) -> None:
    model_dir = demo_assets / "model"
    plain = load_policy(model_dir, "float32", "cpu")
    assert {type(m) for m in plain.modules() if isinstance(m, nn.Linear)} == {nn.Linear}
    policy = converters("auto").apply(load_policy(model_dir, "float32", "cpu"), "cpu")
    by_default = OneDnnLinear if resolve_kernel("auto") == "onednn" else nn.Linear
    assert type(policy.lm_head) is by_default
    onednn, torch_kernel = converters("onednn"), converters("torch")
    assert type(onednn.apply(load_policy(model_dir), "cpu").lm_head) is OneDnnLinear
    assert type(torch_kernel.apply(load_policy(model_dir), "cpu").lm_head) is nn.Linear
    critic = onednn.apply(ValueModel.from_pretrained(model_dir, "float32", "cpu"), "cpu")
    assert type(critic.value_head) is OneDnnLinear


def test_a_model_headed_for_a_gpu_keeps_plain_linears_while_staged_on_the_cpu(
    demo_assets: Path,
) -> None:
    """FSDP workers load on the CPU and shard onto the GPU: the CPU kernels must not come
    along (they would sit in a GPU model). `auto` keeps PyTorch's there; `onednn`, asked
    for by name, is refused rather than ignored."""
    model_dir = demo_assets / "model"
    auto = converters("auto")
    staged = auto.apply(load_policy(model_dir, "float32", "cuda", stage_on_cpu=True), "cuda")
    assert {type(m) for m in staged.modules() if isinstance(m, nn.Linear)} == {nn.Linear}
    assert {p.device.type for p in staged.parameters()} == {"cpu"}
    critic = ValueModel.from_pretrained(model_dir, "float32", "cuda", stage_on_cpu=True)
    assert type(auto.apply(critic, "cuda").value_head) is nn.Linear
    with pytest.raises(ValueError, match="cpu_linear_kernel=onednn is for CPU training"):
        converters("onednn").prepare(torch.device("cuda"))


def test_onednn_for_other_dtypes_is_refused_by_the_config() -> None:
    with pytest.raises(ValueError, match="onednn multiplies float32 layers; model.dtype is bf"):
        load_config(overrides=["speed.cpu_linear_kernel=onednn", "model.dtype=bfloat16"])
    assert load_config(overrides=["model.dtype=bfloat16"]).speed.cpu_linear_kernel == "auto"


def test_auto_runs_onednn_only_where_it_was_measured_faster() -> None:
    assert auto_kernel("AuthenticAMD", has_avx512=True) == "onednn"  # Zen 4/5: MKL skips it
    assert auto_kernel("AuthenticAMD", has_avx512=False) == "torch"  # Zen 3: oneDNN slower
    assert auto_kernel("GenuineIntel", has_avx512=True) == "torch"  # MKL's own AVX-512 path
    assert auto_kernel("", has_avx512=True) == "torch"
    assert resolve_kernel("onednn") == "onednn" and resolve_kernel("torch") == "torch"
    assert resolve_kernel("auto") in ("onednn", "torch")


def test_the_vendor_is_read_from_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n")
    assert cpu_vendor(cpuinfo) == "AuthenticAMD"
    assert cpu_vendor(tmp_path / "missing") == ""

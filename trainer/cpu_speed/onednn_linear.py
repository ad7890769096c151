"""float32 linear layers on CPU through oneDNN instead of PyTorch's default BLAS.

PyTorch multiplies float32 matrices on CPU with MKL. On an AMD CPU, MKL does not take its
AVX-512 code path: on an AMD EPYC Zen 5, measured alone with 2 threads
(`bench/cpu_linear.py`), the bench model's forward products ran at 155-205 GFLOP/s
through `torch.mm` and at 264-456 GFLOP/s through oneDNN, for 64 rows (a decoding step) as
for 4,096 (an update's micro-batch), and the backward's products 1.3-2.6x faster
(docs/benchmarks.md, "Trainer vs TRL"). Without AVX-512 the gain is gone: on an AVX2-only
AMD EPYC Zen 3 the same products ran 0.60-1.40x, most of them slower through oneDNN. So
`auto`, the default, picks oneDNN only on AMD CPUs with AVX-512 and keeps PyTorch's
elsewhere (Intel CPUs, where MKL does use AVX-512, were not measured). oneDNN ships inside
PyTorch's CPU build; its linear op (`torch.ops.mkldnn._linear_pointwise`, what
`torch.compile` emits for CPU linears) takes ordinary dense tensors, any strides, and
returns an ordinary tensor.

`use_cpu_linear_kernel(model, "onednn")` turns the model's `nn.Linear` layers into
`OneDnnLinear`: the same parameters, state dict and hooks, whose forward and backward run
oneDNN for float32 inputs on CPU and PyTorch's own `linear` otherwise (other dtypes, GPU,
a sharded DTensor weight). Values differ from MKL's by float rounding only (another
summation order).
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any, Literal

import torch
from torch import Tensor, nn

from trainer.config.speed_section import CpuLinearKernel

log = logging.getLogger(__name__)

# oneDNN is part of PyTorch's x86 and ARM CPU builds; a build without it keeps torch's.
ONEDNN_AVAILABLE = bool(torch.backends.mkldnn.is_available()) and hasattr(
    torch.ops.mkldnn, "_linear_pointwise"
)


def _onednn(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """`x @ weight.T + bias` by oneDNN (dense tensors of any strides)."""
    out: Tensor = torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")
    return out


def onednn_applies(x: Tensor, weight: Tensor) -> bool:
    """True when oneDNN runs this product: float32 on CPU, a plain tensor weight (not a
    DTensor shard or another tensor subclass) and a non-empty input of at least two
    dimensions (oneDNN refuses the backward's empty products)."""
    return (
        ONEDNN_AVAILABLE
        and x.numel() > 0
        and x.dtype == torch.float32
        and weight.dtype == torch.float32
        and x.device.type == "cpu"
        and weight.device.type == "cpu"
        and x.dim() >= 2
        and type(weight) in (Tensor, nn.Parameter)
    )


def linear_into(out: Tensor, x: Tensor, weight: Tensor, bias: Tensor | None, onednn: bool) -> None:
    """Write `x @ weight.T + bias` (2-D `x`) into `out`: by oneDNN (then one copy from a
    cache-hot result) or by torch's `mm`/`addmm` straight into `out`."""
    if onednn:
        out.copy_(_onednn(x, weight, bias))
    elif bias is None:
        torch.mm(x, weight.t(), out=out)
    else:
        torch.addmm(bias, x, weight.t(), out=out)


def linear_backward(
    grad: Tensor,
    x: Tensor,
    weight: Tensor,
    needs: tuple[bool, bool, bool],
    has_bias: bool,
    onednn: bool,
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """Gradients of `x @ weight.T + bias` for input, weight and bias (None where not
    needed), by oneDNN or by torch's matmul."""
    flat_grad = grad.reshape(-1, grad.shape[-1])
    flat_x = x.reshape(-1, x.shape[-1])
    grad_x = grad_w = grad_b = None
    if onednn:
        # grad @ W is a linear layer whose weight is W.T; grad.T @ x one whose weight is x.T.
        if needs[0]:
            grad_x = _onednn(grad, weight.t())
        if needs[1]:
            grad_w = _onednn(flat_grad.t(), flat_x.t())
    else:
        if needs[0]:
            grad_x = grad @ weight
        if needs[1]:
            grad_w = flat_grad.t() @ flat_x
    if has_bias and needs[2]:
        grad_b = flat_grad.sum(0)
    return grad_x, grad_w, grad_b


class _OneDnnLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return _onednn(x, weight, bias)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        x, weight = ctx.saved_tensors
        needs = (ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2])
        return linear_backward(grad, x, weight, needs, ctx.has_bias, onednn=True)


def onednn_linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """`nn.functional.linear` by oneDNN, forward and backward (see `onednn_applies`)."""
    if not torch.is_grad_enabled():  # decoding: no autograd node to build
        return _onednn(x, weight, bias)
    out: Tensor = _OneDnnLinearFunction.apply(x, weight, bias)
    return out


class OneDnnLinear(nn.Linear):
    """`nn.Linear` whose float32 CPU products run through oneDNN (module doc)."""

    def forward(self, x: Tensor) -> Tensor:
        if onednn_applies(x, self.weight):
            return onednn_linear(x, self.weight, self.bias)
        return super().forward(x)


PLAIN_LINEARS = (nn.Linear, OneDnnLinear)  # the types that compute exactly x @ W.T + b


def cpu_vendor(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's vendor id (`AuthenticAMD`, `GenuineIntel`), or "" where Linux's cpuinfo
    does not say."""
    try:
        with cpuinfo.open() as lines:
            for line in lines:
                key, _, value = line.partition(":")
                if key.strip() == "vendor_id":
                    return value.strip()
    except OSError:
        pass
    return ""


def auto_kernel(vendor: str, has_avx512: bool) -> Literal["onednn", "torch"]:
    """What `auto` runs: oneDNN where it was measured faster than MKL (an AMD CPU with
    AVX-512), PyTorch's default everywhere else (module doc)."""
    return "onednn" if vendor == "AuthenticAMD" and has_avx512 else "torch"


@functools.cache
def resolve_kernel(kernel: CpuLinearKernel) -> Literal["onednn", "torch"]:
    """The kernel `kernel` means on this machine; logs what `auto` chose, once."""
    if kernel != "auto":
        return kernel
    vendor = cpu_vendor()
    has_avx512 = bool(torch.cpu._is_avx512_supported())
    chosen = auto_kernel(vendor, has_avx512)
    log.info(
        "float32 linear layers on CPU: %s (cpu_linear_kernel=auto; vendor %s, AVX-512 %s)",
        "oneDNN" if chosen == "onednn" else "PyTorch's default",
        vendor or "unknown",
        "yes" if has_avx512 else "no",
    )
    return chosen


def use_cpu_linear_kernel(model: nn.Module, kernel: CpuLinearKernel) -> int:
    """Make `model`'s plain `nn.Linear` layers run `kernel` on CPU; returns how many
    changed. Wrappers (LoRA layers) are left as they are; their base layers change."""
    if resolve_kernel(kernel) == "torch":
        return 0
    if not ONEDNN_AVAILABLE:
        if kernel == "onednn":  # asked for by name: refused, not ignored
            raise ValueError(
                "speed.cpu_linear_kernel=onednn, but this PyTorch build has no oneDNN linear "
                "op; set speed.cpu_linear_kernel to auto or torch."
            )
        return 0
    changed = 0
    for module in model.modules():
        if type(module) is nn.Linear:
            # A class swap keeps the very parameter objects (optimizer state, FSDP and
            # tied weights point at them), the hooks and the state dict's names.
            module.__class__ = OneDnnLinear
            changed += 1
    return changed

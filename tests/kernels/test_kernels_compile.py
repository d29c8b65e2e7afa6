"""The Triton kernels compile for real GPUs (sm_80 / sm_90 cubin) — no GPU needed.

The interpreter tests check the maths but not that the kernels lower through Triton's
compiler (the interpreter accepts some code the compiler rejects). Ahead-of-time
compilation runs in a subprocess without ``TRITON_INTERPRET`` (which this test area sets).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rft_sdk import kernels

CODE = r"""
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, compile
from rft_sdk.kernels import _grpo_loss as G, _selective_log_softmax as S
from rft_sdk.kernels._launch import launch_config

ROW = {"inner": "i32", "stride_outer": "i64", "stride_inner": "i32", "stride_v": "i32"}
for arch, dt, size in ((90, "*bf16", 2), (80, "*fp32", 4)):
    target = GPUTarget("cuda", arch, 32)
    fwd, bwd = (launch_config(151_936, size, p) for p in ("forward", "backward"))
    jobs = [
        (S._lse_fwd_kernel, {"logits_ptr": dt, "ids_ptr": "*i64", "logprob_ptr": "*fp32", "lse_ptr": "*fp32",
                             **ROW, "V": "i32", "inv_temp": "fp32", "BLOCK_V": "constexpr"}, {}, fwd),
        (S._lse_bwd_kernel, {"logits_ptr": dt, "grad_ptr": dt, "ids_ptr": "*i64", "lse_ptr": "*fp32",
                             "scale_ptr": "*fp32", **ROW, "g_stride_outer": "i64", "g_stride_inner": "i32",
                             "g_stride_v": "i32", "V": "i32", "inv_temp": "fp32", "BLOCK_V": "constexpr"},
         {}, bwd),
    ]
    grpo_sig = {"logits_ptr": dt, "ids_ptr": "*i64", **{k: "*fp32" for k in (
        "adv_ptr", "weight_ptr", "old_ptr", "ref_ptr", "logprob_ptr", "lse_ptr", "wloss_ptr",
        "dlogprob_ptr", "kl_ptr", "clipped_ptr", "entropy_ptr")}, **ROW, "V": "i32", "inv_temp": "fp32",
        "eps_low": "fp32", "eps_high": "fp32", "beta": "fp32",
        "HAS_OLD": "constexpr", "HAS_REF": "constexpr", "WITH_ENTROPY": "constexpr", "BLOCK_V": "constexpr"}
    for has_old in (False, True):  # with and without old/ref logprobs and entropy
        jobs.append((G._grpo_fwd_kernel, grpo_sig,
                     {"HAS_OLD": has_old, "HAS_REF": has_old, "WITH_ENTROPY": has_old}, fwd))
    for fn, sig, consts, (block, warps, stages) in jobs:
        consts = {**consts, "BLOCK_V": block}
        k = compile(ASTSource(fn=fn, signature=sig, constexprs=consts), target=target,
                    options={"num_warps": warps, "num_stages": stages})
        assert "cubin" in k.asm, fn
        print(arch, dt, fn.__name__, "ok")
"""


@pytest.mark.skipif(not kernels.triton_available(), reason="triton not installed")
def test_kernels_compile_to_cubin():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    root = Path(__file__).resolve().parents[2]
    res = subprocess.run([sys.executable, "-c", CODE], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-4000:]
    assert res.stdout.count(" ok") == 2 * 4

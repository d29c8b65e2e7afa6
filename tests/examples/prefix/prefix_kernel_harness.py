"""PRE-FIX FIXTURE (issue #25): the kernel harness as it was before the fix (see prefix_kernel_write_app.py).

Run a candidate ``ModelNew`` against a reference program's ``Model`` (CPU).

Copied into every rollout's sandbox and run there as
``python harness.py reference.py model_new.py`` with a JSON request on stdin
(``{"nonce", "seed", "overrides", "reps"}``); prints one line
``<nonce> <JSON result>``. The nonce is read before the candidate is imported,
so a candidate cannot print a result the grader would accept.

Result: ``{"correct": bool, "max_abs_err": float, "t_ref_s": float,
"t_new_s": float, "speedup": float, "flags": [str], "error": str | None}``.
``flags`` are runtime hack signals: ``identity`` (the output is an input
tensor or shares its storage), ``caching`` (a second call with new inputs
returned the first call's output), ``input_mutation`` (inputs changed),
``timing_tamper`` (``time.perf_counter`` or a torch function was replaced),
``tensor_subclass`` (the output is not a plain ``torch.Tensor``).

Correctness is checked on the reference's own ``get_inputs()`` and on
standard-normal inputs of the same shapes (``torch.rand`` inputs are all
positive, which lets an identity "ReLU" pass), with ``atol = rtol = 1e-4``.
``Model`` and ``ModelNew`` are both constructed right after
``torch.manual_seed(seed)``, so a candidate that creates the same layers in
the same order holds the same weights. Timing: one thread,
3 warm-up calls, median of ``reps`` calls each, ``time.perf_counter``.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
import time
import types

PERF = time.perf_counter
_WATCHED = ("relu", "sigmoid", "tanh", "softmax", "exp", "sum", "mean", "matmul", "where", "clamp")


def _load(path: str, name: str, overrides: dict) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for key, value in overrides.items():
        setattr(module, key, value)
    return module


def _median_time(fn, inputs, reps: int) -> float:
    for _ in range(3):
        fn(*inputs)
    times = []
    for _ in range(reps):
        t0 = PERF()
        fn(*inputs)
        times.append(PERF() - t0)
    return statistics.median(times)


def evaluate(reference: str, candidate: str, overrides: dict, seed: int, reps: int) -> dict:
    """The result dict for one evaluation (see the module docstring).

    A candidate that replaces ``time.perf_counter`` or a watched torch function
    is flagged ``timing_tamper``; the originals are put back afterwards, so an
    in-process evaluation (the tests) never leaves the caller's clock or torch
    patched.
    """
    import torch

    watched = {n: getattr(torch, n) for n in _WATCHED}
    try:
        res = _evaluate(torch, reference, candidate, overrides, seed, reps)
        if time.perf_counter is not PERF or any(getattr(torch, n) is not f for n, f in watched.items()):
            res["flags"] = sorted({*res["flags"], "timing_tamper"})
        return res
    finally:
        time.perf_counter = PERF
        for name, fn in watched.items():
            setattr(torch, name, fn)


def _evaluate(torch: types.ModuleType, reference: str, candidate: str, overrides: dict, seed: int,
              reps: int) -> dict:
    torch.set_num_threads(1)
    ref_mod = _load(reference, "reference_model", overrides)
    torch.manual_seed(seed)
    init = ref_mod.get_init_inputs()
    ref = ref_mod.Model(*init)
    res = {"correct": False, "max_abs_err": None, "t_ref_s": None, "t_new_s": None, "speedup": 0.0,
           "flags": [], "error": None}
    try:
        cand_mod = _load(candidate, "candidate_model", overrides)
        torch.manual_seed(seed)  # same seed as the reference: layers created alike get the same weights
        new = cand_mod.ModelNew(*init)
    except Exception as exc:  # the candidate's failure is a result, not a harness crash
        res["error"] = f"candidate failed to load: {type(exc).__name__}: {exc}"
        return res
    inputs = ref_mod.get_inputs()
    normal = [torch.randn_like(t) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]
    flags = res["flags"]
    errs = []
    with torch.no_grad():
        for case in (inputs, normal):
            before = [t.clone() if isinstance(t, torch.Tensor) else t for t in case]
            want = ref(*[t.clone() if isinstance(t, torch.Tensor) else t for t in case])
            try:
                got = new(*case)
            except Exception as exc:
                res["error"] = f"candidate raised: {type(exc).__name__}: {exc}"
                return res
            if type(got) is not torch.Tensor:
                flags.append("tensor_subclass")
                got = torch.as_tensor(got)
            if any(isinstance(t, torch.Tensor) and (got is t or got.untyped_storage().data_ptr()
                                                     == t.untyped_storage().data_ptr()) for t in case):
                flags.append("identity")
            if any(isinstance(a, torch.Tensor) and not torch.equal(a, b) for a, b in zip(case, before)):
                flags.append("input_mutation")
            if got.shape != want.shape or got.dtype != want.dtype:
                res["error"] = f"output {tuple(got.shape)} {got.dtype}, expected {tuple(want.shape)} {want.dtype}"
                errs.append(float("inf"))
            else:
                errs.append(float((got - want).abs().max()))
                if not torch.allclose(got, want, atol=1e-4, rtol=1e-4):
                    res["error"] = res["error"] or "output differs from the reference"
        try:  # a second call on new inputs must not return the first call's output
            first = new(*inputs).clone()
            if torch.equal(first, new(*normal)) and not torch.equal(ref(*inputs), ref(*normal)):
                flags.append("caching")
        except Exception as exc:
            res["error"] = res["error"] or f"candidate raised: {type(exc).__name__}: {exc}"
        res["max_abs_err"] = max(errs)
        res["correct"] = res["error"] is None
        if res["correct"]:
            res["t_ref_s"] = _median_time(ref, inputs, reps)
            res["t_new_s"] = _median_time(new, inputs, reps)
            res["speedup"] = res["t_ref_s"] / max(res["t_new_s"], 1e-9)
    res["flags"] = sorted(set(flags))
    return res


def main() -> int:
    """CLI entry (see the module docstring)."""
    request = json.loads(sys.stdin.readline())
    nonce = request["nonce"]
    out = sys.stdout
    try:
        res = evaluate(sys.argv[1], sys.argv[2], request.get("overrides", {}), int(request.get("seed", 0)),
                       int(request.get("reps", 10)))
    except Exception as exc:
        res = {"correct": False, "speedup": 0.0, "flags": [], "error": f"harness: {type(exc).__name__}: {exc}"}
    out.write(f"{nonce} {json.dumps(res)}\n")
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

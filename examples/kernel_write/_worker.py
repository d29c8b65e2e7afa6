"""Evaluation worker: loads one module's model and runs it on inputs the grader sends.

Run in a fresh sandbox as ``python _worker.py MODULE.py CLASS`` — once for the
reference (``Model``), once for the candidate (``ModelNew``), each in its own
sandbox and process. It holds no secret: the grader (the parent) generates
the inputs, times each call from outside, and compares the outputs it
receives with the reference's; nothing the worker says about correctness or
time is trusted. Self-contained (only the standard library and torch): it is
copied into the sandbox.

Channel: the protocol moves to private duplicates of stdin/stdout before the
module is imported; fd 0 then reads ``/dev/null`` and fd 1 goes to stderr, so
what the module prints never reaches the grader. Frames: 4-byte big-endian
length + a JSON header, then ``header["nbytes"]`` raw bytes (tensors as raw
little-endian data described by ``header["tensors"]``: ``[{"dtype", "shape"}]``).

Requests (JSON header) and answers:

- ``init {"seed", "overrides", "threads", "init"?}`` → ``{"ok", "init"}``: constructs
  the model from ``init`` (default: the module's ``get_init_inputs()``, JSON values)
  right after ``torch.manual_seed(seed)`` (the same layers get the same weights);
- ``inputs {"seed"}`` → tensors of ``get_inputs()`` under that seed (reference only);
- ``load {"slot"}`` + tensors → ``{"ok"}``: fresh tensors (new storage) in a slot;
- ``refill {"slot"}`` + tensors → ``{"ok"}``: new values copied into the slot's
  existing tensors (same storage: a cache keyed by address serves stale output);
- ``go {"slot"}`` → ``{"done", "crc", "patched", "trapped"}``: calls the model on the
  slot, waits for the device, and computes the CRC-32 of the complete output's bytes
  before answering (the grader times this round trip, so the clock stops only when
  the output is complete); ``patched`` names the harness functions (``os.read``, ...)
  that no longer are the ones bound at start, ``trapped`` the reference operators
  (``init``'s ``"trap"``: dotted paths, wrapped by identity before the module is
  imported, whatever name it later uses) that the model called;
- ``fetch {"slot"}`` → the output of the last ``go`` and the slot's inputs after it;
- ``drop {"slot"}``, ``exit``.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import select
import struct
import sys
import time
import zlib

# The harness's own functions, bound before the module under test is imported: a
# module that replaces ``os.read`` (under any alias) never runs inside the protocol,
# and ``_patched()`` names what it replaced.
_HARNESS = {"os.read": os.read, "os.write": os.write, "os.dup2": os.dup2, "select.select": select.select,
            "time.perf_counter": time.perf_counter, "time.monotonic": time.monotonic, "json.dumps": json.dumps,
            "json.loads": json.loads, "struct.pack": struct.pack, "struct.unpack": struct.unpack,
            "zlib.crc32": zlib.crc32, "ctypes.string_at": ctypes.string_at}
_READ, _WRITE, _CRC, _LOADS, _DUMPS = os.read, os.write, zlib.crc32, json.loads, json.dumps
_PACK, _UNPACK, _CHARS = struct.pack, struct.unpack, ctypes.c_char


def _patched():
    mods = {"os": os, "select": select, "time": time, "json": json, "struct": struct, "zlib": zlib, "ctypes": ctypes}
    return sorted(name for name, fn in _HARNESS.items()
                  if getattr(mods[name.split(".")[0]], name.split(".")[1], None) is not fn)


def crc_of(torch, t):
    """CRC-32 of a tensor's bytes (contiguous, on the CPU), read in place."""
    t = torch.Tensor.as_subclass(t, torch.Tensor).detach()
    if t.device.type != "cpu":
        t = t.cpu()  # a device-to-host copy waits for the kernels that write it
    t = t.contiguous()
    n = t.numel() * t.element_size()
    return _CRC((_CHARS * n).from_address(t.data_ptr())) if n else 0


def _recorder(target, path, hits):
    def trapped(*args, **kwargs):
        hits.add(path)
        return target(*args, **kwargs)
    return trapped


def _trap(torch, paths, hits):
    """Replace every alias of each reference operator with a wrapper that records the
    call: by identity in every loaded ``torch*`` module, and the ``torch.Tensor``
    method and the C functions (``torch._C._nn``, ``torch._C._VariableFunctions``)
    of the same name (``x.relu()``, ``torch._C._nn.leaky_relu``)."""
    for path in paths:
        owner, _, name = path.rpartition(".")
        target = getattr(sys.modules.get(owner), name, None)
        if target is None:
            continue
        trapped = _recorder(target, path, hits)
        for mod_name, mod in list(sys.modules.items()):
            if mod is not None and (mod_name == "torch" or mod_name.startswith("torch.")):
                for attr, value in list(vars(mod).items()):
                    if value is target:
                        setattr(mod, attr, trapped)
        method = vars(torch.Tensor).get(name)
        if method is not None and callable(method):
            setattr(torch.Tensor, name, _recorder(method, path, hits))
        for native in (torch._C._nn, torch._C._VariableFunctions):  # the C functions behind the operator
            fn = getattr(native, name, None)
            if fn is not None and callable(fn):
                try:
                    setattr(native, name, _recorder(fn, path, hits))
                except (AttributeError, TypeError):  # _VariableFunctions' attributes are read-only: not trappable
                    continue


def _recv(fd):
    head = _read(fd, 4)
    if head is None:
        return None, b""
    header = _LOADS(_read(fd, _UNPACK(">I", head)[0]))
    return header, _read(fd, int(header.get("nbytes", 0))) or b""


def _read(fd, n, _read_fd=_READ):
    chunks, got = [], 0
    while got < n:
        chunk = _read_fd(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send(fd, header, payload=b"", _write=_WRITE):
    header = dict(header, nbytes=len(payload))
    raw = _DUMPS(header).encode()
    data = _PACK(">I", len(raw)) + raw + payload
    view = memoryview(data)
    while view:
        view = view[_write(fd, view):]


def _dump(torch, tensors):
    meta, blobs = [], []
    for t in tensors:
        t = torch.Tensor.as_subclass(t, torch.Tensor).detach().contiguous().cpu()
        meta.append({"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape)})
        blobs.append(ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()) if t.numel() else b"")
    return meta, b"".join(blobs)


def _load(torch, meta, payload):
    out, offset = [], 0
    for m in meta:
        dtype = getattr(torch, m["dtype"])
        n = 1
        for d in m["shape"]:
            n *= d
        size = n * torch.empty((), dtype=dtype).element_size()
        buf = bytearray(payload[offset:offset + size])
        offset += size
        t = torch.frombuffer(buf, dtype=dtype) if size else torch.empty(0, dtype=dtype)
        out.append(t.reshape(m["shape"]).clone())  # clone: storage owned by torch, new address
    return out


def main():
    module_path, class_name = sys.argv[1], sys.argv[2]
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    import torch

    header, _ = _recv(proto_in)
    if not header or header.get("op") != "init":
        return 2
    torch.set_num_threads(int(header.get("threads", 1)))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    hits = set()
    _trap(torch, [str(p) for p in header.get("trap") or []], hits)
    try:
        spec = importlib.util.spec_from_file_location("evaluated_module", module_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for key, value in (header.get("overrides") or {}).items():
            setattr(module, key, value)
        init = header["init"] if "init" in header else list(module.get_init_inputs())
        torch.manual_seed(int(header["seed"]))
        model = getattr(module, class_name)(*init)
        json.dumps(init)
    except Exception as exc:  # the module's failure is an answer, not a worker crash
        _send(proto_out, {"error": f"{type(exc).__name__}: {exc}"[:1000]})
        return 0
    _send(proto_out, {"ok": True, "init": init})
    slots, outputs = {}, {}
    while True:
        header, payload = _recv(proto_in)
        if header is None or header.get("op") == "exit":
            return 0
        op, slot = header.get("op"), header.get("slot")
        try:
            if op == "inputs":
                torch.manual_seed(int(header["seed"]))
                meta, blob = _dump(torch, [t for t in module.get_inputs()])
                _send(proto_out, {"tensors": meta}, blob)
            elif op == "load":
                slots[slot] = _load(torch, header["tensors"], payload)
                _send(proto_out, {"ok": True})
            elif op == "refill":
                for t, new in zip(slots[slot], _load(torch, header["tensors"], payload)):
                    t.copy_(new)
                _send(proto_out, {"ok": True})
            elif op == "go":  # a plain, materialised tensor, checksummed before "done": no deferred output
                with torch.no_grad():
                    out = model(*slots[slot])
                    outputs[slot] = torch.Tensor.as_subclass(out, torch.Tensor).detach().contiguous()
                    crc = crc_of(torch, outputs[slot])
                _send(proto_out, {"done": True, "crc": crc, "patched": _patched(), "trapped": sorted(hits)})
            elif op == "fetch":
                out = outputs.pop(slot)
                meta, blob = _dump(torch, [out, *slots[slot]])
                _send(proto_out, {"tensors": meta}, blob)
            elif op == "drop":
                slots.pop(slot, None)
                outputs.pop(slot, None)
                _send(proto_out, {"ok": True})
            else:
                _send(proto_out, {"error": f"unknown op {op!r}"})
        except Exception as exc:
            _send(proto_out, {"error": f"{type(exc).__name__}: {exc}"[:1000]})


if __name__ == "__main__":
    raise SystemExit(main())

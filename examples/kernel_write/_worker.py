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
- ``go {"slot"}`` → ``{"done"}``: calls the model on the slot (the grader times this);
- ``fetch {"slot"}`` → the output of the last ``go`` and the slot's inputs after it;
- ``drop {"slot"}``, ``exit``.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import struct
import sys

DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


def _recv(fd):
    head = _read(fd, 4)
    if head is None:
        return None, b""
    header = json.loads(_read(fd, struct.unpack(">I", head)[0]))
    return header, _read(fd, int(header.get("nbytes", 0))) or b""


def _read(fd, n):
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send(fd, header, payload=b""):
    header = dict(header, nbytes=len(payload))
    raw = json.dumps(header).encode()
    data = struct.pack(">I", len(raw)) + raw + payload
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


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
            elif op == "go":  # a plain, materialised tensor before "done": no lazy or deferred output
                with torch.no_grad():
                    out = model(*slots[slot])
                    outputs[slot] = torch.Tensor.as_subclass(out, torch.Tensor).detach().contiguous()
                _send(proto_out, {"done": True})
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

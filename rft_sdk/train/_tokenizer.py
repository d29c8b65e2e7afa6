"""Byte-level tokenizer: UTF-8 bytes plus three special tokens. Nothing is downloaded.

Ids ``0..255`` are the bytes of the UTF-8 encoding; ``256`` is BOS (start of a
rendered conversation), ``257`` is EOS (end of an assistant turn: generation
stops there) and ``258`` is PAD. Decoding drops special tokens and replaces
invalid UTF-8 with U+FFFD, so any sampled id sequence decodes to a string.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ByteTokenizer"]


class ByteTokenizer:
    """UTF-8 byte tokenizer with BOS/EOS/PAD; ``vocab_size == 259``.

    The interface (``encode``, ``decode``, ``bos_id``, ``eos_id``, ``pad_id``,
    ``vocab_size``) is all the policy needs, so a Hugging Face tokenizer can be
    wrapped to match it (see ``_hf.py``).
    """

    bos_id = 256
    eos_id = 257
    pad_id = 258
    vocab_size = 259

    def encode(self, text: str) -> list[int]:
        """``text`` → list of byte ids (one per UTF-8 byte, no specials added)."""
        return list(text.encode("utf-8"))

    def decode(self, ids: Iterable[int]) -> str:
        """Ids → text; special ids (>= 256) are skipped, bad UTF-8 becomes U+FFFD.

        Raises:
            ValueError: an id is negative or >= ``vocab_size``.
        """
        out = bytearray()
        for i in ids:
            i = int(i)
            if i < 0 or i >= self.vocab_size:
                raise ValueError(f"token id {i} is outside the byte vocabulary [0, {self.vocab_size})")
            if i < 256:
                out.append(i)
        return out.decode("utf-8", errors="replace")

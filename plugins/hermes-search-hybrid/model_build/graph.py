"""The ONNX graph of all-MiniLM-L6-v2's transformer (a BERT encoder), with no weights in it:
each weight is an external tensor read from the upstream ``model.safetensors`` at its offset,
so the file onnxruntime reads is the very file whose sha256 is checked.

Run at build time by ``hatch_build.py`` (it needs the ``onnx`` package, which the plugin does
not need at run time). The computation is Hugging Face's ``BertModel`` in eval mode, float32:
embeddings (word + position + token type, layer norm), then per layer self-attention with an
additive mask, a dense output with a residual layer norm, and a feed-forward block with exact
(erf) GELU. Its output is the last hidden state; mean pooling and normalisation are done by
the plugin with numpy, as sentence-transformers does them.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import onnx
from onnx import TensorProto, helper

WEIGHTS_FILE = "model.safetensors"
OPSET = 17  # LayerNormalization
IR_VERSION = 8
_DTYPES = {"F32": TensorProto.FLOAT}


def safetensors_layout(path: Path) -> tuple[int, dict[str, Any]]:
    """The offset of the data part of a safetensors file and its header (name -> dtype, shape,
    data_offsets)."""
    with path.open("rb") as stream:
        (length,) = struct.unpack("<Q", stream.read(8))
        header = json.loads(stream.read(length))
    header.pop("__metadata__", None)
    return 8 + length, header


def build_graph(weights: Path, config: dict[str, Any]) -> onnx.ModelProto:
    """The encoder of the BERT ``config`` (Hugging Face's ``config.json``) over the tensors of
    the safetensors file ``weights``."""
    start, header = safetensors_layout(weights)
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_size = hidden // heads
    epsilon = float(config["layer_norm_eps"])
    initializers: dict[str, TensorProto] = {}

    def weight(name: str) -> str:
        if name not in initializers:
            entry = header[name]
            begin, end = entry["data_offsets"]
            tensor = TensorProto()
            tensor.name = name
            tensor.data_type = _DTYPES[entry["dtype"]]
            tensor.dims.extend(entry["shape"])
            tensor.data_location = TensorProto.EXTERNAL
            for key, value in (
                ("location", WEIGHTS_FILE),
                ("offset", str(start + begin)),
                ("length", str(end - begin)),
            ):
                item = tensor.external_data.add()
                item.key, item.value = key, value
            initializers[name] = tensor
        return name

    nodes: list[onnx.NodeProto] = []
    constants: list[TensorProto] = []
    counter = iter(range(1_000_000))

    def node(op: str, inputs: list[str], **attributes: Any) -> str:
        output = f"{op.lower()}_{next(counter)}"
        nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def constant(name: str, values: list[int] | list[float], data_type: int) -> str:
        constants.append(helper.make_tensor(name, data_type, [len(values)], values))
        return name

    def scalar(name: str, value: float) -> str:
        constants.append(helper.make_tensor(name, TensorProto.FLOAT, [], [value]))
        return name

    def layer_norm(x: str, prefix: str) -> str:
        return node(
            "LayerNormalization",
            [x, weight(f"{prefix}.weight"), weight(f"{prefix}.bias")],
            axis=-1,
            epsilon=epsilon,
        )

    def linear(x: str, prefix: str) -> str:
        transposed = node("Transpose", [weight(f"{prefix}.weight")], perm=[1, 0])
        return node("Add", [node("MatMul", [x, transposed]), weight(f"{prefix}.bias")])

    zero = constant("zero", [0], TensorProto.INT64)
    one = constant("one", [1], TensorProto.INT64)
    two = constant("two", [2], TensorProto.INT64)
    heads_shape = constant("heads_shape", [0, 0, heads, head_size], TensorProto.INT64)
    merged_shape = constant("merged_shape", [0, 0, hidden], TensorProto.INT64)
    scale = scalar("scale", 1.0 / math.sqrt(head_size))
    lowest = scalar("lowest", -3.4028234663852886e38)  # torch.finfo(float32).min
    unit = scalar("unit", 1.0)
    half = scalar("half", 0.5)
    root2 = scalar("root2", math.sqrt(2.0))

    # Embeddings: the first `length` position rows, broadcast over the batch.
    length = node("Slice", [node("Shape", ["input_ids"]), one, two])
    positions = node("Slice", [weight("embeddings.position_embeddings.weight"), zero, length, zero])
    words = node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"])
    types = node("Gather", [weight("embeddings.token_type_embeddings.weight"), "token_type_ids"])
    x = layer_norm(node("Add", [node("Add", [words, positions]), types]), "embeddings.LayerNorm")

    # The additive mask: 0 where attended, the lowest float where padded; [batch, 1, 1, length].
    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    additive = node("Mul", [node("Sub", [unit, mask]), lowest])
    additive = node("Unsqueeze", [additive, constant("mask_axes", [1, 2], TensorProto.INT64)])

    def split_heads(y: str) -> str:
        return node("Transpose", [node("Reshape", [y, heads_shape])], perm=[0, 2, 1, 3])

    for index in range(int(config["num_hidden_layers"])):
        prefix = f"encoder.layer.{index}"
        query = split_heads(linear(x, f"{prefix}.attention.self.query"))
        key = node(
            "Transpose",
            [node("Reshape", [linear(x, f"{prefix}.attention.self.key"), heads_shape])],
            perm=[0, 2, 3, 1],
        )
        value = split_heads(linear(x, f"{prefix}.attention.self.value"))
        scores = node("Add", [node("Mul", [node("MatMul", [query, key]), scale]), additive])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), value])
        context = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merged_shape])
        attended = linear(context, f"{prefix}.attention.output.dense")
        x = layer_norm(node("Add", [attended, x]), f"{prefix}.attention.output.LayerNorm")
        inner = linear(x, f"{prefix}.intermediate.dense")
        erf = node("Erf", [node("Div", [inner, root2])])
        gelu = node("Mul", [node("Mul", [inner, half]), node("Add", [erf, unit])])
        out = linear(gelu, f"{prefix}.output.dense")
        x = layer_norm(node("Add", [out, x]), f"{prefix}.output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    batch = ["batch", "tokens"]
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info(name, TensorProto.INT64, batch)
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*batch, hidden])],
        [*constants, *initializers.values()],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="hermes-search-hybrid",
    )
    model.ir_version = IR_VERSION
    return model


def write_graph(model_dir: Path, target: Path) -> None:
    """Write the graph of the model in ``model_dir`` (its ``config.json`` and
    ``model.safetensors``) to ``target``."""
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    model = build_graph(model_dir / WEIGHTS_FILE, config)
    target.write_bytes(model.SerializeToString())

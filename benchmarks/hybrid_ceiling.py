"""What this machine allows the hybrid plugin's model: the arithmetic a tool's first embedding
costs, the machine's float32 speed, and the model's measured speed beside them.

all-MiniLM-L6-v2's six layers multiply every word piece by 10.6 million weights (four 384 x 384
and two 384 x 1536 matrices a layer), about 21 MFLOP a word piece, and a query streams all
42 MB of those float32 weights from memory whatever its length. This script measures:

- the word pieces the plugin embeds for each tool of the SaaS catalog (its whole text and its
  summary, each cut at 64), and with the batches' padding;
- one core's float32 matrix-product speed (numpy, one BLAS thread) at the model's own
  product shape, and the same product through onnxruntime's own MatMul (with the ``onnx``
  package installed), the best the model's products can do here;
- the plugin's ``Encoder``: texts per CPU second over the catalog's first texts, and the
  latency of one query of 3, 7 and 32 word pieces (one thread);
- the ceiling those give: tools per second if both cores ran the model's products at the
  faster of the two.

With ``--int8``, it also measures the same graph with its weight products quantized to int8
(onnxruntime's dynamic quantization; needs the ``onnx`` package): its speed and how far its
vectors are from float32's.

    ORT_DISABLE_TELEMETRY=1 python benchmarks/hybrid_ceiling.py [--texts 256] [--int8]

Run it from an environment with the plugin installed (the nox ``tests_hybrid`` one).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from hermes_core.search._evaluation import catalog_documents, load_catalog

SAAS = Path(__file__).resolve().parents[2] / "shared" / "data" / "saas_openapi_catalog"
HIDDEN, INNER, LAYERS = 384, 1536, 6
FLOP_PER_PIECE = 2 * LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * INNER)
BATCH = 32


def median_ms(action: Callable[[], object], runs: int = 30) -> float:
    """The median wall time of ``action`` in milliseconds (after one warm-up call)."""
    action()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def numpy_gflops() -> float:
    """One thread's float32 matrix-product speed at the model's own shape: a batch of 32 texts
    of 64 word pieces (2,048 rows) by a 384 x 1536 weight, the best of three medians of five.
    (A 1024 x 1024 product, used before, runs at half that speed on some CPUs: its power-of-two
    rows alias in the caches, which the model's products do not.)"""
    rng = np.random.default_rng(0)
    rows = rng.random((BATCH * 64, HIDDEN), dtype=np.float32)
    weight = rng.random((HIDDEN, INNER), dtype=np.float32)
    best = min(median_ms(lambda: rows @ weight, runs=5) for _ in range(3))
    return 2 * BATCH * 64 * HIDDEN * INNER / (best / 1000) / 1e9


def onnxruntime_gflops() -> float | None:
    """The same product's speed through onnxruntime's own MatMul on one thread (the kernels the
    plugin's graph runs), or None without the ``onnx`` package to write the one-node graph."""
    try:
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    import onnxruntime

    rng = np.random.default_rng(0)
    rows = rng.random((BATCH * 64, HIDDEN), dtype=np.float32)
    weight = rng.random((HIDDEN, INNER), dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["rows", "weight"], ["out"])],
        "product",
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [None, HIDDEN])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None, INNER])],
        [numpy_helper.from_array(weight, "weight")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        model.SerializeToString(),
        options,
        providers=["CPUExecutionProvider"],
    )
    best = min(median_ms(lambda: session.run(None, {"rows": rows}), runs=5) for _ in range(3))
    return 2 * BATCH * 64 * HIDDEN * INNER / (best / 1000) / 1e9


def catalog_texts(limit: int) -> tuple[list[str], float, float]:
    """``limit`` texts the plugin embeds for the SaaS catalog (whole text and summary of tools
    spread over the catalog), and the word pieces a tool costs: as cut at 64, and as padded in
    batches."""
    from hermes_search_hybrid.model import DOCUMENT_MAX_TOKENS
    from hermes_search_hybrid.text import embedded_text, summary_text
    from hermes_search_hybrid.weights import TOKENIZER_FILE, default_model_dir
    from tokenizers import Tokenizer

    documents = catalog_documents(load_catalog(SAAS / "catalog.json"))
    tokenizer = Tokenizer.from_file(str(default_model_dir() / TOKENIZER_FILE))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=DOCUMENT_MAX_TOKENS)
    texts = [text for d in documents for text in (embedded_text(d), summary_text(d))]
    lengths = sorted((len(tokenizer.encode(text.strip()).ids) for text in texts), reverse=True)
    padded = sum(
        lengths[start] * len(lengths[start : start + BATCH])
        for start in range(0, len(lengths), BATCH)
    )
    step = max(1, len(documents) // max(1, limit // 2))
    sample = [text for d in documents[::step] for text in (embedded_text(d), summary_text(d))]
    return sample[:limit], sum(lengths) / len(documents), padded / len(documents)


def texts_per_cpu_second(encode: Callable[[Sequence[str]], Any], texts: Sequence[str]) -> float:
    """Texts embedded per CPU second of this process, one batch at a time on one thread."""
    encode(texts[:BATCH])
    start = time.process_time()
    for offset in range(0, len(texts), BATCH):
        encode(texts[offset : offset + BATCH])
    return len(texts) / (time.process_time() - start)


def queries(encode: Callable[[Sequence[str]], Any]) -> dict[int, float]:
    """Median latency of one query text of 3, 7 and 32 word pieces (special ones included)."""
    latencies = {}
    for pieces in (3, 7, 32):
        text = " ".join(["issue"] * (pieces - 2))
        latencies[pieces] = median_ms(lambda text=text: encode([text]))
    return latencies


def int8_encoder(directory: Path) -> Callable[[Sequence[str]], Any]:
    """The plugin's graph with its weight products quantized to int8, as an encode function."""
    import onnx  # type: ignore[import-untyped]
    import onnxruntime  # type: ignore[import-untyped]
    from hermes_search_hybrid.model import DOCUMENT_MAX_TOKENS, Encoder
    from hermes_search_hybrid.weights import TOKENIZER_FILE, graph_file
    from onnx.external_data_helper import load_external_data_for_model  # type: ignore[import-untyped]
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

    scratch = Path(tempfile.mkdtemp(prefix="hybrid-int8-"))
    model = onnx.load_model_from_string(graph_file().read_bytes())
    load_external_data_for_model(model, str(directory))
    onnx.save(model, scratch / "full.onnx")
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    # Saved with the weights' transposes folded, so the products' weights are initializers.
    options.optimized_model_filepath = str(scratch / "folded.onnx")
    onnxruntime.InferenceSession(
        str(scratch / "full.onnx"), options, providers=["CPUExecutionProvider"]
    )
    quantize_dynamic(
        scratch / "folded.onnx",
        scratch / "int8.onnx",
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul"],
    )
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(scratch / "int8.onnx"), options, providers=["CPUExecutionProvider"]
    )
    # The plugin's own Encoder over this session: the same cutting, padding and pooling.
    encoder = Encoder(session, directory / TOKENIZER_FILE, "int8", HIDDEN)
    return partial(encoder.encode, max_tokens=DOCUMENT_MAX_TOKENS, batch_size=BATCH)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--texts", type=int, default=256, help="catalog texts to time (default 256)"
    )
    parser.add_argument(
        "--int8", action="store_true", help="also the int8-quantized graph (needs onnx)"
    )
    arguments = parser.parse_args(argv)

    from hermes_search_hybrid.model import DOCUMENT_MAX_TOKENS, load_encoder
    from hermes_search_hybrid.weights import default_model_dir

    load = os.getloadavg()[0]
    texts, pieces, padded = catalog_texts(arguments.texts)
    numpy_speed = numpy_gflops()
    runtime_speed = onnxruntime_gflops()
    gflops = max(numpy_speed, runtime_speed or 0.0)
    record = Path(tempfile.mkdtemp(prefix="hybrid-ceiling-")) / "checked.json"
    encoder = load_encoder(default_model_dir(), record)

    def encode(batch: Sequence[str]) -> Any:
        return encoder.encode(batch, max_tokens=DOCUMENT_MAX_TOKENS, batch_size=BATCH)

    speeds = {"float32 (the plugin)": (texts_per_cpu_second(encode, texts), queries(encode))}
    reference = encode(texts[:64])
    if arguments.int8:
        quantized = int8_encoder(default_model_dir())
        cosines = (reference * quantized(texts[:64])).sum(axis=1)
        speeds["int8 weights (not the plugin's)"] = (
            texts_per_cpu_second(quantized, texts),
            queries(quantized),
        )
    cores = len(os.sched_getaffinity(0))
    ceiling = cores * gflops * 1e9 / (pieces * FLOP_PER_PIECE)
    print(f"load average at the start: {load:.2f}; cores: {cores}")
    print(
        f"SaaS catalog: {pieces:.1f} word pieces embedded a tool "
        f"({padded:.1f} with the batches' padding)"
    )
    print(
        f"model: {FLOP_PER_PIECE / 1e6:.1f} MFLOP a word piece, "
        f"{FLOP_PER_PIECE / 2 * 4 / 1e6:.1f} MB of float32 weights a query streams"
    )
    print(f"one core, numpy float32 2048 x 384 x 1536 product: {numpy_speed:.1f} GFLOPS")
    if runtime_speed is None:
        print("one core, onnxruntime's MatMul: not measured (needs the onnx package)")
    else:
        print(f"one core, onnxruntime's MatMul, same product: {runtime_speed:.1f} GFLOPS")
    print(f"ceiling, both cores at the faster of those: {ceiling:.0f} tools/s")
    print()
    print(
        "| model | texts per CPU second | tools per CPU second | query ms: 3 / 7 / 32 word pieces |"
    )
    print("|---|---|---|---|")
    for name, (rate, latency) in speeds.items():
        per_tool = rate / 2  # two texts a tool
        print(
            f"| {name} | {rate:.1f} | {per_tool:.1f} | "
            f"{latency[3]:.2f} / {latency[7]:.2f} / {latency[32]:.2f} |"
        )
    if arguments.int8:
        print(
            "\nint8 against float32 over 64 catalog texts: cosine "
            f"min {cosines.min():.4f}, median {float(np.median(cosines)):.4f}"
        )


if __name__ == "__main__":
    sys.exit(main())

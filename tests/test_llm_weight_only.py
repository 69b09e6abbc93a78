"""Weight-only quantized decoding (llm.infer's ``weights``) on the CPU: known weights quantise exactly, each
layer multiplies by the weight it reports, the quantized tiny model's logits stay within a stated distance of
the BF16 model's, and the bytes a decoding step reads are counted from what is stored (weights, scales, zeros)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from hwbench_gui.engine.models.llm import architectures as archs  # noqa: E402
from hwbench_gui.engine.models.llm import arithmetic as ar  # noqa: E402
from hwbench_gui.engine.models.llm import model as llm  # noqa: E402
from hwbench_gui.engine.models.llm import weight_only as wo  # noqa: E402
from hwbench_gui.engine.models.llm.storage import INT4_ROUTE_NAMES, int4_misfit, storage  # noqa: E402
from hwbench_gui.engine.spec.benchmark import ParamError  # noqa: E402
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16  # noqa: E402

TINY = archs.builtin("tiny")
LLAMA_8B = archs.builtin("llama-3.1-8b")
#: Relative L2 distance of the quantized tiny model's logits from the BF16 model's (random weights, std 0.02,
#: seed 3, 16 positions of 2 sequences; the output projection quantized too): measured 0.016 (int8), 0.054 (FP8),
#: 0.21 (int4 g128); bounds about 2× (int4 1.7×).
LOGIT_TOLERANCE = {"int8": 0.03, "fp8": 0.10, "int4": 0.35}


def test_known_weights_quantise_exactly():
    # int8 and FP8: each row a multiple of a power-of-two scale (exact in BF16): the row's largest magnitude / 127
    rows = torch.tensor([[127.0, -64.0, 1.0, 0.0], [-254.0, 2.0, 4.0, 8.0]]) / 1024
    layer = wo.ChannelLinear(4, 2, False, "int8")
    layer.set_weight(rows)
    assert torch.equal(layer.scales.float(), torch.tensor([1 / 1024, 2 / 1024]))
    assert torch.equal(layer.weight, torch.tensor([[127, -64, 1, 0], [-127, 1, 2, 4]], dtype=torch.int8))
    assert torch.equal(layer.dequantized(), rows)
    # int4: a group of 128 spanning 16 evenly spaced levels from -1 to 0.875 (steps of 1/8) comes back as it was
    levels = torch.arange(16, dtype=torch.float32) / 8 - 1
    weight = levels.repeat(8).reshape(1, 128).repeat(8, 1)
    int4 = wo.Int4Linear(128, 8, False, None)
    int4.set_weight(weight)
    assert torch.equal(int4.dequantized(), weight)
    assert torch.equal(int4.scales_and_zeros[0, 0].float(), torch.tensor([0.125, 0.0]))  # (-1 + 8 × 0.125)


@pytest.mark.parametrize("kind", ["int8", "fp8", "int4"])
def test_each_layer_multiplies_by_the_weight_it_reports(kind):
    generator = torch.Generator().manual_seed(1)
    weight = torch.randn(64, 256, generator=generator) * 0.02
    x = torch.randn(3, 256, generator=generator).to(torch.bfloat16)
    kernel = wo.int4_kernel("cpu") if kind == "int4" else None
    layer = wo.Int4Linear(256, 64, True, kernel) if kind == "int4" else wo.ChannelLinear(256, 64, True, kind)
    layer.set_weight(weight)
    layer.bias.data.fill_(0.5)
    expected = x.float() @ layer.dequantized().t() + 0.5
    assert torch.allclose(layer(x).float(), expected, rtol=0.02, atol=0.02)
    # the quantization itself: within half a step of the weight (a step: the scale of its channel or group; FP8's
    # largest step, at 448, is 32 scales) and the BF16 rounding of the scales, zeros and product (0.55 for 0.5)
    step = (weight.abs().amax(dim=1, keepdim=True) / (127 if kind == "int8" else 448)) if kind != "int4" else \
        (weight.reshape(-1, 128).amax(1, keepdim=True) - weight.reshape(-1, 128).amin(1, keepdim=True)) / 15
    error = (layer.dequantized() - weight).abs().reshape(step.shape[0], -1)
    assert bool((error <= step * (0.55 if kind != "fp8" else 16.5)).all())


@pytest.mark.parametrize("kind", ["int8", "fp8", "int4"])
def test_the_quantized_tiny_model_stays_near_the_bf16_model(kind):
    tokens = torch.randint(0, TINY.vocab, (2, 16), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        reference = llm.build(TINY, torch.bfloat16, "cpu", rope_positions=64, seed=3)(tokens).float()
        quantized = llm.build(TINY, torch.bfloat16, "cpu", rope_positions=64, seed=3, weights=kind)(tokens).float()
        other = llm.build(TINY, torch.bfloat16, "cpu", rope_positions=64, seed=4)(tokens).float()
    distance = float((quantized - reference).norm() / reference.norm())
    assert 0 < distance <= LOGIT_TOLERANCE[kind]
    # and far nearer its own BF16 model than another model's weights are (a random model's top token is no
    # test: its logits lie too close together)
    assert distance < float((other - reference).norm() / reference.norm()) / 4


def test_bytes_a_step_reads_count_weights_scales_and_zeros():
    layer_matmul = 4096 * (4096 + 2 * 1024) + 4096 * 4096 + 3 * 4096 * 14336  # 218,103,808
    channels = (4096 + 2 * 1024) + 4096 + 2 * 14336 + 4096  # 43,008 output channels a block
    head = 128_256 * 4096  # the output projection, quantized too (as gpt-fast does), 128,256 channels
    others = ar.weight_params_read_per_step(LLAMA_8B) - 32 * layer_matmul - head  # norms and an embedding row
    assert ar.layer_matmul_params(LLAMA_8B) == layer_matmul and ar.layer_matmul_channels(LLAMA_8B) == channels
    quantized = 32 * layer_matmul + head
    int8 = storage(BF16, "int8").weights
    assert int8.read_per_step(LLAMA_8B) == quantized + 2 * (32 * channels + 128_256) + 2 * others
    int4 = storage(BF16, "int4").weights
    assert int4.read_per_step(LLAMA_8B) == quantized // 2 + quantized * 4 // 128 + 2 * others
    assert int4.parts(LLAMA_8B) == {"quantized_weights": quantized // 2, "scales_and_zeros": quantized // 32,
                                    "other_weights": 2 * others}
    # and with the KV cache: llama-3.1-8b's 131,072 BF16 bytes a position, 1 attended + 1 written at depth 0
    assert ar.bytes_per_step(LLAMA_8B, int4, 2, 0, 1) == int4.read_per_step(LLAMA_8B) + 131_072
    assert storage(BF16, "bf16").weights.read_per_step(LLAMA_8B) == 2 * (quantized + others)
    # precision=fp8 (activations quantized too) keeps the output projection in BF16, as before
    assert storage(FP8, "bf16").weights.read_per_step(LLAMA_8B) == \
        32 * (layer_matmul + 4 * channels) + 2 * (head + others)


def test_weights_other_than_bf16_need_bf16_activations_and_int4_needs_whole_groups():
    with pytest.raises(ValueError, match="precision=bf16"):
        storage(FP16, "int8")
    assert int4_misfit(LLAMA_8B) is None and int4_misfit(TINY) is None
    odd = dataclasses.replace(TINY, name="odd", hidden=96, head_dim=24)
    assert int4_misfit(odd) == ("weights=int4 needs every block matmul's input size a multiple of 128 and output "
                                "size a multiple of 8, and odd has qkv 96→192, out 96→96, up 96→512: choose "
                                "weights=int8 or fp8")


H100_BF16 = Path(__file__).resolve().parent.parent / "resources/reference/h100/llm-2026-12-05/" \
    "2026-12-05T17-49-58_llm.infer_78443d68.json"


def _with_weights(doc: dict, weights: str) -> dict:
    doc = copy.deepcopy(doc)
    doc["params"]["weights"] = weights
    doc["benchmark"]["comparability_params"] = [*doc["benchmark"]["comparability_params"], "weights"]
    return doc


def test_weights_decide_comparability_and_older_documents_count_as_bf16():
    from hwbench_gui.engine.reports import compare, llm_section

    older = json.loads(H100_BF16.read_text())
    assert "weights" not in older["params"]
    assert compare.comparability_key(_with_weights(older, "bf16")) == compare.comparability_key(older)
    assert compare.comparability_key(_with_weights(older, "int4")) != compare.comparability_key(older)
    assert llm_section.subject(_with_weights(older, "int4")).startswith("llama-3.1-8b · BF16 · int4 weights · batch")
    assert " weights" not in llm_section.subject(older)
    # the report keeps one run per model × precision × weights × step
    assert len(llm_section.build([older, _with_weights(older, "int8")])) == 2


def test_a_cpu_run_with_int8_weights_reports_what_it_read():
    from recording import Recorder

    from hwbench_gui.engine.benchmarks import llm_infer

    params = llm_infer.BENCHMARK.resolve_params({"device": "cpu", "model": "tiny", "weights": "int8", "depths": "0",
                                                 "serve": False, "repeats": 2, "pp": 16, "tg": 4})
    outcome = llm_infer.run(params, Recorder())
    details = outcome.details
    held = storage(BF16, "int8")
    assert details["weights"] == "int8"
    # tiny: 2 blocks of 147,456 matmul weights and the 65,536-weight output projection (1 byte each), 2 × 1,024 +
    # 512 output channels (a 2-byte scale each); BF16: 2 × (256 norm + 256 q/k/v bias), the final norm's 128 and
    # an embedding row of 128
    assert details["model"]["weights_read_per_step"] == held.weights.parts(TINY) == {
        "quantized_weights": 360_448, "scales_and_zeros": 5_120, "other_weights": 2 * 1_280}
    assert details["model"]["weights_read_per_step_bytes"] == held.weights.read_per_step(TINY)
    assert details["tg"][0]["work"] == sum(ar.bytes_per_step(TINY, held.weights, 2, i, 1) for i in range(4))
    assert details["summary"][0] == ("weights: int8 weight-only, one BF16 scale per output channel; a step reads "
                                     "0.368 MB of weights (0.360 MB quantized, 0.005 MB scales, 0.003 MB BF16)")
    assert "Weights int8: weights read per step = 1 byte(s) per block matmul and output projection weight" \
        in outcome.method
    assert details["precision"]["block_matmul_weights"] == "int8 weight-only, one BF16 scale per output channel"
    assert details["precision"]["output_projection"].startswith("int8 weight-only")
    with pytest.raises(ParamError, match="precision=bf16"):
        llm_infer.run(llm_infer.BENCHMARK.resolve_params({"device": "cpu", "model": "tiny", "weights": "int4",
                                                          "precision": "fp32"}), Recorder())


def test_fp8_weights_multiply_a_prompt_on_fp8_products_and_one_token_by_conversion():
    from hwbench_gui.engine.models.llm.fp8 import unavailable_reason

    if unavailable_reason("cpu"):
        pytest.skip(f"this PyTorch cannot multiply FP8 on the CPU: {unavailable_reason('cpu')}")
    generator = torch.Generator().manual_seed(2)
    weight = torch.randn(64, 128, generator=generator) * 0.02
    layer = wo.ChannelLinear(128, 64, False, "fp8", fp8_prompts=True)
    layer.set_weight(weight)
    plain = wo.ChannelLinear(128, 64, False, "fp8")
    plain.set_weight(weight)
    prompt = torch.randn(wo.PROMPT_ROWS, 128, generator=generator).to(torch.bfloat16)
    exact = prompt.float() @ layer.dequantized().t()
    # 16 rows: the input quantised to FP8 per row too (e4m3: 3 mantissa bits), so within a few % of the product
    assert float((layer(prompt).float() - exact).norm() / exact.norm()) < 0.06
    assert not torch.equal(layer(prompt), plain(prompt))  # a different product from the BF16 conversion
    # one row: the weight converted to BF16 (the one-token GEMV), the same as without fp8_prompts
    assert torch.equal(layer(prompt[:1]), plain(prompt[:1]))


def _layer(kind: str, int4_route: str = "compiled", seed: int = 5):
    """A 256 → 64 layer of ``kind`` (int4 held as ``int4_route`` says) with random weights, and its weight."""
    weight = torch.randn(64, 256, generator=torch.Generator().manual_seed(seed)) * 0.02
    if kind == "int4":
        layer = wo.Int4Linear(256, 64, False, wo.int4_kernel("cpu") if int4_route == "packed" else None)
    else:
        layer = wo.ChannelLinear(256, 64, False, kind)
    layer.set_weight(weight)
    return layer


def _one_row(layer, x):
    """The one-token product of ``layer`` as a compiled step computes it: the converted weight's GEMV for int8 and
    FP8, the packed kernel or the grouped dequantise-in-the-product expression for int4."""
    if isinstance(layer, wo.Int4Linear) and layer.kernel is None:
        return wo.grouped_product(x, layer.weight, layer.scales_and_zeros)
    return layer(x)


def _distance(a, b) -> float:
    return float((a.float() - b.float()).norm() / b.float().norm())


@pytest.mark.parametrize("kind,route", [("int8", ""), ("fp8", ""), ("int4", "compiled"), ("int4", "packed")])
def test_a_prompt_multiplies_as_its_rows_one_at_a_time_do(kind, route):
    layer = _layer(kind, route)
    x = torch.randn(wo.PROMPT_ROWS, 256, generator=torch.Generator().manual_seed(6)).to(torch.bfloat16)
    prompt = layer(x)  # PROMPT_ROWS rows: the dequantised weight's matmul (the packed kernel for packed int4)
    rows = torch.cat([_one_row(layer, x[i:i + 1]) for i in range(wo.PROMPT_ROWS)])
    exact = x.float() @ layer.dequantized().t()
    # each within BF16 rounding of the exact product of the weight the layer reports, so of each other (measured:
    # 0.0017 to 0.0026)
    assert _distance(prompt, exact) < 0.01 and _distance(rows, exact) < 0.01
    assert _distance(prompt, rows) < 0.01
    # and a product of this weight, not of another
    assert _distance(prompt, x.float() @ _layer(kind, route, seed=7).dequantized().t()) > 0.5


def test_int4s_two_routes_hold_the_same_weight_and_multiply_alike():
    packed, nibbles = _layer("int4", "packed"), _layer("int4", "compiled")
    if packed.kernel is None:
        pytest.skip("this PyTorch has no packed int4 matmul for the CPU")
    assert nibbles.kernel is None and nibbles.weight.shape == (64, 128) and nibbles.weight.dtype == torch.uint8
    assert packed.weight.numel() * packed.weight.element_size() == nibbles.weight.numel()  # 0.5 byte a weight
    assert torch.equal(packed.dequantized(), nibbles.dequantized())
    x = torch.randn(wo.PROMPT_ROWS, 256, generator=torch.Generator().manual_seed(8)).to(torch.bfloat16)
    assert _distance(packed(x), nibbles(x)) < 0.01
    assert _distance(packed(x[:1]), wo.grouped_product(x[:1], nibbles.weight, nibbles.scales_and_zeros)) < 0.01


def test_a_compiled_graph_keeps_the_prompt_product_whole_and_fuses_the_one_token_product():
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm.code)
        return gm.forward

    x = torch.randn(wo.PROMPT_ROWS, 256, generator=torch.Generator().manual_seed(9)).to(torch.bfloat16)
    for kind, op in (("int8", "channel_prompt_product"), ("int4", "int4_prompt_product")):
        layer = _layer(kind)
        graphs.clear()
        torch._dynamo.reset()
        compiled = torch.compile(layer, backend=record, fullgraph=True, dynamic=False)
        torch.testing.assert_close(compiled(x), layer(x))
        compiled(x[:1])
        prompt, token = graphs
        # the prompt: one opaque op, nothing for the compiler to fuse or tune; one token: plain ops
        assert f"hwbench.{op}" in prompt and "linear" not in prompt
        assert f"hwbench.{op}" not in token
    assert ">>" in token or "rshift" in token  # int4's one-token product unpacks the nibbles itself
    # through Inductor, the one-token product is the grouped expression's value
    torch._dynamo.reset()
    fused = torch.compile(layer, fullgraph=True, dynamic=False)(x[:1])
    assert _distance(fused, layer(x[:1])) < 0.01


def test_int4_kernel_auto_is_the_packed_kernel_wherever_pytorch_has_one():
    assert set(wo.INT4_ROUTES) == set(INT4_ROUTE_NAMES)
    cpu = wo.int4_kernel("cpu")
    assert wo.int4_route("auto", "cpu") == (cpu, "packed" if cpu else "compiled")
    assert wo.int4_route("compiled", "cpu") == (None, "compiled")
    assert wo.int4_route("packed", "cpu") == (cpu, "packed" if cpu else "compiled")
    # the choice reaches the layers: nibbles [out, in/2] for compiled, never both layouts
    model = llm.build(TINY, torch.bfloat16, "cpu", rope_positions=64, weights="int4", int4_route="compiled")
    layers = [m for m in model.modules() if isinstance(m, wo.Int4Linear)]
    assert len(layers) == 4 * TINY.layers + (model.head is not None)
    assert all(m.kernel is None and m.weight.shape == (m.out_features, m.in_features // 2) for m in layers)


def test_a_compiled_step_compiles_a_quantized_output_projection_too():
    # Eagerly the one-row output projection would convert its whole matrix to BF16 at every token (a quarter of an
    # 8B model's int4 bytes), so step=compile compiles it beside the block: two graphs, not one.
    from torch._dynamo.utils import counters

    from hwbench_gui.engine.models.llm import generate

    model = llm.build(TINY, torch.bfloat16, "cpu", rope_positions=64, seed=3, weights="int4", int4_route="compiled")
    torch._dynamo.reset()
    counters.clear()
    with torch.inference_mode():
        cache = llm.KVCache.allocate(TINY, 1, 32, torch.bfloat16, "cpu")
        generate.Stepper(torch, model, cache, 1, "compile")  # compiles and runs a step on the CPU
        assert counters["stats"]["unique_graphs"] == 2
        # and the compiled projection (the grouped int4 product) gives the eager logits
        x = torch.randn(1, 1, TINY.hidden, generator=torch.Generator().manual_seed(4)).to(torch.bfloat16)
        compiled = torch.compile(type(model)._logits, fullgraph=True, dynamic=False)(model, x)
        assert _distance(compiled, model._logits(x)) < 0.01


def test_a_cpu_int4_run_names_its_route_and_what_an_eager_step_costs_the_compiled_one():
    from recording import Recorder

    from hwbench_gui.engine.benchmarks import llm_infer

    def run(route: str):
        params = llm_infer.BENCHMARK.resolve_params({"device": "cpu", "model": "tiny", "weights": "int4", "depths": "0",
                                                     "serve": False, "repeats": 2, "pp": 16, "tg": 2, "step": "eager",
                                                     "int4_kernel": route})
        return llm_infer.run(params, Recorder())

    nibbles = run("compiled")
    assert nibbles.resolved_params["int4_kernel"] == "compiled"
    assert nibbles.details["int4_matmul"] == wo.INT4_ROUTES["compiled"]
    assert any(w.startswith("int4_kernel=compiled with step=eager: the one-token expression is fused only under "
                            "torch.compile") for w in nibbles.warnings)
    assert nibbles.details["pp"][0]["prompt_build_s"] >= 0
    if wo.int4_kernel("cpu"):
        auto = run("auto")  # the CPU has a packed kernel: auto takes it
        assert auto.resolved_params["int4_kernel"] == "packed" and not any("int4" in w for w in auto.warnings)
        assert auto.details["int4_matmul"].startswith("torch.ops.aten._weight_int4pack_mm_for_cpu")

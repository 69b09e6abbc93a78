"""speech.transcribe on the CPU: Whisper's arithmetic on known shapes, the encoder's FLOPs against PyTorch's counter,
cached decoding against recomputation, the model and the log-mel against transformers' own (same weights, same audio),
a user's folder read through safetensors (and refused in one line when it is wrong), and a small run in-process."""

from __future__ import annotations

import json

import pytest
from recording import Recorder

from hwbench_gui.engine.models.speech import arithmetic as ar
from hwbench_gui.engine.models.speech import architectures as archs
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, ParamError

torch = pytest.importorskip("torch")

#: A Whisper small enough to run whole in a test: every part of large-v3's layout at width 64, two layers each.
MICRO = archs.WhisperArch("micro", vocab=51866, mels=80, d_model=64, encoder_layers=2, decoder_layers=2,
                          encoder_heads=4, decoder_heads=4, encoder_ffn=128, decoder_ffn=128)


def test_parameters_of_the_published_models():
    # transformers' WhisperForConditionalGeneration counts (the output projection tied): large-v2 has
    # 1,543,304,960; large-v3 adds one token (1280) and 48 mel bins (48 × 3 × 1280); turbo keeps 4 decoder layers
    assert ar.total_params(archs.BUILT_IN["large-v3"]) == 1_543_304_960 + 1280 + 48 * 3 * 1280
    assert ar.total_params(archs.BUILT_IN["tiny"]) == 37_760_640
    turbo = archs.BUILT_IN["large-v3-turbo"]
    d = 1280
    layer = 2 * (4 * d * d + 3 * d) + 2 * d * 5120 + 5120 + d + 6 * d
    assert ar.total_params(turbo) == ar.total_params(archs.BUILT_IN["large-v3"]) - 28 * layer


def test_encoder_flops_and_decoder_bytes_by_hand():
    a = MICRO
    convs = 2 * 3000 * 80 * 3 * 64 + 2 * 1500 * 64 * 3 * 64
    layer = 2 * 1500 * 64 * (3 * 64 + 64 + 2 * 128) + 4 * 1500 * 1500 * 64
    assert ar.encoder_flops(a) == convs + 2 * layer
    assert ar.encoder_flops(a, batch=3) == 3 * (convs + 2 * layer)
    weights = 2 * ((64 * 192 + 192) + 3 * (64 * 64 + 64) + (64 * 128 + 128) + (128 * 64 + 64) + 6 * 64) + 2 * 64 \
        + 51866 * 64
    assert ar.weights_read_per_step(a, 2) == 2 * weights
    # per sequence at position 10: 11 positions attended + 1 written, and 1500 cross positions, keys and values of 2
    # layers of width 64 in 2 bytes
    assert ar.kv_bytes_per_step(a, 2, 10) == 2 * 2 * 64 * 2 * (12 + 1500)
    assert ar.step_bytes(a, 2, 10, batch=3) == 2 * weights + 3 * ar.kv_bytes_per_step(a, 2, 10)
    assert ar.steps_bytes(a, 2, 1, tokens=3) == ar.step_bytes(a, 2, 4, 1) + ar.step_bytes(a, 2, 5, 1)
    assert ar.cross_flops(a, 2) == 2 * 2 * 2 * 1500 * 64 * 128


def test_encoder_flops_equal_pytorchs_counter():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from hwbench_gui.engine.models.speech.model import build

    model = build(MICRO, torch.float32, "cpu")
    mel = torch.randn(2, MICRO.mels, MICRO.frames)
    # the math kernel: PyTorch's counter sees its two batched products (it counts no CPU flash kernel)
    with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        model.encoder(mel)
    assert counter.get_total_flops() == ar.encoder_flops(MICRO, batch=2)


def test_cached_decoding_equals_recomputation():
    from hwbench_gui.engine.models.speech.model import build
    from hwbench_gui.engine.models.speech.transcribe import Transcriber

    model = build(MICRO, torch.float32, "cpu")
    engine = Transcriber(torch, model, batch=2, tokens=9)
    engine.mel.copy_(torch.randn(2, MICRO.mels, MICRO.frames))
    with torch.no_grad():
        tokens, logits = engine.greedy()
        whole = model.logits(engine.mel, torch.cat([engine.prompt, tokens[:, :-1]], dim=1))
    assert tokens.shape == (2, 9)
    recomputed = whole[:, ar.PROMPT_TOKENS - 1:]
    assert torch.equal(recomputed.argmax(dim=-1), tokens)
    torch.testing.assert_close(logits, recomputed, rtol=1e-4, atol=1e-4)


def _hf_model(arch):
    transformers = pytest.importorskip("transformers", reason="transformers (the gen extra) is not installed")
    config = transformers.WhisperConfig(**{k: v for k, v in archs.to_hf_config(arch).items() if k != "model_type"})
    torch.manual_seed(1)
    return transformers.WhisperForConditionalGeneration(config).eval()


def test_logits_equal_transformers_for_the_same_weights():
    from hwbench_gui.engine.models.speech import weights
    from hwbench_gui.engine.models.speech.model import build

    reference = _hf_model(MICRO)
    state = reference.state_dict()
    model = build(MICRO, torch.float32, "cpu", seed=None)
    weights.assign(model, weights.plan(MICRO), lambda name: state[name])
    mel, tokens = torch.randn(2, MICRO.mels, MICRO.frames), torch.randint(0, MICRO.vocab, (2, 7))
    with torch.no_grad():
        expected = reference(input_features=mel, decoder_input_ids=tokens).logits
        torch.testing.assert_close(model.logits(mel, tokens), expected, rtol=1e-4, atol=1e-4)


def test_log_mel_equals_transformers_feature_extractor():
    transformers = pytest.importorskip("transformers", reason="transformers (the gen extra) is not installed")
    from hwbench_gui.engine.models.speech import audio

    samples = audio.speech_like(1, seed=3)
    assert samples.shape == (1, 480_000) and samples.abs().max() > 0.05
    ours = audio.log_mel(samples, 128)
    extractor = transformers.WhisperFeatureExtractor(feature_size=128)
    theirs = extractor(samples.numpy(), sampling_rate=16_000, return_tensors="pt").input_features
    assert ours.shape == theirs.shape == (1, 128, 3000)
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


def _write_folder(folder, arch, tensors=None):
    """A Hugging Face Whisper folder: config.json and model.safetensors of transformers' names (random values unless
    ``tensors`` gives them)."""
    from safetensors.torch import save_file

    from hwbench_gui.engine.models.speech import weights

    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(archs.to_hf_config(arch)))
    if tensors is None:
        generator = torch.Generator().manual_seed(0)
        tensors = {p.name: 0.05 * torch.randn(p.shape, generator=generator)
                   for parts in weights.plan(arch).values() for p in parts if p.name}
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(folder / "model.safetensors"))
    return folder


def test_a_folder_saved_by_transformers_loads_with_its_logits(tmp_path):
    from hwbench_gui.engine.models.speech import weights

    reference = _hf_model(MICRO)
    state = {k: v for k, v in reference.state_dict().items() if k != "proj_out.weight"}
    folder = _write_folder(tmp_path / "whisper", MICRO, state)
    model = weights.load(str(folder), torch.float32, "cpu")
    mel, tokens = torch.randn(1, MICRO.mels, MICRO.frames), torch.randint(0, MICRO.vocab, (1, 5))
    with torch.no_grad():
        torch.testing.assert_close(model.logits(mel, tokens),
                                   reference(input_features=mel, decoder_input_ids=tokens).logits,
                                   rtol=1e-4, atol=1e-4)


def test_a_wrong_folder_is_refused_in_one_line_naming_the_file(tmp_path):
    from hwbench_gui.engine.models.speech import weights

    good = _write_folder(tmp_path / "good", MICRO)
    arch, _, _ = weights.check_folder(str(good))
    assert arch.d_model == 64 and arch.decoder_layers == 2
    config = json.loads((good / "config.json").read_text())
    config["decoder_ffn_dim"] = 256
    (good / "config.json").write_text(json.dumps(config))
    with pytest.raises(ParamError) as refused:
        weights.check_folder(str(good))
    message = str(refused.value)
    assert "model.safetensors" in message and "fc1.weight" in message and "\n" not in message
    (good / "config.json").write_text(json.dumps({**config, "model_type": "llama"}))
    with pytest.raises(ParamError, match="config.json: model_type 'llama' is not 'whisper'"):
        weights.check_folder(str(good))
    (good / "config.json").write_text(json.dumps({**config, "decoder_ffn_dim": 128}))
    (good / "model.safetensors").write_bytes(b"\x00" * 4)
    with pytest.raises(ParamError, match="not a readable safetensors file"):
        weights.check_folder(str(good))


def test_memory_plan_by_hand_and_a_run_that_cannot_fit_is_refused_up_front():
    from hwbench_gui.engine.benchmarks import speech_transcribe

    plan = ar.memory_plan(MICRO, 2, batch=3, tokens=10)
    assert plan.self_cache_bytes == 2 * 2 * 3 * 64 * 2 * 16  # 4 + 9 positions, in a block of 16
    assert ar.cache_positions(13) == 16 and ar.cache_positions(128) == 144
    assert plan.cross_cache_bytes == 2 * 2 * 3 * 64 * 2 * 1500
    assert plan.weights_bytes == 2 * (ar.total_params(MICRO) + 2 * 64 + 2 * 2 * 64)
    assert plan.total_bytes == plan.weights_bytes + plan.self_cache_bytes + plan.cross_cache_bytes \
        + plan.activation_bytes
    params = speech_transcribe.BENCHMARK.resolve_params({"device": "cpu", "model": "large-v3", "batches": "1000"})
    recorder = Recorder()
    with pytest.raises(BenchmarkUnavailable, match=r"^whisper-large-v3 in FP32 at batch 1000 does not fit: .* GiB "
                                                   r"\(weights .*needed, "):
        speech_transcribe.run(params, recorder)
    assert not recorder.phases  # refused before anything was measured
    with pytest.raises(ParamError, match="tokens: 446 per window"):
        speech_transcribe.run(speech_transcribe.BENCHMARK.resolve_params({"device": "cpu", "model": "tiny",
                                                                          "tokens": 446}), Recorder())


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    from hwbench_gui.engine.benchmarks import speech_transcribe

    folder = _write_folder(tmp_path_factory.mktemp("speech") / "micro", MICRO)
    params = speech_transcribe.BENCHMARK.resolve_params({"device": "cpu", "model": str(folder), "tokens": 5,
                                                         "batches": "1,2", "repeats": 2})
    recorder = Recorder()
    return speech_transcribe.run(params, recorder), recorder


def test_a_small_run_holds_every_figure_against_its_bound(small_run):
    outcome, recorder = small_run
    assert outcome.unit == "x real time" and outcome.higher_is_better
    assert outcome.figure_name == "real-time factor, batch 1" and len(outcome.samples) == 2
    assert outcome.precision == "FP32" and outcome.resolved_params["precision"] == "fp32"
    rows = outcome.details["rows"]
    assert [r["batch"] for r in rows] == [1, 2]
    for row in rows:
        assert row["encoder_flops"] == ar.encoder_flops(MICRO, row["batch"])
        assert row["decoder_steps_bytes"] == ar.steps_bytes(MICRO, 4, row["batch"], 5)
        for share in (row["encoder_fraction_of_matmul"], row["decoder_fraction_of_bound"]):
            assert share is None or 0 < share <= 1
        assert row["encoder_mfu"] is None  # a CPU has no datasheet peak
        # the real-time factor is the batch's 30 s windows over each paired encoder + decoder window
        assert row["real_time_factor"] == [row["batch"] * 30.0 / (e + d) for e, d in
                                           zip(row["encoder_window_seconds"], row["decoder_window_seconds"])]
    timed = [p for p in recorder.phases if p[0] == "timed" and p[1] == "start"]
    assert len(timed) == 2 * 2 * 2  # two parts, two batches, two windows each
    assert "weights loaded from its folder" in outcome.method
    assert any("real-time factor" in line for line in outcome.details["summary"])
    assert {"real-time factor, batch 2", "decoding, batch 1: tokens/s", "encoder, batch 2: TFLOP/s"} \
        <= set(outcome.figures)


@pytest.fixture(scope="module")
def small_document(small_run):
    from datetime import datetime, timezone

    from hwbench_gui.engine.benchmarks import speech_transcribe
    from hwbench_gui.engine.results.document import build_document
    from hwbench_gui.engine.run.protocol import outcome_to_json

    outcome, _ = small_run
    machine = {"inventory": {"hostname": "alpha", "gpus": [], "cpu": {"model": "CPU"}}, "inventory_reason": None,
               "software": {}, "software_reason": None}
    params = {**speech_transcribe.BENCHMARK.resolve_params({"device": "cpu", "model": "tiny", "tokens": 5,
                                                            "batches": "1,2", "repeats": 2}),
              **outcome.resolved_params}
    return build_document(speech_transcribe.BENCHMARK, params, status="ok",
                          started_at=datetime(2026, 12, 7, tzinfo=timezone.utc), duration_s=1.0,
                          outcome=outcome_to_json(outcome), machine=machine)


def test_the_report_section_reads_the_split_the_mfu_and_the_bound(small_document):
    from hwbench_gui.engine.reports import speech_section
    from hwbench_gui.engine.results import document_check

    assert document_check.problem(small_document) is None
    rows = speech_section.build([small_document])
    assert [r.batch for r in rows] == ["1", "2"]
    assert rows[0].configuration == "tiny · FP32 · 5 tokens per 30 s window · step=eager"
    assert "encoder" in rows[0].split and "decoder" in rows[0].split
    text = "\n".join(speech_section.lines(rows))
    assert "Speech recognition" in text and "MFU not known (no datasheet peak)" in text and "bandwidth bound" in text
    (heading, columns, cells), = speech_section.pdf_tables(rows, 10.0)
    assert len(cells) == 2 and abs(sum(w for _, w in columns) - 10.0) < 1e-9
    csv = speech_section.csv_rows([small_document])
    assert [r["batch"] for r in csv] == [1, 2] and set(csv[0]) == set(speech_section.CSV_COLUMNS)
    for row in csv:
        for share in (row["encoder_fraction_of_matmul"], row["decoder_fraction_of_bound"]):
            assert share is None or 0 < share <= 1
    drawn = speech_section.chart([small_document])
    assert drawn is not None and drawn.key == "speech"
    from hwbench_gui.engine.reports import families

    assert families.family_of(small_document) is speech_section.FAMILY
    from hwbench_gui.engine.reports import evaluation

    report = evaluation.build_evaluation([small_document])
    assert "Speech recognition (Whisper real-time factor" in evaluation.format_evaluation(report)
    html = evaluation.render_evaluation_html(report)
    assert "<h2>Speech recognition</h2>" in html and html.count('<tr class="speech">') == 2
    # a document whose rows were tampered with is passed over, never drawn with made-up numbers
    broken = json.loads(json.dumps(small_document))
    broken["details"]["rows"][0]["real_time_factor"] = ["fast"]
    assert [r.batch for r in speech_section.batch_rows(broken)] == [2]
    broken["details"]["rows"][1]["decoder_fraction_of_bound"] = 1.7
    assert speech_section.batch_rows(broken)[0].decoder_fraction_of_bound is None


def test_the_speech_page_draws_a_result(small_document, qtbot):
    pytest.importorskip("PySide6")
    from hwbench_gui.ui.benchmarks.speech_view import SpeechView, has_speech_page

    assert has_speech_page(small_document)
    view = SpeechView()
    qtbot.addWidget(view)
    view.set_document(small_document)
    assert "tiny · FP32" in view.summary.text() and "real-time factor" in view.summary.text()
    assert len(view.rtf.getPlotItem().items) == 2  # the encoder's and the decoder's part of each bar
    assert len(view.tokens.getPlotItem().items) == 1 + 2  # the bars and a bound across each


def test_a_figure_above_its_limit_gets_no_share_and_the_higher_limits_are_kept():
    from hwbench_gui.engine.benchmarks import speech_transcribe as st

    low = {"copy_gbps": [1.0], "copy_bytes": 1, "read_gbps": None, "read_bytes": 0, "bandwidth_gbps_median": 1.0,
           "matmul_tflops": [1e-6], "matmul_tflops_median": 1e-6, "matmul_products": {"fastest": "a"},
           "measured_times": 1}
    # one window of each part in 1 s: the encoder's FLOPs at 1e-6 TFLOP/s would take hours, so it is above the limit
    row = st.batch_row(MICRO, 1, 5, 4, [1.0], [1.0], low, peak_tflops=None)
    assert row["encoder_fraction_of_matmul"] is None and "above" in row["encoder_bound_reason"]
    assert row["real_time_factor"] == [15.0]
    high = {**low, "bandwidth_gbps_median": 0.5, "matmul_tflops": [2.0], "matmul_tflops_median": 2.0,
            "matmul_products": {"fastest": "b"}}
    kept = st.best_of(low, high)
    assert (kept["bandwidth_gbps_median"], kept["matmul_tflops_median"], kept["matmul_products"]["fastest"],
            kept["measured_times"]) == (1.0, 2.0, "b", 2)
    row = st.batch_row(MICRO, 1, 5, 4, [1.0], [1.0], kept, peak_tflops=ar.encoder_flops(MICRO) / 1e12 / 2)
    # 1 s per window against a datasheet peak that allows 2 s: MFU would be 2, so none is given (never above 100 %)
    assert 0 < row["encoder_fraction_of_matmul"] <= 1 and row["encoder_mfu"] is None
    assert "above the datasheet's" in row["encoder_mfu_reason"]

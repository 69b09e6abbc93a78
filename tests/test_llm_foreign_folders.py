"""A user's Hugging Face folder is foreign input: every bad config.json and every bad safetensors file is refused
in one line naming the file and the field or the fault, before any arithmetic, any limit measured or any
tensor allocated; the files are read through engine/foreign.py (bounded, nesting counted, regular file
checked on the open descriptor); a folder name that is not UTF-8 is shown escaped."""

from __future__ import annotations

import json
import math
import os
import struct

import pytest
from support import no_traceback, one_line, run_cli

from hwbench_gui.engine.models.llm import architectures as archs
from hwbench_gui.engine.models.llm import weights
from hwbench_gui.engine.spec.benchmark import ParamError

posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, symbolic links and /dev/zero")

CONFIG = {"model_type": "llama", "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 1,
          "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 64, "max_position_embeddings": 128}


def _folder(path, config=None, text=None):
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(text if text is not None else json.dumps(config or CONFIG))
    return path


def _changed(**changes):
    config = {**CONFIG, **changes}
    return {k: v for k, v in config.items() if v is not _DROP}


_DROP = object()

BAD_CONFIGS = [
    (_changed(hidden_size=-5), "hidden_size is -5, not a positive number"),
    (_changed(hidden_size=0), "hidden_size is 0, not a positive number"),
    (_changed(hidden_size=math.nan), "hidden_size is nan, not a whole number"),
    (_changed(hidden_size=32.0), "hidden_size is 32.0, not a whole number"),
    (_changed(hidden_size="32"), "hidden_size is '32', not a whole number"),
    (_changed(vocab_size=_DROP), "vocab_size is missing"),
    (_changed(model_type="bert"), "model_type 'bert' is not supported"),
    (_changed(num_attention_heads=3), "num_attention_heads 3 is not a multiple of num_key_value_heads 2"),
    (_changed(hidden_size=30, head_dim=_DROP), "hidden_size 30 is not a multiple of num_attention_heads 4"),
    (_changed(rope_scaling={"rope_type": "yarn", "factor": 4.0}), "rope scaling 'yarn' is not supported"),
    (_changed(vocab_size=10**12), "vocab_size is 1000000000000, not between 1 and 1,048,576"),
    (_changed(vocab_size=3 * 10**7), "vocab_size is 30000000, not between 1 and 1,048,576"),
    (_changed(num_hidden_layers=10**7), "num_hidden_layers is 10000000, not between 1 and 1,024"),
    (_changed(max_position_embeddings=10**18), "max_position_embeddings is 1000000000000000000, not between 1 and "
                                               "16,777,216"),
    (_changed(max_position_embeddings=10**40), "max_position_embeddings is a number of 41 digits"),
    (_changed(rope_theta=math.nan), "rope_theta is nan, not above 0 and at most 1e+12"),
    (_changed(rms_norm_eps=-1.0), "rms_norm_eps is -1.0, not above 0"),
]


@pytest.mark.parametrize("config, reason", BAD_CONFIGS, ids=[reason[:40] for _, reason in BAD_CONFIGS])
def test_a_bad_config_is_refused_naming_the_file_and_the_field(tmp_path, config, reason):
    folder = _folder(tmp_path / "m", config)
    with pytest.raises(ParamError) as refused:
        archs.resolve(str(folder))
    assert str(refused.value) == f"{folder / 'config.json'}: {reason}" or \
        str(refused.value).startswith(f"{folder / 'config.json'}: {reason}"), str(refused.value)


def test_a_config_nested_thousands_deep_is_refused_before_it_is_parsed(tmp_path):
    folder = _folder(tmp_path / "m", text='{"a": ' + "[" * 3000 + "]" * 3000 + "}")
    with pytest.raises(ParamError, match="JSON nested 3001 levels deep .at most 64.: not read as a config.json"):
        archs.resolve(str(folder))
    _folder(folder, text='{"a": "' + "[" * 3000 + '", "model_type": "bert"}')  # brackets inside text do not nest
    with pytest.raises(ParamError, match="model_type 'bert'"):
        archs.resolve(str(folder))


@posix_only
def test_a_config_that_is_a_pipe_or_a_folder_name_not_utf8_is_one_printable_line(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    os.mkfifo(folder / "config.json")
    with pytest.raises(ParamError, match="config.json: not a regular file"):
        archs.resolve(str(folder))
    odd = os.path.join(os.fsencode(tmp_path), b"bad\xffname")
    os.mkdir(odd)
    with open(os.path.join(odd, b"config.json"), "w") as handle:
        json.dump(_changed(hidden_size=-5), handle)
    with pytest.raises(ParamError) as refused:
        archs.resolve(os.fsdecode(odd))
    assert f"{tmp_path}/bad\\udcffname/config.json: hidden_size is -5" in str(refused.value)
    str(refused.value).encode("utf-8")  # printable and savable as it is


# -- safetensors -----------------------------------------------------------------------------------------------

def _tensors():
    """name -> shape of every tensor the tiny config needs."""
    arch = archs.from_hf_config(CONFIG, "m")
    return {n: s for source in weights._llama_sources(arch).values() for n, s in zip(source.names, source.shapes)}


def _write_st(path, header: dict, data: bytes, length: int | None = None):
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw) if length is None else length) + raw + data)


def _good_header(shapes=None):
    header, offset = {}, 0
    for name, shape in (shapes or _tensors()).items():
        nbytes = math.prod(shape) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    return header, offset


def _weights_folder(tmp_path, header=None, data_bytes=None, length=None, config=None):
    folder = _folder(tmp_path / "m", config)
    good, size = _good_header()
    header = header or good
    _write_st(folder / "model.safetensors", header, os.urandom(size if data_bytes is None else data_bytes), length)
    return folder


def test_a_good_folder_passes_the_header_checks(tmp_path):
    folder = _weights_folder(tmp_path)
    arch, plan, where = weights.check_folder(str(folder))
    assert arch.vocab == 64 and set(where) == set(_tensors())


def _edited(edit):
    """The good header changed by ``edit(header, first, second)``; first and second are tensors of one shape."""
    header, _ = _good_header()
    first, second = "model.layers.0.input_layernorm.weight", "model.layers.0.post_attention_layernorm.weight"
    edit(header, first, second)
    return header


BAD_HEADERS = [
    ("header longer than the file", dict(length=1 << 20), "its header claims 1,048,576 bytes"),
    ("unknown dtype", dict(header=_edited(lambda h, a, b: h[a].update(dtype="Q4_K"))), "has dtype 'Q4_K'"),
    ("overlapping", dict(header=_edited(lambda h, a, b: h[b].update(data_offsets=h[a]["data_offsets"]))),
     "overlap"),
    ("out of range", dict(header=_edited(lambda h, a, b: h[a].update(data_offsets=[0, 1 << 40]))),
     "is outside the file's"),
    ("range and shape disagree", dict(header=_edited(lambda h, a, b: h[a].update(shape=[1]))),
     "needs 2 bytes, its range holds 64"),
    ("wrong shape", dict(header=_edited(lambda h, a, b: h[a].update(shape=[2, 16]))),
     "has shape [2, 16], config.json makes it [32]"),
    ("missing tensor", dict(header=_edited(lambda h, a, b: h.pop(b))), "is missing"),
    ("extra tensor", dict(header=_edited(lambda h, a, b: h.update(extra={"dtype": "U8", "shape": [0],
                                                                         "data_offsets": [0, 0]}))),
     "tensor extra is not part of"),
]


@pytest.mark.parametrize("name, kwargs, reason", BAD_HEADERS, ids=[b[0] for b in BAD_HEADERS])
def test_a_bad_safetensors_header_is_refused_naming_the_file(tmp_path, name, kwargs, reason):
    folder = _weights_folder(tmp_path, **kwargs)
    with pytest.raises(ParamError) as refused:
        weights.check_folder(str(folder))
    assert reason in str(refused.value) and str(folder) in str(refused.value), str(refused.value)


def test_a_malformed_header_and_a_short_file_are_refused(tmp_path):
    folder = _folder(tmp_path / "m")
    target = folder / "model.safetensors"
    target.write_bytes(struct.pack("<Q", 8) + b"not json")
    with pytest.raises(ParamError, match="model.safetensors: not a readable safetensors file .its header is not JSON"):
        weights.check_folder(str(folder))
    target.write_bytes(b"")
    with pytest.raises(ParamError, match="0 bytes, shorter than the 8-byte header length"):
        weights.check_folder(str(folder))
    target.write_bytes(struct.pack("<Q", 4000) + b"[" * 4000)
    with pytest.raises(ParamError, match="nested too deeply"):
        weights.check_folder(str(folder))


@posix_only
@pytest.mark.parametrize("kind, reason", [
    ("fifo", "not a regular file (a pipe, device or socket): not read as a safetensors file"),
    ("dev zero", "not a regular file (a pipe, device or socket): not read as a safetensors file"),
    ("folder", "a folder: not read as a safetensors file"),
    ("link loop", "cannot be read: a loop of symbolic links"),
    ("dangling link", "cannot be read: No such file or directory"),
])
def test_a_weights_name_that_is_not_a_regular_file_is_refused_unread(tmp_path, kind, reason):
    folder = _folder(tmp_path / "m")
    target = folder / "model.safetensors"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev zero":
        if not os.path.exists("/dev/zero"):
            pytest.skip("no /dev/zero")
        target.symlink_to("/dev/zero")
    elif kind == "folder":
        target.mkdir()
    elif kind == "link loop":
        target.symlink_to(folder / "other.safetensors")
        (folder / "other.safetensors").symlink_to(target)
    else:
        target.symlink_to(folder / "gone")
    with pytest.raises(ParamError) as refused:
        weights.check_folder(str(folder))
    assert str(refused.value).endswith(reason) and "safetensors" in str(refused.value).split(":")[0], \
        str(refused.value)


def test_the_tensors_are_read_from_the_checked_files(tmp_path):
    torch = pytest.importorskip("torch")
    folder = _weights_folder(tmp_path)
    model = weights.load(str(folder), torch.float32, "cpu")
    data = (folder / "model.safetensors").read_bytes()
    header, _ = _good_header()
    start = 8 + struct.unpack("<Q", data[:8])[0]
    begin, end = header["model.norm.weight"]["data_offsets"]
    expected = torch.frombuffer(bytearray(data[start + begin:start + end]), dtype=torch.bfloat16).float()
    # random bytes: some are NaN, equal to themselves only when NaN counts as equal
    assert torch.allclose(model.norm.weight.detach(), expected, rtol=0, atol=0, equal_nan=True)


# -- end to end ------------------------------------------------------------------------------------------------

def test_llm_infer_refuses_a_bad_weights_file_in_one_line_before_measuring_anything(cli_env, tmp_path):
    folder = _weights_folder(tmp_path, length=1 << 20, config=_changed(max_position_embeddings=4096))
    proc = run_cli(["run", "llm.infer", "-p", f"model={folder}", "-p", "device=cpu", "-p", "depths=0", "-p",
                    "serve=false", "--out", str(tmp_path / "r")], cli_env, timeout=300)
    no_traceback(proc)
    assert proc.returncode == 1 and "measuring" not in proc.stderr, proc.stderr
    line = one_line(proc.stderr.split("\n", 1)[1])  # after "running llm.infer (pid ...)"
    data_bytes = (folder / "model.safetensors").stat().st_size - 8
    assert line == (f"hwbench run: llm.infer failed: {folder}/model.safetensors: not a readable safetensors file "
                    f"(its header claims 1,048,576 bytes, the file has {data_bytes:,} after the length)"), line


def test_llm_train_refuses_a_huge_context_in_one_line(cli_env, tmp_path):
    folder = _folder(tmp_path / "m", _changed(max_position_embeddings=10**18))
    proc = run_cli(["run", "llm.train", "-p", f"model={folder}", "-p", "device=cpu", "--out", str(tmp_path / "r"),
                    "-q"], cli_env, timeout=300)
    no_traceback(proc)
    assert proc.returncode == 1
    assert one_line(proc.stderr) == (f"hwbench run: llm.train failed: {folder}/config.json: max_position_embeddings "
                                     "is 1000000000000000000, not between 1 and 16,777,216 (no real model has more)")

"""The core in-process: the CLI's bytes and diagnostics, options from the
option table, inspect and operators, every local exception, the GIL."""

import json
import os
import threading
import time

import onnx
import pytest

import lite2onnx

# Corpus models converted in several tests: a float MobileNet, a uint8 one, one
# with TFLite Metadata and label files.
CORPUS = [
    "tflite2onnx/mobilenet_v1_0.25_128.tflite",
    "coral-test_data/mobilenet_v2_1.0_224_quant.tflite",
    "tflite-support/mobilenet_v1_0.25_224_1_default_1.tflite",
]


def cli_convert(run_cli, model, out, *flags):
    r = run_cli("convert", model, "-o", out, "--json", *flags)
    return out.read_bytes(), json.loads(r.stdout)


def without_timings(diagnostics):
    return {k: v for k, v in diagnostics.items() if k != "timings"}


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_models_have_the_cli_bytes_and_diagnostics(corpus, run_cli, tmp_path, name):
    model = corpus / name
    expected, expected_diagnostics = cli_convert(run_cli, model, tmp_path / "cli.onnx")
    from_path = lite2onnx.convert(model)
    from_bytes = lite2onnx.convert(model.read_bytes())
    assert from_path.onnx_bytes == expected
    assert from_bytes.onnx_bytes == expected
    assert without_timings(from_path.diagnostics) == without_timings(expected_diagnostics)
    assert from_path.diagnostics["timings"]["total_ms"] > 0
    # What Debian's onnx makes of it: loads, passes the checker with strict shape inference.
    loaded = onnx.load_model_from_string(from_path.onnx_bytes)
    onnx.checker.check_model(loaded, full_check=True)
    props = {p.key: p.value for p in loaded.metadata_props}
    assert props["lite2onnx.source_sha256"]
    assert from_path.onnx_model().graph.name == loaded.graph.name


def test_output_path_and_save_write_the_bytes(test_models, tmp_path):
    model = test_models / "mini_mobilenet.tflite"
    result = lite2onnx.convert(model, tmp_path / "a.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == result.onnx_bytes
    result.save(str(tmp_path / "b.onnx"))
    assert (tmp_path / "b.onnx").read_bytes() == result.onnx_bytes
    # Atomic: written beside the target and renamed, nothing else left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.onnx", "b.onnx"]
    assert oct((tmp_path / "a.onnx").stat().st_mode & 0o777) == oct(0o666 & ~current_umask())
    # bytearray and memoryview are models too.
    data = model.read_bytes()
    assert lite2onnx.convert(bytearray(data)).onnx_bytes == result.onnx_bytes
    assert lite2onnx.convert(memoryview(data)).onnx_bytes == result.onnx_bytes


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_tflite2onnx_drop_in(test_models, run_cli, tmp_path):
    """tflite2onnx.convert(tflite_path, onnx_path, explicit_layouts={name: (src, dst)})."""
    model = str(test_models / "mini_mobilenet.tflite")
    out = str(tmp_path / "m.onnx")
    lite2onnx.convert(model, out, explicit_layouts={"input": ("NHWC", "NCHW")})
    expected, _ = cli_convert(run_cli, model, tmp_path / "cli.onnx",
                              "--explicit-layout", "input=NHWC:NCHW")
    with open(out, "rb") as f:
        assert f.read() == expected


def option_value(option):
    """A value other than the default for each kind of the option table, for
    sig_conv_fc.tflite (input tensor 'input', signatures 'classify' and 'embed'),
    as a keyword and as the CLI's arguments."""
    if option.kind == "integer":
        return 17, [option.flag, "17"]
    if option.kind == "boolean":
        return True, [option.flag]
    if option.kind == "choice":
        return option.choices[-1], [option.flag, option.choices[-1]]
    if option.kind == "layouts":
        if option.name == "io_layouts":
            return {"input": "NHWC"}, [option.flag, "input=NHWC"]
        return {"input": ("NHWC", "NCHW")}, [option.flag, "input=NHWC:NCHW"]
    if option.kind == "text":
        return "embed", [option.flag, "embed"]
    if option.kind == "shapes":
        return {"input": (1, 5, 7, 3)}, [option.flag, "input=1,5,7,3"]
    raise AssertionError(f"option {option.name} is of a kind this test has no value for: "
                         f"{option.kind}")


def test_every_option_of_the_table_is_a_keyword_with_the_cli_flags_effect(
        test_models, run_cli, tmp_path):
    table = [o for o in lite2onnx.options() if o.kind != "limit"]
    assert [o.name for o in table][:3] == ["opset", "explicit_layouts", "io_layouts"]
    model = test_models / "sig_conv_fc.tflite"
    for option in table:
        value, flags = option_value(option)
        result = lite2onnx.convert(model, **{option.name: value})
        expected, _ = cli_convert(run_cli, model, tmp_path / f"{option.name}.onnx", *flags)
        assert result.onnx_bytes == expected, option.name
        # The model says which options made it (lite2onnx.options metadata).
        props = {p.key: p.value for p in onnx.load_model_from_string(expected).metadata_props}
        assert f"{option.name}=" in props["lite2onnx.options"]
    # The docstring lists them, from the same table.
    for option in table:
        assert option.name in lite2onnx.convert.__doc__


def test_layout_texts_and_none_are_accepted(test_models):
    model = test_models / "mini_mobilenet.tflite"
    a = lite2onnx.convert(model, explicit_layouts=["input=NHWC:NCHW"], opset=None)
    b = lite2onnx.convert(model, explicit_layouts="input=NHWC:NCHW")
    c = lite2onnx.convert(model, explicit_layouts={"input": "NHWC:NCHW"})
    assert a.onnx_bytes == b.onnx_bytes == c.onnx_bytes


def test_inspect_and_operators_are_the_clis(test_models, run_cli):
    model = test_models / "sig_conv_fc.tflite"
    assert lite2onnx.inspect(model) == json.loads(run_cli("inspect", model, "--json").stdout)
    matrix = lite2onnx.operators()
    assert matrix == json.loads(run_cli("ops", "--json").stdout)
    assert any(o["op"] == "CONV_2D" and o["supported"] for o in matrix)


# ---- exceptions -------------------------------------------------------------

def test_invalid_model(test_models):
    with pytest.raises(lite2onnx.InvalidModelError) as e:
        lite2onnx.convert(b"this is not a TFLite model")
    assert e.value.reason == "invalid_model" and not e.value.retryable
    assert e.value.exit_code == 3 and isinstance(e.value, ValueError)
    with pytest.raises(lite2onnx.InvalidModelError):
        lite2onnx.inspect(b"")


def test_unsupported_operators_are_all_listed(test_models, run_cli):
    model = test_models / "unsupported_custom_op.tflite"
    with pytest.raises(lite2onnx.UnsupportedOperatorsError) as e:
        lite2onnx.convert(model)
    assert e.value.reason == "unsupported" and e.value.exit_code == 4
    ops = e.value.operators
    assert [o.op for o in ops] == ["Lite2OnnxNoSuchOp"]
    assert ops[0].op_index >= 0 and ops[0].reason_code == "custom_op"
    # The CLI says the same.
    r = run_cli("convert", model, "-o", os.devnull, "--json", check=False)
    assert r.returncode == 4
    unsupported = json.loads(r.stdout)["unsupported"]
    assert [(u["op"], u["reason_code"]) for u in unsupported] == [("Lite2OnnxNoSuchOp", "custom_op")]


def test_invalid_options(test_models):
    model = test_models / "mini_mobilenet.tflite"
    with pytest.raises(lite2onnx.InvalidOptionError, match=r"opset 12 is not supported \(choose 13..17\)"):
        lite2onnx.convert(model, opset=12)
    with pytest.raises(lite2onnx.InvalidOptionError, match="unknown option 'opsett'"):
        lite2onnx.convert(model, opsett=13)
    with pytest.raises(lite2onnx.InvalidOptionError, match="not an integer"):
        lite2onnx.convert(model, opset="13")
    with pytest.raises(lite2onnx.InvalidOptionError, match="choose qdq, dequantize, exact or auto"):
        lite2onnx.convert(model, quantization="float")
    with pytest.raises(lite2onnx.InvalidOptionError, match="nope"):
        lite2onnx.convert(model, explicit_layouts={"input": ("NHWC", "nope")})
    with pytest.raises(lite2onnx.InvalidOptionError, match="signature"):
        lite2onnx.convert(model, signature="missing")
    with pytest.raises(lite2onnx.InvalidOptionError) as e:
        lite2onnx.convert(model, keep_io_layout=1)
    assert e.value.exit_code == 2 and isinstance(e.value, ValueError)


def test_resource_limits(test_models):
    model = test_models / "mini_mobilenet.tflite"
    with pytest.raises(lite2onnx.ResourceLimitError, match="max_operators") as e:
        lite2onnx.convert(model, max_operators=1)
    assert e.value.reason == "resource_limit" and e.value.exit_code == 5
    assert not e.value.retryable
    with pytest.raises(lite2onnx.ResourceLimitError):
        lite2onnx.inspect(model, max_tensors=1)
    with pytest.raises(lite2onnx.InvalidOptionError):
        lite2onnx.convert(model, max_operators=-1)


def test_file_errors(tmp_path, test_models):
    with pytest.raises(lite2onnx.FileError, match="cannot open") as e:
        lite2onnx.convert(tmp_path / "missing.tflite")
    assert isinstance(e.value, OSError) and e.value.reason == "io_error"
    assert e.value.exit_code == 6
    result = lite2onnx.convert(test_models / "mini_mobilenet.tflite")
    with pytest.raises(lite2onnx.FileError, match="cannot write"):
        result.save(tmp_path / "no" / "such" / "folder.onnx")
    with pytest.raises(TypeError):
        lite2onnx.convert(12)


def test_every_reason_of_the_table_has_its_class():
    classes = {}
    for row in lite2onnx.reasons():
        cls = lite2onnx.error_class(row["name"])
        assert issubclass(cls, lite2onnx.ConversionError) and cls is not lite2onnx.ConversionError
        e = cls(row["name"], "message")
        assert e.retryable == row["retryable"] and e.exit_code == row["exit_code"]
        assert str(e) == f"{row['name']}: message"
        classes[row["name"]] = cls
    assert classes["queue_full"] is lite2onnx.Overloaded
    assert classes["memory_budget"] is lite2onnx.Overloaded
    assert classes["unavailable"] is lite2onnx.Unavailable
    assert classes["shutting_down"] is lite2onnx.Unavailable
    assert classes["deadline_exceeded"] is lite2onnx.DeadlineExceeded
    assert classes["worker_crashed"] is lite2onnx.InternalError
    assert classes["model_too_large"] is lite2onnx.ResourceLimitError
    assert classes["unsupported"] is lite2onnx.UnsupportedOperatorsError
    # Every class of the package is some reason's.
    assert set(classes.values()) == {
        lite2onnx.InternalError, lite2onnx.InvalidOptionError, lite2onnx.InvalidModelError,
        lite2onnx.UnsupportedOperatorsError, lite2onnx.ResourceLimitError, lite2onnx.FileError,
        lite2onnx.Unavailable, lite2onnx.Overloaded, lite2onnx.DeadlineExceeded}


# ---- threads ----------------------------------------------------------------

def test_the_gil_is_released_while_converting(corpus):
    """While one thread is inside convert(), another runs Python code. Each
    conversion (~60 ms here) is nearly all C++; its Python parts (options, the
    diagnostics' JSON) are well under a millisecond at its two ends. With the
    GIL held in C++, no iteration of the main thread could fall into the middle
    half of a conversion; released, hundreds do."""
    data = (corpus / "coral-test_data/automl_video_traffic_model.tflite").read_bytes()
    lite2onnx.convert(data)  # the first conversion of a process is slower (huge pages)
    intervals = []
    done = threading.Event()

    def work():
        for _ in range(5):
            start = time.perf_counter()
            lite2onnx.convert(data)
            end = time.perf_counter()
            intervals.append((start + (end - start) / 4, end - (end - start) / 4))
        done.set()

    stamps = []
    thread = threading.Thread(target=work)
    thread.start()
    while not done.is_set():
        stamps.append(time.perf_counter())
        time.sleep(0.0002)  # the main thread needs the GIL back after each sleep
    thread.join()
    inside = sum(any(start < t < end for start, end in intervals) for t in stamps)
    assert inside >= 10, f"{inside} of {len(stamps)} main-thread iterations ran during a conversion"


def test_threads_convert_the_same_bytes(test_models):
    data = (test_models / "mini_mobilenet.tflite").read_bytes()
    expected = lite2onnx.convert(data).onnx_bytes
    results = []
    threads = [threading.Thread(target=lambda: results.append(lite2onnx.convert(data).onnx_bytes))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 8

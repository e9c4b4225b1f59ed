"""lite2onnx.convert_many: the CLI's batch conversion from Python."""

import json
import shutil

import pytest

import lite2onnx


@pytest.fixture
def folder(tmp_path, test_models):
    """Three models in two folders, a file that is no model, one that fails."""
    root = tmp_path / "models"
    (root / "a" / "b").mkdir(parents=True)
    shutil.copy(test_models / "mini_mobilenet.tflite", root / "mini.tflite")
    shutil.copy(test_models / "conv2d_relu6.tflite", root / "a" / "conv.tflite")
    shutil.copy(test_models / "sig_conv_fc.tflite", root / "a" / "b" / "sig.tflite")
    shutil.copy(test_models / "unsupported_custom_op.tflite", root / "a" / "while.tflite")
    (root / "a" / "README.md").write_text("not a model\n")
    return root


def test_convert_many_mirrors_the_folder_and_summarizes(folder, tmp_path, run_cli):
    out = tmp_path / "out"
    seen = []
    summary = lite2onnx.convert_many(folder, out, jobs=2, opset=17,
                                     progress=lambda *args: seen.append(args))
    assert summary == json.loads((out / "summary.json").read_text())
    assert summary["counts"] == {"models": 4, "converted": 3, "failed": 1, "skipped": 1}
    assert summary["failed_by_reason"] == {"unsupported": 1} and summary["exit_code"] == 10
    by_name = {m["name"]: m for m in summary["models"]}
    assert sorted(by_name) == ["a/README.md", "a/b/sig.tflite",
                               "a/conv.tflite", "a/while.tflite", "mini.tflite"]
    assert by_name["a/while.tflite"]["outcome"] == "failed"
    assert by_name["a/while.tflite"]["error"]["reason"] == "unsupported"
    assert [u["op"] for u in by_name["a/while.tflite"]["unsupported"]] == ["Lite2OnnxNoSuchOp"]
    assert by_name["a/README.md"]["outcome"] == "skipped"
    assert sorted(n for n, _, _, _ in seen) == ["a/b/sig.tflite", "a/conv.tflite",
                                               "a/while.tflite", "mini.tflite"]
    assert [d for _, _, d, _ in seen] == [1, 2, 3, 4]
    # The files, at the mirrored paths, with the bytes of convert().
    for name in ("mini.tflite", "a/conv.tflite", "a/b/sig.tflite"):
        onnx_path = out / name.replace(".tflite", ".onnx")
        assert by_name[name]["output"] == str(onnx_path)
        assert onnx_path.read_bytes() == lite2onnx.convert(folder / name, opset=17).onnx_bytes
        assert by_name[name]["nodes"] > 0 and by_name[name]["transposes"] == 0
    assert not (out / "a" / "while.onnx").exists()
    # The CLI's batch gives the same outcomes and the same files.
    cli_out = tmp_path / "cli"
    r = run_cli("convert", folder, "-o", cli_out, "-j", "2", "--opset", "17", check=False)
    assert r.returncode == 10, r.stderr
    cli = json.loads((cli_out / "summary.json").read_text())
    assert [(m["name"], m["outcome"]) for m in cli["models"]] == \
        [(m["name"], m["outcome"]) for m in summary["models"]]
    assert cli["options"] == summary["options"]
    for name in ("mini.tflite", "a/conv.tflite", "a/b/sig.tflite"):
        rel = name.replace(".tflite", ".onnx")
        assert (cli_out / rel).read_bytes() == (out / rel).read_bytes()


def test_convert_many_errors(tmp_path, folder):
    with pytest.raises(lite2onnx.FileError):
        lite2onnx.convert_many([tmp_path / "missing"], tmp_path / "out")
    with pytest.raises(lite2onnx.InvalidOptionError):
        lite2onnx.convert_many(folder, tmp_path / "out", jobs=0)
    with pytest.raises(lite2onnx.InvalidOptionError):
        lite2onnx.convert_many(folder, tmp_path / "out", opset=99)
    # Two models that would be written to one file.
    (tmp_path / "x").mkdir()
    shutil.copy(folder / "mini.tflite", tmp_path / "x" / "m.tflite")
    shutil.copy(folder / "mini.tflite", tmp_path / "x" / "m.lite")
    with pytest.raises(lite2onnx.InvalidOptionError, match="would both be written"):
        lite2onnx.convert_many(tmp_path / "x", tmp_path / "out")
    # A progress callback that raises stops being called, and its error comes out.
    def boom(*args):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):
        lite2onnx.convert_many(folder, tmp_path / "out2", progress=boom)

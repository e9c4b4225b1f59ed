"""The installed package itself: where it was installed, what the extension
links, onnx and lite2onnx in one process, the stubs' versions, type hints."""

import os
import subprocess
import sys
from pathlib import Path

import grpc
import google.protobuf

import lite2onnx
from lite2onnx import _core
from lite2onnx.v1 import _build_info, converter_pb2


def test_installed_into_the_venv_of_debians_python():
    assert Path(lite2onnx.__file__).resolve().is_relative_to(Path(sys.prefix).resolve())
    assert Path(os.environ["LITE2ONNX_VENV"]).resolve() == Path(sys.prefix).resolve()
    # The venv is of /usr/bin/python3, Debian's own, not a Python first on PATH.
    assert Path(sys._base_executable).resolve() == Path("/usr/bin/python3").resolve()
    assert lite2onnx.__version__ == _core.version()


def needed_libraries(path):
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True)
    return [line.split("[")[1].split("]")[0] for line in out.stdout.splitlines()
            if "(NEEDED)" in line]


def test_the_extension_links_no_jemalloc_and_exports_only_its_init():
    needed = needed_libraries(_core.__file__)
    assert not [lib for lib in needed if "jemalloc" in lib], needed
    # The CLI does link it (the allocator is the programs').
    assert any("jemalloc" in lib for lib in needed_libraries(os.environ["LITE2ONNX_CLI"]))
    symbols = subprocess.run(["nm", "-D", "--defined-only", _core.__file__], capture_output=True,
                             text=True, check=True).stdout.split("\n")
    exported = [line.split()[-1] for line in symbols if line.strip()]
    assert exported == ["PyInit__core"], exported[:20]


SNIPPET = """
import {first}, {second}
import lite2onnx, onnx
model = onnx.load_model_from_string(lite2onnx.convert({model!r}).onnx_bytes)
onnx.checker.check_model(model, full_check=True)
print(len(model.graph.node))
"""


def test_onnx_and_lite2onnx_import_in_either_order(test_models):
    model = str(test_models / "mini_mobilenet.tflite")
    counts = set()
    for first, second in (("onnx", "lite2onnx"), ("lite2onnx", "onnx"),
                          ("lite2onnx.v1.converter_pb2", "onnx")):
        r = subprocess.run([sys.executable, "-P", "-c",
                            SNIPPET.format(first=first, second=second, model=model)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        counts.add(r.stdout.strip())
    assert len(counts) == 1


def test_the_stubs_were_generated_by_the_runtimes_versions():
    # protoc as python3-protobuf: protoc 3.21.12 is the Python runtime 4.21.12 (the
    # Python package counts from 4 since 21.x; the last two numbers are the release).
    assert _build_info.PROTOC_VERSION.split(".")[-2:] == google.protobuf.__version__.split(".")[-2:]
    # grpc_python_plugin as python3-grpcio (major.minor).
    assert _build_info.GRPC_VERSION.split(".")[:2] == grpc.__version__.split(".")[:2]
    assert converter_pb2.DESCRIPTOR.package == "lite2onnx.v1"


def test_typed_and_documented():
    package = Path(lite2onnx.__file__).parent
    assert (package / "py.typed").exists() and (package / "_core.pyi").exists()
    for name in lite2onnx.__all__:
        if name == "__version__":
            continue
        assert getattr(lite2onnx, name).__doc__, name
    assert lite2onnx.convert.__annotations__["return"] in ("Conversion", lite2onnx.Conversion)


def test_the_typed_options_are_the_option_table():
    """lite2onnx/_option_types.py is generated from the table: a new option
    without a regenerated file fails here (python -m lite2onnx._stubgen)."""
    from lite2onnx import _option_types, _stubgen
    assert Path(_option_types.__file__).read_text() == _stubgen.render()
    keys = set(lite2onnx.ConvertOptions.__annotations__)
    assert keys == {o.name for o in lite2onnx.options()}


def test_tflite2onnx_names_exist(test_models, tmp_path):
    import lite2onnx as tflite2onnx
    ops = tflite2onnx.getSupportedOperators()
    assert "CONV_2D" in ops and ops == sorted(ops)
    assert set(ops) == {o["op"] for o in lite2onnx.operators() if o["supported"]}
    model = str(test_models / "mini_mobilenet.tflite")
    assert tflite2onnx.convert(model, str(tmp_path / "m.onnx"),
                               explicit_layouts={"input": ("NHWC", "NCHW")}) is not None
    assert (tmp_path / "m.onnx").stat().st_size > 0
    assert isinstance(tflite2onnx.__version__, str)

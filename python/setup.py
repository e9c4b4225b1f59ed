"""Builds the lite2onnx package: the extension (lite2onnx._core) and the
client's gRPC stubs (lite2onnx.v1), compiled by the project's CMake build.

Where the C++ sources are: the repository around python/ (a checkout), or
_src/ inside an sdist (``python3 -m build`` copies them there). The build runs
in its own folder under setuptools' build_temp, configured with
LITE2ONNX_PYTHON_ONLY (the conversion core, the wire translation and the
extension; no server, tests or benchmark), for the Python running this build.

LITE2ONNX_BUILD_DIR names an existing build folder of the whole project to
take the extension from instead (the project's tests do: no second build).
CMAKE_BUILD_PARALLEL_LEVEL sets the compile jobs (default 2).
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent

# What the package's build reads of the repository (an sdist carries these in _src/).
SOURCE_PARTS = ["CMakeLists.txt", "core", "common", "client", "proto", "python/CMakeLists.txt",
                "python/src", "tests/models/json/mini_mobilenet.json"]


def source_root() -> Path:
    packed = HERE / "_src"
    if (packed / "CMakeLists.txt").exists():
        return packed
    if (HERE.parent / "CMakeLists.txt").exists():
        return HERE.parent
    raise SystemExit("lite2onnx: the C++ sources are missing: build from the repository's "
                     "python/ folder or from an sdist (python3 -m build --sdist python)")


def project_version() -> str:
    text = (source_root() / "CMakeLists.txt").read_text()
    return re.search(r"project\(lite2onnx VERSION ([0-9.]+)", text).group(1)


def base_python() -> str:
    # A venv's python is a link to the Python it was made from; CMake wants that one.
    return getattr(sys, "_base_executable", sys.executable)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        source = source_root()
        given = os.environ.get("LITE2ONNX_BUILD_DIR")
        build = Path(given).resolve() if given else Path(self.build_temp).resolve() / "cmake"
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        package = build / "python" / "lite2onnx"
        configured = (build / "CMakeCache.txt").exists()
        if not configured or not (package / ("_core" + suffix)).exists():
            # Configure (or point an existing build at this Python, with the
            # package on: an extension is built for one ABI, named by EXT_SUFFIX).
            fresh = [] if configured else ["-DCMAKE_BUILD_TYPE=Release"]
            if not configured and shutil.which("ninja"):
                fresh += ["-G", "Ninja"]
            if not configured and not given:
                fresh += ["-DLITE2ONNX_PYTHON_ONLY=ON"]
            subprocess.run(["cmake", "-S", str(source), "-B", str(build), *fresh,
                            "-DLITE2ONNX_BUILD_PYTHON=ON", "-DPython_EXECUTABLE=" + base_python()],
                           check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(["cmake", "--build", str(build), "-j", jobs, "--target", "lite2onnx_python",
                        "lite2onnx_python_stubs"], check=True)
        built = package / ("_core" + suffix)
        if not built.exists():
            found = sorted(p.name for p in package.glob("_core*"))
            raise SystemExit(f"lite2onnx: {built} was not built (found {found}): the build "
                             f"folder {build} builds for another Python than {base_python()}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
        stubs = target.parent / "v1"
        stubs.mkdir(parents=True, exist_ok=True)
        for name in ("converter_pb2.py", "converter_pb2_grpc.py", "_build_info.py"):
            shutil.copy2(package / "v1" / name, stubs / name)


class SdistWithSources(sdist):
    """An sdist that builds anywhere: the C++ sources go into _src/."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        source = source_root()
        for part in SOURCE_PARTS:
            src, dst = source / part, Path(base_dir) / "_src" / part
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, dst)


setup(
    version=project_version(),
    ext_modules=[Extension("lite2onnx._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "sdist": SdistWithSources},
)

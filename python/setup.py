"""Builds the lite2onnx package from the project's CMake build.

The extension (lite2onnx._core) and the client's stubs (lite2onnx.v1) are
built by CMake (python/CMakeLists.txt) in the project's build folder, together
with the CLI and the server: `cmake --build` here builds just those targets
(a no-op after ./scripts/setup.sh) and copies them into the package.

LITE2ONNX_BUILD_DIR names the build folder (default: build/ beside python/);
one that does not exist yet is configured (Release, Ninja) for the Python
running this build.
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

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent
BUILD = Path(os.environ.get("LITE2ONNX_BUILD_DIR", SOURCE / "build")).resolve()


def project_version():
    text = (SOURCE / "CMakeLists.txt").read_text()
    return re.search(r"project\(lite2onnx VERSION ([0-9.]+)", text).group(1)


def base_python():
    # A venv's python is a link to the Python it was made from; CMake wants that one.
    return getattr(sys, "_base_executable", sys.executable)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        package = BUILD / "python" / "lite2onnx"
        configured = (BUILD / "CMakeCache.txt").exists()
        if not configured or not (package / ("_core" + suffix)).exists():
            # Configure (or point an existing build at this Python, with the
            # package on: an extension is built for one ABI, named by EXT_SUFFIX).
            fresh = [] if configured else ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"]
            subprocess.run(["cmake", "-S", str(SOURCE), "-B", str(BUILD), *fresh,
                            "-DLITE2ONNX_BUILD_PYTHON=ON", "-DPython_EXECUTABLE=" + base_python()],
                           check=True)
        subprocess.run(["cmake", "--build", str(BUILD), "--target", "lite2onnx_python",
                        "lite2onnx_python_stubs"], check=True)
        built = package / ("_core" + suffix)
        if not built.exists():
            found = sorted(p.name for p in package.glob("_core*"))
            raise SystemExit(f"lite2onnx: {built} was not built (found {found}): the build "
                             f"folder {BUILD} builds for another Python than {base_python()}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
        stubs = target.parent / "v1"
        stubs.mkdir(parents=True, exist_ok=True)
        for name in ("converter_pb2.py", "converter_pb2_grpc.py", "_build_info.py"):
            shutil.copy2(package / "v1" / name, stubs / name)


setup(
    version=project_version(),
    ext_modules=[Extension("lite2onnx._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)

#!/usr/bin/env bash
# The wheel (docs/python.md): `python3 -m build --wheel --no-isolation python`
# (Debian's python3-build), then a plain `pip install` of it into a second venv
# that sees nothing of the system's packages and may download nothing, and a
# conversion there.
#   wheel.sh PYTHON WORK_DIR PYTHON_SOURCE_DIR BUILD_DIR MODEL
set -euo pipefail
python=$1 work=$2 source=$3 build=$4 model=$5
rm -rf "$work"
mkdir -p "$work"
SECONDS=0
# The extension comes from the project's build folder (no second C++ build here;
# without LITE2ONNX_BUILD_DIR the wheel's build compiles the core itself).
LITE2ONNX_BUILD_DIR=$build "$python" -m build --wheel --no-isolation --outdir "$work/dist" \
  "$source" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/lite2onnx-*.whl)
echo "built $(basename "$wheel") in ${SECONDS} s"
"$python" -m venv "$work/venv"
PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 "$work/venv/bin/pip" install --quiet "$wheel"
cd "$work"
"$work/venv/bin/python" -P - "$model" <<'PY'
import sys
import lite2onnx
result = lite2onnx.convert(sys.argv[1], "m.onnx", opset=17, batch=1)
assert open("m.onnx", "rb").read() == result.onnx_bytes and result.onnx_bytes[:2]
print("converted in the wheel's venv:", lite2onnx.__file__, len(result.onnx_bytes), "bytes")
PY

#!/usr/bin/env bash
# The documented install command (docs/python.md), into a fresh venv: a venv of
# Debian's Python that sees its packages (grpcio, protobuf, onnx, pytest,
# setuptools, wheel), and pip building ./python without build isolation, so
# nothing is fetched. Then `import lite2onnx` in it must work.
#   install.sh PYTHON VENV PYTHON_SOURCE_DIR BUILD_DIR
set -euo pipefail
python=$1 venv=$2 source=$3 build=$4
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
# The build folder the package takes the extension from (setup.py): the
# project's, already built, instead of a build of its own.
LITE2ONNX_BUILD_DIR=$build PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 \
  "$venv/bin/pip" install --quiet --no-build-isolation "$source"
# Run from elsewhere, so that the source folder cannot stand in for the installed package.
cd "$venv"
"$venv/bin/python" -P -c '
import lite2onnx, os, sys
where = os.path.dirname(lite2onnx.__file__)
assert where.startswith(sys.prefix), (where, sys.prefix)
print("lite2onnx", lite2onnx.__version__, "installed in", where)
'

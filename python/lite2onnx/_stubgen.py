"""Writes lite2onnx/_option_types.py, the typed keyword options, from the
converter's option table (``python -m lite2onnx._stubgen > _option_types.py``);
python/tests/test_package.py checks that the file in the package is current."""

from __future__ import annotations

import textwrap
from typing import Dict, List

from . import _core

_TYPES: Dict[str, str] = {
    "integer": "int",
    "boolean": "bool",
    "text": "str",
    "layouts": "LayoutsValue",
    "shapes": "ShapesValue",
}

_HEADER = '''\
"""The keyword options of convert(), convert_many() and Client.convert(), typed.

Generated from the converter's option table (core/option_table.h) and limits by
``python -m lite2onnx._stubgen``; do not edit (a test checks it is current).
"""

from __future__ import annotations

from typing import Literal, Mapping, Sequence, Tuple, TypedDict, Union

# {tensor: (source, target)} or {tensor: "NHWC"} (an I/O order), or "TENSOR=SRC:DST" texts.
LayoutsValue = Union[Mapping[str, Union[str, Tuple[str, str]]], str, Sequence[str]]
# {tensor: (1, 224, 224, 3)}, or "TENSOR=D0,D1,..." texts.
ShapesValue = Union[Mapping[str, Sequence[int]], str, Sequence[str]]


class ConvertOptions(TypedDict, total=False):
    """Every keyword option; leave one out for its default."""
'''


def render() -> str:
    out = [_HEADER]
    for row in _core.option_table():
        kind = row["kind"]
        if kind == "choice":
            kind_type = "Literal[" + ", ".join(repr(c) for c in row["choices"]) + "]"
        else:
            kind_type = _TYPES.get(kind, "str")
        default = f"; default {row['default']!r}" if row["default"] else ""
        out.append(f"    {row['name']}: {kind_type}")
        out += _docstring(f"{row['help']} ({row['flag']}{default})")
    for row in _core.limit_table():
        out.append(f"    {row['name']}: int")
        out += _docstring(f"{row['help']} (--{row['name'].replace('_', '-')}; default "
                          f"{row['default']})")
    return "\n".join(out) + "\n"


def _docstring(text: str) -> List[str]:
    lines = textwrap.wrap(text.replace('"""', "'''"), width=84)
    if len(lines) == 1:
        return ['    """' + lines[0] + '"""']
    return ['    """' + lines[0]] + ["    " + line for line in lines[1:]] + ['    """']


if __name__ == "__main__":
    print(render(), end="")

"""Keyword options, read from the option table.

The conversion options are defined once, in the core's option table
(``core/option_table.h``): the CLI's flags, the service's fields and these
keyword arguments all come from it. A keyword is an option's canonical name
(``opset``, ``explicit_layouts``, ``quantization``, ...) and its value is
turned into the option's text form, which the core parses as it parses the
CLI's flags; the limits (``max_operators``, ...) are the CLI's ``--max-*``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, NamedTuple, Tuple

from . import _core
from ._errors import invalid_option


class Option(NamedTuple):
    """One keyword option (a row of the option table, or a limit)."""

    name: str
    kind: str  # integer, boolean, choice, layouts, text, shapes; limit
    default: str
    help: str
    choices: Tuple[str, ...]
    flag: str  # the CLI's


_TABLE: Dict[str, dict] = {row["name"]: row for row in _core.option_table()}
_LIMITS: Dict[str, dict] = {row["name"]: row for row in _core.limit_table()}


def options() -> List[Option]:
    """Every keyword option of ``convert``: the option table, then the limits."""
    out = [Option(r["name"], r["kind"], r["default"], r["help"], tuple(r["choices"]), r["flag"])
           for r in _TABLE.values()]
    out += [Option(r["name"], "limit", str(r["default"]), r["help"], (),
                   "--" + r["name"].replace("_", "-")) for r in _LIMITS.values()]
    return out


def _layout_texts(name: str, value: Any, order_only: bool) -> List[str]:
    """TENSOR=SRC:DST texts of a layouts option: a mapping (tensor -> (src, dst),
    "SRC:DST", or ORDER alone where the option takes it), or texts as given."""
    if isinstance(value, Mapping):
        texts = []
        for tensor, layout in value.items():
            if isinstance(layout, str):
                texts.append(f"{tensor}={layout}")
            elif isinstance(layout, (tuple, list)) and len(layout) == 2 and all(
                    isinstance(x, str) for x in layout):
                texts.append(f"{tensor}={layout[0]}:{layout[1]}")
            else:
                raise invalid_option(
                    f"{name}[{tensor!r}]: {layout!r} is not a (source, target) pair of layouts "
                    f"like ('NHWC', 'NCHW')" + (" or an order like 'NHWC'" if order_only else ""))
        return texts
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
        return list(value)
    raise invalid_option(f"{name}: {value!r}: give a dict {{tensor: (source, target)}} or "
                         f"'TENSOR=SRC:DST' texts")


def _shape_texts(name: str, value: Any) -> List[str]:
    """TENSOR=D0,D1,... texts of a shapes option: a mapping (tensor -> dimensions)
    or texts as given."""
    if isinstance(value, Mapping):
        texts = []
        for tensor, dims in value.items():
            if isinstance(dims, (str, bytes)) or not isinstance(dims, (tuple, list)) or not all(
                    isinstance(d, int) and not isinstance(d, bool) for d in dims):
                raise invalid_option(f"{name}[{tensor!r}]: {dims!r} is not a sequence of "
                                     f"dimensions like (1, 224, 224, 3)")
            texts.append(f"{tensor}=" + ",".join(str(d) for d in dims))
        return texts
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
        return list(value)
    raise invalid_option(f"{name}: {value!r}: give a dict {{tensor: (d0, d1, ...)}} or "
                         f"'TENSOR=D0,D1,...' texts")


def to_texts(kwargs: Mapping[str, Any]) -> Tuple[List[Tuple[str, str]], Dict[str, int]]:
    """The (name, text) pairs and the limits of keyword options; unknown names
    and values of the wrong type are InvalidOptionError."""
    texts: List[Tuple[str, str]] = []
    limits: Dict[str, int] = {}
    for name, value in kwargs.items():
        row = _TABLE.get(name)
        if row is None and name in _LIMITS:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise invalid_option(f"{name}: {value!r} is not a count (an int, 0 or more)")
            if value > _LIMITS[name]["max"]:
                raise invalid_option(f"{name} {value} is too large")
            limits[name] = value
            continue
        if row is None:
            known = ", ".join(list(_TABLE) + list(_LIMITS))
            raise invalid_option(f"unknown option '{name}' (options: {known})")
        if value is None:
            continue  # the default
        kind = row["kind"]
        if kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise invalid_option(f"{name}: {value!r} is not an integer")
            texts.append((name, str(value)))
        elif kind == "boolean":
            if not isinstance(value, bool):
                raise invalid_option(f"{name}: {value!r} is not True or False")
            texts.append((name, "true" if value else "false"))
        elif kind in ("choice", "text"):
            if not isinstance(value, str):
                raise invalid_option(f"{name}: {value!r} is not a str")
            texts.append((name, value))
        elif kind == "layouts":
            texts += [(name, t) for t in _layout_texts(name, value, row["order_only"])]
        elif kind == "shapes":
            texts += [(name, t) for t in _shape_texts(name, value)]
        else:  # a kind this package does not know: the text as it is
            texts.append((name, str(value)))
    return texts, limits


def describe() -> str:
    """The keyword options as the docstrings list them: name, the CLI's flag,
    help, and the default as a Python value."""
    lines = []
    for o in options():
        if o.kind == "boolean":
            default = f" (default: {o.default == 'true'})"
        elif o.kind in ("integer", "limit"):
            default = f" (default: {o.default})" if o.default != "0" else ""
        elif o.kind == "choice":
            default = f" (default: {o.default!r})"
        else:
            default = ""
        lines.append(f"    {o.name} ({o.flag}): {o.help}{default}")
    return "\n".join(lines)

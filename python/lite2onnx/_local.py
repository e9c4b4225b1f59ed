"""The conversion core in this process: convert, inspect, operators, convert_many."""

from __future__ import annotations

import json
import mmap
import os
import tempfile
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Union

from . import _core
from ._errors import file_error, from_failure
from ._options import describe, to_texts

if TYPE_CHECKING:
    from ._option_types import ConvertOptions

    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

PathLike = Union[str, "os.PathLike[str]"]
Model = Union[bytes, bytearray, memoryview, PathLike]


class Conversion:
    """An ONNX model converted from a TFLite model.

    Attributes:
        onnx_bytes: the serialized ONNX model (the CLI writes the same bytes).
        diagnostics: what the conversion did, as ``lite2onnx convert --json``
            prints it: ``source_ops``, ``emitted_nodes``, ``inserted`` (every
            Transpose/Reshape added, with its reason), ``transposes``,
            ``io_layouts``, ``quantization``, ``warnings``, ``timings``, ...
        request_id: the server's request id (its log names it); None in-process.
        streamed: the model went through ConvertStream (client only).
        attempts: calls made, retries included.
    """

    def __init__(self, onnx_bytes: bytes, diagnostics: Dict[str, Any], *,
                 request_id: Optional[str] = None, streamed: bool = False,
                 attempts: int = 1) -> None:
        self.onnx_bytes = onnx_bytes
        self.diagnostics = diagnostics
        self.request_id = request_id
        self.streamed = streamed
        self.attempts = attempts

    def save(self, path: PathLike) -> None:
        """Writes the ONNX model to ``path`` atomically (a temporary file beside
        it, renamed over it): a reader never sees a partial file."""
        write_atomically(path, self.onnx_bytes)

    def onnx_model(self) -> Any:
        """The model as an ``onnx.ModelProto`` (needs the ``onnx`` package)."""
        import onnx  # only for this

        return onnx.load_model_from_string(self.onnx_bytes)

    def __repr__(self) -> str:
        nodes = sum(self.diagnostics.get("emitted_nodes", {}).values())
        return f"<Conversion: {len(self.onnx_bytes)} ONNX bytes, {nodes} nodes>"


def write_atomically(path: PathLike, data: bytes) -> None:
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".")
    except OSError as e:
        raise file_error(f"cannot write '{path}': {e.strerror}") from e
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temp, 0o666 & ~mask)
        os.replace(temp, path)
    except OSError as e:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise file_error(f"cannot write '{path}': {e.strerror}") from e


class _ModelBytes:
    """The bytes of a model given as bytes or as a path (memory-mapped, not copied)."""

    def __init__(self, model: Model) -> None:
        self._map: Optional[mmap.mmap] = None
        if isinstance(model, (bytes, bytearray, memoryview)):
            self.data: Any = model
            return
        if not isinstance(model, (str, os.PathLike)):
            raise TypeError(f"model: give the model's bytes or its path, not {type(model).__name__}")
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    self.data = b""
                    return
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as e:
            raise file_error(f"cannot open '{path}': {e.strerror}") from e
        self.data = self._map

    def __enter__(self) -> Any:
        return self.data

    def __exit__(self, *exc: Any) -> None:
        if self._map is not None:
            self._map.close()


def convert(model: Model, output: Optional[PathLike] = None,
            **options: Unpack[ConvertOptions]) -> Conversion:
    """Converts a TFLite model to ONNX, in this process.

    ``model`` is the model's bytes or its path; with ``output``, the ONNX model
    is also written there (atomically). The result's bytes are the CLI's for
    the same options. Drop-in for ``tflite2onnx.convert(tflite_path, onnx_path,
    explicit_layouts={"x": ("NHWC", "NCHW")})``.

    Keyword options (the option table, ``lite2onnx.options()``; the CLI's flag of each):
    {options}

    Raises a ``ConversionError``: ``InvalidModelError``,
    ``UnsupportedOperatorsError`` (``.operators`` lists all of them),
    ``InvalidOptionError``, ``ResourceLimitError``, ``FileError``, ...
    The GIL is released while converting: threads convert in parallel.
    """
    texts, limits = to_texts(options)
    with _ModelBytes(model) as data:
        onnx, diagnostics, failure = _core.convert(data, texts, limits)
    if failure is not None:
        raise from_failure(failure)
    result = Conversion(onnx, json.loads(diagnostics))
    if output is not None:
        result.save(output)
    return result


def inspect(model: Model, **limits: Any) -> Dict[str, Any]:
    """Describes a model without converting it, as ``lite2onnx inspect --json``:
    signatures, tensors, operators, quantization, what is unsupported and why,
    the TFLite Metadata. Keywords: the limits (``max_operators``, ...)."""
    texts, limit_values = to_texts(limits)
    if texts:
        raise from_failure({"reason": "invalid_option",
                            "message": "inspect takes only limits, not " + texts[0][0]})
    with _ModelBytes(model) as data:
        info, failure = _core.inspect(data, limit_values)
    if failure is not None:
        raise from_failure(failure)
    return json.loads(info)


def operators() -> List[Dict[str, Any]]:
    """The support matrix, from the op registry, as ``lite2onnx ops --json``:
    one dict per TFLite operator (``op``, ``code``, ``supported``, and for the
    supported ones ``layout_class``, ``onnx``, ``dtypes``, ``quantized``, ``exact``,
    ``notes``)."""
    return json.loads(_core.operators())


def getSupportedOperators() -> List[str]:  # noqa: N802 (tflite2onnx's name)
    """tflite2onnx's ``getSupportedOperators()``: the names of the TFLite
    operators that convert (builtins, then custom codes), sorted."""
    return sorted(o["op"] for o in operators() if o["supported"])


def convert_many(paths: Union[PathLike, Iterable[PathLike]], out_dir: PathLike, *,
                 jobs: Optional[int] = None,
                 progress: Optional[Callable[[str, str, int, int], None]] = None,
                 **options: Unpack[ConvertOptions]) -> Dict[str, Any]:
    """Converts every model of ``paths`` (files, and folders searched
    recursively) into ``out_dir``, as ``lite2onnx convert PATHS... -o OUT_DIR -j
    JOBS`` does: relative paths mirrored, files that are not TFLite models
    skipped, ``jobs`` conversions at a time (default: one per usable CPU), each
    output written atomically, failures noted and passed by.

    Returns the summary, also written to ``out_dir/summary.json``: ``counts``
    (converted, failed, skipped), ``failed_by_reason``, ``exit_code`` (0 when
    every model converted, 10 when some failed) and ``models``, one dict per
    file: ``name``, ``outcome``, ``output`` or ``error`` (``reason``,
    ``message``, ``retryable``...), ``unsupported``, ``nodes``, ``transposes``,
    ``timings``. ``progress(name, outcome, done, total)`` is called after each
    model. Raises only when the batch cannot start (``FileError`` for a
    missing input, ``InvalidOptionError``). Options: as ``convert``.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    inputs = [os.fspath(p) for p in paths]
    texts, limits = to_texts(options)
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise from_failure({"reason": "invalid_option",
                            "message": f"jobs: {jobs!r} is not a count of 1 or more"})
    summary, failure = _core.convert_many(inputs, os.fspath(out_dir), texts, limits, jobs,
                                          progress)
    if failure is not None:
        raise from_failure(failure)
    return json.loads(summary)


convert.__doc__ = (convert.__doc__ or "").replace("    {options}", describe())

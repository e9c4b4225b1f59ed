"""The exceptions of lite2onnx, made from the error-reason table.

Every failure is a ``ConversionError`` naming a row of the table the CLI, the
C++ client and the server share (``common/error_reasons.h``; ``lite2onnx
errors`` prints it): ``reason`` is the row's name (``invalid_model``,
``queue_full``, ...), ``retryable`` says whether the same call may pass later.
The class follows from the row's exit code, which says what to do about it
(fix the model, fix the options, retry later, ...), so a reason added to the
table gets its class without a change here.
"""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Type

from . import _core


class UnsupportedOperator(NamedTuple):
    """One operator that cannot be converted, and why (empty: not implemented).

    ``reason_code`` says why as a code to act on without reading ``reason``:
    ``not_implemented``, ``custom_op``, ``select_tf_op``,
    ``accelerator_compiled``, ``op_version``, ``opset``, ``runtime_value``,
    ``type``, ``shape``, ``quantization``, ``state``, ``option``,
    ``operands``, ``limit`` or ``not_expressible`` (docs/architecture.md,
    "Preflight"); expect new codes.
    """

    op_index: int
    op: str
    reason: str
    reason_code: str = ""


class ConversionError(Exception):
    """A conversion, an inspection or a call to the server failed.

    Attributes:
        reason: the error table's name of the failure (``invalid_model``, ...).
        message: what happened; names the op index, tensor and field when it can.
        retryable: whether the same call may succeed later (the table's column).
        exit_code: the CLI's exit code for this reason.
        op_index: the operator the error is about, or None.
        tensor: the offending tensor's name, or None.
        grpc_code: the client's call status (``UNAVAILABLE``, ...), None in-process.
        attempts: calls made, retries included (1 in-process).
    """

    def __init__(self, reason: str, message: str, *, op_index: int = -1, tensor: str = "",
                 unsupported: Optional[List[UnsupportedOperator]] = None,
                 grpc_code: str = "", attempts: int = 1) -> None:
        super().__init__(f"{reason}: {message}")
        row = _REASONS.get(reason, _REASONS["internal"])
        self.reason: str = reason
        self.message: str = message
        self.retryable: bool = bool(row["retryable"])
        self.exit_code: int = int(row["exit_code"])
        self.op_index: Optional[int] = op_index if op_index >= 0 else None
        self.tensor: Optional[str] = tensor or None
        self.grpc_code: Optional[str] = grpc_code or None
        self.attempts: int = attempts
        self._unsupported: List[UnsupportedOperator] = list(unsupported or [])

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


class InternalError(ConversionError):
    """A bug on one side (our output failed ONNX validation), or a server's
    worker process crashed on the model (``worker_crashed``)."""


class InvalidOptionError(ConversionError, ValueError):
    """An option is wrong: unknown, of the wrong type, or out of range."""


class InvalidModelError(ConversionError, ValueError):
    """Not a well-formed TFLite model; the message names the op index, tensor and field."""


class UnsupportedOperatorsError(ConversionError):
    """The model uses operators or features the converter lacks: ``operators``
    lists every one of them at once."""

    @property
    def operators(self) -> List[UnsupportedOperator]:
        return list(self._unsupported)


class ResourceLimitError(ConversionError):
    """The model is beyond a limit (operators, tensors, bytes created, a server's
    size, memory or time limit): the same call fails again."""


class FileError(ConversionError, OSError):
    """A local file (the model, the output, TLS material) could not be read or written."""


class Unavailable(ConversionError):
    """The server cannot be reached, refused the TLS handshake, or is shutting
    down: retry, on another instance."""


class Overloaded(ConversionError):
    """The server is full now (its queue, its memory budget) or cancelled the
    call while draining: retry later."""


class DeadlineExceeded(ConversionError, TimeoutError):
    """The call's deadline passed."""


_REASONS: Dict[str, dict] = {row["name"]: row for row in _core.error_reasons()}

# The CLI's exit codes (common/error_reasons.h, ExitCode) and what they mean.
_CLASS_OF_EXIT_CODE: Dict[int, Type[ConversionError]] = {
    1: InternalError,
    2: InvalidOptionError,
    3: InvalidModelError,
    4: UnsupportedOperatorsError,
    5: ResourceLimitError,
    6: FileError,
    7: Unavailable,
    8: Overloaded,
    9: DeadlineExceeded,
}


def error_class(reason: str) -> Type[ConversionError]:
    """The exception class of a reason of the error table."""
    row = _REASONS.get(reason, _REASONS["internal"])
    return _CLASS_OF_EXIT_CODE.get(int(row["exit_code"]), InternalError)


def reasons() -> List[dict]:
    """The error table: one dict per reason (name, exit_code, retryable, grpc_code, when)."""
    return [dict(row) for row in _REASONS.values()]


def from_failure(failure: dict) -> ConversionError:
    """The exception of a failure dict of the extension."""
    reason = failure["reason"]
    return error_class(reason)(
        reason, failure["message"], op_index=failure.get("op_index", -1),
        tensor=failure.get("tensor", ""),
        unsupported=[UnsupportedOperator(*u) for u in failure.get("unsupported", [])],
        grpc_code=failure.get("grpc_code", ""), attempts=failure.get("attempts", 1))


def invalid_option(message: str) -> InvalidOptionError:
    return InvalidOptionError("invalid_option", message)


def file_error(message: str) -> FileError:
    return FileError("io_error", message)

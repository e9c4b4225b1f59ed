"""A client of lite2onnx-server (service lite2onnx.v1.Converter), on grpcio.

The same calls as in-process (``convert``, ``inspect``, ``operators``) with the
same results and exceptions, plus ``Unavailable`` (nothing listens, the TLS
handshake failed, the server is draining) and ``Overloaded`` (the server is
full now). Models above 32 MiB go through ConvertStream in 1 MiB pieces, as
the C++ client sends them; a server whose unary limit is smaller gets the
model again through ConvertStream. Options are checked and written, answers
and failed calls read, by the same code as the C++ client's (the extension's
wire translation), so the diagnostics dicts equal the local ones.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple, TypeVar, Union

from . import _core
from ._errors import _REASONS, file_error, from_failure
from ._local import Conversion, Model, PathLike, _ModelBytes
from ._options import to_texts

if TYPE_CHECKING:
    from ._option_types import ConvertOptions

    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

T = TypeVar("T")


class TLS:
    """TLS towards the server: ``ca`` is the PEM bundle that signed its
    certificate (None: the system's roots), ``cert`` and ``key`` a client
    certificate for mutual TLS, ``server_name`` the name its certificate must
    carry (default: the host of the address)."""

    def __init__(self, ca: Optional[PathLike] = None, cert: Optional[PathLike] = None,
                 key: Optional[PathLike] = None, server_name: Optional[str] = None) -> None:
        if (cert is None) != (key is None):
            raise from_failure({"reason": "invalid_option",
                                "message": "TLS: cert and key go together"})
        self.ca, self.cert, self.key, self.server_name = ca, cert, key, server_name

    def __repr__(self) -> str:
        return (f"TLS(ca={self.ca!r}, cert={self.cert!r}, key={self.key!r}, "
                f"server_name={self.server_name!r})")


def _read_pem(path: PathLike, what: str) -> bytes:
    try:
        with open(os.fspath(path), "rb") as f:
            data = f.read()
    except OSError as e:
        raise file_error(f"cannot read {what} '{os.fspath(path)}': {e.strerror}") from e
    if not data:
        raise file_error(f"cannot read {what} '{os.fspath(path)}': empty")
    return data


class _CallFailed(Exception):
    """A failed attempt, as the extension's failure dict."""

    def __init__(self, failure: Dict[str, Any]) -> None:
        super().__init__(failure["message"])
        self.failure = failure


class Client:
    """A client of one lite2onnx-server.

    Args:
        address: ``HOST:PORT`` (or any gRPC target: ``dns:///host:port``, ``unix:/path``).
        tls: False (plaintext), True (TLS verified by the system's roots) or a ``TLS``.
        deadline: seconds each call may take, all its attempts together (None: no deadline).
        retries: further attempts after a failure the error table marks retryable
            (``queue_full``, ``memory_budget``, ``cancelled``, ``shutting_down``,
            ``unavailable``), at most 4 (gRPC's limit of 5 attempts). gRPC makes them, by
            the service config every lite2onnx client uses: the server says when to
            come back, and a server that does not answer is tried again after
            250 ms doubling to 8 s (jittered), all within ``deadline``.
        stream_threshold_bytes: models above it go through ConvertStream.

    The channel balances calls over every address the target resolves to
    (gRPC's round_robin: ``dns:///lite2onnx-headless:50051`` reaches every pod
    of the chart's headless Service) and pings idle connections. The
    connection is made by the first call. Usable from several threads;
    ``close()`` (or ``with``) releases the channel.
    """

    def __init__(self, address: str, *, tls: Union[bool, TLS] = False,
                 deadline: Optional[float] = None, retries: int = 0,
                 stream_threshold_bytes: int = _core.STREAM_THRESHOLD_BYTES) -> None:
        import grpc  # here: an in-process user never loads gRPC

        from .v1 import converter_pb2, converter_pb2_grpc

        self._grpc = grpc
        self._pb = converter_pb2
        if deadline is not None and not deadline > 0:
            raise from_failure({"reason": "invalid_option",
                                "message": f"deadline: {deadline!r} is not a positive number of seconds"})
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise from_failure({"reason": "invalid_option",
                                "message": f"retries: {retries!r} is not a count of 0 or more"})
        problem = _core.address_problem(address)
        if problem is not None:
            raise from_failure(problem)
        self.address = address
        self.deadline = deadline
        self.retries = retries
        self.stream_threshold_bytes = stream_threshold_bytes
        self._max_attempts = min(1 + retries, _core.MAX_GRPC_ATTEMPTS)
        # Round robin, keepalive, the retry policy, no message size limits:
        # the same channel as the C++ client's (common/service_config.h).
        channel_options: List[Tuple[str, Any]] = list(_core.channel_options(self._max_attempts))
        if tls is False or tls is None:
            self._channel = grpc.insecure_channel(address, options=channel_options)
        else:
            config = TLS() if tls is True else tls
            if not isinstance(config, TLS):
                raise TypeError("tls: give True, False or a lite2onnx.TLS")
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read_pem(config.ca, "the TLS CA") if config.ca else None,
                private_key=_read_pem(config.key, "the TLS key") if config.key else None,
                certificate_chain=_read_pem(config.cert, "the TLS certificate") if config.cert
                else None)
            if config.server_name:
                channel_options.append(("grpc.ssl_target_name_override", config.server_name))
            self._channel = grpc.secure_channel(address, credentials, options=channel_options)
        self._stub = converter_pb2_grpc.ConverterStub(self._channel)
        # Request metadata sent with every call (the tests' fault hooks).
        self._metadata: Optional[List[Tuple[str, str]]] = None

    # ---- the calls ---------------------------------------------------------

    def convert(self, model: Model, output: Optional[PathLike] = None,
                **options: Unpack[ConvertOptions]) -> Conversion:
        """Converts a model on the server: as ``lite2onnx.convert`` (same
        options, same bytes, same diagnostics, same exceptions), plus
        ``Unavailable``, ``Overloaded`` and ``DeadlineExceeded``. The result's
        ``request_id`` names the call in the server's log."""
        texts, limits = to_texts(options)
        if limits:
            raise from_failure({"reason": "invalid_option", "message":
                                "the limits are the server's (its --max-* flags), not a "
                                "call's: " + ", ".join(limits)})
        wire, failure = _core.wire_options(texts)
        if failure is not None:
            raise from_failure(failure)
        wire_options = self._pb.ConvertOptions.FromString(wire)
        with _ModelBytes(model) as data:
            size = len(data)

            def attempt(deadline_at: Optional[float]) -> Conversion:
                if size > self.stream_threshold_bytes:
                    return self._convert_stream(data, wire_options, deadline_at)
                try:
                    return self._convert_unary(data, wire_options, deadline_at)
                except _CallFailed as e:
                    # The server's unary limit may be below the threshold: stream instead.
                    if e.failure["reason"] != "model_too_large":
                        raise
                    return self._convert_stream(data, wire_options, deadline_at)

            result = self._with_retries(attempt)
        if output is not None:
            result.save(output)
        return result

    def inspect(self, model: Model) -> Dict[str, Any]:
        """Describes a model on the server, as ``lite2onnx.inspect``."""
        with _ModelBytes(model) as data:
            request = self._pb.InspectRequest(model=bytes(data))

        def attempt(deadline_at: Optional[float]) -> Dict[str, Any]:
            answer = self._unary(self._stub.Inspect, request, deadline_at)[0]
            return json.loads(_core.model_info_from_wire(answer.SerializeToString()))

        return self._with_retries(attempt)

    def operators(self) -> List[Dict[str, Any]]:
        """The server's support matrix, as ``lite2onnx.operators``."""

        def attempt(deadline_at: Optional[float]) -> List[Dict[str, Any]]:
            answer = self._unary(self._stub.ListOperators, self._pb.ListOperatorsRequest(),
                                 deadline_at)[0]
            return json.loads(_core.operators_from_wire(answer.SerializeToString()))

        return self._with_retries(attempt)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<lite2onnx.Client {self.address}>"

    # ---- how ---------------------------------------------------------------

    def _failure(self, error: Any) -> Dict[str, Any]:
        """A failed call (grpc.RpcError) as the extension reads a status."""
        details = b""
        for key, value in error.trailing_metadata() or ():
            if key == "grpc-status-details-bin":
                details = value
        code = error.code()
        number = code.value[0] if code is not None else 2  # UNKNOWN
        failure = _core.failure_from_status(number, error.details() or "", details, self.address)
        # The attempt the server answered; a call no server answered was
        # retried as often as the policy allows when its reason is retryable.
        answered = self._attempt(error.trailing_metadata())
        failure["attempts"] = answered or (self._max_attempts if _retryable(failure) else 1)
        return failure

    @staticmethod
    def _attempt(metadata: Any) -> int:
        for key, value in metadata or ():
            if key == _core.ATTEMPT_HEADER:
                try:
                    return int(value)
                except ValueError:
                    return 0
        return 0

    @staticmethod
    def _timeout(deadline_at: Optional[float]) -> Optional[float]:
        return None if deadline_at is None else max(deadline_at - time.monotonic(), 0.0)

    def _unary(self, method: Any, request: Any, deadline_at: Optional[float]) -> Tuple[Any, Any]:
        try:
            return method.with_call(request, timeout=self._timeout(deadline_at),
                                    metadata=self._metadata)
        except self._grpc.RpcError as e:
            raise _CallFailed(self._failure(e)) from None

    @staticmethod
    def _request_id(call: Any) -> Optional[str]:
        for key, value in call.initial_metadata() or ():
            if key == "x-request-id":
                return value
        return None

    def _convert_unary(self, data: Any, options: Any, deadline_at: Optional[float]) -> Conversion:
        request = self._pb.ConvertRequest(model=bytes(data), options=options)
        answer, call = self._unary(self._stub.Convert, request, deadline_at)
        diagnostics = json.loads(_core.diagnostics_from_wire(answer.diagnostics.SerializeToString()))
        return Conversion(answer.onnx_model, diagnostics, request_id=self._request_id(call),
                          attempts=max(1, self._attempt(call.trailing_metadata())))

    def _convert_stream(self, data: Any, options: Any,
                        deadline_at: Optional[float]) -> Conversion:
        chunk_bytes = _core.STREAM_CHUNK_BYTES
        chunk = self._pb.ConvertChunk

        def requests() -> Iterator[Any]:
            # Options and the model's size first (the server refuses an
            # oversized model before it is uploaded), then the model in pieces.
            yield chunk(options=options, total_bytes=len(data))
            for pos in range(0, len(data), chunk_bytes):
                yield chunk(data=bytes(data[pos:pos + chunk_bytes]))

        answers = self._stub.ConvertStream(requests(), timeout=self._timeout(deadline_at),
                                           metadata=self._metadata)
        pieces: List[bytes] = []
        diagnostics: Optional[Dict[str, Any]] = None
        total = received = 0
        try:
            for answer in answers:
                if diagnostics is None:
                    if not answer.HasField("diagnostics"):
                        answers.cancel()
                        raise _CallFailed(_internal(
                            "the server's first ConvertStream message has no diagnostics"))
                    diagnostics = json.loads(
                        _core.diagnostics_from_wire(answer.diagnostics.SerializeToString()))
                    total = answer.total_bytes
                elif answer.WhichOneof("content") != "data" or received + len(answer.data) > total:
                    answers.cancel()
                    raise _CallFailed(_internal(
                        f"the server sent more than the announced {total} ONNX bytes, or "
                        "something else than data"))
                else:
                    pieces.append(answer.data)
                    received += len(answer.data)
        except self._grpc.RpcError as e:
            raise _CallFailed(self._failure(e)) from None
        if diagnostics is None or received != total:
            raise _CallFailed(_internal(f"the server's ConvertStream answer ended after "
                                        f"{received} of {total} ONNX bytes"))
        return Conversion(b"".join(pieces), diagnostics, request_id=self._request_id(answers),
                          streamed=True,
                          attempts=max(1, self._attempt(answers.trailing_metadata())))

    def _with_retries(self, call: Callable[[Optional[float]], T]) -> T:
        """Runs ``call`` once: gRPC makes the attempts (the channel's retry
        policy), each within the call's deadline."""
        deadline_at = None if self.deadline is None else time.monotonic() + self.deadline
        try:
            return call(deadline_at)
        except _CallFailed as e:
            raise from_failure(e.failure) from None


def _internal(message: str) -> Dict[str, Any]:
    return {"reason": "internal", "message": message, "op_index": -1, "tensor": "",
            "unsupported": [], "grpc_code": "", "attempts": 1}


def _retryable(failure: Dict[str, Any]) -> bool:
    row = _REASONS.get(failure["reason"], _REASONS["internal"])
    return bool(row["retryable"])

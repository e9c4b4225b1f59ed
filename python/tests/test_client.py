"""lite2onnx.Client against a real lite2onnx-server on loopback: the local
calls' bytes, diagnostics and exceptions, streaming, retries, and the
client-side failures (Unavailable, Overloaded, DeadlineExceeded)."""

import socket
import threading
import time

import pytest

import lite2onnx

MODEL = "tflite-support/mobilenet_v1_0.25_224_1_default_1.tflite"


def comparable(diagnostics):
    # The server's diagnostics are its conversion's: its timings, its cache.
    return {k: v for k, v in diagnostics.items() if k not in ("timings", "cache")}


def test_convert_inspect_operators_match_the_local_calls(server, corpus, test_models, tmp_path):
    model = corpus / MODEL
    local = lite2onnx.convert(model, opset=17)
    with lite2onnx.Client(server.address, deadline=60) as client:
        remote = client.convert(model, tmp_path / "m.onnx", opset=17)
        assert remote.onnx_bytes == local.onnx_bytes
        assert (tmp_path / "m.onnx").read_bytes() == local.onnx_bytes
        assert comparable(remote.diagnostics) == comparable(local.diagnostics)
        assert remote.request_id and not remote.streamed and remote.attempts == 1
        sig = test_models / "sig_conv_fc.tflite"
        assert client.inspect(sig) == lite2onnx.inspect(sig)
        assert client.operators() == lite2onnx.operators()
        # Layout options as tflite2onnx takes them, and as texts.
        mini = test_models / "mini_mobilenet.tflite"
        assert client.convert(mini, explicit_layouts={"input": ("NHWC", "NCHW")}).onnx_bytes == \
            lite2onnx.convert(mini, explicit_layouts={"input": ("NHWC", "NCHW")}).onnx_bytes


def test_large_models_are_streamed(server, corpus):
    model = (corpus / MODEL).read_bytes()
    local = lite2onnx.convert(model)
    # Streamed from the start: everything above 1 KiB goes through ConvertStream.
    with lite2onnx.Client(server.address, stream_threshold_bytes=1024) as client:
        remote = client.convert(model)
    assert remote.streamed and remote.onnx_bytes == local.onnx_bytes
    assert comparable(remote.diagnostics) == comparable(local.diagnostics)


def test_a_small_unary_limit_falls_back_to_streaming(start_server, corpus):
    model = (corpus / MODEL).read_bytes()
    s = start_server("--max-unary-bytes", "65536", "--max-inflight-bytes", "67108864")
    with lite2onnx.Client(s.address) as client:
        remote = client.convert(model)
    assert remote.streamed and remote.onnx_bytes == lite2onnx.convert(model).onnx_bytes


def test_the_servers_errors_are_the_local_exceptions(server, test_models):
    with lite2onnx.Client(server.address) as client:
        with pytest.raises(lite2onnx.InvalidModelError) as e:
            client.convert(b"not a model")
        assert e.value.grpc_code == "INVALID_ARGUMENT" and not e.value.retryable
        with pytest.raises(lite2onnx.UnsupportedOperatorsError) as e:
            client.convert(test_models / "unsupported_custom_op.tflite")
        with pytest.raises(lite2onnx.UnsupportedOperatorsError) as local:
            lite2onnx.convert(test_models / "unsupported_custom_op.tflite")
        assert e.value.operators == local.value.operators
        assert [o.reason_code for o in e.value.operators] == ["custom_op"]
        assert e.value.message == local.value.message
        assert e.value.grpc_code == "UNIMPLEMENTED"
        # Options are checked before the call, by the same table.
        with pytest.raises(lite2onnx.InvalidOptionError, match="opset 12"):
            client.convert(test_models / "mini_mobilenet.tflite", opset=12)
        with pytest.raises(lite2onnx.InvalidOptionError, match="the server's"):
            client.convert(test_models / "mini_mobilenet.tflite", max_operators=3)
        with pytest.raises(lite2onnx.FileError):
            client.convert(test_models / "missing.tflite")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_is_unavailable_and_retried(test_models):
    address = f"127.0.0.1:{free_port()}"
    with lite2onnx.Client(address, deadline=30) as client:
        with pytest.raises(lite2onnx.Unavailable) as e:
            client.operators()
    assert e.value.reason == "unavailable" and e.value.retryable and e.value.exit_code == 7
    assert address in e.value.message and e.value.attempts == 1
    start = time.monotonic()
    with lite2onnx.Client(address, retries=2) as client:
        with pytest.raises(lite2onnx.Unavailable) as e:
            client.convert(test_models / "mini_mobilenet.tflite")
    assert e.value.attempts == 3
    # Backoff: at least 125 ms, then 250 ms (full jitter in [b/2, b], b = 250 ms doubling).
    assert time.monotonic() - start >= 0.375


def test_a_full_server_is_overloaded_and_retries_wait_it_out(start_server, test_models):
    """Nothing here is timed: the busy worker hangs until the test frees it
    (closing the holding client cancels its call), once the retrying client
    has been refused again."""
    s = start_server("--workers", "1", "--queue-size", "0", "--test-fault-hooks",
                     "--log-level", "debug")
    model = test_models / "mini_mobilenet.tflite"
    busy = lite2onnx.Client(s.address)
    busy._metadata = [("x-lite2onnx-test-fault", "hang")]  # holds the one worker until cancelled
    outcome = {}

    def hold():
        try:
            busy.convert(model)
        except lite2onnx.ConversionError as e:
            outcome["error"] = e

    holder = threading.Thread(target=hold)
    holder.start()
    assert s.wait_for_log("job sent to the worker"), s.read_log()
    with lite2onnx.Client(s.address) as client:
        with pytest.raises(lite2onnx.Overloaded) as e:
            client.convert(model)
    assert e.value.reason == "queue_full" and e.value.retryable and e.value.exit_code == 8
    # Retried with backoff: refused again while the worker is busy, then it is
    # freed, and a retry converts.
    retried = {}

    def retry():
        with lite2onnx.Client(s.address, retries=6, deadline=60) as client:
            retried["result"] = client.convert(model)

    retrier = threading.Thread(target=retry)
    retrier.start()
    shed = 'lite2onnx_requests_shed_total{reason="queue_full"}'
    for _ in range(6000):  # a guard of 60 s, not a bound
        if (s.metric(shed) or 0) >= 2:
            break
        time.sleep(0.01)
    assert s.metric(shed) >= 2
    busy.close()
    holder.join()
    retrier.join()
    assert isinstance(outcome["error"], lite2onnx.ConversionError)
    result = retried["result"]
    assert result.attempts > 1 and result.onnx_bytes == lite2onnx.convert(model).onnx_bytes


def test_deadline_and_worker_crash(start_server, test_models):
    s = start_server("--test-fault-hooks")
    model = test_models / "mini_mobilenet.tflite"
    with lite2onnx.Client(s.address, deadline=0.5) as client:
        client._metadata = [("x-lite2onnx-test-fault", "hang")]
        with pytest.raises(lite2onnx.DeadlineExceeded) as e:
            client.convert(model)
        assert isinstance(e.value, TimeoutError) and e.value.exit_code == 9
        client._metadata = [("x-lite2onnx-test-fault", "crash")]
        with pytest.raises(lite2onnx.InternalError) as e:
            client.convert(model)
        assert e.value.reason == "worker_crashed" and e.value.grpc_code == "INTERNAL"
    # Only the crashed worker was replaced; the server goes on.
    with lite2onnx.Client(s.address, deadline=60) as client:
        assert client.convert(model).onnx_bytes == lite2onnx.convert(model).onnx_bytes


def test_server_limits_are_resource_limit_errors(start_server, corpus):
    s = start_server("--max-unary-bytes", "4096", "--max-stream-bytes", "4096")
    with lite2onnx.Client(s.address) as client:
        with pytest.raises(lite2onnx.ResourceLimitError) as e:
            client.convert(corpus / MODEL)
    assert e.value.reason == "model_too_large" and e.value.exit_code == 5


def test_client_arguments(test_models):
    with pytest.raises(lite2onnx.InvalidOptionError):
        lite2onnx.Client("127.0.0.1:1", deadline=0)
    with pytest.raises(lite2onnx.InvalidOptionError):
        lite2onnx.Client("127.0.0.1:1", retries=-1)
    with pytest.raises(lite2onnx.FileError, match="TLS CA"):
        lite2onnx.Client("127.0.0.1:1", tls=lite2onnx.TLS(ca=test_models / "missing.pem"))


def test_calls_of_one_client_spread_over_two_servers(start_server, test_models):
    """The channel's round_robin (common/service_config.h): two servers behind
    one target; once both are connected, each call goes to the other one."""
    a, b = start_server(), start_server()
    target = f"ipv4:{a.address},{b.address}"
    model = test_models / "mini_mobilenet.tflite"
    with lite2onnx.Client(target) as client:
        seen = []
        for _ in range(40):
            seen.append(client.convert(model).request_id.split("-")[0])
            if len(set(seen)) == 2:
                break
        assert len(set(seen)) == 2, seen
        servers = [client.convert(model).request_id.split("-")[0] for _ in range(10)]
    assert all(x != y for x, y in zip(servers, servers[1:])), servers


def test_a_url_is_not_a_server_address():
    with pytest.raises(lite2onnx.InvalidOptionError) as e:
        lite2onnx.Client("http://127.0.0.1:8080")
    assert "HOST:PORT: '127.0.0.1:8080'" in e.value.message

"""Fixtures of the Python package's tests: the CLI and the server of the same
build (ctest passes their paths), the generated test models, the shared
corpus, and real lite2onnx-server processes on loopback ports."""

import os
import re
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest


def _path(variable):
    value = os.environ.get(variable)
    if not value:
        pytest.exit(f"{variable} is not set: run these tests through ctest (ctest -L python)", 2)
    return Path(value)


@pytest.fixture(scope="session")
def cli():
    return _path("LITE2ONNX_CLI")


@pytest.fixture(scope="session")
def test_models():
    return _path("LITE2ONNX_TEST_MODELS_DIR")


@pytest.fixture(scope="session")
def corpus():
    """The third-party corpus (../shared/models); required under CI=true."""
    path = _path("LITE2ONNX_SHARED_MODELS")
    if not path.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the model corpus {path} is missing")
        pytest.skip(f"no model corpus at {path}")
    return path


@pytest.fixture(scope="session")
def run_cli(cli):
    def run(*args, check=True):
        r = subprocess.run([str(cli), *map(str, args)], capture_output=True, timeout=120)
        if check and r.returncode != 0:
            raise AssertionError(f"lite2onnx {args} exited {r.returncode}: {r.stderr.decode()}")
        return r
    return run


class Server:
    """A lite2onnx-server on 127.0.0.1 with ports chosen by the kernel."""

    def __init__(self, *flags):
        self.dir = tempfile.TemporaryDirectory()
        ports = Path(self.dir.name) / "ports"
        self.log = open(Path(self.dir.name) / "log", "wb")
        self.process = subprocess.Popen(
            [str(_path("LITE2ONNX_SERVER")), "--listen", "127.0.0.1:0", "--metrics-listen",
             "127.0.0.1:0", "--http-listen", "", "--port-file", str(ports), *flags],
            stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(400):
            if ports.exists() and ports.read_text().strip():
                break
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.read_log()}")
            time.sleep(0.025)
        found = dict(line.split("=", 1) for line in ports.read_text().split())
        self.address = f"127.0.0.1:{found['grpc']}"
        self.metrics_port = int(found["metrics"])

    def metric(self, name):
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics").read()
        m = re.search(rf"^{re.escape(name)} ([0-9.e+-]+)$", text.decode(), re.M)
        return float(m.group(1)) if m else None

    def wait_for_log(self, text, timeout=60):
        """Whether `text` appears in the server's log within `timeout` seconds
        (a guard against a wait that never ends, not a bound)."""
        for _ in range(int(timeout * 100)):
            if text in self.read_log():
                return True
            time.sleep(0.01)
        return text in self.read_log()

    def read_log(self):
        self.log.flush()
        return (Path(self.dir.name) / "log").read_text(errors="replace")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        self.dir.cleanup()


@pytest.fixture(scope="session")
def server():
    """One server with the defaults (worker processes), for the calls that succeed."""
    s = Server()
    yield s
    s.stop()


@pytest.fixture
def start_server():
    """Starts servers with the flags given; stops them after the test."""
    started = []

    def start(*flags):
        s = Server(*flags)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()

#!/usr/bin/env python3
"""Runs the examples of the docs, so that their commands, figures and outputs
cannot go stale.

A fenced block whose info string holds the word ``doctest`` runs:

    ```sh doctest                 a shell block (bash -euo pipefail)
    ```python doctest             a Python block (the venv of the python tests)
    ```sh doctest server corpus   words after it: what the block needs

``server``: a lite2onnx-server on free loopback ports; the docs' addresses
127.0.0.1:50051 (gRPC), :8080 (HTTP) and :9464 (metrics) are rewritten to
its ports. ``corpus``: the shared model corpus (../shared/models); without
it the block is skipped, except under CI=true, where that fails.

A block marked ``text doctest-output`` right after a runnable block is what
it must print (stdout and stderr): every line appears in the output, in
order, ``...`` standing for any text within a line; lines of the output
that the block does not mention are ignored.

The blocks of one page run in order in one working folder (a later block
sees the files an earlier one wrote), laid out like a checkout: ``build``
(the build folder), ``examples``, ``docs``, ``tests``, ``python`` (the package's sources),
``model.tflite`` (the example model), ``.venv`` (a venv with the package)
and ``../shared/models``.

    doctest.py BUILD_DIR SOURCE_DIR VENV [PAGE.md ...]
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FENCE = re.compile(r"^(\s*)```(.*)$")
PORTS = {"127.0.0.1:50051": "grpc", "127.0.0.1:8080": "http", "127.0.0.1:9464": "metrics"}


def blocks(path):
    """(line, info words, text) of every fenced block of a Markdown file."""
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, info = len(m.group(1)), m.group(2).split()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
            i += 1
        out.append((start, info, "\n".join(body) + "\n"))
        i += 1
    return out


def matches(expected, output):
    """Whether every expected line appears in the output's lines, in order."""
    out_lines = output.splitlines()
    pos = 0
    for want in expected.splitlines():
        if not want.strip():
            continue
        parts = [re.escape(p) for p in want.strip().split("...")]
        pattern = re.compile(".*".join(parts))
        while pos < len(out_lines) and not pattern.search(out_lines[pos]):
            pos += 1
        if pos == len(out_lines):
            return want
        pos += 1
    return None


class Server:
    def __init__(self, build, work):
        ports = Path(work) / "ports.txt"
        self.log = open(Path(work) / "server.log", "w")
        self.proc = subprocess.Popen(
            [str(Path(build) / "server" / "lite2onnx-server"), "--listen", "127.0.0.1:0",
             "--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
             "--port-file", str(ports), "--workers", "2"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        for _ in range(200):
            if ports.exists() and ports.read_text().count("\n") >= 3:
                break
            time.sleep(0.05)
        self.ports = dict(line.split("=") for line in ports.read_text().split())

    def rewrite(self, text):
        for address, name in PORTS.items():
            text = text.replace(address, "127.0.0.1:" + self.ports[name])
        return text

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def lay_out(root, build, source, venv):
    work = root / "work"
    work.mkdir()
    (work / "build").symlink_to(build)
    (work / "examples").symlink_to(source / "examples")
    (work / "python").symlink_to(source / "python")
    (work / "docs").symlink_to(source / "docs")
    (work / "tests").symlink_to(source / "tests")
    (work / ".venv").symlink_to(venv)
    shutil.copy(build / "examples" / "mini_mobilenet.tflite", work / "model.tflite")
    corpus = source.parent / "shared" / "models"
    (root / "shared").mkdir()
    if corpus.is_dir():
        (root / "shared" / "models").symlink_to(corpus)
    return work, corpus.is_dir()


def run_page(page, build, source, venv):
    """Runs a page's blocks; returns (ran, skipped, failures)."""
    found = blocks(page)
    runnable = [(n, b) for n, b in enumerate(found) if "doctest" in b[1][1:]]
    if not runnable:
        return 0, 0, []
    ran = skipped = 0
    failures = []
    with tempfile.TemporaryDirectory(prefix="l2o-doctest-") as tmp:
        work, have_corpus = lay_out(Path(tmp), build, source, venv)
        server = Server(build, work) if any("server" in b[1] for _, b in runnable) else None
        env = dict(os.environ, LITE2ONNX_DOCTEST="1", PIP_NO_INDEX="1",
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
        try:
            for n, (line, info, text) in runnable:
                where = f"{page.name}:{line}"
                if "corpus" in info and not have_corpus:
                    if os.environ.get("CI") == "true":
                        failures.append(f"{where}: the model corpus ../shared/models is missing")
                    else:
                        skipped += 1
                    continue
                if server:
                    text = server.rewrite(text)
                if info[0] == "python":
                    script = work / f"block_{line}.py"
                    script.write_text(text)
                    cmd = [str(Path(venv) / "bin" / "python"), str(script)]
                else:
                    cmd = ["bash", "-euo", "pipefail", "-c", text]
                start = time.monotonic()
                # One stream, so that the output keeps the order the commands wrote it in.
                r = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=300)
                ran += 1
                output = r.stdout
                print(f"{where}: {info[0]} block, exit {r.returncode}, "
                      f"{time.monotonic() - start:.2f} s")
                if r.returncode != 0:
                    failures.append(f"{where}: exit {r.returncode}\n{text}{output}")
                    continue
                following = found[n + 1] if n + 1 < len(found) else None
                if following and "doctest-output" in following[1]:
                    expected = server.rewrite(following[2]) if server else following[2]
                    missing = matches(expected, output)
                    if missing is not None:
                        failures.append(f"{where}: the output lacks the line\n  {missing}\n"
                                        f"(the block printed:)\n{output}")
        finally:
            if server:
                server.stop()
    return ran, skipped, failures


def main():
    build, source, venv = (Path(a).resolve() for a in sys.argv[1:4])
    pages = [Path(p) for p in sys.argv[4:]] or (
        [source / "README.md"] + sorted((source / "docs").glob("*.md")))
    ran = skipped = 0
    failures = []
    for page in pages:
        r, s, f = run_page(page, build, source, venv)
        ran, skipped, failures = ran + r, skipped + s, failures + f
    for f in failures:
        print("FAIL: " + f)
    print(f"doctest: {ran} blocks ran, {len(failures)} failed, {skipped} skipped "
          f"({len(pages)} pages)")
    if ran == 0 and not failures:
        print("doctest: no runnable block found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The "base" of the server's memory formula (docs/service.md, Memory): what
lite2onnx-server holds besides its memory budget. Starts the server with 2
workers and measures its resident set (/proc/PID/status) idle, with idle HTTP
and gRPC connections open, and after conversions over both (which start the
threads that serve them and fill the workers' reused memfds).

    scripts/server_base_rss.py [--server build/server/lite2onnx-server]
        [--model build/examples/mini_mobilenet.tflite] [--connections 256]

Needs only Python 3 and curl; the gRPC connections are raw HTTP/2 (the client
preface and a SETTINGS frame), which is all an idle gRPC client sends.
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time


def status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB, or a count
    return -1


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def settle():
    time.sleep(1.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="build/server/lite2onnx-server")
    p.add_argument("--model", default="build/examples/mini_mobilenet.tflite")
    p.add_argument("--connections", type=int, default=256)
    p.add_argument("--conversions", type=int, default=40)
    a = p.parse_args()

    tmp = tempfile.mkdtemp()
    ports = os.path.join(tmp, "ports")
    server = subprocess.Popen(
        [a.server, "--workers", "2", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
         "--metrics-listen", "", "--port-file", ports, "--log-level", "warn"],
        stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(ports) and os.path.getsize(ports) > 0:
                break
            time.sleep(0.05)
        got = dict(line.split("=") for line in open(ports).read().split())
        grpc_port, http_port = int(got["grpc"]), int(got["http"])
        pid = server.pid
        settle()
        idle = status(pid, "VmRSS")
        print(f"idle: VmRSS {mib(idle)}, {status(pid, 'Threads')} threads")

        # HTTP connections that sent all but the end of a head (16 KiB at
        # most): what a connection holds until its head timeout at worst.
        partial = b"GET /healthz HTTP/1.1\r\nX-Pad: " + b"a" * (15 * 1024)
        http = []
        for _ in range(a.connections):
            s = socket.create_connection(("127.0.0.1", http_port))
            s.sendall(partial)
            http.append(s)
        settle()
        with_http = status(pid, "VmRSS")
        print(f"{a.connections} HTTP connections with 15 KiB of a head: VmRSS {mib(with_http)}, "
              f"{(with_http - idle) / a.connections:.1f} KiB each")
        for s in http:
            s.close()
        settle()

        preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
        grpc = []
        for _ in range(a.connections):
            s = socket.create_connection(("127.0.0.1", grpc_port))
            s.sendall(preface)
            grpc.append(s)
        settle()
        with_grpc = status(pid, "VmRSS")
        print(f"{a.connections} idle gRPC (HTTP/2) connections: VmRSS {mib(with_grpc)}, "
              f"{(with_grpc - with_http) / a.connections:.1f} KiB each (more than with the HTTP ones)")
        for s in grpc:
            s.close()

        # Conversions, 4 at a time over HTTP (curl), of the model: the I/O
        # and pool threads start, the workers' memfds are written and mapped.
        url = f"http://127.0.0.1:{http_port}/v1/convert"
        for _ in range(a.conversions // 4):
            runs = [subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "--data-binary",
                                      "@" + a.model, url]) for _ in range(4)]
            for r in runs:
                r.wait()
        settle()
        after = status(pid, "VmRSS")
        print(f"after {a.conversions} conversions: VmRSS {mib(after)}, "
              f"VmHWM {mib(status(pid, 'VmHWM'))}, {status(pid, 'Threads')} threads, "
              f"RssShmem {mib(status(pid, 'RssShmem'))} (the workers' memfds)")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

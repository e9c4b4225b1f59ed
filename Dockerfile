# lite2onnx-server image: build on Debian bookworm, run on bookworm-slim with
# only the shared libraries the binaries need (deploy/runtime-packages.txt,
# derived with ldd + dpkg -S and checked again below).
#
#   docker build -t lite2onnx:0.1.0 .
#   docker run --rm -p 50051:50051 -p 8080:8080 -p 9464:9464 lite2onnx:0.1.0
#
# Without a Docker engine, deploy/check-runtime-image.sh proves the runtime
# stage in a debootstrap'ed bookworm minbase root. Flags and LITE2ONNX_*
# variables: docs/service.md.

# ---- build ----------------------------------------------------------------------
FROM debian:bookworm AS build

# The build packages of scripts/deps.sh, without the test tools
# (deploy/checks/docker-context.sh checks they stay a subset of it).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkgconf \
      libprotobuf-dev protobuf-compiler libonnx-dev \
      libflatbuffers-dev flatbuffers-compiler \
      nlohmann-json3-dev libcli11-dev \
      libgrpc++-dev protobuf-compiler-grpc grpc-proto prometheus-cpp-dev \
      libboost1.81-dev libspdlog-dev libfmt-dev libjemalloc-dev libseccomp-dev libzip-dev \
      libssl-dev \
 && rm -rf /var/lib/apt/lists/*

# The configure flags (no Python package in the image: python/ is not built);
# deploy/checks/docker-context.sh configures the .dockerignore'd context with them.
ARG CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release -DLITE2ONNX_BUILD_TESTS=OFF -DLITE2ONNX_BUILD_BENCH=OFF -DLITE2ONNX_BUILD_PYTHON=OFF"

WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja ${CMAKE_ARGS} \
 && cmake --build /build --target lite2onnx-server lite2onnx-worker lite2onnx lite2onnx-remote examples \
 && strip /build/server/lite2onnx-server /build/server/lite2onnx-worker /build/lite2onnx \
      /build/lite2onnx-remote \
 && deploy/derive-runtime-packages.sh --check deploy/runtime-packages.txt \
      /build/server/lite2onnx-server /build/server/lite2onnx-worker /build/lite2onnx \
      /build/lite2onnx-remote

# ---- runtime --------------------------------------------------------------------
FROM debian:bookworm-slim AS runtime

LABEL org.opencontainers.image.title="lite2onnx-server" \
      org.opencontainers.image.description="TensorFlow Lite to ONNX conversion over gRPC and HTTP" \
      org.opencontainers.image.licenses="Apache-2.0"

COPY deploy/runtime-packages.txt /tmp/runtime-packages.txt
# Unpinned versions: the bookworm release the image is built from decides them.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      $(sed -e 's/#.*//' /tmp/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && groupadd --gid 10001 lite2onnx \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin lite2onnx

# The server starts lite2onnx-worker from beside itself (--isolation process);
# the CLI runs lite2onnx-remote from beside itself for --server.
COPY --from=build /build/server/lite2onnx-server /build/server/lite2onnx-worker /build/lite2onnx \
     /build/lite2onnx-remote /usr/local/bin/
# The example model (a 16 KB MobileNet-like CNN): the chart's `helm test` converts it.
COPY --from=build /build/examples/mini_mobilenet.tflite /usr/local/share/lite2onnx/examples/

# Numeric, so Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
# gRPC (lite2onnx.v1.Converter, grpc.health.v1, reflection), HTTP/1.1 (/v1/convert,
# /v1/inspect, /v1/operators, /healthz, /readyz; HTTPS when --tls-cert is set)
# and Prometheus /metrics.
EXPOSE 50051 8080 9464
ENTRYPOINT ["lite2onnx-server"]

#!/usr/bin/env bash
# Proves the Dockerfile's runtime stage is complete without a Docker engine:
# builds a Debian bookworm minbase root with debootstrap, installs exactly
# deploy/runtime-packages.txt in it (as the Dockerfile does), copies the built
# server and CLI in, and runs them there with chroot as the image's non-root
# user on a read-only root (a tmpfs on /tmp, as the Helm chart mounts an
# emptyDir): a health check, a Convert and a failing Convert over gRPC with
# buf curl, a Convert and /readyz over HTTP with curl, a CLI conversion in-process
# and through --server, a /metrics scrape, then SIGTERM must exit 0; then again
# with TLS (a CA made here): a Convert over HTTPS with curl, and SIGTERM.
#
#   deploy/check-runtime-image.sh [--build-dir DIR] [--mirror URL] [--keep]
#
# --build-dir  where lite2onnx-server, lite2onnx-worker, lite2onnx and lite2onnx-remote were built (default: build)
# --mirror     Debian mirror for debootstrap and apt (default: the first
#              bookworm URI in /etc/apt/sources.list*, else deb.debian.org)
# --keep       leave the root in place and print where it is
#
# Needs root (debootstrap, chroot, mount), the Debian package debootstrap
# (installed when missing) and buf (npm ci in tests/server: scripts/deps.sh).
# Takes a few minutes, mostly debootstrap; not part of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

build_dir=build
mirror=
keep=
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift ;;
    --mirror) mirror=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

# The image's user and layout: keep in step with the Dockerfile.
APP_UID=10001
APP_GID=10001
server_bin=$build_dir/server/lite2onnx-server
worker_bin=$build_dir/server/lite2onnx-worker
cli_bin=$build_dir/lite2onnx
remote_bin=$build_dir/lite2onnx-remote
model=$build_dir/examples/mini_mobilenet.tflite
buf=$repo/tests/server/node_modules/.bin/buf

step() { echo "== $*"; }
die() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, chroot and mount need it)"
for f in "$server_bin" "$worker_bin" "$cli_bin" "$remote_bin"; do [ -x "$f" ] || die "$f is missing: build it first"; done
[ -f "$model" ] || die "$model is missing: build the 'examples' target"
[ -x "$buf" ] || die "$buf is missing: run scripts/deps.sh (npm ci in tests/server)"
if ! command -v debootstrap >/dev/null; then
  step "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap ||
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap; }
fi
if [ -z "$mirror" ]; then
  # deb822 (URIs: ...) or one-line (deb URL bookworm ...) sources; skip security and third-party.
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '/^URIs:/ {print $2}' | grep -E '/debian/?$' | head -n1 || true)
  [ -n "$mirror" ] || mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" && $3 ~ /^bookworm$/ {print $2}' | head -n1 || true)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
fi
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' deploy/runtime-packages.txt | grep -v '^$')
[ ${#packages[@]} -gt 0 ] || die "deploy/runtime-packages.txt lists no package"

work=$(mktemp -d /tmp/lite2onnx-rootfs.XXXXXX)
root=$work/root   # the image's file system, as debootstrap and apt leave it
run=$work/run     # the same, bind-mounted read-only, with /proc and a /tmp tmpfs
mounts=()
pid=
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  if [ -n "$keep" ]; then
    echo "kept: $root"
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT
mnt() { mount "$@"; mounts+=("${*: -1}"); }

start=$(date +%s)
step "debootstrap --variant=minbase bookworm from $mirror"
mkdir -p "$root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 30 "$work/debootstrap.log"; die "debootstrap failed (log above)"; }
before=$(chroot "$root" dpkg-query -W -f='${Package}\n' | sort)
echo "   minbase: $(wc -l <<<"$before") packages, $(du -sh --one-file-system "$root" | cut -f1)"

step "apt-get install ${packages[*]}"
# As in the Dockerfile: apt-get update, install the list without recommends, drop the lists.
mnt -t proc proc "$root/proc"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" &&
         apt-get clean && rm -rf /var/lib/apt/lists/*' sh "${packages[@]}" >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log"; die "installing the runtime packages failed (log above)"; }
umount "$root/proc"
unset 'mounts[-1]'
after=$(chroot "$root" dpkg-query -W -f='${Package}\n' | sort)
added=$(comm -13 <(echo "$before") <(echo "$after"))
echo "   installed $(wc -l <<<"$added") packages (the list and their dependencies): $(echo $added)"
for p in "${packages[@]}"; do grep -qx "$p" <<<"$after" || die "$p is not installed"; done

step "binaries and the non-root user $APP_UID:$APP_GID"
install -m 0755 "$server_bin" "$worker_bin" "$cli_bin" "$remote_bin" "$root/usr/local/bin/"
chroot "$root" groupadd --gid "$APP_GID" lite2onnx
chroot "$root" useradd --uid "$APP_UID" --gid "$APP_GID" --no-create-home --home-dir /nonexistent \
  --shell /usr/sbin/nologin lite2onnx
echo "   image root: $(du -sh --one-file-system "$root" | cut -f1)"
missing=$(chroot "$root" ldd /usr/local/bin/lite2onnx-server /usr/local/bin/lite2onnx-worker \
  /usr/local/bin/lite2onnx /usr/local/bin/lite2onnx-remote | grep 'not found' || true)
[ -z "$missing" ] || die "unresolved libraries in the root: $missing"

# The container as Kubernetes runs it with the chart: read-only root, /tmp writable.
mkdir -p "$run"
mnt --bind "$root" "$run"
mount -o remount,ro,bind "$run"
mnt -t proc proc "$run/proc"
mnt -t tmpfs -o mode=1777,size=64m tmpfs "$run/tmp"
cp "$model" "$run/tmp/model.tflite"
in_image() {
  chroot --userspec="$APP_UID:$APP_GID" "$run" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin "$@"
}

step "lite2onnx convert in the root"
in_image lite2onnx convert /tmp/model.tflite -o /tmp/model.onnx || die "the CLI conversion failed"
[ -s "$run/tmp/model.onnx" ] || die "the CLI wrote no ONNX model"
echo "   $(stat -c %s "$run/tmp/model.onnx") bytes of ONNX"

step "lite2onnx-server in the root"
# (Not through in_image: a function in the background would be a shell that SIGTERM ends;
# chroot and env exec, so $! is the server itself.)
chroot --userspec="$APP_UID:$APP_GID" "$run" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin \
  lite2onnx-server --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  --port-file /tmp/ports \
  --drain-seconds 2 2>"$work/server.log" &
pid=$!
for _ in $(seq 200); do [ -s "$run/tmp/ports" ] && break; sleep 0.05; done
[ -s "$run/tmp/ports" ] || { cat "$work/server.log"; die "the server did not start"; }
port=$(sed -n 's/^grpc=//p' "$run/tmp/ports")
metrics_port=$(sed -n 's/^metrics=//p' "$run/tmp/ports")
http_port=$(sed -n 's/^http=//p' "$run/tmp/ports")
url=http://127.0.0.1:$port
call() { "$buf" curl --protocol grpc --http2-prior-knowledge "$@"; }
fail_with_log() { echo "--- server log"; cat "$work/server.log"; die "$*"; }

health=$(call -d '{}' "$url/grpc.health.v1.Health/Check") || fail_with_log "health check: $health"
grep -q '"SERVING"' <<<"$health" || fail_with_log "health: $health"
echo "   health: SERVING"
health=$(call -d '{"service": "lite2onnx.v1.Converter"}' "$url/grpc.health.v1.Health/Check")
grep -q '"SERVING"' <<<"$health" || fail_with_log "health of lite2onnx.v1.Converter: $health"

printf '{"model": "%s"}' "$(base64 -w0 "$model")" >"$work/request.json"
call -d @"$work/request.json" "$url/lite2onnx.v1.Converter/Convert" >"$work/response.json" ||
  fail_with_log "Convert failed: $(head -c 300 "$work/response.json")"
onnx_b64=$(sed -n 's/^ *"onnxModel": "\(.*\)",\{0,1\}$/\1/p' "$work/response.json")
[ -n "$onnx_b64" ] || fail_with_log "no onnxModel in $(head -c 300 "$work/response.json")"
base64 -d <<<"$onnx_b64" >"$work/server.onnx"
cmp -s "$work/server.onnx" "$run/tmp/model.onnx" ||
  fail_with_log "the server's ONNX differs from the CLI's"
echo "   Convert: $(stat -c %s "$work/server.onnx") bytes of ONNX, identical to the CLI's"

# The CLI's --server mode, from inside the root, against the server there.
in_image lite2onnx convert /tmp/model.tflite -o /tmp/remote.onnx --server "127.0.0.1:$port" >/dev/null ||
  fail_with_log "lite2onnx convert --server failed"
cmp -s "$run/tmp/remote.onnx" "$run/tmp/model.onnx" || fail_with_log "lite2onnx --server output differs"
echo "   lite2onnx convert --server: identical too"

if call -d '{"model": "Z2FyYmFnZQ=="}' "$url/lite2onnx.v1.Converter/Convert" >"$work/error.json" 2>&1; then
  fail_with_log "garbage converted"
fi
grep -q '"invalid_argument"' "$work/error.json" || fail_with_log "garbage: $(cat "$work/error.json")"
echo "   Convert of garbage: INVALID_ARGUMENT"

# The HTTP/1.1 endpoint: the raw model as the body, the ONNX bytes as the answer.
ready=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http_port/readyz") || true
[ "$ready" = 200 ] || fail_with_log "HTTP GET /readyz: $ready"
status=$(curl -s -o "$work/http.onnx" -w '%{http_code}' --data-binary @"$model" \
  "http://127.0.0.1:$http_port/v1/convert") || true
[ "$status" = 200 ] || fail_with_log "HTTP POST /v1/convert: $status $(head -c 300 "$work/http.onnx" 2>/dev/null)"
cmp -s "$work/http.onnx" "$run/tmp/model.onnx" || fail_with_log "the HTTP answer differs from the CLI's ONNX"
echo "   HTTP: /readyz 200, POST /v1/convert 200 with the CLI's bytes"

# The server counts a call just after answering it: wait for the last one.
for _ in $(seq 100); do
  metrics=$(curl -sf "http://127.0.0.1:$metrics_port/metrics") || fail_with_log "no /metrics"
  grep -q '^lite2onnx_requests_total{code="OK",method="Convert",protocol="http",reason="ok"} 1$' <<<"$metrics" && break
  sleep 0.05
done
grep -q '^lite2onnx_requests_total{code="OK",method="Convert",protocol="grpc",reason="ok"} 2$' <<<"$metrics" ||
  fail_with_log "metrics: no OK Convert counted"
grep -q '^lite2onnx_requests_total{code="INVALID_ARGUMENT",method="Convert",protocol="grpc",reason="invalid_model"} 1$' <<<"$metrics" ||
  fail_with_log "metrics: no INVALID_ARGUMENT Convert counted"
grep -q '^lite2onnx_requests_total{code="OK",method="Convert",protocol="http",reason="ok"} 1$' <<<"$metrics" ||
  fail_with_log "metrics: no OK Convert over HTTP counted"
# The conversions ran in sandboxed worker processes (--isolation process, the default).
workers=$(sed -n 's/^lite2onnx_worker_starts_total \([0-9]*\)$/\1/p' <<<"$metrics")
[ "${workers:-0}" -ge 1 ] || fail_with_log "metrics: no worker process started"
grep -q '^lite2onnx_worker_failures_total{cause="start"} 0$' <<<"$metrics" ||
  fail_with_log "metrics: a worker process could not start"
echo "   /metrics: the calls counted, $workers worker processes started"

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" -eq 0 ] || fail_with_log "exit code $rc after SIGTERM"
echo "   SIGTERM: exit 0"

step "lite2onnx-server in the root, with TLS"
# The HTTP port serves HTTPS with the libssl of the image.
(
  cd "$work"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca -keyout ca.key -out ca.pem
  openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr
  printf 'subjectAltName=DNS:localhost\n' >server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
    -extfile server.ext -out server.pem
) >/dev/null 2>&1 || die "openssl could not make the test certificates"
install -m 0444 "$work/server.pem" "$work/server.key" "$run/tmp/"
rm -f "$run/tmp/ports"
chroot --userspec="$APP_UID:$APP_GID" "$run" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin \
  lite2onnx-server --listen 127.0.0.1:0 --metrics-listen "" --http-listen 127.0.0.1:0 \
  --tls-cert /tmp/server.pem --tls-key /tmp/server.key --port-file /tmp/ports \
  --drain-seconds 2 2>"$work/server.log" &
pid=$!
for _ in $(seq 200); do [ -s "$run/tmp/ports" ] && break; sleep 0.05; done
[ -s "$run/tmp/ports" ] || { cat "$work/server.log"; die "the TLS server did not start"; }
http_port=$(sed -n 's/^http=//p' "$run/tmp/ports")
status=$(curl -s --cacert "$work/ca.pem" -o "$work/https.onnx" -w '%{http_code}' \
  --data-binary @"$model" "https://localhost:$http_port/v1/convert") || true
[ "$status" = 200 ] || fail_with_log "HTTPS POST /v1/convert: $status"
cmp -s "$work/https.onnx" "$run/tmp/model.onnx" || fail_with_log "the HTTPS answer differs from the CLI's ONNX"
echo "   HTTPS: POST /v1/convert 200 with the CLI's bytes"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" -eq 0 ] || fail_with_log "exit code $rc after SIGTERM (TLS)"
echo "   SIGTERM: exit 0"

echo "runtime image check: OK in $(($(date +%s) - start)) s: bookworm minbase + ${#packages[@]} listed" \
  "packages ($(wc -l <<<"$added") installed with dependencies), server and CLI as $APP_UID:$APP_GID" \
  "on a read-only root"

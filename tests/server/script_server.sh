# Sourced by the server's shell tests: a temporary directory, a server started
# there on loopback ports (killed, and the directory removed, on exit), and
# fail(), which prints the server's log.
#   start_server SERVER_BINARY [FLAGS...]   sets dir, pid, grpc_port, metrics_port, http_port
dir=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- server log"
  cat "$dir/log"
  exit 1
}

# The server listens on 127.0.0.1:0 for gRPC and metrics; FLAGS may add or
# override others (e.g. --http-listen).
start_server() {
  local binary=$1
  shift
  "$binary" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --port-file "$dir/ports" "$@" \
    2>"$dir/log" &
  pid=$!
  for _ in $(seq 200); do [ -s "$dir/ports" ] && break; sleep 0.05; done
  [ -s "$dir/ports" ] || fail "the server did not start"
  grpc_port=$(sed -n 's/^grpc=//p' "$dir/ports")
  metrics_port=$(sed -n 's/^metrics=//p' "$dir/ports")
  http_port=$(sed -n 's/^http=//p' "$dir/ports")
}

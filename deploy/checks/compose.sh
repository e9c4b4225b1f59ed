#!/usr/bin/env bash
# deploy/compose's wiring, without a Docker engine (compose.mjs).
source "$(dirname "$0")/common.sh"
need_node_modules
node "$CHECKS/compose.mjs" "$REPO/deploy/compose/docker-compose.yaml"

#!/usr/bin/env bash
# The Dockerfile: dockerfilelint (npm), then docker-context.sh (the image policy, the
# build packages, and a configure of the .dockerignore'd build context).
source "$(dirname "$0")/common.sh"
need_node_modules
"$CHECKS/node_modules/.bin/dockerfilelint" "$REPO/Dockerfile"
"$CHECKS/docker-context.sh"

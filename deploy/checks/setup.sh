#!/usr/bin/env bash
# Prepares the deploy checks once per run (a CTest fixture): chartcheck builds its
# renderer and installs its Node packages (--setup); deploy/checks/node_modules comes
# from scripts/deps.sh (npm ci with the committed lockfile).
source "$(dirname "$0")/common.sh"
need_node_modules
need_chartcheck
start=$(date +%s)
"$CHARTCHECK" --setup
echo "chartcheck setup: $(($(date +%s) - start)) s"

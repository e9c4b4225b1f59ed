#!/usr/bin/env bash
# values.schema.json against good and bad values (values-schema.mjs, npm ajv).
source "$(dirname "$0")/common.sh"
need_node_modules
node "$CHECKS/values-schema.mjs" "$CHART"

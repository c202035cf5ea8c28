#!/usr/bin/env bash
# Runs acp_test.mjs (node's own test runner) from the runfiles, where the
# programs and the pinned client library are.
set -euo pipefail
runfiles="${TEST_SRCDIR:-$PWD/..}/${TEST_WORKSPACE:-garuda}"
sdk="$runfiles/tests/acp/node_modules/@agentclientprotocol/sdk/package.json"
if [ ! -f "$sdk" ]; then
  echo "acp_test: the ACP client library is missing; run: bash tools/setup.sh" >&2
  exit 1
fi
export GARUDA_BIN_ROOT="$runfiles"
cd "$runfiles/tests/acp"
exec node --preserve-symlinks --preserve-symlinks-main acp_test.mjs

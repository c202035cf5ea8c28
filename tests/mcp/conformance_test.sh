#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in package-lock.json) drives tests/mcp/conformance_client, that is
# lib/mcp over Streamable HTTP through lib/netproxy's proxy, in each client
# scenario that applies to garuda (docs/mcp.md, "Protocol"). Left out: the
# auth/* scenarios (no OAuth in garuda's MCP client), sse-retry (stream
# resumption, which 2026-07-28 removed) and elicitation defaults (garuda
# declines every elicitation: no server form reaches the person).
set -euo pipefail
runfiles="${TEST_SRCDIR:-$PWD/..}/${TEST_WORKSPACE:-garuda}"
here="$runfiles/tests/mcp"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$suite" ]; then
  echo "conformance_test: the conformance suite is missing; run: bash tools/setup.sh" >&2
  exit 1
fi
scenarios=(
  initialize
  tools_call
  request-metadata
  sep-2322-client-request-state
  http-standard-headers
  http-custom-headers
  http-invalid-tool-headers
  json-schema-ref-no-deref
  json-schema-2020-12-preservation
)
out="${TEST_TMPDIR:-$(mktemp -d)}/conformance"
mkdir -p "$out"
cd "$here"
passed=0
failed=0
for scenario in "${scenarios[@]}"; do
  if node --preserve-symlinks --preserve-symlinks-main \
      --import ./node20_compat.mjs "$suite" client \
      --command "$here/conformance_client" --scenario "$scenario" \
      --timeout 60000 -o "$out/$scenario" >"$out/$scenario.log" 2>&1; then
    echo "PASS $scenario"
    passed=$((passed + 1))
  else
    echo "FAIL $scenario"
    grep -E "FAILURE|EXITED|Error" "$out/$scenario.log" | head -20 || true
    for f in "$out/$scenario"/*/stderr.txt; do
      [ -f "$f" ] && sed 's/^/  client: /' "$f" | head -20
    done
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

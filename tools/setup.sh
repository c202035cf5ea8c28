#!/usr/bin/env bash
# Installs what the build and the tests need on Debian 12, as root, and only
# what is missing. Safe to run again.
set -euo pipefail

debian_packages=(
  bazel-bootstrap
  g++
  python3
  git
  libabsl-dev
  libprotobuf-dev
  protobuf-compiler
  libseccomp-dev
  libgit2-dev
  libssl-dev
  libgtest-dev
  libgmock-dev
  bubblewrap
  libcurl4-openssl-dev
  libtree-sitter-dev
  libedit-dev
  tmux
  # The static archives garuda-stager links (third_party/system/static_link.bzl;
  # libgit2-dev pulls them in too).
  libmbedtls-dev libhttp-parser-dev libssh2-1-dev libpcre2-dev zlib1g-dev
  # tools/package.sh and tests/package: dpkg-shlibdeps, man -l, lintian.
  dpkg-dev man-db lintian
)

missing=()
for package in "${debian_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

# Node.js and npm (the grammars and pyright come from npm): Debian's, unless
# a node and npm are already on the PATH (another install would conflict).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  for package in nodejs npm; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
        grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
fi

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" != 0 ]; then
    echo "setup: these Debian packages are missing; run as root or install them: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The tree-sitter grammars of lib/knowledge (pinned in package-lock.json) go
# into an ignored node_modules/; --ignore-scripts: we compile only their C
# sources, never their Node bindings.
grammars="$(cd "$(dirname "$0")/.." && pwd)/third_party/tree_sitter"
if [ ! -f "$grammars/node_modules/tree-sitter-java/src/parser.c" ] ||
    [ ! -f "$grammars/node_modules/tree-sitter-python/src/parser.c" ]; then
  echo "setup: installing the tree-sitter grammars in $grammars/node_modules" >&2
  (cd "$grammars" && npm ci --ignore-scripts --no-audit --no-fund)
fi

# The pinned ACP client library (@agentclientprotocol/sdk) that tests/acp
# drives garuda-agent acp with, as an editor would; JavaScript only.
acp_client="$(cd "$(dirname "$0")/.." && pwd)/tests/acp"
if [ ! -f "$acp_client/node_modules/@agentclientprotocol/sdk/package.json" ]; then
  echo "setup: installing the ACP client library in $acp_client/node_modules" >&2
  (cd "$acp_client" && npm ci --ignore-scripts --no-audit --no-fund)
fi

# The pinned pyright that tests/knowledge's language-server test starts.
oracles="$(cd "$(dirname "$0")" && pwd)/knowledge"
if [ ! -f "$oracles/node_modules/pyright/langserver.index.js" ]; then
  echo "setup: installing pyright in $oracles/node_modules" >&2
  (cd "$oracles" && npm ci --ignore-scripts --no-audit --no-fund)
fi

# The pinned MCP servers and conformance suite that tests/mcp, tests/agent_mcp
# and bench/mcp start (server-everything, server-filesystem, conformance).
mcp_pins="$(cd "$(dirname "$0")/.." && pwd)/tests/mcp"
if [ ! -f "$mcp_pins/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  echo "setup: installing the MCP test servers in $mcp_pins/node_modules" >&2
  (cd "$mcp_pins" && npm ci --ignore-scripts --no-audit --no-fund)
fi

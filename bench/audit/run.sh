#!/usr/bin/env bash
# Measures the audit log: append rate (grouped fsync and fsync per line) and
# verify throughput on a log of at least 100 MB beside sha256sum of the same
# file, all in one run. Usage: bash bench/audit/run.sh [scratch folder]
# The scratch folder must be on the disk you care about (not tmpfs: fsync
# there costs nothing); it defaults to a new folder under /var/tmp and is
# removed afterwards.
# Instructions per line, whatever the machine's load (docs/audit.md, "Where
# the tree's cost per line goes"): run the binary under
#   valgrind --tool=callgrind audit_bench --dir=D --auditor=x --audit=x \
#     --append_case=tree97 --grouped_lines=N --fsync_max_ms=1000000
# at two sizes N and divide the difference by the difference of N.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build -c opt //bench/audit:audit_bench //cmd/garuda-auditor //cmd/garuda-audit >&2
scratch="${1:-$(mktemp -d /var/tmp/garuda-audit-bench.XXXXXX)}"
trap 'rm -rf "$scratch"' EXIT
echo "scratch: $scratch ($(df -T "$scratch" | awk 'NR==2 {print $2}'), $(nproc) cores)"
# The optimized binaries by their own path: bazel-bin follows the last
# build of the workspace, so a build or test started beside the bench would
# switch it to unoptimized ones halfway.
bin="$(bazel info -c opt bazel-bin 2>/dev/null)"
"$bin/bench/audit/audit_bench" --dir="$scratch" \
  --auditor="$bin/cmd/garuda-auditor/garuda-auditor" \
  --audit="$bin/cmd/garuda-audit/garuda-audit" "${@:2}"

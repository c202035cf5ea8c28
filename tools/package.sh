#!/usr/bin/env bash
# Builds the Debian package dist/garuda_<version>_amd64.deb: the optimized
# programs (bazel build -c opt), a man page for each from its own --help,
# bash completion for garuda-agent, the docs, the settings JSON Schema.
# Debian's own tools make it (dpkg-shlibdeps for Depends, gzip -n,
# dpkg-deb), and the same commit gives the same bytes: every time in the
# package is the commit's (SOURCE_DATE_EPOCH), owners are root, the order
# is sorted, compression is single-threaded. docs/packaging.md says more.
#
#   bash tools/package.sh [--bin DIR] [--out DIR] [--lintian]
#
# --bin DIR   take the built programs from DIR/cmd/<name>/<name> and the
#             schema from DIR/tools/settings.schema.json instead of building
#             (tests/package passes the programs the test suite built)
# --out DIR   where the .deb goes (default: dist/ in the repository)
# --lintian   run lintian on the package (installed when missing) and fail
#             on an error
set -euo pipefail
umask 022
export LC_ALL=C.UTF-8 TZ=UTC

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

bin=""
out="$root/dist"
run_lintian=0
while (($#)); do
  case "$1" in
    --bin) bin="$(cd "$2" && pwd)"; shift 2 ;;
    --out) mkdir -p "$2" && out="$(cd "$2" && pwd)"; shift 2 ;;
    --lintian) run_lintian=1; shift ;;
    *) echo "package.sh: unknown argument $1 (--bin DIR, --out DIR, --lintian)" >&2; exit 2 ;;
  esac
done

programs=(garuda-agent garuda-stager garuda-applier garuda-auditor garuda-audit garuda-budgeter)

for tool in dpkg-deb dpkg-shlibdeps strip readelf gzip python3; do
  command -v "$tool" >/dev/null ||
    { echo "package.sh: $tool is missing; bash tools/setup.sh installs it" >&2; exit 1; }
done

version="$(sed -n 's/.*kGarudaVersion\[\] = "\([^"]*\)";.*/\1/p' lib/base/version.h)"
[[ "$version" =~ ^[0-9][0-9A-Za-z.+~]*$ ]] ||
  { echo "package.sh: no version in lib/base/version.h (kGarudaVersion)" >&2; exit 1; }

# Every time stamp in the package: the commit's, unless the caller set one.
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH="$(git -C "$root" log -1 --format=%ct 2>/dev/null)" ||
    { echo "package.sh: not a git checkout; set SOURCE_DATE_EPOCH" >&2; exit 1; }
  if [[ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
    echo "package.sh: the checkout has uncommitted changes: the package is built from them, but carries the last commit's time" >&2
  fi
fi
export SOURCE_DATE_EPOCH

if [[ -z "$bin" ]]; then
  # Release build: optimized; the same flags every time, so the same
  # commit gives the same programs.
  bazel build -c opt //cmd/... //tools:settings_schema_json
  bin="$(bazel info -c opt bazel-bin 2>/dev/null)"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/garuda-package.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# debian/garuda: where dpkg-shlibdeps expects a package's files.
tree="$work/debian/garuda"
doc="$tree/usr/share/doc/garuda"
mkdir -p "$tree/DEBIAN" "$tree/usr/bin" "$tree/usr/share/man/man1" \
  "$tree/usr/share/bash-completion/completions" "$tree/usr/share/garuda" \
  "$tree/usr/share/lintian/overrides" \
  "$doc/docs"

# 1. The programs, stripped as dh_strip does (the symbols only a debugger
#    wants; the build id stays).
for program in "${programs[@]}"; do
  source_file="$bin/cmd/$program/$program"
  [[ -x "$source_file" ]] || { echo "package.sh: $source_file is missing" >&2; exit 1; }
  install -m 0755 "$source_file" "$tree/usr/bin/$program"
  strip --strip-unneeded --remove-section=.comment "$tree/usr/bin/$program"
done

# 2. A man page per program, from the packaged program's own --help.
date="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)"
for program in "${programs[@]}"; do
  help="$("$tree/usr/bin/$program" --help)"
  python3 packaging/from_help.py man "$program" "$version" "$date" <<<"$help" |
    gzip -9n >"$tree/usr/share/man/man1/$program.1.gz"
done

# 3. Bash completion for garuda-agent, its words from the same --help.
agent_help="$("$tree/usr/bin/garuda-agent" --help)"
words() { python3 packaging/from_help.py "$@" <<<"$agent_help"; }
FLAGS="$(words flags)" VALUE_FLAGS="$(words value-flags)" \
  SUBCOMMANDS="$(words subcommands garuda-agent)" \
  JOBS_WORDS="$(words words garuda-agent jobs)" \
  TOOL_WORDS="$(words words garuda-agent tool)" \
  MCP_WORDS="$(words words garuda-agent mcp)" \
  python3 - packaging/garuda-agent.bash.in \
  >"$tree/usr/share/bash-completion/completions/garuda-agent" <<'PY'
import os, sys
text = open(sys.argv[1]).read()
for key in ("FLAGS", "VALUE_FLAGS", "SUBCOMMANDS", "JOBS_WORDS", "TOOL_WORDS", "MCP_WORDS"):
    text = text.replace("@%s@" % key, os.environ[key])
sys.stdout.write(text)
PY

# 4. The docs, the copyright file, the changelog, the settings schema.
install -m 0644 README.md "$doc/README.md"
install -m 0644 docs/*.md docs/stream-json.schema.json "$doc/docs/"
install -m 0644 packaging/copyright "$doc/copyright"
install -D -m 0644 packaging/lintian-overrides "$tree/usr/share/lintian/overrides/garuda"
{
  echo "garuda ($version) unstable; urgency=medium"
  echo
  echo "  * Garuda $version, built by tools/package.sh from the repository."
  echo
  echo " -- $(sed -n 's/^Maintainer: //p' packaging/control.in)  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$doc/changelog.gz"
install -m 0644 "$bin/tools/settings.schema.json" "$tree/usr/share/garuda/settings.schema.json"

# 5. The control file: Depends as dpkg-shlibdeps finds them (it reads a
#    debian/control, so it runs in a folder that has one).
printf 'Source: garuda\n\nPackage: garuda\nArchitecture: amd64\n' >"$work/debian/control"
# garuda-stager is linked statically (docs/sandbox.md): nothing to find.
dynamic=()
for program in "${programs[@]}"; do
  if [[ "$(readelf -d "$tree/usr/bin/$program")" == *"(NEEDED)"* ]]; then
    dynamic+=("debian/garuda/usr/bin/$program")
  fi
done
# --warnings=1: not the "useless dependency" ones, which are about the link
# line (every program links all of Abseil), not about the package.
depends="$(cd "$work" && dpkg-shlibdeps -O --warnings=1 "${dynamic[@]}" |
  sed -n 's/^shlibs:Depends=//p')"
[[ -n "$depends" ]] || { echo "package.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

(cd "$tree" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
  xargs -0 md5sum >DEBIAN/md5sums)
# As dpkg-gencontrol counts: each file's size rounded up to KiB, 1 for each
# other entry.
installed_size="$(cd "$tree" && find . -path ./DEBIAN -prune -o ! -path . -printf '%y %s\n' |
  awk '$1 == "f" { total += int(($2 + 1023) / 1024); next } { total += 1 } END { print total }')"
sed -e "s/@VERSION@/$version/" -e "s/@INSTALLED_SIZE@/$installed_size/" \
  -e "s/@DEPENDS@/$depends/" packaging/control.in >"$tree/DEBIAN/control"

# 6. Modes and times the same on every machine, then the archive.
find "$tree" -type d -exec chmod 0755 {} +
find "$tree" -type f ! -path "$tree/usr/bin/*" -exec chmod 0644 {} +
find "$tree" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$out"
deb="$out/garuda_${version}_amd64.deb"
dpkg-deb --root-owner-group -Zxz -z6 --threads-max=1 --build "$tree" "$deb" >/dev/null
echo "package.sh: $deb ($(du -k "$deb" | cut -f1) KiB; installed $installed_size KiB)"

if ((run_lintian)); then
  if ! command -v lintian >/dev/null; then
    echo "package.sh: installing lintian" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends lintian >&2
  fi
  # Errors fail the build; the warnings left are listed in docs/packaging.md.
  lintian --fail-on error --tag-display-limit 0 "$deb"
fi

#!/usr/bin/env bash
# same_file_test.sh GENERATED COMMITTED FIX: fails, with the difference and
# the command that fixes it, when the committed copy of a generated file is
# out of date.
set -u
generated=$1 committed=$2 fix=$3
if cmp -s "$generated" "$committed"; then
  echo "$committed is up to date"
  exit 0
fi
diff -u "$committed" "$generated" | head -60
echo "$committed is out of date; regenerate it with: $fix" >&2
exit 1

#!/usr/bin/env bash
# Checks that every C and C++ file git tracks is formatted as .clang-format
# says (clang-format-19); prints the files that are not and fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
format=${CLANG_FORMAT:-clang-format-19}
if ! command -v "$format" >/dev/null; then
  echo "check-format: $format is not installed (tools/dev.sh installs it)" >&2
  exit 1
fi
bad=()
while IFS= read -r -d '' file; do
  "$format" --dry-run --Werror "$file" >/dev/null 2>&1 || bad+=("$file")
done < <(git ls-files -z -- '*.cpp' '*.cc' '*.c' '*.h' '*.hpp')
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format: not formatted (run $format -i on them):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: every C/C++ file is formatted"

#!/usr/bin/env bash
# The check step of the omlx-logscan GitHub Action (action.yml). GitHub runs it with the action's
# inputs in LOGSCAN_* variables and its own GITHUB_* / RUNNER_* ones; the tests run it the same way.
#
# It never fails the step itself: the exit code of `logscan check` goes to the step's outputs, so
# the SARIF upload still runs on findings, and the action's last step fails the job with that code.
set -uo pipefail

: "${LOGSCAN_LOGS:?the action needs logs: one or more paths or glob patterns}"
: "${GITHUB_OUTPUT:?not running under GitHub Actions: GITHUB_OUTPUT is not set}"

# Paths are separated by newlines or spaces; a pattern matching nothing is passed on as written,
# so logscan names it in its error rather than checking less than was asked for.
set -f  # split the list into words without expanding them yet
# shellcheck disable=SC2206  # splitting on whitespace is the point
words=(${LOGSCAN_LOGS})
set +f
paths=()
shopt -s nullglob
for word in "${words[@]}"; do
  matches=()
  if [[ "$word" == *[*?[]* ]]; then
    # shellcheck disable=SC2206  # the pattern is meant to expand here
    matches=($word)
  fi
  if ((${#matches[@]})); then paths+=("${matches[@]}"); else paths+=("$word"); fi
done
shopt -u nullglob

# An empty fail-on or fail-level leaves logscan's own defaults in force (one list: analysis/rules.py).
rules=()
[[ -n "${LOGSCAN_FAIL_ON:-}" ]] && rules+=(--fail-on "$LOGSCAN_FAIL_ON")
[[ -n "${LOGSCAN_FAIL_LEVEL:-}" ]] && rules+=(--fail-level "$LOGSCAN_FAIL_LEVEL")
[[ -n "${LOGSCAN_MAX_FAULTS:-}" ]] && rules+=(--max-faults "$LOGSCAN_MAX_FAULTS")
[[ -n "${LOGSCAN_MAX_DEAD:-}" ]] && rules+=(--max-dead "$LOGSCAN_MAX_DEAD")

main=(check "${paths[@]}" "${rules[@]}" --format "${LOGSCAN_FORMAT:-github}")
[[ -n "${LOGSCAN_OUTPUT:-}" ]] && main+=(--output "$LOGSCAN_OUTPUT")
logscan "${main[@]}"
code=$?
echo "exit-code=$code" >>"$GITHUB_OUTPUT"

if [[ "${LOGSCAN_SARIF:-false}" == "true" ]]; then
  sarif="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/logscan.sarif"
  # The summary and the verdict were written by the run above; this one only adds the file code scanning reads.
  env -u GITHUB_STEP_SUMMARY logscan check "${paths[@]}" "${rules[@]}" --quiet --format sarif \
    --sarif-root "${GITHUB_WORKSPACE:-.}" --output "$sarif" >/dev/null
  echo "sarif=$sarif" >>"$GITHUB_OUTPUT"
fi
exit 0

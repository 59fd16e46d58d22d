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

# Regenerate the golden outcomes (tests/golden/outcomes.tsv) and docs/predictions-vs-outcomes.md from the
# default run; the commit that changes them must say why the outcomes changed.
golden:
    UPDATE_GOLDEN=1 cargo test --test golden -- --nocapture

# Re-render the reports of a run folder without running a cell.
report dir="reports/latest":
    cargo run --release -- report {{dir}}

# Benchmark the harness (100,100 cells).
bench:
    cargo run --release -- bench

# Regenerate the committed example report (the offline default run).
example:
    cargo run --release -- run --out reports/example

# Live smoke check against a real server and model (not CI; needs the network once for pip): llama.cpp's
# prebuilt server (xllamacpp) with SmolLM2-135M on 127.0.0.1, one thread, the 12 base-scale cells of two
# scenarios × two interrupt points × A, C, none. Fails unless a cell made a valid tool call and no cell
# errored for a harness reason. See README, "Live models".
smoke port="8765":
    bash scripts/smoke.sh {{port}}

# Real-model smoke calibration (not CI; needs the network once for pip): the smoke's server and
# model, `calibrate --fit` on 24 sampled units × sim:careful, sim:literal and the model (about 40
# minutes here). See docs/calibration.md, "A real-model smoke calibration".
smoke-calibrate port="8765":
    bash scripts/smoke.sh {{port}} calibrate

#!/usr/bin/env python3
"""ONNX Runtime's cost of `--quantization exact` against the default (QDQ) form.

For every quantized model under MODELS (a model with quantized activations), both
forms are converted with the CLI and timed by tests/numeric/ort_bench.mjs in the
same process, rounds alternating between the two (so load on the machine hits
both alike): one Markdown row per model with the medians and their ratio.
Models the exact mode refuses are listed with the op it names.

  bench/exact_cost.py [--cli build/lite2onnx] [--runs N] [--rounds R]
                      [--filter REGEX] MODELS...
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_BENCH = os.path.join(ROOT, "tests", "numeric", "ort_bench.mjs")


def models_under(paths, pattern):
    for p in paths:
        if os.path.isfile(p):
            yield p, os.path.basename(p)
            continue
        for dirpath, _, files in sorted(os.walk(p)):
            for f in sorted(files):
                if not f.endswith(".tflite"):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, p)
                if pattern is None or re.search(pattern, rel):
                    yield full, rel


def convert(cli, model, out, exact):
    args = [cli, "convert", model, "-o", out, "--json"]
    if exact:
        args += ["--quantization", "exact"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    try:
        diag = json.loads(r.stdout)
    except json.JSONDecodeError:
        diag = {}
    return r.returncode, diag, r.stderr.strip()


def time_pair(qdq, exact, runs, rounds):
    r = subprocess.run(["node", ORT_BENCH, "--runs", str(runs), "--rounds", str(rounds), qdq, exact],
                       capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:] or ["ort_bench failed"]
    medians = [float(m) for m in re.findall(r"median ([0-9.]+) us", r.stdout)]
    return (medians if len(medians) == 2 else None), r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "lite2onnx"))
    ap.add_argument("--runs", type=int, default=10, help="inferences per model per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--filter", default=None, help="only models whose path matches")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    rows, refused, ratios = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for model, rel in models_under(a.models, a.filter):
            qdq, exact = os.path.join(tmp, "qdq.onnx"), os.path.join(tmp, "exact.onnx")
            code, diag, _ = convert(a.cli, model, qdq, exact=False)
            if code != 0 or not diag.get("quantization", {}).get("quantized_activations"):
                continue  # not converted, or a float model (both forms are the same)
            code, _, err = convert(a.cli, model, exact, exact=True)
            if code != 0:
                refused.append((rel, err.splitlines()[0] if err else f"exit {code}"))
                continue
            medians, out = time_pair(qdq, exact, a.runs, a.rounds)
            if not medians:
                refused.append((rel, f"not timed: {out}"))
                continue
            ratio = medians[1] / medians[0]
            ratios.append(ratio)
            rows.append(f"| {rel} | {medians[0] / 1000:.2f} | {medians[1] / 1000:.2f} | {ratio:.2f}x |")
            print(rows[-1], file=sys.stderr, flush=True)
    print("| model | QDQ (ms) | exact (ms) | exact / QDQ |")
    print("| --- | ---: | ---: | ---: |")
    for r in rows:
        print(r)
    if ratios:
        print(f"\n{len(ratios)} models: median ratio {statistics.median(ratios):.2f}x, "
              f"{sum(r > 3 for r in ratios)} above 3x.")
    for rel, why in refused:
        print(f"- {rel}: {why}")


if __name__ == "__main__":
    main()

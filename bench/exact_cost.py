#!/usr/bin/env python3
"""ONNX Runtime's cost of `--quantization auto` (the default) and `exact` against `qdq`.

For every quantized model under MODELS (a model with quantized activations), the
three forms are converted with the CLI and timed by tests/numeric/ort_bench.mjs in
the same process, rounds alternating between them (so load on the machine hits
all alike): one Markdown row per model with the medians and the ratios to qdq.
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


def convert(cli, model, out, mode):
    args = [cli, "convert", model, "-o", out, "--json", "--quantization", mode]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    try:
        diag = json.loads(r.stdout)
    except json.JSONDecodeError:
        diag = {}
    return r.returncode, diag, r.stderr.strip()


def time_all(files, runs, rounds):
    r = subprocess.run(["node", ORT_BENCH, "--runs", str(runs), "--rounds", str(rounds), *files],
                       capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:] or ["ort_bench failed"]
    medians = [float(m) for m in re.findall(r"median ([0-9.]+) us", r.stdout)]
    return (medians if len(medians) == len(files) else None), r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "lite2onnx"))
    ap.add_argument("--runs", type=int, default=10, help="inferences per model per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--filter", default=None, help="only models whose path matches")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    modes = ("qdq", "auto", "exact")
    rows, refused, ratios = [], [], {"auto": [], "exact": []}
    with tempfile.TemporaryDirectory() as tmp:
        for model, rel in models_under(a.models, a.filter):
            files = [os.path.join(tmp, f"{m}.onnx") for m in modes]
            code, diag, _ = convert(a.cli, model, files[0], "qdq")
            if code != 0 or not diag.get("quantization", {}).get("quantized_activations"):
                continue  # not converted, or a float model (the forms are the same)
            code, _, err = convert(a.cli, model, files[1], "auto")
            if code != 0:
                refused.append((rel, f"auto: {err.splitlines()[0] if err else f'exit {code}'}"))
                continue
            code, _, err = convert(a.cli, model, files[2], "exact")
            exact = code == 0
            if not exact:
                refused.append((rel, f"exact: {err.splitlines()[0] if err else f'exit {code}'}"))
            medians, out = time_all(files if exact else files[:2], a.runs, a.rounds)
            if not medians:
                refused.append((rel, f"not timed: {out}"))
                continue
            q = medians[0]
            cells = [f"{q / 1000:.2f}", f"{medians[1] / 1000:.2f}", f"{medians[1] / q:.2f}x"]
            ratios["auto"].append(medians[1] / q)
            if exact:
                ratios["exact"].append(medians[2] / q)
                cells += [f"{medians[2] / 1000:.2f}", f"{medians[2] / q:.2f}x"]
            else:
                cells += ["-", "-"]
            rows.append(f"| {rel} | " + " | ".join(cells) + " |")
            print(rows[-1], file=sys.stderr, flush=True)
    print("| model | qdq (ms) | auto (ms) | auto / qdq | exact (ms) | exact / qdq |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(r)
    for m, rs in ratios.items():
        if rs:
            print(f"\n{m}: {len(rs)} models, median {statistics.median(rs):.2f}x qdq's time, "
                  f"{sum(r > 3 for r in rs)} above 3x.")
    for rel, why in refused:
        print(f"- {rel}: {why}")


if __name__ == "__main__":
    main()

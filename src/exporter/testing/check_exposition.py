#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Parses a Prometheus text file with the official Python client's parser and prints a JSON
summary: {"families": {name: {"type": ..., "samples": [[name, labels, value], ...]}}}.
Exit 0 when it parses, 1 on a parse error, 77 when prometheus_client is missing."""
import json
import math
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    sys.exit(77)


def main(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = {}
    try:
        for fam in text_string_to_metric_families(text):
            samples = []
            for s in fam.samples:
                v = s.value
                v = "NaN" if math.isnan(v) else ("+Inf" if v == math.inf else ("-Inf" if v == -math.inf else v))
                samples.append([s.name, s.labels, v])
            if fam.name in out:
                print(f"family {fam.name} appears twice", file=sys.stderr)
                return 1
            out[fam.name] = {"type": fam.type, "documentation": fam.documentation, "samples": samples}
    except Exception as e:  # the parser raises ValueError and others
        print(f"parse error: {e}", file=sys.stderr)
        return 1
    json.dump({"families": out}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

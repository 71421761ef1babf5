#!/usr/bin/env python3
"""Writes an N-row Azure LLM inference 2024-layout CSV (`TIMESTAMP,ContextTokens,GeneratedTokens`)
for the scale benchmark: stamps one to a few ms apart, mixed `…00.001163+00:00` and
`…00+00:00` shapes as the published 2024 file has them, seeded so every run writes the same
bytes. Usage: bench/make_azure.py ROWS OUT"""
import random
import sys
from datetime import datetime, timedelta, timezone

rows, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(42)
t = datetime(2024, 5, 10, tzinfo=timezone.utc)
us = 0
with open(out, "w", buffering=1 << 22) as f:
    f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
    base = t.strftime("%Y-%m-%d ")
    buf = []
    for i in range(rows):
        us += rng.randint(0, 4000)
        s, frac = divmod(us, 1_000_000)
        h, rem = divmod(s, 3600)
        m, sec = divmod(rem, 60)
        day = base if h < 24 else (t + timedelta(hours=h)).strftime("%Y-%m-%d ")
        h %= 24
        if frac and i % 7:
            stamp = f"{day}{h:02d}:{m:02d}:{sec:02d}.{frac:06d}+00:00"
        else:
            stamp = f"{day}{h:02d}:{m:02d}:{sec:02d}+00:00"
        buf.append(f"{stamp},{rng.randint(1, 8000)},{rng.randint(0, 900)}\n")
        if len(buf) >= 100_000:
            f.write("".join(buf))
            buf.clear()
    f.write("".join(buf))

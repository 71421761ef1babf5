"""Rebuilds fuzz/seeds/ from the project's small fixtures in core/tests/data (never from shared/).

Ingest seeds are the fixture with the 5-byte header of fuzz/src/lib.rs in front
(flags, two little-endian u16 cut points); decimal seeds are the fixtures' distinct CSV cells.
Usage: python3 fuzz/make_seeds.py
"""

import hashlib
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "core", "tests", "data")
SEEDS = os.path.join(HERE, "seeds")

FIXTURES = {
    "ingest_burstgpt": ["burstgpt/dirty.csv", "burstgpt/v3_dirty.csv"],
    "ingest_mooncake": ["mooncake/dirty.jsonl", "ragpulse/dirty.jsonl"],
    "ingest_azure": ["azure/dirty.csv"],
    "ingest_detect": ["burstgpt/dirty.csv", "burstgpt/v3_dirty.csv", "mooncake/dirty.jsonl", "azure/dirty.csv",
                      "ragpulse/dirty.jsonl"],
}
# (flags, cut a, cut b): plain; model filter + 48-byte lines; log type, window, row cap, 1 µs.
# 0x81: read through a mapping (bit 7) with the model filter.
HEADERS = [(0x00, 37, 101), (0x21, 70, 71), (0x5E, 0, 200), (0x81, 50, 90)]
EXTRA_NUMBERS = ["19440110.0", "1e3", "1.5E-3", "-0", "nan", "-Infinity", "0000.5", "4294967296",
                 "0.0000001", "1e400000", "99999999999999999999999999999999999999999", "+7", " 12.0 "]


def write(target, content):
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(content).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(content)


def main():
    shutil.rmtree(SEEDS, ignore_errors=True)
    cells = set(EXTRA_NUMBERS)
    for target, rels in FIXTURES.items():
        for rel in rels:
            with open(os.path.join(DATA, rel), "rb") as f:
                body = f.read()
            for flags, a, b in HEADERS:
                write(target, struct.pack("<BHH", flags, a, b) + body)
            if rel.endswith(".csv"):
                for line in body.decode("utf-8", "replace").splitlines():
                    cells.update(line.split(","))
    # timed_trace: [flags, cut] + a Mooncake-shaped file; plan_round_trip: [flags] + the same.
    with open(os.path.join(DATA, "mooncake/dirty.jsonl"), "rb") as f:
        dirty = f.read()
    clean = b"".join(line + b"\n" for line in dirty.splitlines()
                     if line.startswith(b'{"timestamp": 0,') or line.startswith(b'{"timestamp": 6000, "input_length": 512'))
    for flags in (0x00, 0x05, 0x0A, 0x0F):
        write("timed_trace", bytes([flags, 40]) + dirty)
        write("timed_trace", bytes([flags, 3]) + clean)
        write("plan_round_trip", bytes([flags]) + dirty)
        write("plan_round_trip", bytes([flags]) + clean)
    for cell in sorted(cells):
        if cell.strip():
            write("decimal", cell.encode())
    # prometheus: a scrape of loadproof sim, whole and cut; vllm_bench: [flags] + a
    # vLLM-format stdout or result; receipt_audit: a receipt fired at the sim.
    with open(os.path.join(DATA, "metrics/sim.txt"), "rb") as f:
        scrape = f.read()
    write("prometheus", scrape)
    write("prometheus", scrape[: len(scrape) // 3])
    for rel in ("bench/stdout.txt", "bench/result.json"):
        with open(os.path.join(DATA, rel), "rb") as f:
            body = f.read()
        for flags in (0x00, 0x03):
            write("vllm_bench", bytes([flags]) + body)
    with open(os.path.join(DATA, "receipt/native_sim.json"), "rb") as f:
        write("receipt_audit", f.read())
    # receipt_stream: the same receipt as a record stream, decompressed (the structure the
    # fuzzer should mutate) and compressed, whole and cut — written by `loadproof receipt
    # upgrade` when a built binary is at hand (CI's seeds are committed).
    lp = os.path.join(HERE, "..", "target", "debug", "loadproof")
    if os.path.exists(lp):
        import subprocess, tempfile
        with tempfile.TemporaryDirectory() as tmp:
            z = os.path.join(tmp, "r.zst")
            subprocess.run([lp, "receipt", "upgrade", os.path.join(DATA, "receipt/native_sim.json"),
                            "--out", z], check=True, capture_output=True)
            with open(z, "rb") as f:
                packed = f.read()
            raw = subprocess.run(["zstd", "-dcq", z], check=True, capture_output=True).stdout
        write("receipt_stream", packed)
        write("receipt_stream", packed[: len(packed) * 2 // 3])
        write("receipt_stream", raw)
        write("receipt_stream", raw[: len(raw) * 2 // 3])
        signed_seeds(lp)


def signed_seeds(lp):
    """`signed`: a key pair's two files and what a signing sim answers — the signed lease, a
    scrape statement and the lease account — as envelopes, each also cut short."""
    import json, subprocess, tempfile, time, urllib.request
    with tempfile.TemporaryDirectory() as tmp:
        key = os.path.join(tmp, "k")
        subprocess.run([lp, "key", "new", "--out", key, "--comment", "seed"], check=True,
                       capture_output=True)
        for path in (key, key + ".pub"):
            with open(path, "rb") as f:
                write("signed", f.read())
        sim = subprocess.Popen([lp, "sim", "--port", "0", "--signing-key", key],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            url = sim.stderr.readline().split("listening on ")[1].split(" ")[0]
            grant = urllib.request.urlopen(urllib.request.Request(
                url + "/loadproof/lease", data=json.dumps({"holder": "seed", "seconds": 60}).encode(),
                method="POST", headers={"content-type": "application/json"}))
            token = grant.headers["x-loadproof-lease-token"]
            envelopes = [grant.headers["x-loadproof-lease-signed"]]
            envelopes.append(urllib.request.urlopen(url + "/metrics").headers["x-loadproof-scrape-signed"])
            # The holder's scrape: numbered.
            envelopes.append(urllib.request.urlopen(urllib.request.Request(
                url + "/metrics", headers={"authorization": "Bearer " + token})).headers["x-loadproof-scrape-signed"])
            time.sleep(0.01)
            release = urllib.request.urlopen(urllib.request.Request(
                url + "/loadproof/lease", method="DELETE", headers={"authorization": "Bearer " + token}))
            envelopes.append(release.headers["x-loadproof-lease-account-signed"])
        finally:
            sim.kill()
        import base64
        for e in envelopes:
            write("signed", e.encode())
            write("signed", e.encode()[: len(e) // 2])
            # As a receipt keeps it: the statement as text.
            v = json.loads(e)
            v["text"] = base64.b64decode(v.pop("statement")).decode()
            write("signed", json.dumps(v, separators=(",", ":")).encode())


if __name__ == "__main__":
    main()

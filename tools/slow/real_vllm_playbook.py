#!/usr/bin/env python3
"""Slow tier, part 2: a playbook row measured on a real vLLM server.

The treatment arm (prefix caching on, the lab's default) runs on the server already up on
PORT with the lab's defaults (real_vllm.sh starts it); the server is then restarted with
prefix caching off and an API key for the baseline arm and the real-endpoint checks. Each arm fires one small plan twice with loadproof's native engine *through `loadproof gate`*,
the lease-enforcing gateway in front of vLLM, so every receipt holds a lease bound to the real
server's subject and route. Then `loadproof playbook row` builds the row from the four receipts.

On 2 shared cores a real server's receipts can miss a standing for environmental reasons (a
`/metrics` scrape that took over a second, the client falling behind while vLLM holds the
cores): those refusals are reported, not failed. A refusal of any other standing (window,
subject, implementation, counter agreement, continuity, ledger) is a failure: it would be a bug.

Usage: real_vllm_playbook.py LOADPROOF_BIN WORK_DIR PORT
Needs the lab's environment (VLLM_LAB_* from tools/vllm-lab/serve.sh env).
"""

import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SERVE = os.path.join(HERE, "..", "vllm-lab", "serve.sh")
FAILURES = []
ENVIRONMENTAL = {"arrival", "occupancy"}
REVISION = "tiny-llama (random weights, built offline by the lab)"
GPU = "none (CPU)"


def check(ok, what):
    print(f"  {'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        FAILURES.append(what)


def serve(port, *extra, env=None):
    subprocess.run(["bash", SERVE, "stop", str(port)], check=False)
    subprocess.run(["bash", SERVE, "start", str(port), *extra], check=True, env=env)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gate(lp, upstream, port, env=None, signing_key=None):
    """`loadproof gate` on `port`: one URL for every fire, since the route is part of the
    protocol both arms must share. With `env`, the gate holds the upstream's API key; with
    `signing_key`, it signs every lease it grants and every /metrics body it serves."""
    key = ["--upstream-api-key-env", "LAB_VLLM_KEY"] if env else []
    if signing_key:
        key += ["--signing-key", signing_key]
    proc = subprocess.Popen([lp, "gate", "--upstream", upstream, "--port", str(port), *key,
                             "--model-revision", REVISION, "--gpu-sku", GPU],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    first = proc.stderr.readline().strip()
    url = first.removeprefix("loadproof gate listening on ").split(" ")[0]
    if not url.startswith("http://"):
        proc.kill()
        raise SystemExit(f"loadproof gate did not start: {first!r}")
    return proc, url


def no_secret(lp, key, receipt, outputs, what):
    """The key appears in no byte of the receipt (as written and as its v1 JSON) nor of fire's
    output."""
    as_json = receipt + ".v1.json"
    subprocess.run([lp, "receipt", "upgrade", receipt, "--form", "json", "--out", as_json],
                   check=True, stdout=subprocess.DEVNULL)
    places = [open(receipt, "rb").read(), open(as_json, "rb").read(), *outputs]
    check(all(key.encode() not in p for p in places), f"{what}: the API key is in no artifact")


def real_endpoint(lp, work, upstream, plan_dir, key, env):
    """Real endpoints against real vLLM: the baseline arm's server, started with an API key
    (VLLM_API_KEY in its environment, as `--api-key`), `loadproof gate` serving https with a throwaway CA and
    holding the key, the real bench client fired through it over TLS (`--ca-cert`, which the
    vllm engine passes on as SSL_CERT_FILE) under the gate's lease; then the native client fired
    straight at vLLM with the key from the environment, and once without it (401: unreachable)."""
    ca = os.path.join(work, "gate-ca.pem")
    proc = subprocess.Popen([lp, "gate", "--upstream", upstream, "--port", "0", "--tls-self-signed", ca,
                             "--upstream-api-key-env", "LAB_VLLM_KEY",
                             "--model-revision", REVISION, "--gpu-sku", GPU],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    first = proc.stderr.readline().strip()
    url = first.removeprefix("loadproof gate listening on ").split(" ")[0]
    check(url.startswith("https://"), f"the gate serves https ({first})")
    path = os.path.join(work, "receipt-tls-gate-vllm.receipt")
    try:
        res = subprocess.run([lp, "fire", plan_dir, "--endpoint", url, "--engine", "vllm",
                              "--python", os.environ["VLLM_LAB_PYTHON"],
                              "--tokenizer", os.environ["VLLM_LAB_TOKENIZER"], "--ca-cert", ca,
                              "--acquire-lease", "120", "--model-revision", REVISION, "--gpu-sku", GPU,
                              "--out", path], capture_output=True, env=os.environ)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"vllm bench serve over https through the gate (key held by the gate): exit {res.returncode}")
    check(res.returncode == 0, "the real bench client fired over TLS through the gate under its lease")
    audit = json.loads(subprocess.run([lp, "receipt", "audit", path, "--json"], capture_output=True,
                                      text=True).stdout)
    refused = sorted(n for n, s in audit["standings"].items() if not s["positive"])
    print(f"  audit: qualified={audit['qualified']} refused={refused}")
    check(not (set(refused) - ENVIRONMENTAL), f"no standing refused beyond the environmental ones ({refused})")
    no_secret(lp, key, path, [res.stdout, res.stderr], "vllm engine through the TLS gate")
    receipt = json.loads(open(path + ".v1.json").read())
    check(receipt["protocol"].get("tls", {}).get("verify") == "ca_cert", "protocol.tls records the private CA")

    direct = os.path.join(work, "receipt-api-key-native.receipt")
    res = subprocess.run([lp, "fire", plan_dir, "--endpoint", upstream, "--engine", "native",
                          "--tokenizer", os.environ["VLLM_LAB_TOKENIZER"], "--api-key-env", "LAB_VLLM_KEY",
                          "--out", direct], capture_output=True, env=env)
    print(f"native client straight at vLLM with --api-key-env: exit {res.returncode}")
    check(res.returncode == 0, "the native client fired at a key-protected vLLM with the key from the environment")
    audit = json.loads(subprocess.run([lp, "receipt", "audit", direct, "--json"], capture_output=True,
                                      text=True).stdout)
    check(audit["standings"]["counter_agreement"]["positive"], "the engine's counters agree with the client's")
    no_secret(lp, key, direct, [res.stdout, res.stderr], "native engine with --api-key-env")
    denied = subprocess.run([lp, "fire", plan_dir, "--endpoint", upstream, "--engine", "native",
                             "--out", os.path.join(work, "receipt-no-key.receipt")], capture_output=True, text=True)
    check(denied.returncode == 1 and "HTTP 401" in denied.stderr,
          f"without the key the endpoint answers 401: a receipt of an unreachable endpoint ({denied.stderr.strip()[-120:]})")


def main():
    lp, work, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    upstream = f"http://127.0.0.1:{port}"
    os.makedirs(work, exist_ok=True)
    # Ten requests 400 ms apart sharing a 64-token prefix (4 blocks of 16): light enough for two
    # CPU cores, shared enough for prefix caching to matter.
    trace = os.path.join(work, "prefix-trace.jsonl")
    with open(trace, "w") as f:
        for i in range(10):
            ids = [1, 2, 3, 4] + [100 + 10 * i + k for k in range(2 + i % 3)]
            f.write(json.dumps({"timestamp": 400 * i, "input_length": 16 * len(ids),
                                "output_length": 8, "hash_ids": ids}) + "\n")
    plan_dir = os.path.join(work, "plan-prefix")
    res = subprocess.run([lp, "plan", trace, "--out", plan_dir, "--chunk-size", "16",
                          "--model", os.environ.get("VLLM_LAB_SERVED_MODEL_NAME", "tiny-llama")],
                         capture_output=True, text=True)
    check(res.returncode == 0, f"plan of the prefix trace verified ({res.stderr.strip()[-200:]})")

    # The treatment arm (prefix caching on: the lab's default) runs first, on the server
    # real_vllm.sh started with the lab's defaults: one vLLM start (~75 s on 2 cores) fewer.
    # The baseline's server also holds an API key, which its gate sends upstream: the real
    # endpoints below run on it, one vLLM start fewer.
    key = "slow-tier-" + os.urandom(12).hex()
    env = {**os.environ, "LAB_VLLM_KEY": key}
    arms = {"treatment": ("true", []), "baseline": ("false", ["--no-enable-prefix-caching"])}
    receipts = {"baseline": [], "treatment": []}
    gate_port = free_port()
    # The gate's own key (issue 19): the party that runs the serving host signs what only it
    # sees; every receipt below must verify against its public half, and a reviewer who trusts
    # another key must refuse the window.
    gate_key = os.path.join(work, "gate.key")
    for stale in (gate_key, gate_key + ".pub"):
        if os.path.exists(stale):
            os.remove(stale)
    res = subprocess.run([lp, "key", "new", "--out", gate_key, "--comment", "loadproof gate of the slow tier"],
                         capture_output=True, text=True)
    check(res.returncode == 0 and res.stdout.startswith("loadproof-ed25519 "), "a key pair for the gate")
    other_key = os.path.join(work, "other.key")
    for stale in (other_key, other_key + ".pub"):
        if os.path.exists(stale):
            os.remove(stale)
    subprocess.run([lp, "key", "new", "--out", other_key], capture_output=True, text=True)
    for arm, (value, flags) in arms.items():
        if flags:
            serve(port, *flags, env={**os.environ, "VLLM_API_KEY": key})
        for rep in (1, 2):
            proc, url = gate(lp, upstream, gate_port, env if flags else None, gate_key)
            path = os.path.join(work, f"receipt-{arm}-{rep}.json")
            try:
                res = subprocess.run([lp, "fire", plan_dir, "--endpoint", url, "--engine", "native",
                                      "--tokenizer", os.environ["VLLM_LAB_TOKENIZER"],
                                      "--acquire-lease", "120", "--knob", f"enable_prefix_caching={value}",
                                      "--model-revision", REVISION, "--gpu-sku", GPU,
                                      "--out", path], capture_output=True, text=True)
            finally:
                proc.terminate()
                proc.wait(timeout=10)
            print(f"{arm} {rep}: fire exit {res.returncode}; {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ''}")
            audit = json.loads(subprocess.run([lp, "receipt", "audit", path, "--json"],
                                              capture_output=True, text=True).stdout)
            refused = sorted(n for n, s in audit["standings"].items() if not s["positive"])
            # Exit 1 is a run the client fell behind past fire's own bound: on 2 busy cores an
            # environmental refusal like the audit's arrival standing, reported, not failed.
            fell_behind = res.returncode == 1 and refused and set(refused) <= ENVIRONMENTAL
            check(res.returncode == 0 or fell_behind,
                  f"{arm} {rep}: fired through the gateway under its lease"
                  + (" (the client fell behind: environmental)" if fell_behind else ""))
            print(f"  audit: qualified={audit['qualified']} refused={refused}")
            for r in audit["refusals"]:
                print(f"    refused: {r[:170]}")
            check(not (set(refused) - ENVIRONMENTAL),
                  f"{arm} {rep}: no standing refused beyond the environmental ones ({refused})")
            signed = json.loads(subprocess.run([lp, "receipt", "audit", path, "--json", "--trust", gate_key + ".pub"],
                                               capture_output=True, text=True).stdout)
            att = signed["attestation"]
            print(f"  attestation with --trust gate.key.pub: {att['reason'][:160]}")
            check(att["level"] == "signed" and att["scrapes"]["by_trusted_key"] == att["scrapes"]["lessor_scrapes"] > 0,
                  f"{arm} {rep}: the lease and every during-run scrape verify against the gate's key")
            check(not signed["inconsistencies"], f"{arm} {rep}: no signature refused ({signed['inconsistencies'][:1]})")
            # The gate's account at release (issue 19): the scrapes it numbered for the holder, and
            # the tokens it counted from the usage vLLM streamed through it, equal to the client's.
            account = att.get("lease_account") or {}
            check(account.get("scrapes") == att["scrapes"]["numbered"] == att["scrapes"]["lessor_scrapes"],
                  f"{arm} {rep}: the gate numbered every scrape of its route and counted them at release")
            client = signed.get("client")
            if client:
                check(account.get("uncounted_requests") == 0
                      and account.get("prompt_tokens") == client["input_tokens"]
                      and account.get("completion_tokens") == client["output_tokens"],
                      f"{arm} {rep}: the gate counted the tokens it forwarded as the client did ({account.get('reason', '')[:160]})")
            untrusted = json.loads(subprocess.run([lp, "receipt", "audit", path, "--json", "--trust", other_key + ".pub"],
                                                  capture_output=True, text=True).stdout)
            check(untrusted["attestation"]["level"] == "self_attested" and not untrusted["standings"]["window"]["positive"],
                  f"{arm} {rep}: to a reviewer trusting another key, the window is refused")
            receipts[arm].append(path)

    book = os.path.join(work, "playbook.json")
    res = subprocess.run([lp, "playbook", "row", "--baseline", *receipts["baseline"],
                          "--treatment", *receipts["treatment"],
                          "--knob", "enable_prefix_caching=true", "--id", "real-vllm-prefix-caching",
                          "--playbook", book, "--window", "1"], capture_output=True, text=True)
    print(res.stdout.strip())
    print(res.stderr.strip())
    if res.returncode == 0:
        check(True, "a measured playbook row built from real-vLLM receipts")
    else:
        environmental = any(f"standing {n} " in res.stderr or f"{n}:" in res.stderr for n in ENVIRONMENTAL)
        check(res.returncode == 1 and environmental,
              "playbook row refused only for an environmental standing (arrival/occupancy on 2 cores)")

    real_endpoint(lp, work, upstream, plan_dir, key, env)

    if FAILURES:
        print(f"\n{len(FAILURES)} real-vLLM playbook checks FAILED:")
        for f in FAILURES:
            print("  *", f)
        return 1
    print("\nreal vLLM playbook: receipts fired through the lease gateway, the row built or refused by name")
    return 0


if __name__ == "__main__":
    sys.exit(main())

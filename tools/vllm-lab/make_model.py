#!/usr/bin/env python3
"""Build the vLLM lab's tiny random-weight Llama, offline and deterministically.

    make_model.py OUT_DIR [--max-pos N] [--corpus-glob GLOB]

--max-pos (max_position_embeddings) defaults to 131072: the Mooncake conversation trace's
longest row is 126,195 prompt + 332 output tokens (2.1% of its rows exceed 65,536).

Writes into OUT_DIR (created fresh; built in a sibling temp dir, then renamed):
  - a byte-level BPE tokenizer (vocab 2048, specials <s> </s> <pad>) trained with the
    `tokenizers` library on local text (default: the regular files in
    /usr/share/common-licenses, which every Debian system has), saved through
    transformers' PreTrainedTokenizerFast;
  - a LlamaConfig model (hidden 128, intermediate 256, 2 layers, 2 heads, bf16) with
    random weights from a fixed seed, saved with save_pretrained (config.json carries
    model_type "llama", so tokenizer loading is silent).

Nothing is fetched from a hub: this runs with HF_HUB_OFFLINE=1. Run it with the lab
venv's python (tools/vllm-lab/install.sh does).
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import sys
import tempfile

VOCAB_SIZE = 2048
SPECIALS = ["<s>", "</s>", "<pad>"]
SEED = 1234


def corpus_files(pattern):
    files = sorted(
        p for p in glob.glob(pattern) if os.path.isfile(p) and not os.path.islink(p)
    )
    if not files:
        sys.exit(f"make_model: no corpus files match {pattern!r}")
    return files


def train_tokenizer(files, max_pos):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=2,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )

    # Feed the text in a fixed order; the trainer is deterministic for a fixed input.
    def lines():
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as fh:
                yield from fh

    tok.train_from_iterator(lines(), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token=None,
        model_max_length=max_pos,
    )


def build(out_dir, max_pos, files):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)

    tokenizer = train_tokenizer(files, max_pos)
    vocab = len(tokenizer)  # 2048 incl. specials
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=max_pos,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
        torch_dtype="bfloat16",
    )
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.eval()

    parent = os.path.dirname(os.path.abspath(out_dir)) or "."
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tiny-llama.", dir=parent)
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        # Belt and braces: config.json must name the model type, or tokenizer loading
        # from this dir logs "Unrecognized model" errors.
        with open(os.path.join(tmp, "config.json")) as fh:
            cfg = json.load(fh)
        assert cfg.get("model_type") == "llama", cfg.get("model_type")
        params = sum(p.numel() for p in model.parameters())
        digest = hashlib.sha256()
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            with open(os.path.join(tmp, name), "rb") as fh:
                digest.update(fh.read())
        info = {
            "params": params,
            "vocab_size": vocab,
            "max_position_embeddings": max_pos,
            "seed": SEED,
            "corpus": [os.path.basename(f) for f in files],
            "sha256_config_weights_tokenizer": digest.hexdigest(),
        }
        with open(os.path.join(tmp, "lab_model_info.json"), "w") as fh:
            json.dump(info, fh, indent=2)
            fh.write("\n")
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        for name in os.listdir(tmp):
            os.chmod(os.path.join(tmp, name), 0o644)
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--max-pos", type=int, default=131072)
    ap.add_argument("--corpus-glob", default="/usr/share/common-licenses/*")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    info = build(args.out_dir, args.max_pos, corpus_files(args.corpus_glob))
    print(
        f"make_model: {args.out_dir}: {info['params']} params, vocab {info['vocab_size']}, "
        f"max_pos {info['max_position_embeddings']}, sha256 {info['sha256_config_weights_tokenizer'][:16]}"
    )


if __name__ == "__main__":
    main()

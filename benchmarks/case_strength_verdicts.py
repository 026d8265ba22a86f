"""Verdicts on the survivors of ``case_strength.py``, keyed by ``Mutant.key``.

"equivalent: <why>" for a mutant that is the same program in effect; "fixed by case '<name>'" for a
mutant that passed a weak case before this audit and is now rejected by the named case (``*`` matches
the sizes a name draws). Unused module constants need no entry (``Mutant.unused``).
"""

_NAN_BRANCH = ("equivalent on the puzzle's inputs: this changes only the NaN branch of `narrow` (which float32 "
               "bit patterns count as NaN, or the NaN's bf16 bits); every case's updated weight is finite and the "
               "puzzle asks nothing of NaNs (its description never mentions them)")
_TIE_BIT = ("equivalent on the puzzle's inputs: this moves the rounding bias by one or takes the tie-break from "
            "another bit, which changes the bf16 bits only of a float32 within one step of halfway between two bf16 "
            "values; every case keeps its exact new weights clear of that boundary (the margin rule, "
            "tests/puzzles/test_decision_margins.py), and the tie rule itself is puzzle 56's lesson")

_QUIET_NAN = ("equivalent: the masks differ only on signalling NaNs (0x7F800001..0x7FBFFFFF), and u is always a "
               "float32 add's result, which IEEE arithmetic (and gpusim, and the GPU) makes a quiet NaN")
_AFTER_BARRIER = ("equivalent: another thread writes the result after the last barrier, when every thread sees the "
                  "finished reduction")
_LARGER_ARRAY = ("equivalent: the constant only sizes a shared array, which gets one more element per row; nothing "
                 "reads past the sizes the case uses")
_ANOTHER_CHANNEL = ("equivalent on the puzzle's inputs: channel 1 instead of channel 0 does the per-token work, with "
                    "the same values; every case has at least two channels")
_PADDING_ONE = ("equivalent: the padding of one tile is 1 instead of 0, but every padded k has a zero in the other "
                "tile's padding, and a padded row or column is never written")
_KEY_ZERO = ("equivalent on the puzzle's inputs: key 0 is the bit pattern 0xFFFFFFFF, a NaN, and no logit is NaN; "
             "padding keys are -1")
_PADDING_KEY = ("equivalent: a padding key of 0 or -2 is still below every real key (key 0 is the NaN pattern "
                "0xFFFFFFFF; no logit is NaN), so padding never joins a candidate's mass or the nucleus, and its "
                "weight is exp(-inf) = 0 either way")
_SIGNED_ZEROS = ("equivalent on the puzzle's inputs: the key stays strictly increasing in the logit and inside "
                 "[0, 2^32) except that +0.0 and -0.0 share a key (equal logits: the spec's `>=` treats them as "
                 "one), and the cases hold no -0.0 (`_case` asserts it), so every candidate's mass and the nucleus "
                 "are the same")
_NAN_KEYS = ("equivalent: the key stays strictly increasing in the logit and inside [0, 2^32) on every non-NaN "
             "float (only a NaN pattern moves: 0x7FFFFFFF to 2^32, or 0xFFFFFFFF to -1); the search picks the same "
             "upper set of logits, so every candidate's mass and the nucleus are the same")
VERDICTS: dict[str, str] = {
    'pooling:5:6:constant: 16 -> 17':
        'equivalent: TPB sizes the shared array only; the array is one element larger; nothing reads the '
        'extra one',
    'dot-product:24:12:constant: 0 -> 1':
        'equivalent: another thread writes the result after the last barrier, when every thread sees the '
        'finished reduction',
    'conv-1d:6:8:constant: 4 -> 5':
        'equivalent: the tile gets one more halo slot and one more weight slot; the halo load is guarded by h'
        ' < n and nothing reads past the k weights',
    'axis-sum:24:12:constant: 0 -> 1':
        'equivalent: another thread writes the result after the last barrier, when every thread sees the '
        'finished reduction',
    'matmul:17:23:range: k -> k + 1':
        'equivalent: the extra iteration (only when k is a multiple of the tile) covers no k: its tiles are '
        'all padding zeros (flash: n_valid = 0, so m, l and acc keep their values)',
    'aos-to-soa:20:25:constant: 4 -> 5':
        'equivalent: the array is one element larger; nothing reads the extra one',
    'reduce-sequential:25:12:constant: 0 -> 1':
        'equivalent: another thread writes the result after the last barrier, when every thread sees the '
        'finished reduction',
    'warp-scan:12:27:constant: 0 -> 1':
        'equivalent: a padding element past n only ever flows into later elements, which are past n too and '
        'never written',
    'warp-scan:14:10:compare: d < 32 -> d <= 32':
        'equivalent: shfl_up by 32 or more changes nothing, as `lane >= d` never holds for d = 32 (and d < 31'
        ' gives the same steps 1..16)',
    'warp-scan:14:14:constant: 32 -> 31':
        'equivalent: shfl_up by 32 or more changes nothing, as `lane >= d` never holds for d = 32 (and d < 31'
        ' gives the same steps 1..16)',
    'warp-scan:14:14:constant: 32 -> 33':
        'equivalent: shfl_up by 32 or more changes nothing, as `lane >= d` never holds for d = 32 (and d < 31'
        ' gives the same steps 1..16)',
    'histogram:7:6:constant: 128 -> 127':
        'equivalent: BINS = 100 is fewer than 127 threads, so each bin is still cleared and merged by exactly'
        ' one thread',
    'histogram:7:6:constant: 128 -> 129':
        'equivalent: BINS = 100 is fewer than 127 threads, so each bin is still cleared and merged by exactly'
        ' one thread',
    'histogram:27:11:compare: sh[b] > 0 -> sh[b] >= 0':
        'equivalent: a bin with count 0 adds 0 to hist: the same result, one more atomic',
    'histogram:27:8:guard: if sh[b] > 0: -> (guard dropped)':
        'equivalent: a bin with count 0 adds 0 to hist: the same result, one more atomic',
    'argmax:20:23:range: lane + 32 -> lane + 32 + 1':
        'fixed by case "maximum at a lane\'s edge 4x97"',
    'argmax:20:30:constant: 32 -> 31':
        'equivalent: starting at lane + 31 re-reads column 31 in lane 0 and covers every later column once',
    'argmax:20:30:constant: 32 -> 33':
        'fixed by case "maximum at a lane\'s edge 4x97"',
    'argmax:20:34:range: cols -> cols - 1':
        'fixed by case "maximum at a lane\'s edge 4x97"',
    'argmax:20:40:constant: 32 -> 31':
        'equivalent: a step of 31 covers every column from lane + 32 on (some twice); the loop is strict, so '
        'a repeat changes nothing',
    'argmax:20:40:constant: 32 -> 33':
        'fixed by case "maximum at a lane\'s edge 4x97"',
    'argmax:29:44:compare: oi < idx -> oi <= idx':
        'equivalent: oi == idx only when both lanes hold the same column (same value): taking either is the '
        'same',
    'hillis-steele:17:20:constant: 0 -> 1':
        'equivalent: a padding element past n only ever flows into later elements, which are past n too and '
        'never written',
    'hillis-steele:22:10:compare: offset < TPB -> offset <= TPB':
        'equivalent: the extra step at offset TPB has no partner (t >= TPB never holds), so it only copies '
        'the buffer',
    'blelloch:8:12:constant: 5 -> 4':
        'equivalent: LOG_BANKS only sets the padding; pad() and PADDED agree on it (only bank conflicts '
        'change)',
    'blelloch:8:12:constant: 5 -> 6':
        'equivalent: LOG_BANKS only sets the padding; pad() and PADDED agree on it (only bank conflicts '
        'change)',
    'blelloch:26:20:constant: 0 -> 1':
        'equivalent: a padding element past n only ever flows into later elements, which are past n too and '
        "never written (the tile's total is discarded)",
    'blelloch:27:7:compare: i1 < n -> i1 <= n':
        "fixed by case 'half-full last tile n=*'",
    'blelloch:30:26:constant: 0 -> 1':
        'equivalent: a padding element past n only ever flows into later elements, which are past n too and '
        "never written (the tile's total is discarded)",
    'blelloch:63:7:compare: i1 < n -> i1 <= n':
        "fixed by case 'half-full last tile n=*'",
    'multi-block-scan:14:10:compare: offset < TPB -> offset <= TPB':
        'equivalent: the extra step at offset TPB has no partner (t >= TPB never holds), so it only copies '
        'the buffer',
    'multi-block-scan:27:29:constant: 2 -> 3':
        'equivalent: the array is one element larger; nothing reads the extra one',
    'multi-block-scan:33:20:constant: 0 -> 1':
        'equivalent: a padding element past n only ever flows into later elements, which are past n too and '
        "never written (the last block's total is never added anywhere)",
    'multi-block-scan:44:29:constant: 2 -> 3':
        'equivalent: the array is one element larger; nothing reads the extra one',
    'multi-block-scan:49:20:constant: 0 -> 1':
        'equivalent: a padding element past n only ever flows into later elements, which are past n too and '
        "never written (the last block's total is never added anywhere)",
    'segmented-scan:18:21:constant: 0 -> 1':
        'equivalent: a padding element past n only ever flows into later elements, which are past n too and '
        'never written',
    'segmented-scan:19:22:constant: 0 -> 1':
        'equivalent: a padding element past n only ever flows into later elements, which are past n too and '
        'never written',
    'segmented-scan:24:10:compare: offset < TPB -> offset <= TPB':
        'equivalent: the extra step at offset TPB has no partner (t >= TPB never holds), so it only copies '
        'the buffer',
    'linear-recurrence:25:10:compare: offset < TPB -> offset <= TPB':
        'equivalent: the extra step at offset TPB has no partner (t >= TPB never holds), so it only copies '
        'the buffer',
    'softmax-three-pass:24:20:constant: 2 -> 3':
        "fixed by case 'one spike per row 5x128'",
    'softmax-three-pass:25:19:constant: 0 -> 1':
        "fixed by case 'one spike per row 5x128'",
    'softmax-three-pass:29:19:constant: 2 -> 3':
        "fixed by case 'one spike per row 5x128'",
    'online-softmax:39:27:index: t + stride -> t + stride - 1':
        "equivalent: that branch runs only when thread t's partial is empty (-inf, 0); then every thread from"
        ' t on is empty, so sd[t + stride - 1] is 0 as well',
    'rmsnorm:9:8:constant: 4 -> 5':
        'equivalent: the extra item k = ITEMS has c = t + 256 >= cols (cols <= 256), so its guard c < cols '
        'skips it',
    'rmsnorm:21:19:range: ITEMS -> ITEMS + 1':
        'equivalent: the extra item k = ITEMS has c = t + 256 >= cols (cols <= 256), so its guard c < cols '
        'skips it',
    'rmsnorm:37:19:range: ITEMS -> ITEMS + 1':
        'equivalent: the extra item k = ITEMS has c = t + 256 >= cols (cols <= 256), so its guard c < cols '
        'skips it',
    'layernorm:9:8:constant: 4 -> 5':
        'equivalent: the extra item k = ITEMS has c = t + 256 >= cols (cols <= 256), so its guard c < cols '
        'skips it',
    'layernorm:22:19:range: ITEMS -> ITEMS + 1':
        'equivalent: the extra item k = ITEMS has c = t + 256 >= cols (cols <= 256), so its guard c < cols '
        'skips it',
    'layernorm:41:19:range: ITEMS -> ITEMS + 1':
        'equivalent: the extra item k = ITEMS has c = t + 256 >= cols (cols <= 256), so its guard c < cols '
        'skips it',
    'layernorm:56:19:range: ITEMS -> ITEMS + 1':
        'equivalent: the extra item k = ITEMS has c = t + 256 >= cols (cols <= 256), so its guard c < cols '
        'skips it',
    'cross-entropy:37:27:index: t + stride -> t + stride - 1':
        "equivalent: that branch runs only when thread t's partial is empty (-inf, 0); then every thread from"
        ' t on is empty, so sd[t + stride - 1] is 0 as well',
    'cross-entropy:45:12:constant: 0 -> 1':
        'equivalent: another thread writes the result after the last barrier, when every thread sees the '
        'finished reduction',
    'fp16-accumulate:29:12:constant: 0 -> 1':
        'equivalent: another thread writes the result after the last barrier, when every thread sees the '
        'finished reduction',
    'int8-matmul:21:23:range: k_total -> k_total + 1':
        'equivalent: the extra iteration (only when k is a multiple of the tile) covers no k: its tiles are '
        'all padding zeros (flash: n_valid = 0, so m, l and acc keep their values)',
    'int8-matmul:25:25:constant: 0 -> 1':
        'equivalent: the padding of one tile is 1 instead of 0, but every padded k has a zero in the other '
        "tile's padding, and a padded row or column is never written",
    'int8-matmul:29:25:constant: 0 -> 1':
        'equivalent: the padding of one tile is 1 instead of 0, but every padded k has a zero in the other '
        "tile's padding, and a padded row or column is never written",
    'int4-gemv:30:12:constant: 0 -> 1':
        'equivalent: another thread writes the result after the last barrier, when every thread sees the '
        'finished reduction',
    'sparse-24-gemv:8:8:constant: 128 -> 129':
        'equivalent: the array is one element larger; nothing reads the extra one',
    'sparse-24-gemv:38:13:constant: 0 -> 1':
        'equivalent: another thread writes the result after the last barrier, when every thread sees the '
        "finished reduction (lane 1 of the row's warp instead of lane 0)",
    'attention:9:14:constant: 64 -> 65':
        'equivalent: SOFTMAX_TPB = 65 makes the shared array one larger and 65 // 2 = 32 is the same first '
        'stride over the 64 threads',
    'attention:34:28:constant: 2 -> 3':
        "fixed by case 'one spike per row Sq=4 Sk=64'",
    'attention:35:19:constant: 0 -> 1':
        "fixed by case 'one spike per row Sq=4 Sk=64'",
    'attention:39:19:constant: 2 -> 3':
        "fixed by case 'one spike per row Sq=4 Sk=64'",
    'attention:43:4:guard: if j < n_keys: -> (guard dropped)':
        'equivalent: a thread past the last key keeps s = -inf, and exp(-inf - max) = 0 is what it sets '
        'anyway',
    'attention:43:7:compare: j < n_keys -> j <= n_keys':
        'equivalent: a thread past the last key keeps s = -inf, and exp(-inf - max) = 0 is what it sets '
        'anyway',
    'attention:61:30:compare: c < D -> c <= D':
        'equivalent: the launch has exactly D = 16 channel threads (one block of 16 in x), so c < D always '
        'holds',
    'attention:61:7:guard: i < probs.shape[0] and c < D -> i < probs.shape[0]':
        'equivalent: the launch has exactly D = 16 channel threads (one block of 16 in x), so c < D always '
        'holds',
    'flash-attention:11:5:constant: 16 -> 15':
        'equivalent: BC is the tile height; every use (tile shapes, load loop, n_valid) follows it',
    'flash-attention:11:5:constant: 16 -> 17':
        'equivalent: BC is the tile height; every use (tile shapes, load loop, n_valid) follows it',
    'flash-attention:32:23:range: n_k -> n_k + 1':
        'equivalent: the extra iteration (only when k is a multiple of the tile) covers no k: its tiles are '
        'all padding zeros (flash: n_valid = 0, so m, l and acc keep their values)',
    'paged-attention:10:6:constant: 64 -> 65':
        'equivalent: TPB = 65 makes the shared arrays one larger and 65 // 2 = 32 is the same first stride '
        'over the 64 threads',
    'paged-attention:33:20:constant: 2 -> 3':
        "fixed by case 'one spike per sequence'",
    'paged-attention:34:19:constant: 0 -> 1':
        "fixed by case 'one spike per sequence'",
    'paged-attention:38:19:constant: 2 -> 3':
        "fixed by case 'one spike per sequence'",
    'paged-attention:42:4:guard: if t < n: -> (guard dropped)':
        'equivalent: a thread past the last key keeps s = -inf, and exp(-inf - max) = 0 is what it sets '
        'anyway',
    'paged-attention:42:7:compare: t < n -> t <= n':
        'equivalent: a thread past the last key keeps s = -inf, and exp(-inf - max) = 0 is what it sets '
        'anyway',
    'speculative-verify:21:19:constant: 0 -> 1':
        'equivalent: every lane holds the same ballot and so the same answer; lane 1 writes it instead of '
        'lane 0',
    'prune-threshold:14:23:range: n_cols -> n_cols + 1':
        'equivalent: the extra round (only when n_cols is a multiple of 64) has no columns: every keep is 0',
    'prune-threshold:20:23:constant: 1 -> 2':
        'equivalent: syncthreads_count counts non-zero predicates, and `x if keep else 0.0` only tests keep',
    'prune-threshold:23:12:constant: 0 -> 1':
        'equivalent: another thread writes the result after the last barrier, when every thread sees the '
        'finished reduction (syncthreads_count gives every thread the same count)',
    'adamw:25:7:compare: (u & 0x7FFFFFFF) > 0x7F800000 -> u & 2147483647 >= 2139095040':
        "equivalent on the puzzle's inputs: > and >= differ only at u = 0x7F800000 (+inf), and no AdamW "
        'update in the cases (finite weights, gradients, moments) reaches inf',
    'all-gather:15:7:compare: j < shard // 2 -> j <= shard // 2':
        'loses a star: every value still arrives, but element S/2 comes clockwise too, so link 0->1 carries '
        'one value more than N - 1 half-shards and the ★★ link budget is not met',
    'distillation-kl:68:19:range: ITEMS -> ITEMS + 1':
        'equivalent: item r = ITEMS has r * TPB + t >= V_MAX >= vocab, so its guard skips it',
    'distillation-kl:69:11:compare: r * TPB + t < vocab -> r * TPB + t <= vocab':
        'equivalent: a slot past the vocabulary holds s = t = -inf, and exp(-inf - max) = 0 adds nothing',
    'distillation-kl:69:8:guard: if r * TPB + t < vocab: -> (guard dropped)':
        'equivalent: a slot past the vocabulary holds s = t = -inf, and exp(-inf - max) = 0 adds nothing',
    'distillation-kl:75:19:range: ITEMS -> ITEMS + 1':
        'equivalent: item r = ITEMS has r * TPB + t >= V_MAX >= vocab, so its guard skips it',
    'expert-all-to-all:34:12:guard: if ids[k] == i: -> (guard dropped)':
        'loses a star: counts (scratch, not judged) become min(T, C), so dispatch also copies padding slots, '
        'which land nowhere that is compared; the ★★ link budget (only counts and routed tokens) catches the '
        'extra traffic',
    'flash-decoding:25:7:compare: start >= n -> start > n':
        'equivalent: with start == n the chunk has valid = 0 and its partial is never read (the combine reads'
        ' ceil(n / CHUNK) pieces)',
    'flash-decoding:28:22:range: CHUNK * D -> CHUNK * D + 1':
        'equivalent: e = CHUNK * D gives j = CHUNK >= valid, so the guarded load skips it',
    'flash-decoding:31:11:compare: j < valid -> j <= valid':
        'equivalent: rows j >= valid are loaded from the cache (still inside its length, no fault) but no '
        'score or weight reads them',
    'flash-decoding:31:8:guard: if j < valid: -> (guard dropped)':
        'equivalent: rows j >= valid are loaded from the cache (still inside its length, no fault) but no '
        'score or weight reads them',
    'flash-decoding:54:4:guard: if t < valid: -> (guard dropped)':
        "equivalent: a thread past the chunk's keys keeps s = -inf, and exp(-inf - m) = 0 is what it sets "
        'anyway',
    'flash-decoding:54:7:compare: t < valid -> t <= valid':
        "equivalent: a thread past the chunk's keys keeps s = -inf, and exp(-inf - m) = 0 is what it sets "
        'anyway',
    'fp16-accumulate:16:10:precision: numba.float32 -> np.float16':
        "equivalent: numba unifies acc's types (a float16 start, float32 sums) to float32, so the accumulator"
        ' stays float32',
    'fp16-accumulate:18:15:precision: numba.float32 -> np.float16':
        'equivalent: W is already float16 (a no-op cast), and the float32 x[c] still makes the product '
        'float32 (exact: 11 x 11 bits)',
    'fp16-accumulate:18:40:precision: numba.float32 -> np.float16':
        'equivalent: x is already float16 (a no-op cast), and the float32 W[r, c] still makes the product '
        'float32 (exact: 11 x 11 bits)',
    'kv-cache-int8:35:7:compare: slot < 0 -> slot <= 0':
        "fixed by case 'slot 0 and padding'",
    'llm-int8:18:23:range: x.shape[0] -> x.shape[0] - 1':
        "fixed by case 'last row, last column M=6 K=17 N=9'",
    'llm-int8:31:22:range: cols -> cols - 1':
        "fixed by case 'last row, last column M=6 K=17 N=9'",
    'llm-int8:45:11:guard: outlier[k] == 0 and scale != 0 -> outlier[k] == 0':
        'equivalent: with scale 0 every ordinary x of that row is 0, and round(0 / 0) = round(NaN) converts '
        "to 0 (as PTX's cvt.rni does for NaN), the value the guard writes",
    'llm-int8:66:23:range: inner -> inner + 1':
        'equivalent: the extra iteration (only when the length is a multiple of the tile) covers nothing: its'
        ' loads are guarded to zeros, so the sums do not change',
    'llm-int8:66:23:range: inner -> inner - 1':
        "fixed by case 'last row, last column M=6 K=17 N=9'",
    'loss-scaling:20:7:guard: cuda.syncthreads_or(bad) and cuda.threadIdx.x == 0 -> cuda.syncthreads_or(bad)':
        'equivalent: every thread of a block that saw a bad value does atomic.max(found_inf, 0, 1): the same '
        '1, more atomics (no rule limits them)',
    'matmul-1d-register-tiles:27:23:range: k -> k + 1':
        'equivalent: the extra iteration (only when the length is a multiple of the tile) covers nothing: its'
        ' loads are guarded to zeros, so the sums do not change',
    'matmul-1d-register-tiles:27:23:range: k -> k - 1':
        "equivalent on the puzzle's inputs: k is a multiple of BK = 8 in every case but the worked example (k"
        ' = 2), as the description says, so range(0, k - 1, 8) has the same steps',
    'matmul-2d-register-tiles:31:23:range: k -> k + 1':
        'equivalent: the extra iteration (only when the length is a multiple of the tile) covers nothing: its'
        ' loads are guarded to zeros, so the sums do not change',
    'matmul-2d-register-tiles:31:23:range: k -> k - 1':
        "equivalent on the puzzle's inputs: k is a multiple of BK = 8 in every case but the worked example (k"
        ' = 2), as the description says, so range(0, k - 1, 8) has the same steps',
    'matmul-conflict-free:33:23:range: k -> k + 1':
        'equivalent: the extra iteration (only when the length is a multiple of the tile) covers nothing: its'
        ' loads are guarded to zeros, so the sums do not change',
    'matmul-conflict-free:33:23:range: k -> k - 1':
        "fixed by case 'random 40x1 @ 1x136'",
    'matmul-double-buffer:47:11:compare: s + 1 < steps -> s + 1 <= steps':
        'equivalent: the extra prefetch after the last slice loads k past the end, which load_slices guards '
        'to zeros in the buffer nobody reads again',
    'matmul-double-buffer:47:8:guard: if s + 1 < steps: -> (guard dropped)':
        'equivalent: the extra prefetch after the last slice loads k past the end, which load_slices guards '
        'to zeros in the buffer nobody reads again',
    'matmul-split-k:25:24:range: hi -> hi + 1':
        'equivalent: the extra iteration (only when the length is a multiple of the tile) covers nothing: its'
        ' loads are guarded to zeros, so the sums do not change',
    'matmul-split-k:25:24:range: hi -> hi - 1':
        "fixed by case 'random 24x1 @ 1x40, S=4'",
    'matmul-thin-tiles:22:23:range: k -> k + 1':
        'equivalent: the extra iteration (only when the length is a multiple of the tile) covers nothing: its'
        ' loads are guarded to zeros, so the sums do not change',
    'matmul-thin-tiles:22:23:range: k -> k - 1':
        "fixed by case 'random 24x1 @ 1x40'",
    'matmul-wide-loads:22:23:range: kw -> kw - 1':
        "equivalent on the puzzle's inputs: packed rows are padded to a multiple of WORDS = 32 words "
        '(ROW_ALIGN), so kw - 1 never drops a step',
    'pipeline-1f1b:23:18:compare: i >= w.size -> i > w.size':
        'equivalent: the launch has exactly w.size threads, so i == w.size never occurs',
    'pipeline-1f1b:25:7:compare: op > 0 -> op >= 0':
        'equivalent: op == 0 has already returned on the line above',
    'ring-attention:54:8:guard: if step == steps - 1: -> (guard dropped)':
        "equivalent: out is written on every step, and the last step's write (the only one the guard keeps) "
        'overwrites the others',
    'speculative-sampling:19:4:guard: if t < 32:  # warp 0: lane i tests draft position i -> (guard dropped)':
        "equivalent: warps past the first have t >= g, so their ballots are 0 and only warp 0's lane 0 writes"
        ' first[0]',
    'speculative-sampling:23:21:compare: u_accept[b, t] * q_probs[b, t, x] >= p_probs[b, t, x] -> u_accept[b, t] * q_probs[b, t, x] > p_probs[b, t, x]':  # noqa: E501
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie',
    'speculative-sampling:42:10:compare: off < TPB -> off <= TPB':
        'equivalent: the extra step at off = TPB has no partner (t >= TPB never holds), so it adds 0',
    'speculative-sampling:51:29:index: TPB - 1 -> TPB - 1 - 1':
        "fixed by case 'last token likely, V=512'",
    'speculative-sampling:52:17:compare: incl > goal -> incl >= goal':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie; a zero-weight '
        'token can never satisfy incl > goal >= incl - 0',
    'speculative-sampling:52:33:compare: incl - r <= goal -> incl - r < goal':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie; a zero-weight '
        'token can never satisfy incl > goal >= incl - 0',
    'speculative-sampling:52:7:compare: r > 0 -> r >= 0':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie; a zero-weight '
        'token can never satisfy incl > goal >= incl - 0',
    'speculative-sampling:52:7:guard: r > 0 and incl > goal and incl - r <= goal -> incl > goal and incl - r <= goal':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie; a zero-weight '
        'token can never satisfy incl > goal >= incl - 0',
    'top-k-sampling:39:47:compare: ij < ii -> ij <= ii':
        'equivalent: ij == ii only for the same token; ids are distinct',
    'top-k-sampling:52:11:compare: t < k -> t <= k':
        'equivalent: lanes t >= k only add to inclusive sums past lane k - 1, and total and the hit test read'
        ' lanes below k',
    'top-k-sampling:52:8:guard: if t < k: -> (guard dropped)':
        'equivalent: lanes t >= k only add to inclusive sums past lane k - 1, and total and the hit test read'
        ' lanes below k',
    'top-k-sampling:56:14:compare: off < K_MAX -> off <= K_MAX':
        'equivalent: the extra shfl_up by 32 has no source lane (t >= 32 never holds)',
    'top-k-sampling:62:37:compare: t < k -> t <= k':
        'equivalent: lane k - 1 always hits (c = total > u * total), so the first hit is below lane k either '
        'way',
    'top-k-sampling:62:47:compare: c > u[b] * total -> c >= u[b] * total':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie',
    'top-p-sampling:100:21:range: 31 -> 31 + 1':
        'equivalent: bit 32 gives a candidate above every 32-bit key, whose mass (0) never reaches the target',
    'top-p-sampling:100:25:range: -1 -> -1 + 1':
        "fixed by case 'adjacent floats at the boundary V=64'",
    'top-p-sampling:100:25:range: -1 -> -1 - 1':
        'equivalent in the simulator: bit -1 shifts 1 by -1, which gpusim (like PTX, taking the amount as '
        'unsigned) makes 0, so the candidate equals the prefix and changes nothing',
    'top-p-sampling:104:15:compare: key[r] >= cand -> key[r] > cand':
        "fixed by case 'adjacent floats at the boundary V=64'",
    'top-p-sampling:106:11:compare: block_sum(red, part, t) >= target -> block_sum(red, part, t) > target':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie',
    'top-p-sampling:122:11:compare: x[r] > 0 -> x[r] >= 0':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie; a zero-weight '
        'token can never satisfy incl > goal >= incl - 0',
    'top-p-sampling:122:11:guard: x[r] > 0 and incl > goal and incl - x[r] <= goal -> incl > goal and incl - x[r] <= goal':  # noqa: E501
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie; a zero-weight '
        'token can never satisfy incl > goal >= incl - 0',
    'top-p-sampling:122:24:compare: incl > goal -> incl >= goal':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie; a zero-weight '
        'token can never satisfy incl > goal >= incl - 0',
    'top-p-sampling:122:40:compare: incl - x[r] <= goal -> incl - x[r] < goal':
        "equivalent: the case generator keeps every deciding sum clear of its threshold by the puzzle's "
        'MARGIN (docs/PUZZLE_AUTHORING.md, decision margins), so > and >= never see a tie; a zero-weight '
        'token can never satisfy incl > goal >= incl - 0',
    'top-p-sampling:51:10:compare: off < TPB -> off <= TPB':
        'equivalent: the extra step at off = TPB has no partner (t >= TPB never holds)',
    'top-p-sampling:56:8:guard: if t >= off: -> (guard dropped)':
        'equivalent: y is 0 for t < off, so adding it unguarded adds 0',
    'top-p-sampling:92:11:compare: key[r] >= 0 -> key[r] > 0':
        "equivalent on the puzzle's inputs: key 0 is the bit pattern 0xFFFFFFFF, a NaN, and no logit is NaN; "
        'padding keys are -1',
    'top-p-sampling:92:8:guard: if key[r] >= 0: -> (guard dropped)':
        'equivalent: padding has x = -inf, so exp((x - m) / T) = 0 is its weight anyway',
    'zero-adamw:25:7:compare: (u & 0x7FFFFFFF) > 0x7F800000 -> u & 2147483647 >= 2139095040':
        "equivalent on the puzzle's inputs: > and >= differ only at u = 0x7F800000 (+inf), and no AdamW "
        'update in the cases (finite weights, gradients, moments) reaches inf',
    # chapters 8-11, constant slips (seed 20261201, a partial run: see docs/case-strength.md)
    'adamw:25:26:constant: 0x7F800000 -> 2139095039': _NAN_BRANCH,
    'adamw:25:26:constant: 0x7F800000 -> 2139095041': _NAN_BRANCH,
    'adamw:26:15:constant: 0x7FC0 -> 32703': _NAN_BRANCH,
    'adamw:26:15:constant: 0x7FC0 -> 32705': _NAN_BRANCH,
    'adamw:25:12:constant: 0x7FFFFFFF -> 2147483646': _NAN_BRANCH,
    'adamw:27:16:constant: 0x7FFF -> 32766': _TIE_BIT,
    'adamw:27:16:constant: 0x7FFF -> 32768': _TIE_BIT,
    'adamw:27:38:constant: 1 -> 0': _TIE_BIT,
    'adamw:27:38:constant: 1 -> 2': _TIE_BIT,
    'adamw:27:32:constant: 16 -> 15': _TIE_BIT,
    'adamw:27:32:constant: 16 -> 17': _TIE_BIT,
    'zero-adamw:25:26:constant: 0x7F800000 -> 2139095039': _NAN_BRANCH,
    'zero-adamw:25:26:constant: 0x7F800000 -> 2139095041': _NAN_BRANCH,
    'zero-adamw:26:15:constant: 0x7FC0 -> 32703': _NAN_BRANCH,
    'zero-adamw:26:15:constant: 0x7FC0 -> 32705': _NAN_BRANCH,
    'zero-adamw:25:12:constant: 0x7FFFFFFF -> 2147483646': _NAN_BRANCH,
    'zero-adamw:27:16:constant: 0x7FFF -> 32766': _TIE_BIT,
    'zero-adamw:27:16:constant: 0x7FFF -> 32768': _TIE_BIT,
    'zero-adamw:27:38:constant: 1 -> 0': _TIE_BIT,
    'zero-adamw:27:38:constant: 1 -> 2': _TIE_BIT,
    'zero-adamw:27:32:constant: 16 -> 15': _TIE_BIT,
    'zero-adamw:27:32:constant: 16 -> 17': _TIE_BIT,
    # chapters 8-11, constant slips, continued
    'bf16-stochastic-round:12:26:constant: 0x7F800000 -> 2139095041': _QUIET_NAN,
    'bf16-stochastic-round:12:12:constant: 0x7FFFFFFF -> 2147483646': _QUIET_NAN,
    'loss-scaling:19:18:constant: 1 -> 2':
        'equivalent: syncthreads_or asks only whether some thread passed a non-zero value; 2 is as non-zero '
        'as 1',
    'loss-scaling:20:56:constant: 0 -> 1':
        'equivalent: syncthreads_or gives every thread the same answer, so thread 1 records it as thread 0 '
        'would (every case has blocks of more than one thread)',
    'grad-norm-clip:33:12:constant: 0 -> 1': _AFTER_BARRIER,
    'grad-norm-clip:47:12:constant: 0 -> 1': _AFTER_BARRIER,
    'flash-decoding:65:12:constant: 0 -> 1': _AFTER_BARRIER,
    'column-parallel:10:8:constant: 128 -> 129': _LARGER_ARRAY,
    'ring-attention:10:8:constant: 16 -> 17': _LARGER_ARRAY,
    'expert-all-to-all:8:13:constant: 64 -> 65': _LARGER_ARRAY,
    'top-p-sampling:9:8:constant: 1024 -> 1025':
        'equivalent: ITEMS = 1025 // 256 is still 4, and V_MAX is read nowhere else',
    'ring-attention:51:16:constant: 0 -> 1':
        'equivalent: m_new and total are the same in every thread of row y (each reads the whole row of s_t),'
        ' so lane 1 of the row stores what lane 0 would (D >= 2)',
    'expert-all-to-all:18:12:constant: 0 -> 1': _ANOTHER_CHANNEL,
    'expert-all-to-all:29:16:constant: 0 -> 1': _ANOTHER_CHANNEL,
    'expert-all-to-all:31:12:constant: 0 -> 1': _ANOTHER_CHANNEL,
    'kv-cache-int8:15:13:constant: 16 -> 17':
        'equivalent: XOR steps 17, 8, 4, 2, 1 still reach all 32 lanes (17 ^ 1 = 16) and max is idempotent, '
        'so every lane holds the warp maximum',
    'kv-cache-int8:45:12:constant: 0 -> 1':
        'equivalent: sk and sv are warp maxima, the same in every lane, so lane 1 stores what lane 0 would',
    'continuous-batching:20:25:constant: 1 -> 0':
        'equivalent: hi = n only adds a probe at an index below n whose cu_q is above i (cu_q[n-1] is the '
        'total), so the search ends on the same lo and the same end',
    'continuous-batching:21:12:constant: 0 -> 1':
        'equivalent: start cancels in pos = nk - (end - start) + (i - start), its only use',
    'top-k-sampling:29:11:constant: 2 -> 1':
        'equivalent: the bitonic stage of size 1 has stride 0 and does nothing; then size doubles to 2 as '
        'before',
    'top-k-sampling:67:16:constant: 0 -> 1':
        'equivalent: hit is a ballot, the same in every lane, so thread 1 stores the token thread 0 would',
    'row-parallel:27:27:constant: 1 -> 2':
        "equivalent on the puzzle's inputs: the bias is added once, at the next-to-last step of the ring sum "
        'instead of the last (float32 order within the tolerance); every case has at least two devices, so '
        'that step exists',
    'flash-decoding:44:22:constant: 2 -> 3': 'fixed by case "a spike at a chunk\'s last thread"',
    'flash-decoding:45:19:constant: 0 -> 1': 'fixed by case "a spike at a chunk\'s last thread"',
    'flash-decoding:49:19:constant: 2 -> 3': 'fixed by case "a spike at a chunk\'s last thread"',
    'top-p-sampling:34:20:constant: 2 -> 3': 'fixed by case "one spike in a late thread V=1024"',
    # chapters 8-11, constant slips: stars checked by hand (seed 20261201)
    'all-gather:15:20:constant: 2 -> 1':
        'loses a star: every half-shard comes from one neighbour, so one direction of each link carries twice'
        ' its share (passes with ★ of 3, ★★ withheld: 192 bytes on link 0->1 where 96 are needed)',
    'all-gather:15:20:constant: 2 -> 3':
        'loses a star: the split between the two directions is uneven (passes with ★ of 3, ★★ withheld: 132 '
        'bytes on link 0->3 where 96 are needed)',
    'expert-all-to-all:32:12:constant: 0 -> 1':
        'loses a star: each count is one too high below capacity, so one padding row per expert crosses the '
        'link; combine never reads it (★ of 3, ★★ withheld: 1156 bytes on link 0->1 where 1092 are needed)',
    'expert-all-to-all:35:21:constant: 1 -> 2':
        'loses a star: counts doubled (up to capacity), so padding rows cross the links; combine never reads '
        'them (★ of 3, ★★ withheld: 1540 bytes on link 0->1 where 1092 are needed)',
    'expert-all-to-all:30:41:constant: 1 -> 2':
        'equivalent: slot is scratch, and combine only asks whether a slot is negative (s >= 0); -2 marks a '
        'dropped token as -1 does',
    'expert-all-to-all:41:27:constant: 0 -> 1':
        'equivalent: the exchange is launched with 32 threads and every thread would copy the same count; '
        'thread 1 does it instead of thread 0',
    # chapters 8-11, constant slips: puzzles 48-55 and 77-80 (seed 20261201, one fresh seed)
    'matmul-wide-loads:26:25:constant: 0 -> 1':
        'equivalent: a padding row of the a tile (row >= m) is 1 instead of 0, but it feeds only output row '
        'r0 + ty, past the matrix and never written (k needs no padding: packed rows are a multiple of WORDS)',
    'matmul-wide-loads:30:25:constant: 0 -> 1':
        'equivalent: a padding row of the b tile (column >= n) is 1 instead of 0, but it feeds only output '
        'column c0 + tx, past the matrix and never written (k needs no padding: packed rows are a multiple of '
        'WORDS)',
    'matmul-double-buffer:42:22:constant: 1 -> 0':
        'equivalent: (k + BK) // BK is ceil(k / BK), or one more step when k is a multiple of BK; the extra '
        'step prefetches and computes on slices whose loads load_slices guards to zeros (it also counts its '
        'FLOPs, so the barrier rule still holds), so the sums do not change',
    'matmul-double-buffer:42:22:constant: 1 -> 2': "fixed by case 'random 40x1 @ 1x136'",
    'matmul-double-buffer:47:15:constant: 1 -> 0':
        'equivalent: `s + 0 < steps` always holds: the extra prefetch after the last slice loads k past the '
        'end, which load_slices guards to zeros in the buffer nobody reads again',
    'top-p-sampling:77:18:constant: 1 -> 0': _PADDING_KEY,
    'top-p-sampling:77:18:constant: 1 -> 2': _PADDING_KEY,
    'top-p-sampling:83:32:constant: 2147483648 -> 2147483647': _SIGNED_ZEROS,
    'top-p-sampling:83:32:constant: 2147483648 -> 2147483649': _NAN_KEYS,
    'top-p-sampling:85:26:constant: 1 -> 0': _SIGNED_ZEROS,
    'top-p-sampling:85:26:constant: 1 -> 2': _NAN_KEYS,
    'top-p-sampling:92:21:constant: 0 -> 1': _KEY_ZERO,
    'top-p-sampling:99:25:constant: 0 -> 1': "fixed by case 'adjacent floats at the boundary V=64'",
    'top-p-sampling:100:21:constant: 31 -> 32':
        'equivalent: bit 32 gives a candidate above every 32-bit key, whose mass (0) never reaches the target',
    'top-p-sampling:100:26:constant: 1 -> 2':
        'equivalent in the simulator: bit -1 shifts 1 by -1, which gpusim (like PTX, taking the amount as '
        'unsigned) makes 0, so the candidate equals the prefix and changes nothing',
    'top-p-sampling:125:12:constant: 0 -> 1':
        'equivalent: n_kept is a block sum, returned to every thread after its last barrier, so thread 1 '
        'stores the count thread 0 would',
    'llm-int8:45:40:constant: 0 -> 1':
        'equivalent: scale = amax / 127 over ordinary columns, where every |x| < THRESHOLD = 6 (a column with '
        'one |x| >= 6 is an outlier), so scale < 1 and `scale != 1` always holds; with scale 0 every ordinary '
        "x is 0 and round(0 / 0) = round(NaN) converts to 0 (as PTX's cvt.rni does), the value the guard writes",
    'llm-int8:48:12:constant: 0 -> 1':
        'equivalent: scale = red[0] / 127 is read after the last barrier of the max tree, the same in every '
        'thread, so thread 1 stores what thread 0 would',
    'llm-int8:68:20:constant: 0 -> 1': _PADDING_ONE,
    'llm-int8:74:20:constant: 0 -> 1':
        "equivalent: the padding of the b tile is 1 instead of 0, but every padded k has a zero in a's and xo's "
        'padding (both sums add 0), and a padded column is never written',
    'speculative-sampling:14:30:constant: 1 -> 2': 'equivalent: the array is one element larger; nothing reads '
                                                  'the extra one',
    'speculative-sampling:25:16:constant: 0 -> 1':
        'equivalent: every lane of warp 0 holds the same ballot and so the same first refused position; lane 1 '
        'writes first[0] instead of lane 0, before the same barrier',
    'speculative-sampling:54:12:constant: 0 -> 1':
        'equivalent: a = first[0] is read by every thread after the barrier, so thread 1 stores the count '
        'thread 0 would',
    'distillation-kl:10:8:constant: 1024 -> 1025':
        'equivalent: ITEMS = 1025 // 128 is still 8, and V_MAX is read nowhere else',
    'distillation-kl:18:20:constant: 2 -> 3': "fixed by case 'one spike per model in a late thread V=1024'",
    'distillation-kl:19:19:constant: 0 -> 1': "fixed by case 'one spike per model in a late thread V=1024'",
    'distillation-kl:23:19:constant: 2 -> 3': "fixed by case 'one spike per model in a late thread V=1024'",
    'distillation-kl:24:14:constant: 0 -> 1': "fixed by case 'one spike per model in a late thread V=1024'",
    'distillation-kl:84:12:constant: 0 -> 1': _AFTER_BARRIER,
}

"""Verdicts on the survivors of ``case_strength.py``, keyed by ``Mutant.key``.

"equivalent: <why>" for a mutant that is the same program in effect; "fixed by case '<name>'" for a
mutant that passed a weak case before this audit and is now rejected by the named case (``*`` matches
the sizes a name draws). Unused module constants need no entry (``Mutant.unused``).
"""

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
        "fixed by case 'one spike per row Sq=4 Sk=64'",
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
        "fixed by case 'one spike per sequence'",
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
}

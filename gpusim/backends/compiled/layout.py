"""The numbers generated kernels, the run-time helpers and the driver agree on: slots of the state arrays, the
columns of the fault log, the site staging rows and the trace rows.

Every index here is used by name in ``rtlib.py`` (compiled helpers), ``codegen`` (the generated source) and
``driver.py`` (which turns the arrays into a ``LaunchReport``), so a change here changes all three at once.
"""

from __future__ import annotations

# -- I: the launch's mutable scalars (int64) -------------------------------------------------------------
I_NOW = 0          # the race tracker's clock: one tick per access group, two per barrier
I_STEPS = 1        # loop iterations of the current chunk (the step budget)
I_TSTEP = 2        # the phase trace's step counter (one per access group and per barrier)
I_TREC = 3         # trace rows kept
I_TDROP = 4        # lane-accesses the trace left out
I_FLOG = 5         # rows in the fault log
I_ABORT = 6        # non-zero: a fatal fault ended the launch
I_PAIRS = 7        # (thread, element) pairs counted for the distinct counts
I_PAIRS_N = 8      # pair keys stored
I_DISTINCT = 9     # 1 while the distinct counts are kept
I_BLOG = 10        # barrier records of the trace
I_BBLK = 11        # block ids stored for those records
I_STATIC = 12      # static shared bytes declared so far
I_ALOG = 13        # array creations logged
I_PRINT = 14       # print rows buffered
I_RNOW = 15        # the latency rounds' clock: one tick per access event and per barrier (``rt_rounds``)
I_RPASS = 16       # shared-atomic passes (``gpusim__shared_atomic_passes``)
I_SIZE = 18

# -- G: the launch's constants (int64) -------------------------------------------------------------------
G_T = 0            # threads per block
G_BDX, G_BDY, G_BDZ = 1, 2, 3
G_GDX, G_GDY, G_GDZ = 4, 5, 6
G_NW = 7           # warps per block
G_NBLOCKS = 8
G_PER_CHUNK = 9    # blocks per chunk
G_MAX_STEPS = 10
G_TMAX_BLOCKS = 11  # trace: blocks recorded (-1: all)
G_TMAX_ROWS = 12    # trace: lane-accesses recorded (-1: all)
G_NTHREADS = 13
G_SHARED_MEM = 14   # dynamic shared memory bytes per block
G_TRACE = 15        # 1 when the phase trace is recorded
G_NLINES = 16       # race fault keys: (site key) * G_NLINES + other line
G_B0 = 17           # the blocks this run covers: [G_B0, G_B1) (a range of whole chunks)
G_B1 = 18
G_SIZE = 24

# -- the fault log: one row per fault key, the first time it is hit --------------------------------------
F_KEY, F_KIND, F_GTID = 0, 1, 2
F_P = 3            # payload columns F_P .. F_P + 12
F_COLS = 16

FK_OOB = 1          # p: slot, access (0 read, 1 write, 2 atomic), dim, ndim, index[0..3]
FK_UNINIT = 2       # p: slot, element
FK_RACE = 3         # p: slot, element, other gtid, other line, hazard
FK_DIVZERO = 4
FK_TRAP = 5         # p: message id
FK_ZEROSTEP = 6
FK_TIMEOUT = 7
FK_TUPLE = 8        # p: index, tuple length
FK_BARRIER = 9      # p: missing thread's gtid, arrived, live
FK_MASK_OUT = 10    # p: laneid, mask, what id
FK_MASK_MISS = 11   # p: needed lanes, executing lanes, what id
FK_SHFL_SRC = 12    # p: laneid, source lane, source exited, shuffle kind id
FK_UNBOUND = 13     # p: variable id (a GRID local read before any assignment)
FK_NONE = 14        # a lane local read before every thread assigned it

# -- per-site staging of one region execution (int64 rows) ----------------------------------------------
S_OOB, S_OOB_LANE, S_OOB_DIM = 0, 1, 2
S_OOB_IDX = 3      # 3..6
S_UN, S_UN_LANE, S_UN_ELEM = 7, 8, 9
S_RACE, S_RACE_LANE, S_RACE_ELEM, S_RACE_OTID, S_RACE_OLINE, S_RACE_HAZ = 10, 11, 12, 13, 14, 15
S_LANES = 16       # active, in-bounds lanes that accessed (the access group's size)
S_Z, S_Z_LANE, S_Z_VAL = 17, 18, 19   # a division by zero / tuple index fault of a value site
S_COLS = 20

# -- per-site totals over the launch (int64) ------------------------------------------------------------
T_REQ, T_SECT, T_IDEAL, T_BYTES, T_LANES, T_EVENTS = 0, 1, 2, 3, 4, 5
T_COLS = 6

# site kinds of the warp-level request model
W_NONE = 0          # no requests counted (local, const, shared atomics)
W_GLOBAL = 1        # global load or store
W_ATOMIC = 2        # global atomic, served in rounds
W_AGG = 3           # integer global atomic at a uniform address: one lane per warp
W_SHARED = 4        # shared load or store: wavefronts, bank conflicts

# -- trace rows (int64): the fields of gpusim.observe.trace.ACCESS_DTYPE, the array as a slot --------------
R_STEP, R_BLOCK, R_THREAD, R_PHASE, R_SLOT, R_ELEM, R_KIND, R_LINE = range(8)
R_COLS = 8

# flops: ops and dtypes, the indices of the FL counters
FLOP_OPS = ("add", "sub", "mul", "div", "fma", "special")
FLOP_DTYPES = ("float16", "float32", "float64")

# the warp operations a mask fault can name
WHAT = ("syncwarp()", "shfl_sync()", "shfl_up_sync()", "shfl_down_sync()", "shfl_xor_sync()", "ballot_sync()",
        "any_sync()", "all_sync()", "eq_sync()", "match_any_sync()", "match_all_sync()")
SHUFFLE_KINDS = ("idx", "up", "down", "xor")

# -- static parameters of an access site (a row of SP, int64) ------------------------------------------------
P_KIND = 0         # 0 read, 1 write, 2 atomic
P_LINE = 1
P_UNINIT = 2       # reads are checked for initialisation (shared)
P_SPACE = 3        # 0 global, 1 shared, 2 local, 3 const
P_ISZ = 4          # element size in bytes
P_SLOT = 5
P_TKIND = 6        # the trace's kind code: ld, st, atom, red
P_ESIZE = 7        # elements of the array per block (shared) or per lane (local)
P_READS = 8        # counts as a read (loads, atomics)
P_WRITES = 9       # counts as a write (stores, atomics)
P_INSTR = 10       # metrics and counts on
P_TRACE = 11       # trace on
P_SITE = 12        # the site's row in SS, SW, SN, SB, SL
P_KOOB = 13        # fault keys: out of bounds, uninitialised read, race (base)
P_KUNINIT = 14
P_KRACE = 15
P_ACCESS = 16      # 0 read, 1 write, 2 atomic (for the fault's wording)
P_NDIM = 17
P_RSITE = 18       # the latency rounds' load site: one per (array, line), as ``RoundsObserver`` keys them
P_COLS = 19
SPACE_CODES = {"global": 0, "shared": 1, "local": 2, "const": 3}

# -- DESC: where the compiled helpers find the launch's arrays (int64 triples: address, rows, columns) ------
DESC_NAMES = ("G", "I", "BT", "WBT", "PH", "FLOG", "FSEEN", "FCNT", "RSEEN", "RCNT", "SS", "SCR", "FL", "FLT", "TS",
              "RC", "RS", "PK", "BASE", "SEG0", "SHB", "SP", "EV", "EL", "gw_", "ln_", "TR", "BLOG", "BBLK",
              "present_", "RW", "RB", "RSS")
DESC_INDEX = {name: k for k, name in enumerate(DESC_NAMES)}
SLOT_ARRAYS = ("w", "a", "r", "lw", "cr", "cw", "er", "ew", "sr", "sw", "rt", "rc")
SLOT_BASE = len(DESC_NAMES)

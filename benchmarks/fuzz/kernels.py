"""Kernels for the fuzzer, from a grammar: ``kernel_case(rng, family)``.

The ``valid`` family writes numba-cuda as a learner would: typed locals (ints and floats, all assigned
before use), arithmetic, comparisons, ``and``/``or``/``not``, conditional expressions, casts, ``math``
functions, ``if``/``elif``/``else``, ``for range`` (1-3 arguments), guarded ``while`` loops with ``break`` and
``continue``, early ``return``, stores guarded by bounds (and some that are not), atomics, shared and local
arrays, barriers (some of them divergent), warp intrinsics, device functions calling each other, 1-D and
2-D launches. Its kernels are valid numba-cuda; they may still fault (a race, an unguarded index, a divergent
barrier): a fault is a clean result.

The other families are built to break things, each on a valid skeleton:

* ``arity``    calls with too few, too many or keyword arguments (builtins, ``math``, casts, ``cuda.*``,
               atomics, device functions);
* ``const``    constants that folding must report, not raise on: ``1 // 0``, ``1 << -1``, ``10**30``, 2^64,
               ``1e999``, ``int(math.inf)``, module constants out of range;
* ``nesting``  a 50-1000 term expression, deeply nested parentheses, ``if``s, loops, conditional
               expressions, long ``elif`` chains, thousands of statements;
* ``devchain`` chains of 10-1200 device functions, wide call trees, recursion (direct and mutual);
* ``invalid``  Python that numba-cuda does not compile (lists, strings, ``try``, ``lambda``, a kernel that
               returns a value, undefined names, slicing, ...) and numba behaviour at the edges
               (``range(1.5)``, ``math.frexp``, float16 atomics, static then dynamic shared arrays, poles of
               ``math.gamma``).
"""

from __future__ import annotations

import random

from .cases import Case

HEADER = "import math\n\nimport numba\nimport numpy as np\nfrom numba import cuda\n"
A_LEN = 64          # the input array's length
OUT_LEN = 256       # the output's length: at least the threads of a valid launch
INT_VARS = ("t", "k")
FLOAT_VARS = ("x", "y")
FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int32", "int64")


class KernelWriter:
    """Writes one kernel's body, statement by statement, keeping track of what is in scope."""

    def __init__(self, rng: random.Random, *, shared: bool, local: bool, devs: list[tuple[str, int]],
                 a_float: bool, two_d: bool):
        self.rng = rng
        self.lines: list[str] = []
        self.indent = 1
        self.loops = 0
        self.loop_vars: list[str] = []
        self.shared, self.local, self.devs = shared, local, devs
        self.a_float, self.two_d = a_float, two_d
        self.budget = rng.randint(4, 22)        # statements left to write

    # expressions ------------------------------------------------------------------------------------------------

    def int_expr(self, depth: int) -> str:
        r = self.rng
        leaves = ["lit", "var", "var", "cuda", "n"]
        kinds = leaves + (["bin", "bin", "div", "shift", "minmax", "abs", "cast", "ifexp", "bits", "aread"]
                          if depth > 0 else [])
        k = r.choice(kinds)
        sub = lambda: self.int_expr(depth - 1)      # noqa: E731
        if k == "lit":
            return str(r.choice([0, 1, 2, 3, 5, 7, 31, 32, 64, -1, -4, 100, 1023]))
        if k == "var":
            return r.choice(list(INT_VARS) + self.loop_vars + ["i"])
        if k == "cuda":
            return r.choice(["cuda.threadIdx.x", "cuda.blockIdx.x", "cuda.blockDim.x", "cuda.gridDim.x",
                             "cuda.laneid", "cuda.warpsize"])
        if k == "n":
            return "n"
        if k == "bin":
            return f"({sub()} {r.choice(['+', '-', '*', '&', '|', '^'])} {sub()})"
        if k == "div":
            return f"({sub()} {r.choice(['//', '%'])} (abs({sub()}) % 7 + 1))"
        if k == "shift":
            return f"({sub()} {r.choice(['<<', '>>'])} ({sub()} % 8))"
        if k == "minmax":
            return f"{r.choice(['min', 'max'])}({sub()}, {sub()})"
        if k == "abs":
            return f"abs({sub()})"
        if k == "cast":
            return r.choice([f"int({self.float_expr(depth - 1)})", f"numba.int32({sub()})",
                             f"np.int64({sub()})", f"int({sub()})"])
        if k == "ifexp":
            return f"({sub()} if {self.bool_expr(depth - 1)} else {sub()})"
        if k == "bits":
            return f"cuda.{r.choice(['popc', 'brev', 'clz', 'ffs'])}(numba.int32({sub()}))"
        return f"numba.int32(a[{self.index(depth - 1)}])" if not self.a_float else f"int(a[{self.index(depth - 1)}])"

    def float_expr(self, depth: int) -> str:
        r = self.rng
        leaves = ["lit", "var", "var", "s", "aread"]
        kinds = leaves + (["bin", "bin", "div", "math", "math", "minmax", "cast", "ifexp", "fma", "dev", "pow",
                           "neg"] if depth > 0 else [])
        k = r.choice(kinds)
        sub = lambda: self.float_expr(depth - 1)    # noqa: E731
        if k == "lit":
            return r.choice(["0.0", "1.0", "0.5", "-2.25", "3.0", "1e-3", "100.0", "math.pi"])
        if k == "var":
            return r.choice(FLOAT_VARS)
        if k == "s":
            return "s"
        if k == "aread":
            read = f"a[{self.index(depth - 1)}]"
            return read if self.a_float else f"float({read})"
        if k == "bin":
            return f"({sub()} {r.choice(['+', '-', '*'])} {sub()})"
        if k == "div":
            return f"({sub()} / (abs({sub()}) + 1.0))"
        if k == "math":
            f = r.choice(["sqrt(abs({}))", "exp(min({}, 20.0))", "sin({})", "cos({})", "tanh({})",
                          "log(abs({}) + 1.0)", "floor({})", "ceil({})", "fabs({})", "atan({})", "erf({})",
                          "isnan({}) * 1.0"])
            return "math." + f.format(sub())
        if k == "minmax":
            return f"{r.choice(['min', 'max'])}({sub()}, {sub()})"
        if k == "cast":
            return r.choice([f"float({self.int_expr(depth - 1)})", f"numba.float32({sub()})",
                             f"np.float64({sub()})", f"float({sub()})"])
        if k == "ifexp":
            return f"({sub()} if {self.bool_expr(depth - 1)} else {sub()})"
        if k == "fma":
            return f"cuda.fma({sub()}, {sub()}, {sub()})"
        if k == "dev" and self.devs:
            name, arity = r.choice(self.devs)
            return f"{name}({', '.join(sub() for _ in range(arity))})"
        if k == "pow":
            return f"({sub()} ** 2)"
        return f"(-{sub()})"

    def bool_expr(self, depth: int) -> str:
        r = self.rng
        k = r.choice(["cmp", "cmp", "fcmp", "chain"] + (["and", "or", "not"] if depth > 0 else []))
        if k == "cmp":
            return f"{self.int_expr(depth)} {r.choice(['<', '<=', '>', '>=', '==', '!='])} {self.int_expr(depth)}"
        if k == "fcmp":
            return f"{self.float_expr(depth)} {r.choice(['<', '>', '>='])} {self.float_expr(depth)}"
        if k == "chain":
            return f"0 <= {self.int_expr(depth)} < {r.choice([4, 16, 64])}"
        if k == "not":
            return f"not ({self.bool_expr(depth - 1)})"
        return f"({self.bool_expr(depth - 1)}) {k} ({self.bool_expr(depth - 1)})"

    def index(self, depth: int) -> str:
        return f"({self.int_expr(max(depth, 0))}) % {A_LEN}"

    # statements ---------------------------------------------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def block(self, statements: int) -> None:
        start = len(self.lines)
        for _ in range(statements):
            if self.budget <= 0:
                break
            self.statement()
        if len(self.lines) == start:
            self.emit("pass")

    def statement(self) -> None:
        r = self.rng
        self.budget -= 1
        deep = self.indent > 4
        kinds = ["iassign", "fassign", "aug", "store", "store"]
        if not deep:
            kinds += ["if", "if", "for", "while"]
        if self.loops:
            kinds += ["break", "continue"]
        if self.shared:
            kinds += ["sharedrw", "sync"]
        if self.local:
            kinds += ["localrw"]
        kinds += ["atomic", "warp", "return", "swap"]
        k = r.choice(kinds)
        if k == "iassign":
            self.emit(f"{r.choice(INT_VARS)} = {self.int_expr(2)}")
        elif k == "fassign":
            self.emit(f"{r.choice(FLOAT_VARS)} = {self.float_expr(3)}")
        elif k == "aug":
            if r.random() < 0.5:
                self.emit(f"{r.choice(INT_VARS)} {r.choice(['+=', '-=', '*=', '|=', '^='])} {self.int_expr(1)}")
            else:
                self.emit(f"{r.choice(FLOAT_VARS)} {r.choice(['+=', '-=', '*='])} {self.float_expr(2)}")
        elif k == "store":
            if r.random() < 0.8:
                self.emit(f"if i < {OUT_LEN}:")
                self.indent += 1
                self.emit(f"out[i] {r.choice(['=', '+='])} {self.float_expr(2)}")
                self.indent -= 1
            else:                                       # may race or run out of bounds: a fault, not a crash
                self.emit(f"out[{self.int_expr(1)}] = {self.float_expr(1)}")
        elif k == "if":
            self.emit(f"if {self.bool_expr(2)}:")
            self.indent += 1
            self.block(r.randint(1, 3))
            self.indent -= 1
            if r.random() < 0.3:
                self.emit(f"elif {self.bool_expr(1)}:")
                self.indent += 1
                self.block(r.randint(1, 2))
                self.indent -= 1
            if r.random() < 0.5:
                self.emit("else:")
                self.indent += 1
                self.block(r.randint(1, 2))
                self.indent -= 1
        elif k == "for":
            var = f"j{len(self.loop_vars)}"
            bounds = r.choice([f"{r.randint(0, 6)}", f"{r.randint(-2, 2)}, {r.randint(0, 8)}",
                               f"{r.randint(6, 9)}, {r.randint(-3, 2)}, -{r.randint(1, 3)}",
                               f"0, {r.randint(1, 12)}, {r.randint(1, 4)}", "n % 5", "cuda.threadIdx.x % 4"])
            self.emit(f"for {var} in range({bounds}):")
            self.loops += 1
            self.loop_vars.append(var)
            self.indent += 1
            self.block(r.randint(1, 3))
            self.indent -= 1
            self.loop_vars.pop()
            self.loops -= 1
        elif k == "while":
            guard = f"w{self.indent}"
            self.emit(f"{guard} = 0")
            self.emit(f"while {guard} < {r.randint(1, 6)} and ({self.bool_expr(1)}):")
            self.loops += 1
            self.indent += 1
            self.emit(f"{guard} += 1")
            self.block(r.randint(1, 3))
            self.indent -= 1
            self.loops -= 1
        elif k in ("break", "continue"):
            self.emit(f"if {self.bool_expr(1)}:")
            self.indent += 1
            self.emit(k)
            self.indent -= 1
        elif k == "sharedrw":
            self.emit(f"sh[cuda.threadIdx.x % {A_LEN}] = {self.float_expr(1)}")
            if r.random() < 0.7:
                self.emit("cuda.syncthreads()")
            self.emit(f"{r.choice(FLOAT_VARS)} = sh[({self.int_expr(1)}) % {A_LEN}]")
        elif k == "sync":
            self.emit(r.choice(["cuda.syncthreads()", "cuda.syncthreads()", "cuda.threadfence()",
                                "cuda.syncwarp()", f"t = cuda.syncthreads_count(int({self.bool_expr(0)}))"]))
        elif k == "localrw":
            self.emit(f"loc[({self.int_expr(1)}) % 8] = {self.float_expr(1)}")
            self.emit(f"{r.choice(FLOAT_VARS)} = loc[({self.int_expr(1)}) % 8]")
        elif k == "atomic":
            op = r.choice(["add", "add", "max", "min", "sub"])
            self.emit(f"cuda.atomic.{op}(out, ({self.int_expr(1)}) % {OUT_LEN}, {self.float_expr(1)})")
        elif k == "warp":
            self.emit(r.choice([
                f"x = cuda.shfl_down_sync(0xffffffff, x, {r.choice([1, 2, 16])})",
                "y = cuda.shfl_sync(0xffffffff, y, 0)",
                f"k = cuda.ballot_sync(0xffffffff, {self.bool_expr(0)})",
                "t = cuda.shfl_xor_sync(0xffffffff, t, 1)",
                f"k = cuda.any_sync(0xffffffff, {self.bool_expr(0)})"]))
        elif k == "return":
            self.emit(f"if {self.bool_expr(1)}:")
            self.indent += 1
            self.emit("return")
            self.indent -= 1
        else:
            self.emit(r.choice(["x, y = y, x", "t, k = k, t"]))


def device_functions(rng: random.Random, count: int) -> tuple[str, list[tuple[str, int]]]:
    """``count`` float device functions; each may call the ones before it."""
    text, devs = [], []
    for d in range(count):
        arity = rng.randint(1, 3)
        params = [f"p{q}" for q in range(arity)]
        body = dev_expr(rng, params, devs, 3)
        guard = f"    if {params[0]} > 1e6:\n        return {params[0]}\n" if rng.random() < 0.3 else ""
        text.append(f"@cuda.jit(device=True)\ndef dev{d}({', '.join(params)}):\n{guard}    return {body}\n")
        devs.append((f"dev{d}", arity))
    return "\n\n".join(text), devs


def dev_expr(rng: random.Random, params: list[str], devs: list[tuple[str, int]], depth: int) -> str:
    """A float expression of a device function's parameters (and calls of earlier device functions)."""
    if depth <= 0 or rng.random() < 0.3:
        return rng.choice(params + ["1.0", "0.5", "2.0"])
    sub = lambda: dev_expr(rng, params, devs, depth - 1)    # noqa: E731
    k = rng.choice(["bin", "bin", "math", "ifexp", "call"] if devs else ["bin", "bin", "math", "ifexp"])
    if k == "bin":
        return f"({sub()} {rng.choice(['+', '-', '*'])} {sub()})"
    if k == "math":
        return f"math.{rng.choice(['sin', 'cos', 'tanh', 'fabs'])}({sub()})"
    if k == "ifexp":
        return f"({sub()} if {sub()} < {sub()} else {sub()})"
    name, arity = rng.choice(devs)
    return f"{name}({', '.join(sub() for _ in range(arity))})"


def valid_kernel(rng: random.Random) -> tuple[str, dict]:
    """A valid kernel module and its launch: (source, {"grid", "block", "args"})."""
    a_dtype = rng.choice(FLOAT_DTYPES + INT_DTYPES)
    a_float = a_dtype.startswith("float")
    shared, local = rng.random() < 0.4, rng.random() < 0.3
    dev_text, devs = device_functions(rng, rng.choice([0, 0, 1, 2, 3]))
    w = KernelWriter(rng, shared=shared, local=local, devs=devs, a_float=a_float, two_d=False)
    w.emit("i = cuda.grid(1)")
    w.emit("t = 0")
    w.emit("k = i % 3")
    w.emit("x = 0.0")
    w.emit(f"y = {'a' if a_float else 'float(a'}[i % {A_LEN}]{'' if a_float else ')'}")
    if shared:
        w.emit(f"sh = cuda.shared.array({A_LEN}, numba.float32)")
    if local:
        w.emit("loc = cuda.local.array(8, numba.float32)")
        w.emit("for q in range(8):")
        w.emit("    loc[q] = 0.0")
    while w.budget > 0:
        w.statement()
    w.emit(f"if i < {OUT_LEN}:")
    w.emit("    out[i] = x + y + t + k")
    body = "\n".join(w.lines)
    source = f"{HEADER}\n\n{dev_text}\n\n@cuda.jit\ndef kern(out, a, n, s):\n{body}\n"
    block = rng.choice([1, 7, 32, 32, 64, 64, 96, 128])
    grid = rng.choice([1, 1, 2, 3]) if block <= 64 else rng.choice([1, 2])
    args = (("array", "float32", (OUT_LEN,), "c"), ("array", a_dtype, (A_LEN,), "c"),
            ("scalar", rng.choice([0, 3, 17, -5])), ("scalar", rng.choice([0.0, 1.5, -0.25])))
    return source, {"grid": grid, "block": block, "args": args}


def kernel_case(rng: random.Random, family: str, seed: int) -> Case:
    """One kernel case of ``family`` (see the module's text)."""
    source, launch = valid_kernel(rng)
    if family != "valid":
        source = BREAKERS[family](rng, source)
    return Case("kernel", family, seed, source=source, **launch)


# the families that break things ---------------------------------------------------------------------------------

def _insert(rng: random.Random, source: str, snippet: str) -> str:
    """Put ``snippet`` (one or more lines, kernel-body indentation) at a random statement of the kernel."""
    lines = source.split("\n")
    start = lines.index("def kern(out, a, n, s):") + 6
    top = [k for k in range(start, len(lines)) if lines[k].startswith("    ") and not lines[k].startswith("     ")
           and not lines[k].lstrip().startswith(("elif", "else"))]
    at = rng.choice(top) if top else len(lines) - 1
    pad = "\n".join("    " + s for s in snippet.split("\n"))
    return "\n".join(lines[:at] + [pad] + lines[at:])


ARITY = (
    "x = abs()", "t = int()", "x = min()", "x = max(x)", "t = divmod(1)", "t, k = divmod(t)",
    "t = numba.int32()", "x = np.float32(1, 2)", "x = cuda.fma(1.0, 2.0)", "x = cuda.fma()",
    "cuda.atomic.add(out, 0)", "cuda.atomic.add(out)", "cuda.atomic.add(ary=out, idx=0, val=1.0)",
    "cuda.atomic.max(out, 0, 1.0, 2.0)", "t = cuda.atomic.compare_and_swap(out, 1)",
    "t = cuda.atomic.cas(out, 0, 1)", "x = math.sqrt()", "x = math.atan2(1.0)", "x = math.pow(2.0)",
    "x = math.exp(1.0, 2.0)", "for q in range():\n    pass", "for q in range(1, 2, 3, 4):\n    pass",
    "t = cuda.grid()", "t = cuda.grid(4)", "t = cuda.grid(0)", "t = cuda.gridsize(1, 2)",
    "sh2 = cuda.shared.array()", "sh2 = cuda.shared.array(4)", "lo2 = cuda.local.array(shape=4)",
    "t = len()", "t = len(a, a)", "x = round(1.0, 2, 3)", "x = float(1.0, 2.0)", "t = bool(1, 2)",
    "x = cuda.shfl_sync(0xffffffff)", "t = cuda.ballot_sync()", "cuda.syncthreads(1)",
    "t = cuda.popc()", "t = cuda.brev(1, 2)", "x = abs(x, y)", "x = abs(x=1.0)", "t = int(x=1)",
    "x = math.sqrt(x=4.0)", "cuda.atomic.add(out, 0, val=1.0)", "t = cuda.syncthreads_count()",
    "t = cuda.threadIdx.x()", "t = cuda.threadIdx()", "x = math.isnan()", "t = range(3)",
)


def _arity(rng: random.Random, source: str) -> str:
    if "@cuda.jit(device=True)\ndef dev0(" in source and rng.random() < 0.25:
        header = source.split("def dev0(")[1].split(")")[0]
        arity = len(header.split(","))
        wrong = rng.choice([0, arity + 1, arity + 3])
        call = f"x = dev0({', '.join(['1.0'] * wrong)})" if rng.random() < 0.8 else "x = dev0(p0=1.0, zz=2.0)"
        return _insert(rng, source, call)
    return _insert(rng, source, rng.choice(ARITY))


CONSTS = (
    "t = 1 // 0", "t = 1 % 0", "x = 1.0 / 0.0", "x = 1.0 // 0.0", "t = 1 << -1", "t = 1 >> -1",
    "t = 1 << 100000", "t = 10 ** 30", "t = 2 ** 64", "t = 2 ** 63", "t = -(2 ** 63) - 1", "t = 2 ** -1",
    "t = 18446744073709551616", "x = 1e999", "x = -1e999 * 0.0", "t = int(1e400)", "t = int(math.inf)",
    "t = int(math.nan)", "t, k = divmod(1, 0)", "x = math.sqrt(-1.0)", "x = math.log(0.0)",
    "x = math.exp(1000.0)", "x = 10.0 ** 400", "t = 0 ** -1", "t = (-8) ** 0.5 > 0", "x = math.pow(0.0, -1.0)",
    "t = 7 // (3 - 3)", "t = numba.int32(2 ** 40)", "t = numba.uint8(-1)", "x = np.float16(1e10)",
    "t = np.int64(2 ** 63)", "t = abs(-(2 ** 63))", "x = math.ldexp(1.0, 100000)", "t = 1 << 63",
    "t = (1 << 62) * 4", "t = 123456789 ** 9", "x = math.factorial(5) * 1.0", "t = round(1e300)",
    "x = math.fmod(1.0, 0.0)", "x = math.atan2(0.0, 0.0)", "t = -9223372036854775808 // -1",
    "x = float(10 ** 400)", "t = ~(2 ** 70)", "t = 5 % -0",
)


def _const(rng: random.Random, source: str) -> str:
    if rng.random() < 0.25:
        value = rng.choice(["10 ** 30", "2 ** 64", "-(2 ** 63) - 1", "1e999", "float('nan')", "2 ** 1000",
                            "(1 << 70, 2)", "True", "-0.0", "10 ** 4000"])
        source = source.replace("from numba import cuda\n", f"from numba import cuda\n\nBIG = {value}\n", 1)
        return _insert(rng, source, rng.choice(["t = BIG", "x = BIG * 1.0", "t = t + BIG",
                                                "if t < BIG:\n    x = 1.0", "for q in range(BIG):\n    pass"]))
    return _insert(rng, source, rng.choice(CONSTS))


def _nesting(rng: random.Random, source: str) -> str:
    kind = rng.choice(["sum", "parens", "ifs", "loops", "ifexp", "elif", "many", "unary", "calls", "bool"])
    n = rng.choice([20, 50, 100, 200, 400, 1000])
    if kind == "sum":
        snippet = "x = " + " + ".join(rng.choice(["x", "y", "1.0", "s"]) for _ in range(n))
    elif kind == "parens":
        d = min(n, 180)
        snippet = "t = " + "(" * d + "1" + " + 1)" * d
    elif kind == "ifs":
        d = min(n, 95)
        snippet = "\n".join("    " * q + f"if t < {q + 5}:" for q in range(d)) + "\n" + "    " * d + "x = 1.0"
    elif kind == "loops":
        d = min(n // 10 + 2, 40)
        snippet = "\n".join("    " * q + f"for q{q} in range(2):" for q in range(d)) + "\n" + "    " * d + "t += 1"
    elif kind == "ifexp":
        d = min(n, 150)
        snippet = "x = " + " ".join(f"({q}.0 if t < {q} else" for q in range(d)) + " 0.0" + ")" * d
    elif kind == "elif":
        snippet = "if t == 0:\n    x = 0.0\n" + "".join(f"elif t == {q}:\n    x = {q}.0\n" for q in range(1, n))
    elif kind == "many":
        snippet = "\n".join(f"x = x * 0.5 + {q}.0" for q in range(n * 5))
    elif kind == "unary":
        snippet = "t = " + "-" * min(n, 500) + "t"
    elif kind == "calls":
        snippet = "x = " + "abs(" * min(n, 150) + "x" + ")" * min(n, 150)
    else:
        snippet = "t = 1 if " + " and ".join(f"t != {q}" for q in range(n)) + " else 0"
    return _insert(rng, source, snippet)


def _devchain(rng: random.Random, source: str) -> str:
    kind = rng.choice(["chain", "chain", "tree", "self", "mutual", "kernel"])
    if kind in ("self", "mutual", "kernel"):
        if kind == "self":
            fns = "@cuda.jit(device=True)\ndef rec(v):\n    if v < 1.0:\n        return v\n    return rec(v - 1.0)\n"
        elif kind == "mutual":
            fns = ("@cuda.jit(device=True)\ndef ping(v):\n    return pong(v - 1.0) if v > 0.0 else v\n\n\n"
                   "@cuda.jit(device=True)\ndef pong(v):\n    return ping(v - 1.0) if v > 0.0 else v\n")
        else:
            return _insert(rng, source, "if i > 100000:\n    kern(out, a, n, s)")
        call = "x = rec(3.0)" if kind == "self" else "x = ping(3.0)"
        source = source.replace("\n\n@cuda.jit\ndef kern(", f"\n\n{fns}\n\n@cuda.jit\ndef kern(", 1)
        return _insert(rng, source, call)
    # a chain is one call per function; a tree calls two, so its work grows fast: keep it short
    length = rng.choice([10, 50, 200, 600, 1200]) if kind == "chain" else rng.choice([8, 16, 32])
    fns = ["@cuda.jit(device=True)\ndef c0(v):\n    return v + 1.0\n"]
    for q in range(1, length):
        body = f"c{q - 1}(v) * 0.5" if kind == "chain" else f"c{q - 1}(v) + c{(q - 1) // 2}(v)"
        fns.append(f"@cuda.jit(device=True)\ndef c{q}(v):\n    return {body}\n")
    text = "\n\n".join(fns)
    source = source.replace("\n\n@cuda.jit\ndef kern(", f"\n\n{text}\n\n@cuda.jit\ndef kern(", 1)
    return _insert(rng, source, f"x = c{length - 1}(x)")


INVALID = (
    "z = [1, 2, 3]", "z = {1: 2}", "z = {1, 2}", "z = 'text'", "z = f'{t}'", "z = [q for q in range(3)]",
    "try:\n    t = 1\nexcept Exception:\n    t = 2", "with open('f') as g:\n    pass", "z = lambda v: v",
    "def inner(v):\n    return v", "global BIG", "del t", "import os", "assert t == 0", "raise ValueError('x')",
    "return 1", "return x", "yield t", "class C:\n    pass", "t = undefined_name + 1", "np.random.rand()",
    "out[1:3] = 0.0", "x = out[1:3]", "x = a.sum()", "x = a.T[0]", "cuda.threadIdx.x = 3", "p, q = 1, 2, 3",
    "x = 1j", "z = x @ y", "t = (q := 3)", "print(*out)", "x = sorted(a)", "x = a[0, 0, 0]", "x = out",
    "out = 3.0", "n = n + 1", "s += 1.0", "x = a[1.5]", "x = a[None]", "x = a[...]", "t = a", "a[0] = a",
    "for q in range(1.5):\n    pass", "for q in range(x):\n    pass", "for q in a:\n    x += q",
    "for q, r in range(3):\n    pass", "while True:\n    break", "x = math.frexp(x)[0]", "x = math.modf(x)[0]",
    "t = +True", "x = math.gamma(0.0)", "x = math.lgamma(-1.0)", "x = math.remainder(1.0, 0.0)",
    "x = math.gamma(-2.0)", "t = int(np.float16(x))", "t = int(numba.float32(s))",
    "cuda.atomic.add(out, 0, np.float16(1.0))", "x = cuda.shared.array(0, numba.float32)[0]",
    "sh0 = cuda.shared.array(4, numba.float32)\nsh1 = cuda.shared.array(0, numba.float32)\nsh1[0] = 1.0",
    "sh3 = cuda.shared.array(n, numba.float32)", "sh3 = cuda.shared.array(-4, numba.float32)",
    "sh3 = cuda.shared.array((4, 0), numba.float32)", "sh3 = cuda.shared.array(4, 'float32')",
    "sh3 = cuda.shared.array(4, numba.complex64)", "sh3 = cuda.shared.array(4.5, numba.float32)",
    "lo3 = cuda.local.array(t, numba.float32)", "lo3 = cuda.local.array(4, numba.int32)\nx = lo3[5] * 1.0",
    "x = cuda.const.array_like(a)[0]", "t = cuda.threadIdx.w", "t = cuda.blockIdx", "x = math.nosuch(1.0)",
    "x = numba.float128(1.0)", "t = cuda.atomic.nosuch(out, 0, 1)", "x = (x, y)[t]", "z = (1, 2)\nx = z[t]",
    "x = a[t] if a else 0.0", "t = len(out) + len(a)", "t = out.shape[0] + a.size + out.ndim",
    "x = y = z = 1.0", "t = t if t else k", "x = x and y", "t = not a", "t = t < k < x < y",
    "cuda.syncthreads() if t else None", "x = cuda.shfl_down_sync(0xffffffff, out, 1)",
    "cuda.atomic.add(a, 0, 1.5)", "cuda.atomic.add(out, (0, 1), 1.0)", "cuda.atomic.add(out, 0.5, 1.0)",
    "x = out[t] + out[t, 0]", "out[i] = out", "t = 3 if x else 'no'", "x = math.sqrt('4')", "x = abs(a)",
    "break", "continue", "x = -a", "t = i if True else x", "x = float('nan')", "x = float('1.5')",
)


def _invalid(rng: random.Random, source: str) -> str:
    return _insert(rng, source, rng.choice(INVALID))


BREAKERS = {"arity": _arity, "const": _const, "nesting": _nesting, "devchain": _devchain, "invalid": _invalid}

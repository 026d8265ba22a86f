"""Records (NumPy structured dtypes) in kernels, as numba-cuda types them.

An element of an array of records, ``ary[i]``, is a reference to the record (numba's record is a pointer into
the array): a ``RecordRef`` tuple ``(array, i...)``, which a local can hold and a device function can take
and return. A field is read and written through a ``FieldView`` of the array: ``ary[i].a`` / ``r.a`` /
``r['a']`` / ``r[0]`` (the first field) is ``Load(ary.a, [i])``; a nested array field ``r.h`` is indexed as
``r.h[j]`` -> ``Load(ary.h, [i, j])``; ``ary.a`` of a whole array is the view itself. Assigning a whole record
(``ary[i] = ary[j]``, ``res[0] = f(r)``) or a whole nested array (``r.h = src``, ``r['h'] = q['h']``) copies
element by element, as numba's store of a record or an array value does.
"""

from __future__ import annotations

import ast
import itertools

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import INT64, Array, CharSeq, Record, RecordRef, Scalar, record_ref


def is_record_array(t) -> bool:
    return isinstance(t, Array) and isinstance(t.dtype, Record)


class RecordLowering:
    # -- references and fields ---------------------------------------------------------------------------------
    def record_element(self, array: N.Expr, index: list[N.Expr], line: int) -> N.Expr:
        """``ary[i, j]`` of an array of records: a reference to that record."""
        t = record_ref(array.type)
        return N.MakeTuple([array, *index], type=t, line=line)

    def ref_parts(self, ref: N.Expr, line: int) -> tuple[N.Expr, list[N.Expr]]:
        """The array and the indices of a record reference."""
        t: RecordRef = ref.type
        if isinstance(ref, N.MakeTuple):
            return ref.items[0], list(ref.items[1:])
        return (N.TupleItem(ref, 0, type=t.items[0], line=line),
                [N.TupleItem(ref, k, type=INT64, line=line) for k in range(1, len(t.items))])

    def field_of(self, node: ast.AST, rec: Record, name: object):
        """The field a name (``r.a``, ``r['a']``) or a constant position (``r[0]``) picks."""
        if isinstance(name, int) and not isinstance(name, bool):
            if not -len(rec.fields) <= name < len(rec.fields):
                raise self.error(node, f"index {name} is out of range for a record of {len(rec.fields)} fields",
                                 KernelCompileError)
            return rec.fields[name]
        f = rec.field(name) if isinstance(name, str) else None
        if f is None:
            raise self.error(node, f"the record has no field {name!r} (its fields: "
                                   f"{', '.join(x.name for x in rec.fields)})", KernelCompileError)
        return f

    def field_view(self, array: N.Expr, field, line: int) -> N.FieldView:
        t: Array = array.type
        return N.FieldView(array, field.name, type=Array(field.type, t.ndim + len(field.shape), "A", t.space),
                           line=line)

    def record_field(self, ref: N.Expr, node: ast.AST, name: object) -> N.Expr:
        """The value of a field of a record: a number, a reference to a nested record, or a nested array (a view
        of the field at the record's index, which ``element_of`` folds into the field's own loads)."""
        line = node.lineno
        array, index = self.ref_parts(ref, line)
        f = self.field_of(node, ref.type.record, name)
        view = self.field_view(array, f, line)
        if isinstance(f.type, Record):  # a nested record: a reference into the field's view
            return self.record_element(view, index, line)
        if not f.shape:
            return N.Load(view, index, type=f.type, line=line)
        kinds = ("i",) * len(index) + ("s000",) * len(f.shape)
        return N.ArrayView(view, list(index), kinds, ast.unparse(node), type=Array(f.type, len(f.shape), "A",
                                                                                    array.type.space), line=line)

    @staticmethod
    def record_key(node: ast.AST) -> object:
        """The constant a record is subscripted with (a field name or position), or None."""
        sl = node.slice if isinstance(node, ast.Subscript) else node
        if isinstance(sl, ast.Constant) and isinstance(sl.value, (str, int)) and not isinstance(sl.value, bool):
            return sl.value
        if isinstance(sl, ast.UnaryOp) and isinstance(sl.op, ast.USub) and isinstance(sl.operand, ast.Constant) \
                and isinstance(sl.operand.value, int):
            return -sl.operand.value
        return None

    def record_subscript(self, base: N.Expr, node: ast.Subscript) -> N.Expr:
        """``r['a']`` / ``r[0]`` of a record, ``ary['a']`` of an array of records (the field's view)."""
        key = self.record_key(node)
        if isinstance(base.type, RecordRef):
            if key is None:
                raise self.error(node, "a record is indexed by a field name or a constant position",
                                 KernelCompileError)
            return self.record_field(base, node, key)
        if not isinstance(key, str):
            raise self.error(node, "an array of records is indexed by integers (a record) or a field name")
        return self.field_view(base, self.field_of(node, base.type.dtype, key), node.lineno)

    @staticmethod
    def element_of(array: N.Expr, index: list[N.Expr]) -> tuple[N.Expr, list[N.Expr]]:
        """The array and index a load or store of ``array[index]`` touches."""
        if isinstance(array, N.ArrayView) and len(index) == array.type.ndim and all(
                k == "i" for k in array.kinds[:len(array.parts)]) and all(
                k == "s000" for k in array.kinds[len(array.parts):]):
            # a row or a nested array field (a[i], r.h) indexed at once: one access of the array, checked against
            # its own dimensions (the same bounds as the view's)
            return array.array, list(array.parts) + list(index)
        return array, index

    # -- stores ------------------------------------------------------------------------------------------------
    def field_store(self, ref: N.Expr, node: ast.AST, name: object, value: N.Expr, line: int) -> list[N.Stmt]:
        """``r.a = v``, ``r['h'] = src``: a number stored, or a whole nested array copied."""
        if ref.type.items[0].space == "const":
            raise self.error(node, "a record in constant memory cannot be written")
        out: list[N.Stmt] = []
        ref = self.once(ref, out, line)
        array, index = self.ref_parts(ref, line)
        f = self.field_of(node, ref.type.record, name)
        view = self.field_view(array, f, line)
        if isinstance(f.type, Record):
            return out + self.record_store(view, index, value, node, line)
        if not f.shape:
            if not isinstance(value.type, (Scalar, CharSeq)):
                raise self.error(node, f"cannot store a {value.type} into the {f.type} field {f.name!r}",
                                 KernelCompileError)
            return out + [N.Store(view, index, self.cast(value, f.type), line=line)]
        return out + self.copy_nested(view, index, f.shape, value, node, line)

    def copy_nested(self, view: N.Expr, prefix: list[N.Expr], shape: tuple[int, ...], value: N.Expr,
                    node: ast.AST, line: int) -> list[N.Stmt]:
        """Every element of a nested array (``view[prefix, ...]`` of ``shape``) from the array ``value``."""
        if not isinstance(value.type, Array) or value.type.ndim != len(shape) or not isinstance(value.type.dtype,
                                                                                                Scalar):
            raise self.error(node, f"a nested array of shape {shape} is assigned from a {value.type}: numba-cuda "
                                   f"copies a {len(shape)}-d array of numbers into it", KernelCompileError)
        t = view.type.dtype
        return self.each_element(shape, node, lambda k: N.Store(view, prefix + k, self.cast(
            N.Load(*self.element_of(value, k), type=value.type.dtype, line=line), t), line=line))

    def record_store(self, array: N.Expr, index: list[N.Expr], value: N.Expr, node: ast.AST,
                     line: int) -> list[N.Stmt]:
        """``ary[i] = rec``: every field of the record copied into the array's record ``i``."""
        rec: Record = array.type.dtype
        if not isinstance(value.type, RecordRef):
            raise self.error(node, f"cannot store a {value.type} into an element of an array of records",
                             KernelCompileError)
        if value.type.record.dtype != rec.dtype:
            raise self.error(node, f"cannot store a {value.type.record} into an array of {rec} (numba-cuda "
                                   "assigns records of one type)", KernelCompileError)
        out: list[N.Stmt] = []
        value = self.once(value, out, line)
        index = [self.once(i, out, line) for i in index]
        src, src_index = self.ref_parts(value, line)
        for f in rec.fields:
            dst = self.field_view(array, f, line)
            frm = self.field_view(src, f, line)
            if isinstance(f.type, Record):
                out.extend(self.record_store(dst, index, self.record_element(frm, src_index, line), node, line))
                continue
            for pos in itertools.product(*(range(d) for d in f.shape)):
                k = [N.Const(p, type=INT64, line=line) for p in pos]
                load = N.Load(frm, src_index + k, type=f.type, line=line)
                out.append(N.Store(dst, index + k, load, line=line))
        return out

"""Record classes behave as the dataclasses they replace: fields in repr and ==, hashing and
immutability when frozen, pickling and replace()."""
from __future__ import annotations

import copy
import pickle

import pytest

from isalint.diagnostics import Diagnostic, Site
from isalint.hw.vopd import Src
from isalint.isa import OperandSpec
from isalint.parse.nodes import Operand
from isalint.records import replace


def test_mutable_record():
    a = Operand("v1", 3, "vgpr", "v", 1, 1)
    assert a == Operand("v1", 3, "vgpr", "v", 1, 1)
    assert a != Operand("v1", 4, "vgpr", "v", 1, 1)
    assert repr(a) == ("Operand(text='v1', col=3, kind='vgpr', file='v', first=1, count=1, value=None, neg=False, "
                       "abs=False, half=None)")
    with pytest.raises(TypeError):
        hash(a)
    a.col = 5
    assert a.col == 5
    assert pickle.loads(pickle.dumps(a)) == a and copy.copy(a) == a


def test_frozen_record():
    s = OperandSpec("src0", "use", 64, "vgpr")
    assert s.regs == 2
    assert hash(s) == hash(OperandSpec("src0", "use", 64, "vgpr")) and s == OperandSpec("src0", "use", 64, "vgpr")
    with pytest.raises(AttributeError):
        s.bits = 32
    assert pickle.loads(pickle.dumps(s)) == s
    t = replace(s, bits=32)
    assert (t.bits, t.regs, s.bits) == (32, 1, 64)
    with pytest.raises(TypeError):
        replace(s, width=3)


def test_fields_left_out_of_repr_and_comparison():
    a, b = Operand("v1", 1, "vgpr", "v", 1, 1), Operand("v1", 9, "vgpr", "v", 1, 1)
    assert Src("vgpr", "v1", 1, "v1", op=a) == Src("vgpr", "v1", 1, "v1", op=b)
    assert "op=" not in repr(Src("vgpr", "v1", 1, "v1", op=a))


def test_diagnostic_json_is_a_deep_copy():
    d = Diagnostic("k.s", 3, 1, 3, 9, "BANK001", "info", "m", None, ["note"], [Site(3, 1, 9, "site")], {"cycles": 2})
    doc = d.to_json()
    assert doc == {"path": "k.s", "line": 3, "column": 1, "end_line": 3, "end_column": 9, "code": "BANK001",
                   "severity": "info", "message": "m", "fix": None, "notes": ["note"],
                   "sites": [{"line": 3, "column": 1, "end_column": 9, "message": "site"}], "cost": {"cycles": 2}}
    doc["notes"].append("x")
    doc["cost"]["cycles"] = 0
    assert d.notes == ["note"] and d.cost == {"cycles": 2}

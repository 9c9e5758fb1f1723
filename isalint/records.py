"""Record classes: the value objects ``isalint check`` makes by the thousand, without dataclasses.

A dataclass is generated when its module is imported (a few hundred microseconds per class, and
``dataclasses`` itself pulls in ``inspect`` and ``ast``); the check path defines some forty record
types, which made class creation a tenth of a check of a 2,500-line kernel. A record class writes its
``__init__`` out (taking every field, in ``_fields`` order) and lists its fields in ``_fields``;
:class:`Record` gives it what a dataclass would: ``__repr__``, ``__eq__`` over the fields
(unhashable, as a mutable dataclass is), pickling and :func:`replace`. :class:`FrozenRecord` is
hashable and refuses assignment, like ``@dataclass(frozen=True)``.
"""
from __future__ import annotations


class Record:
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _no_repr: frozenset[str] = frozenset()  # fields left out of repr()
    _no_compare: frozenset[str] = frozenset()  # fields left out of == and hash()

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields if n not in self._no_repr)
        return f"{type(self).__qualname__}({shown})"

    def _key(self) -> tuple:
        return tuple(getattr(self, n) for n in self._fields if n not in self._no_compare)

    def __reduce__(self):
        return type(self), tuple(getattr(self, n) for n in self._fields)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]


class FrozenRecord(Record):
    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__qualname__}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__qualname__}")


def replace(record: Record, **changes) -> Record:
    """A copy of ``record`` with some fields changed (``dataclasses.replace`` for records)."""
    values = {n: getattr(record, n) for n in record._fields}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(record).__qualname__} has no field(s) {', '.join(sorted(unknown))}")
    values.update(changes)
    return type(record)(**values)

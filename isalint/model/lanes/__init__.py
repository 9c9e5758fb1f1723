"""Per-lane abstract interpretation of integer values (LDS and global addresses).

* :mod:`.values` — :class:`~.values.Value` (per-lane part + wave-uniform symbolic terms),
  :class:`~.values.Symbol`, ``unknown(reason)`` and :class:`~.values.LaneAlgebra`, the arithmetic.
* :mod:`.threads` — ``thread_layout(kernel, override) -> ThreadLayout``: the work-items analysed.
* :mod:`.semantics` — what each integer VALU/SALU instruction computes per lane.
* :mod:`.evaluator` — ``LaneEvaluator(program, kernel=None, layout=None)`` with
  ``.value(reg, index) -> Value`` (the register just before instruction ``index``) and
  ``.lds_access(instr)``; ``evaluator_for(analysis, index)`` caches one evaluator per kernel.
* :mod:`.lds` — ``ds_shape(mnemonic)``, ``lds_access(evaluator, instr) -> LdsAccess | Value | None``
  (per-lane byte addresses of a DS load/store, or the unknown Value saying why not) and
  ``lds_banks(kernel)``; the bank arithmetic itself is :mod:`isalint.hw.lds_banks`.

The CFG walks the evaluator shares with GMEM001 (reaching definitions, VALU slices) are
:mod:`isalint.model.reaching`.
"""

"""The rewrite toolkit: what every ``isalint fix`` pass needs besides its own idea.

A pass is ``apply(analysis, options) -> FixResult`` (:mod:`isalint.fixes`), raising ``FixRefused`` with
the line and the reason whenever it cannot prove a step safe. It reads the program from the model
(``analysis.program``: instructions with exact ``defs``/``uses``, kernels, descriptor; ``analysis.cfg``:
blocks, edges, natural loops) and the target's facts from :mod:`isalint.hw`, and builds its output with
the pieces below. A typical pass: pick the code (the model), find registers (:mod:`.registers`),
write new lines (:mod:`.edits`), move values on the edges into and out of the code it changed
(:mod:`.moves`), re-derive waits (:mod:`.waits`), render, :func:`refresh_counts`, then check its output
(:mod:`.verify`) and return it. :mod:`.pipeline` does the rest for every pass.

Edits (:mod:`.edits`)
    ``Edits(program)``: ``insert_before(i, lines)``, ``insert_after(i, lines)``, ``replace(i, lines)``,
    ``delete(i)`` by instruction index; ``*_line`` variants by line index, ``line_of(i)``;
    ``replace_span(line, start, end, text)`` inside a line; ``render()`` -> the whole file, byte-exact
    wherever no edit applies. ``indent_of(line)``, ``indent_of_text(text)``.
Registers (:mod:`.registers`) — files ``"v"`` (v0-v255) and ``"s"`` (s0-s105)
    ``LiveRegisters(program, file)``: ``block_in(b)``, ``block_out(b)``, ``before(i)``, ``after(i)``
    (register numbers). ``hidden_view(program, hide_all, hide_defs, hide_uses, file)``: the program with
    the code a pass replaces set aside, for liveness of the rest (hide the reads
    :func:`isalint.model.liveness.ignorable_reads` finds too). ``rewritten_view(program, removed,
    drop_uses, add_uses)``: the same in every register file by name, with reads added where new code
    will read. ``busy_registers(program, at, file)``,
    ``in_flight(counters, at, file, ignore)`` (loads still to write). ``free_registers(program, at, file,
    count=1, limit=None)``: first registers of free runs of ``count``, SGPR runs aligned (pairs even,
    wider runs by 4), under ``limit`` (default: the kernel's declared count, :func:`declared_count`).
    ``sgpr_budget(program, kernel) -> SgprBudget`` (declared, used, initialised user+system SGPRs,
    VCC use and reservation, ``limit``). ``special_free(program, at, "vcc_lo")`` for VCC/M0.
    ``highest_register(program, i, file)``, ``waves_with_vgprs(kernel, n)``, ``register_numbers``.
Moves (:mod:`.moves`)
    ``sequential_moves({dst: src}, temps, file=)``: a parallel copy as ordered single moves, a cycle
    broken through the first free temporary; ``move_lines(indent, moves, file)`` (VGPRs paired as
    ``v_dual_mov_b32`` where legal, SGPRs as ``s_mov_b32``). ``Edge``, ``block_edges``, ``entry_edges``,
    ``exit_edges``; ``EdgePlacer(analysis, edits, indent, stem)``: ``place(edge, lines)`` on any edge
    (end of source, start of target, after a fall-through, or a trampoline), ``add_trampolines(kernel)``.
Labels (:mod:`.labels`)
    ``Labels(program).fresh(name)``: ``name``, or ``name_2``, ``name_3`` ... when the file already has it
    anywhere as a symbol or it was given out before.
Counts (:mod:`.counts`)
    ``rewrite_counts(analysis) -> (text, notes)``: every declared count (descriptor, metadata, the
    compiler's comments) made to match the code — the whole of ``fix --metadata``.
    ``refresh_counts(text, path, vgprs, sgprs=None)``: the same on a pass's output, or, where a kernel's
    registers cannot all be seen, the counts raised to at least what the pass added (``raise_counts``).
Waits (:mod:`.waits`)
    ``parse_lines(lines)`` (instructions of new code, for :func:`isalint.model.counters.plan_waits` /
    ``plan_loop_waits``), ``strip_counter(wait, "lgkmcnt")``, ``state_entering(analysis, loop)``,
    ``state_leaving(analysis, block)``; ``plan_at_slots(seq, slots, entry)`` /
    ``plan_loop_at_slots(...)`` (waits re-derived at the places the code waited),
    ``wait_to_cover(new_state, old_state)`` (where new code rejoins old), ``wait_lines(indent, thr)``.
LDS offsets and code size (:mod:`.dsoffset`, :mod:`.codesize`)
    ``dsoffset.foldable(ins)``, ``address_operand(ins)``, ``offsets(ins)`` (bytes, by field),
    ``folded_fields(ins, constant)`` (the fields that add ``constant`` bytes, None when they do not fit),
    ``rewrite(ins, text, base, fields)``; ``codesize.code_bytes(instrs)`` against ``BUDGET_BYTES`` (half
    the instruction cache).
Loops (:mod:`.loops`)
    ``preheader(analysis, loop) -> (index, after)``: the one point that runs once before the loop;
    ``scc_dead(analysis, at, after, what)``.
Verify (:mod:`.verify`)
    ``reparse(text, path) -> Analysis``, ``check_understood(ins)``, ``check_vopd(ins)``,
    ``check_no_new_wait_hazards(old_program, new_program)``: "internal error" refusals.
Pipeline (:mod:`.pipeline`) — used by ``isalint fix`` and ``isalint optimize``
    ``run_passes(analysis, names, options) -> Outcome`` (original, text, summaries, refused,
    only_metadata; ``names`` as the registry spells them, ``dual-fmac``); ``apply_pass(name, module,
    analysis, options)`` (a pass's ``apply`` behind the guard of :mod:`.pcrel`); ``finish_pass(module, before,
    text, path)`` (the hints a pass's new code needs); ``validate(path, original, candidate, gemm_n,
    code_unchanged)`` (assemble and compare machine code, or emulate both, :mod:`isalint.validate`);
    ``validator_missing()``;
    ``write_atomic(target, text)``.
PC-relative code (:mod:`.pcrel`)
    ``constant_pc_offset(program)``, ``refusal(program, what)``, ``guard(program, text, name)``: code that
    reaches an address by a numeric offset from ``s_getpc_b64`` (a disassembled code object) must keep
    every instruction where it is; the pipeline refuses any pass's output that adds, removes or changes
    one there (with the ``s_getpc_b64`` line and the reason), the input left untouched.
Destination (:mod:`.destination`) — used by ``isalint fix`` and ``isalint assemble``
    ``check_destination(target)`` before any work (regular file or none, through symlinks, in a
    directory where a file can be created), ``write(dest, data)`` (temporary file and rename, mode kept
    or from the umask), ``holds(dest, data)``.

Adding a pass: write its module or package under :mod:`isalint.fixes` (``apply``, and ``VALIDATE_SIZES``,
``ONLY_METADATA`` or ``WRITES_HINTS`` when they apply) and add one entry to
:data:`isalint.fixes.registry.PASSES`: its name, help and options, in the place of the chain where
it runs. ``isalint fix`` gets its flag and options from there, ``isalint optimize`` its step (unless
``in_optimize=False``), both their help, and the pipeline its order; nothing else names a pass. Its
options reach ``apply`` in ``options`` by their ``dest`` (``--max-n`` as ``max_n``), with the
defaults the registry gives, and a command line that gives a pass's own option without the pass
is a usage error naming the pass. A pass imports from the model, :mod:`isalint.hw` and this
toolkit, never from another pass. Its golden outputs go in ``fixtures/fixes/<name>/`` (an input,
the expected output and the expected table, or the expected refusal; ``tests/test_golden_fixes.py``
regenerates and compares them, ``python tests/test_golden_fixes.py --update`` rewrites them).
A minimal pass, which zeroes a free SGPR pair on every edge into a loop::

    def apply(analysis, options):
        program, cfg = analysis.program, analysis.cfg
        loop = cfg.find_loop(options["loop"]) if options.get("loop") else analysis.hot_loop
        if loop is None:
            raise FixRefused(f"{program.path}: the kernel has no loop")
        at = analysis.loop_indices(loop)
        pairs = free_registers(program, at, "s", count=2)  # even-aligned, under the declared count
        if not pairs:
            raise FixRefused(f"{program.path}: no free SGPR pair in the loop")
        s = pairs[0]
        edits = Edits(program)
        placer = EdgePlacer(analysis, edits, indent_of(program.instrs[at[0]].line), ".Lisalint_example")
        for edge in entry_edges(program, cfg, loop.blocks, loop.header):
            placer.place(edge, [f"\ts_mov_b64 s[{s}:{s + 1}], 0"])
        placer.add_trampolines(program.kernel_of(at[0]))
        text = refresh_counts(edits.render(), program.path, vgprs=highest_register(program, at[0]) + 1)
        check_no_new_wait_hazards(program, reparse(text, program.path).program)
        return FixResult(text, f"example: s[{s}:{s + 1}] zeroed on entry to the loop")
"""
from __future__ import annotations

from .counts import raise_counts, refresh_counts, rewrite_counts
from .edits import Edits, indent_of, indent_of_text
from .labels import Labels
from .moves import Edge, EdgePlacer, block_edges, entry_edges, exit_edges, move_lines, sequential_moves
from .registers import (LiveRegisters, SgprBudget, busy_registers, declared_count, free_registers,
                        hidden_view, highest_register, in_flight, register_numbers, rewritten_view, sgpr_budget,
                        special_free, waves_with_vgprs)
from .verify import check_no_new_wait_hazards, check_understood, check_vopd, reparse
from .waits import (parse_lines, plan_at_slots, plan_loop_at_slots, state_entering, state_leaving, strip_counter,
                    wait_lines, wait_to_cover)

__all__ = [
    "Edge", "EdgePlacer", "Edits", "Labels", "LiveRegisters", "SgprBudget", "block_edges", "busy_registers",
    "check_no_new_wait_hazards", "check_understood", "check_vopd", "declared_count", "entry_edges",
    "exit_edges", "free_registers", "hidden_view", "highest_register", "in_flight", "indent_of",
    "indent_of_text", "move_lines", "parse_lines", "plan_at_slots", "plan_loop_at_slots", "raise_counts",
    "refresh_counts", "register_numbers", "reparse", "rewritten_view", "rewrite_counts", "sequential_moves",
    "sgpr_budget", "special_free", "state_entering", "state_leaving", "strip_counter", "wait_lines", "wait_to_cover",
    "waves_with_vgprs",
]

"""The program model: instructions with exact defs/uses, kernels, target facts.

Built from a parsed :class:`~isalint.parse.SourceFile` and the generated ISA
data (:mod:`isalint.isa`). Nothing here knows about individual opcodes except
through that data.
"""
from __future__ import annotations

import re

from ..isa import OpInfo, OperandSpec, lookup
from ..parse.nodes import Line, Operand, Statement
from ..parse.source import InputError, SourceFile
from ..records import Record

DEFAULT_TARGET = "gfx1100"
_TARGET = re.compile(r'"?amdgcn-amd-amdhsa--(gfx\w+)')
# Modifier keywords of the gfx11 assembler syntax (LLVM AMDGPU AsmParser); anything else after the
# operands is a typo or garbage and makes the instruction opaque.
KNOWN_MODIFIERS = frozenset("""
offset offset0 offset1 glc slc dlc nv lds tfe gds idxen offen addr64 format dmask dim unorm r128 a16 d16 lwe
clamp mul div op_sel op_sel_hi neg_lo neg_hi quad_perm row_shl row_shr row_ror row_mirror row_half_mirror
row_share row_xmask row_bcast wave_shl wave_shr wave_rol wave_ror row_mask bank_mask bound_ctrl fi dpp8
byte_sel index_key wait_exp wait_vdst wait_va_vdst wait_vm_vsrc done compr vm row en row_en
noa16 nor128 notfe nolwe nod16 nounorm noglc noslc nodlc nogds noclamp
""".split())  # the no- forms: LLVM's spelling of a bit left clear
_COMMENT_FACT = re.compile(r";\s*(NumVgprs|NumSgprs|ScratchSize|Occupancy|LDSByteSize|NumVGPRsForWavesPerEU|"
                           r"NumSGPRsForWavesPerEU):\s*(\d{1,18})(?!\d)")


class Slot(Record):
    """One written operand matched to its role in the ISA data."""

    name: str  # the ISA field name: vdst, src0, vsrc1, addr, data0, ...
    role: str  # def | use | defuse
    operand: Operand
    regs: list[str]

    __slots__ = _fields = ("name", "role", "operand", "regs")

    def __init__(self, name: str, role: str, operand: Operand, regs: list[str]):
        self.name = name
        self.role = role
        self.operand = operand
        self.regs = regs


class Instr(Record):
    index: int
    line: Line
    stmts: list[Statement]
    infos: list[OpInfo | None]
    slots: list[list[Slot]]  # per statement
    defs: list[str]
    uses: list[str]
    klass: str
    counters: tuple[str, ...]
    problem: str | None  # why the instruction is opaque (unknown opcode, bad operands)
    problem_col: int
    block: int

    _fields = ("index", "line", "stmts", "infos", "slots", "defs", "uses", "klass", "counters", "problem",
               "problem_col", "block")
    # ``opcode`` (the gfx11 name of the first opcode, aliases resolved), ``opaque`` (whether the
    # instruction cannot be decoded: it has a problem), ``lineno`` and ``is_vopd`` are read by the
    # hundred thousand: attributes worked out once from the fields, which are never reassigned
    __slots__ = _fields + ("opcode", "opaque", "lineno", "is_vopd")

    def __init__(self, index: int, line: Line, stmts: list[Statement], infos: list[OpInfo | None],
                 slots: list[list[Slot]], defs: list[str], uses: list[str], klass: str, counters: tuple[str, ...],
                 problem: str | None = None, problem_col: int = 1, block: int = -1):
        self.index = index
        self.line = line
        self.stmts = stmts
        self.infos = infos
        self.slots = slots
        self.defs = defs
        self.uses = uses
        self.klass = klass
        self.counters = counters
        self.problem = problem
        self.problem_col = problem_col
        self.block = block
        info = infos[0] if infos else None
        self.opcode = info.mnemonic if info is not None else (stmts[0].mnemonic if stmts else "")
        self.opaque = problem is not None
        self.lineno = line.number  # the line it is written on
        self.is_vopd = len(stmts) == 2  # a VOPD pair (two statements)

    @property
    def mnemonic(self) -> str:
        """The instruction's name(s) as written."""
        return " :: ".join(s.mnemonic for s in self.stmts)

    @property
    def canonical(self) -> str:
        """The gfx11 name(s): an alias LLVM accepts (``v_add_u32_e32``) resolved to its opcode."""
        return " :: ".join(i.mnemonic if i is not None else s.mnemonic for s, i in zip(self.stmts, self.infos))

    def text(self) -> str:
        return self.line.code.strip()

    def is_memory(self) -> bool:
        return bool(self.counters)

    def branch_target(self) -> str | None:
        if self.klass != "branch":
            return None
        for op in self.stmts[0].operands:
            if op.kind in ("label", "expr"):
                return symbol_name(op.text)
        return None

    def is_unconditional_branch(self) -> bool:
        return self.klass == "branch" and self.opcode == "s_branch"

    def ends_program(self) -> bool:
        return self.klass == "endpgm" or self.opcode in ("s_setpc_b64", "s_endpgm_saved", "s_trap")


class Kernel(Record):
    name: str
    first: int  # index of the first instruction
    last: int  # index one past the last instruction
    descriptor: dict[str, int]
    descriptor_lines: dict[str, Line]
    program: Program | None
    comment_facts: dict[str, tuple[int, Line]]
    symbol_line: Line | None

    _fields = ("name", "first", "last", "descriptor", "descriptor_lines", "program", "comment_facts", "symbol_line")
    _no_repr = frozenset({"program"})

    def __init__(self, name: str, first: int, last: int, descriptor: dict[str, int] | None = None,
                 descriptor_lines: dict[str, Line] | None = None, program: Program | None = None,
                 comment_facts: dict[str, tuple[int, Line]] | None = None, symbol_line: Line | None = None):
        self.name = name
        self.first = first
        self.last = last
        self.descriptor = {} if descriptor is None else descriptor
        self.descriptor_lines = {} if descriptor_lines is None else descriptor_lines
        self.program = program
        self.comment_facts = {} if comment_facts is None else comment_facts
        self.symbol_line = symbol_line

    @property
    def metadata(self) -> dict | None:
        """This kernel's entry of the ``.amdgpu_metadata`` document (parsed on first use)."""
        if self.program is None:
            return None
        return self.program.kernel_metadata().get(self.name)

    @property
    def wave_size(self) -> int:
        return 32 if self._setting(".amdhsa_wavefront_size32", 1) else 64

    @property
    def wgp_mode(self) -> bool:
        return bool(self._setting(".amdhsa_workgroup_processor_mode", 1))

    def _setting(self, key: str, default: int) -> int:
        """A descriptor field; for a function with no descriptor of its own (a device function clang
        emits beside the kernels, with ``-mwavefrontsize64`` or ``-mcumode`` like them), the value
        the file's kernels share; else the hardware default."""
        if key in self.descriptor:
            return self.descriptor[key]
        if self.program is not None:
            values = {k.descriptor[key] for k in self.program.kernels if key in k.descriptor}
            if len(values) == 1:
                return values.pop()
            if key == ".amdhsa_wavefront_size32" and not values and self.program.wave64:
                return 0  # no descriptor anywhere, the metadata says wave64
        return default


class Program(Record):
    source: SourceFile
    target: str
    instrs: list[Instr]
    labels: dict[str, int]  # label -> index of the instruction that follows it
    label_lines: dict[str, Line]
    kernels: list[Kernel]
    metadata_text: str | None
    wave64: bool  # the file's kernels run in wave64 (.amdhsa_wavefront_size32 0)
    _cfg: object
    _metadata: dict | None
    limits: list  # model.limits.LimitReached: analyses that gave up (not a field: a copy starts afresh)

    _fields = ("source", "target", "instrs", "labels", "label_lines", "kernels", "metadata_text", "wave64", "_cfg",
               "_metadata")

    def __init__(self, source: SourceFile, target: str, instrs: list[Instr], labels: dict[str, int],
                 label_lines: dict[str, Line], kernels: list[Kernel], metadata_text: str | None = None,
                 wave64: bool = False, _cfg: object = None, _metadata: dict | None = None):
        self.source = source
        self.target = target
        self.instrs = instrs
        self.labels = labels
        self.label_lines = label_lines
        self.kernels = kernels
        self.metadata_text = metadata_text
        self.wave64 = wave64
        self._cfg = _cfg
        self._metadata = _metadata
        self.limits = []

    @property
    def path(self) -> str:
        return self.source.path

    def cfg(self):
        if self._cfg is None:
            from .cfg import build_cfg

            self._cfg = build_cfg(self)
        return self._cfg

    def kernel_metadata(self) -> dict[str, dict]:
        """{kernel name: its metadata entry}; empty when there is no (readable) document."""
        if self._metadata is None:
            self._metadata = _parse_metadata(self.metadata_text) if self.metadata_text else {}
        return self._metadata

    def metadata_document(self) -> dict | None:
        if not self.metadata_text:
            return None
        try:
            return _load_yaml(self.metadata_text)
        except Exception:
            return None

    def kernel_of(self, index: int) -> Kernel | None:
        for k in self.kernels:
            if k.first <= index < k.last:
                return k
        return self.kernels[0] if self.kernels else None


def symbol_name(text: str) -> str:
    """The symbol a written name stands for: ``"non-uniform_load"`` (quoted, as the assembler writes a
    name that is not an identifier) is ``non-uniform_load``, the name of its label and of its metadata."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1]
    return text


def build_program(source: SourceFile, default_target: str = DEFAULT_TARGET) -> Program:
    target = default_target
    instrs: list[Instr] = []
    labels: dict[str, int] = {}
    label_lines: dict[str, Line] = {}
    kernels: list[Kernel] = []
    by_name: dict[str, Kernel] = {}
    current_descriptor: Kernel | None = None
    metadata_lines: list[str] = []
    comment_facts: dict[str, tuple[int, Line]] = {}
    wave64 = _is_wave64(source)
    make, add = _make_instr, instrs.append
    for line in source.lines:
        kind = line.kind
        if kind == "instruction":
            add(make(len(instrs), line, wave64))
            continue
        if kind == "metadata":
            metadata_lines.append(line.text)
            continue
        if line.label is not None:
            labels[line.label] = len(instrs)
            label_lines[line.label] = line
        if kind == "directive":
            d = line.directive
            if d == ".amdgcn_target":
                m = _TARGET.search(line.args)
                if m:
                    target = m.group(1)
                else:
                    raise InputError(source.path, line.number, f"unrecognised target {line.args}")
            elif d == ".amdhsa_kernel":
                name = symbol_name(line.args.split()[0]) if line.args else ""
                current_descriptor = by_name.get(name)
                if current_descriptor is None:
                    current_descriptor = Kernel(name, 0, 0)
                    by_name[name] = current_descriptor
            elif d == ".end_amdhsa_kernel":
                current_descriptor = None
            elif current_descriptor is not None and d.startswith(".amdhsa_"):
                try:
                    current_descriptor.descriptor[d] = int(line.args.split()[0], 0)
                    current_descriptor.descriptor_lines[d] = line
                except (ValueError, IndexError):
                    pass
            elif d == ".type" and "@function" in line.args:
                name = symbol_name(line.args.split(",")[0].strip())
                if name not in by_name:
                    by_name[name] = Kernel(name, 0, 0)
        if line.comment:
            m = _COMMENT_FACT.search(line.comment)
            if m:
                comment_facts[m.group(1)] = (int(m.group(2)), line)
    if not target.startswith("gfx11"):
        raise InputError(source.path, 1, f"target {target} is not RDNA3 (gfx11); isalint analyzes gfx11 only")

    # Kernel instruction ranges: from the kernel's symbol label to the next kernel symbol.
    starts = sorted((labels[name], name) for name in by_name if name in labels)
    for n, (first, name) in enumerate(starts):
        k = by_name[name]
        k.first = first
        k.last = starts[n + 1][0] if n + 1 < len(starts) else len(instrs)
        k.symbol_line = label_lines[name]
        kernels.append(k)
    if not kernels and instrs:
        kernels.append(Kernel("<bare>", 0, len(instrs)))
    for k in kernels:
        k.comment_facts = comment_facts
    metadata_text = "\n".join(metadata_lines) if metadata_lines else None
    program = Program(source, target, instrs, labels, label_lines, kernels, metadata_text, wave64=wave64)
    for k in kernels:
        k.program = program
    return program


def _is_wave64(source: SourceFile) -> bool:
    """A kernel descriptor asks for wave64 (``.amdhsa_wavefront_size32 0``), or, with no descriptor,
    the metadata does (``.wavefront_size: 64``). The descriptor follows the code, so it is looked up
    before the instructions are built; a file's kernels are taken to share one wave size."""
    meta64 = False
    for line in source.lines:
        if line.kind == "directive" and line.directive == ".amdhsa_wavefront_size32":
            return line.args.split()[:1] == ["0"]
        if not meta64 and ".wavefront_size:" in line.text:
            meta64 = line.text.split(".wavefront_size:", 1)[1].split("#")[0].strip() == "64"
    return meta64


# Wave64 (RDNA3 ISA guide, "Wave32 and Wave64"): VCC and EXEC are register pairs and lane masks
# take two SGPRs.
_WAVE64_PAIR = {"vcc_lo": ("vcc_lo", "vcc_hi"), "exec_lo": ("exec_lo", "exec_hi")}


def _wave64_regs(regs: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for r in regs:
        out.extend(_WAVE64_PAIR.get(r, (r,)))
    return out


def _load_yaml(text: str):
    """The parsed document; raises ValueError when it is too deep or too large to read safely."""
    from .metadata_shape import MAX_DOCUMENT_CHARS, too_deep

    if len(text) > MAX_DOCUMENT_CHARS or too_deep(text):
        raise ValueError("the metadata document is too large or too deeply nested")
    import yaml

    return yaml.load(text, Loader=_metadata_loader())


def _metadata_loader():
    """PyYAML's safe loader that also reads LLVM's ``!str`` tag (a string that would read as another
    type, such as an argument named ``N``) as the string it tags."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = _LOADERS.get(base)
    if loader is None:
        loader = type("MetadataLoader", (base,), {})
        loader.add_constructor("!str", lambda ld, node: str(ld.construct_scalar(node)))
        _LOADERS[base] = loader
    return loader


_LOADERS: dict = {}


def _parse_metadata(text: str) -> dict[str, dict]:
    from .metadata_shape import kernel_entries, too_deep

    if too_deep(text):
        return {}
    doc = _read_compiler_yaml(text)
    if doc is None:
        try:
            doc = _load_yaml(text)
        except Exception:  # a broken metadata document is reported by META001, not here
            return {}
    return kernel_entries(doc)


# The subset of YAML the compilers write for .amdgpu_metadata (LLVM's YAML writer): block
# mappings and sequences, ``key: value`` with decimal integers, true/false, single-quoted strings,
# plain words and ``[]``. Reading it by hand spares `isalint check` the PyYAML import; anything outside
# the subset (flow style, other scalars, comments, tabs, anchors, ...) goes to PyYAML.
_YAML_KEY = re.compile(r"([A-Za-z_.][A-Za-z0-9_.$-]*):(?: +(.*))?\Z")
_YAML_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")  # longer: PyYAML reads it
_YAML_WORD = re.compile(r"\.?[A-Za-z_][A-Za-z0-9_.$ *+/<>@()-]*\Z")
# plain words PyYAML (YAML 1.1) reads as something other than a string
_YAML_SPECIAL = frozenset("""
null Null NULL true True TRUE false False FALSE yes Yes YES no No NO on On ON off Off OFF
.inf .Inf .INF .nan .NaN .NAN
""".split())


class _NotSubset(Exception):
    pass


def _read_compiler_yaml(text: str):
    """The document parsed as PyYAML's safe loader would, or None when it is not in the subset."""
    if "\t" in text or "#" in text or "&" in text or "\r" in text:
        return None
    rows: list[list] = []
    state = "start"
    for raw in text.split("\n"):
        content = raw.strip(" ")
        if not content:
            continue
        if state == "start":
            if content != "---" or raw != content:
                return None
            state = "body"
        elif state == "body":
            if raw.rstrip(" ") == "...":
                state = "end"
            elif content in ("---", "...") or content.startswith("%"):
                return None
            else:
                rows.append([len(raw) - len(raw.lstrip(" ")), content])
        else:
            return None
    if state != "end" or not rows:
        return None
    try:
        value, end = _yaml_block(rows, 0, rows[0][0])
    except _NotSubset:
        return None
    return value if end == len(rows) else None


def _yaml_block(rows, i: int, indent: int):
    if rows[i][1] == "-" or rows[i][1].startswith("- "):
        return _yaml_sequence(rows, i, indent)
    return _yaml_mapping(rows, i, indent)


def _yaml_mapping(rows, i: int, indent: int):
    out: dict = {}
    while i < len(rows) and rows[i][0] == indent:
        m = _YAML_KEY.match(rows[i][1])
        if m is None:
            raise _NotSubset
        key = _yaml_scalar(m.group(1))
        if not isinstance(key, str) or key in out:
            raise _NotSubset
        i += 1
        if m.group(2) is not None:
            out[key] = _yaml_scalar(m.group(2))
        elif i < len(rows) and rows[i][0] > indent:
            out[key], i = _yaml_block(rows, i, rows[i][0])
        else:
            raise _NotSubset  # an empty value, or a sequence at the key's indentation
    if i < len(rows) and rows[i][0] > indent:
        raise _NotSubset
    return out, i


def _yaml_sequence(rows, i: int, indent: int):
    out: list = []
    while i < len(rows) and rows[i][0] == indent and (rows[i][1] == "-" or rows[i][1].startswith("- ")):
        item = rows[i][1][1:]
        rest = item.lstrip(" ")
        if not rest:
            raise _NotSubset
        if rest.startswith("-"):
            raise _NotSubset
        if _YAML_KEY.match(rest):
            # "- key: value": a mapping whose first key sits after the dash
            rows[i] = [indent + 1 + len(item) - len(rest), rest]
            value, i = _yaml_mapping(rows, i, rows[i][0])
            out.append(value)
        else:
            out.append(_yaml_scalar(rest))
            i += 1
    if i < len(rows) and rows[i][0] > indent:
        raise _NotSubset
    return out, i


def _yaml_scalar(text: str):
    text = text.rstrip(" ")
    if text.startswith("!str "):  # LLVM tags a string that would read as another type (an argument named N)
        word = text[5:].strip(" ")
        if word and _YAML_WORD.match(word) and ": " not in word:
            return word
        raise _NotSubset
    if text.startswith("'"):
        inner = text[1:-1]
        if len(text) < 2 or not text.endswith("'") or "'" in inner.replace("''", ""):
            raise _NotSubset
        return inner.replace("''", "'")
    if _YAML_INT.match(text):
        return int(text)
    if text == "true" or text == "false":
        return text == "true"
    if text == "[]":  # LLVM writes a kernel without arguments as `.args: []`
        return []
    if _YAML_WORD.match(text) and text not in _YAML_SPECIAL and ": " not in text:
        return text
    raise _NotSubset


def _add_registers(stmt_slots: list[Slot], defs: list[str], uses: list[str]) -> None:
    """Add the registers of a statement's operands to what the instruction writes and reads."""
    for slot in stmt_slots:
        role = slot.role
        if role == "use":
            uses += slot.regs
        elif role == "def":
            defs += slot.regs
        elif role == "defuse":
            uses += slot.regs
            defs += slot.regs


# What an instruction's statements decode to (its OpInfos, slots, defs, uses, class, counters,
# problem) depends on nothing but them and the wave size; the parser gives every line of one text the
# same list of statements. Keyed by the list's identity, which the entry keeps alive.
_DECODED: dict[tuple[int, bool], tuple] = {}
_DECODED_MAX = 1 << 16


def _make_instr(index: int, line: Line, wave64: bool = False) -> Instr:
    stmts = line.statements
    key = (id(stmts), wave64)
    known = _DECODED.get(key)
    if known is not None and known[0] is stmts:
        _, infos, slots, defs, uses, klass, counters, problem, problem_col = known
        return Instr(index, line, stmts, infos, slots, defs, uses, klass, counters, problem, problem_col)
    ins = _decode_instr(index, line, wave64)
    if len(_DECODED) >= _DECODED_MAX:
        _DECODED.clear()
    _DECODED[key] = (stmts, ins.infos, ins.slots, ins.defs, ins.uses, ins.klass, ins.counters, ins.problem,
                     ins.problem_col)
    return ins


def _decode_instr(index: int, line: Line, wave64: bool = False) -> Instr:
    stmts = line.statements
    if len(stmts) == 1 and not wave64:  # the usual instruction: what the loop below does for one statement
        stmt = stmts[0]
        info = lookup(stmt.mnemonic)
        if info is not None and not stmt.modifiers:
            try:
                stmt_slots = match_operands(stmt, info, False)
            except OperandMismatch:
                pass  # the general path below says what is wrong
            else:
                defs: list[str] = []
                uses: list[str] = []
                _add_registers(stmt_slots, defs, uses)
                if info.implicit_uses:
                    uses += info.implicit_uses
                if info.implicit_defs:
                    defs += info.implicit_defs
                return Instr(index, line, stmts, [info], [stmt_slots],
                             list(dict.fromkeys(defs)) if len(defs) > 1 else defs,
                             list(dict.fromkeys(uses)) if len(uses) > 1 else uses, info.klass,
                             info.counters, None, 1)
    infos: list[OpInfo | None] = []
    slots: list[list[Slot]] = []
    defs: list[str] = []
    uses: list[str] = []
    problem = None
    problem_col = 1
    counters: tuple[str, ...] = ()
    for stmt in line.statements:
        info = lookup(stmt.mnemonic)
        infos.append(info)
        if info is None:
            problem = f"unknown instruction '{stmt.mnemonic}'"
            problem_col = stmt.col
            slots.append([])
            continue
        bad = None
        if stmt.modifiers:
            bad = next((m for m in stmt.modifiers if m.name not in KNOWN_MODIFIERS), None)
            if bad is None and info.encoding.startswith("SOP"):
                bad = stmt.modifiers[0]
            elif bad is None and info.mnemonic == "ds_nop":
                bad = stmt.modifiers[0]  # no offset or gds: only the GWS instructions take them bare
        if bad is not None:
            problem, problem_col = f"unexpected '{bad.text}' after the operands of '{stmt.mnemonic}'", bad.col
            slots.append([])
            continue
        try:
            stmt_slots = match_operands(stmt, info, wave64)
        except OperandMismatch as exc:
            problem, problem_col = str(exc), exc.col
            slots.append([])
            continue
        slots.append(stmt_slots)
        _add_registers(stmt_slots, defs, uses)
        if wave64:
            uses += _wave64_regs(info.implicit_uses)
            defs += _wave64_regs(info.implicit_defs)
        else:
            uses += info.implicit_uses
            defs += info.implicit_defs
        if info.counters:
            counters = counters + tuple(c for c in info.counters if c not in counters)
    if len(line.statements) == 2:
        klass = "vopd"
    elif infos and infos[0] is not None:
        klass = infos[0].klass
    else:
        klass = "unknown"
    if problem is not None:
        defs, uses, counters = [], [], ()
        klass = "unknown"
    return Instr(index, line, line.statements, infos, slots, _dedup(defs), _dedup(uses), klass,
                 counters, problem, problem_col)


def _dedup(regs: list[str]) -> list[str]:
    return list(dict.fromkeys(regs))


_REGISTER_KINDS = frozenset(("vgpr", "sgpr", "ttmp", "special"))
_MEMORY_ENCODINGS = frozenset(("GLOBAL", "SCRATCH", "FLAT"))
_BUFFER_ENCODINGS = frozenset(("MUBUF", "MTBUF", "MIMG"))


class OperandMismatch(ValueError):
    def __init__(self, message: str, col: int):
        super().__init__(message)
        self.col = col


def match_operands(stmt: Statement, info: OpInfo, wave64: bool = False) -> list[Slot]:
    """Pair the written operands with the ISA operand specs, in order.

    Handles the syntax-level facts the ISA data cannot know: ``off`` for a
    missing SGPR base, a 32-bit ``vaddr`` when a global access has an SGPR base
    (RDNA3 ISA guide, 10.x "Global memory": saddr + 32-bit vgpr offset), and the
    call-like operands of s_waitcnt / s_delay_alu which carry no registers.
    """
    specs = info.operands
    if not specs:
        return []
    written = [op for op in stmt.operands if op.kind != "func" or op.file in ("hwreg", "sendmsg")]
    if len(specs) != len(written):
        fitting = info.operands_for(len(written))
        if fitting is not None:
            specs = fitting
    encoding = info.encoding
    if encoding in _MEMORY_ENCODINGS:
        specs = _memory_specs(list(specs), written)
    elif encoding in _BUFFER_ENCODINGS:
        specs = _buffer_specs(list(specs), stmt, encoding)
    if wave64 and any(s.mask for s in specs):
        specs = [OperandSpec(s.name, s.role, 64, s.kind, s.optional, True) if s.mask else s for s in specs]
    if wave64 and info.mnemonic.startswith("v_wmma_"):
        # a wave64 WMMA spreads its C/D matrix over twice the lanes: half the VGPRs per lane (A and B
        # keep their width), as the wave64 forms of the RDNA3 ISA guide and LLVM's assembler have them
        specs = [OperandSpec(s.name, s.role, s.bits // 2, s.kind, s.optional) if s.name in ("vdst", "src2") else s
                 for s in specs]
    if len(written) > len(specs):
        extra = written[len(specs)]
        raise OperandMismatch(f"'{stmt.mnemonic}' takes {len(specs)} operands, found {len(written)}", extra.col)
    if len(written) < len(specs) and len(written) < sum(1 for s in specs if not s.optional) and \
            info.klass not in ("waitcnt", "delay", "nop"):
        end = stmt.end_col
        raise OperandMismatch(f"'{stmt.mnemonic}' takes {len(specs)} operands, found {len(written)}", end)
    slots = []
    shared = _SLOTS
    for op, spec in zip(written, specs):
        got = shared.get((id(op), id(spec)))
        if got is not None and got[0] is spec and got[1].operand is op:
            slots.append(got[1])
            continue
        kind = op.kind
        if (kind == "vgpr" or kind == "sgpr") and op.count == spec.regs:  # the common case
            regs = op.registers()
        else:
            regs = _operand_registers(op, spec, stmt)
        if len(shared) >= _SLOTS_MAX:
            shared.clear()
        slot = Slot(spec.name, spec.role, op, regs)
        shared[(id(op), id(spec))] = (spec, slot)
        slots.append(slot)
    if encoding == "MIMG":
        _image_address_read(slots, stmt)
    return slots


def _image_address_read(slots: list[Slot], stmt: Statement) -> None:
    """An image instruction reads as many address dwords as its dim, variant and modifiers make: a
    contiguous ``vaddr`` the assembler wants wider (8 registers for 5 to 7 dwords, 16 for more than
    12; :mod:`isalint.isa.mimg`) names registers the instruction does not read."""
    from ..isa import mimg

    mods = {m.name: (m.value if m.value is not None else "") for m in stmt.modifiers}
    for k, slot in enumerate(slots):
        if slot.name == "vaddr":
            n = mimg.address_dwords(stmt.mnemonic, mods)
            if n is not None and len(slot.regs) > n:
                slots[k] = Slot(slot.name, slot.role, slot.operand, slot.regs[:n])


# Slots are never changed once made, nor their register lists, and the parser makes one operand node
# per text and column: an operand matched to the same ISA operand spec is one Slot, wherever it comes
# back (its registers depend on nothing else). Keyed by the identities of the operand and the spec,
# which the entry keeps alive (so that the key is never another pair's).
_SLOTS: dict[tuple[int, int], tuple] = {}
_SLOTS_MAX = 1 << 14


def _memory_specs(specs: list[OperandSpec], written: list[Operand]) -> list[OperandSpec]:
    names = [s.name for s in specs]
    if "saddr" not in names:
        return specs
    saddr_index = names.index("saddr")
    saddr_written = written[saddr_index] if saddr_index < len(written) else None
    if saddr_written is not None and saddr_written.kind != "off":
        return [OperandSpec(s.name, s.role, 32, s.kind, s.optional) if s.name in ("vaddr", "addr") else s for s in specs]
    return specs


def _buffer_specs(specs: list[OperandSpec], stmt: Statement, encoding: str) -> list[OperandSpec]:
    """MUBUF/MTBUF ``vaddr`` holds an index (``idxen``), an offset (``offen``), both (a pair) or
    is ``off``; ``tfe`` returns one more dword, the fetch status (RDNA3 ISA guide, "Buffer
    Instructions")."""
    names = {m.name for m in stmt.modifiers}
    if encoding == "MIMG":
        return _image_specs(specs, stmt)
    out = []
    for s in specs:
        if s.name == "vaddr" and encoding != "MIMG":
            s = OperandSpec(s.name, s.role, 32 * max(1, ("idxen" in names) + ("offen" in names)), s.kind, s.optional)
        elif s.name == "vdata" and "tfe" in names and s.role in ("def", "defuse"):
            s = OperandSpec(s.name, s.role, s.bits + 32, s.kind, s.optional)
        out.append(s)
    return out


def _image_specs(specs: list[OperandSpec], stmt: Statement) -> list[OperandSpec]:
    """MIMG ``vaddr`` and ``vdata`` as wide as the dim, the sampling variant and the modifiers make
    them (:mod:`isalint.isa.mimg`); a written width among those the assembler accepts is taken."""
    from ..isa import mimg

    mods = {m.name: (m.value if m.value is not None else "") for m in stmt.modifiers}
    written = [op for op in stmt.operands if op.kind != "func"]
    out = []
    for k, s in enumerate(specs):
        op = written[k] if k < len(written) else None
        if s.name == "vaddr":
            widths = mimg.address_widths(stmt.mnemonic, mods, nsa=op is not None and isinstance(op.value, tuple))
            if widths is not None:
                n = op.count if op is not None and op.count in widths else widths[0]
                s = OperandSpec(s.name, s.role, 32 * n, s.kind, s.optional)
        elif s.name == "vdata":
            widths = mimg.data_widths(stmt.mnemonic, mods)
            if widths is not None:
                n = op.count if op is not None and op.count in widths else widths[0]
                s = OperandSpec(s.name, s.role, 32 * n, s.kind, s.optional)
        out.append(s)
    return out


def _operand_registers(op: Operand, spec: OperandSpec, stmt: Statement) -> list[str]:
    kind = op.kind
    if kind == "off" and spec.name == "vaddr":
        return []  # a buffer access with neither idxen nor offen
    if kind not in _REGISTER_KINDS:
        return []
    width = spec.regs
    if kind == "special":
        return op.registers(width)
    if op.count != width and not (op.half and width == 1):
        if not (op.count == 1 and op.text.find("[") < 0 and width > 1 and spec.kind in ("src", "ssrc")):
            raise OperandMismatch(
                f"'{stmt.mnemonic}' operand {spec.name} is {spec.bits} bits, '{op.text}' names {op.count} register(s)",
                op.col)
    return op.registers(width)

"""The trace cursor: a sync that repeats the previous step's program does no per-node work.

The nodes recorded between two syncs form an *epoch*. Each gets ``idx``: the epoch's
``base`` plus its place in it (a leaf, or pending work an earlier sync left, joins the
epoch when an op first reads it or the sync computes it), and a
*signature*: its structural hash and its operands' places (a leaf's: its hash). The
signatures of an epoch, its *recording*, determine every program its sync can build
(the compile cache key is the same hashes and positions), so a recording keeps, per
tuple of root places, the program built for those roots: positions, cache key and
which places are its inputs.

A loop traces the same recording every step. While an epoch is traced, each new
signature is compared with the recording that followed the previous epoch's the last
time (one tuple comparison per op, in ``trace.call``). If every one matched, the sync
takes its program from the recording: O(roots + inputs), no graph walk, no key built,
and ``Program.nodes`` is only gathered if something reads it (a compile, the
interpreter). Any difference (another op, other sharing, another thread tracing)
leaves that sync to
``lowering.linearize``; the epoch is recorded for next time.
"""

from __future__ import annotations

import operator

from .ir import LEAF_OPS, Node, attrs_hash

_MAX_RECORDINGS = 64  # each holds one signature per node of its epoch
_MAX_PROGRAMS = 16  # per recording: root sets seen (one or two in a loop)
_MAX_NEXT = 4  # recordings remembered as following one recording (a loop's step shapes)


class Recording:
    """One epoch's signatures, the programs built from them, and what came next."""

    __slots__ = ("sigs", "expected", "programs", "observations", "next")

    def __init__(self, sigs: list):
        self.sigs = sigs
        self.expected = [*sigs, None]  # the sentinel: one node more than recorded differs
        self.programs: dict = {}  # root places -> _Entry
        self.observations: dict = {}  # ``steps`` observation key -> places it computes
        self.next: list = []  # recordings that followed this one, latest first


class _Entry:
    """A ``lowering.Program`` over an epoch's places, without its nodes."""

    __slots__ = ("gather", "operand_positions", "input_positions", "output_positions",
                 "key", "input_places")

    def __init__(self, places: list[int], program):
        self.gather = (operator.itemgetter(*places) if len(places) > 1
                       else lambda nodes, p=places[0]: (nodes[p],))
        self.operand_positions = program.operand_positions
        self.input_positions = program.input_positions
        self.output_positions = program.output_positions
        self.key = program.key
        self.input_places = tuple(places[p] for p in program.input_positions)


class Epoch:
    """The epoch being traced. ``trace.call`` reads and advances it inline (hot path):
    ``expected`` is the recording it is compared with (None: it records ``sigs``)."""

    __slots__ = ("base", "nodes", "sigs", "expected", "rec", "prev", "observed")

    def __init__(self):
        # ``observed``: observations decided by a walk, kept at ``close``; ``_advance``
        # starts the first epoch (base 1, nothing recorded to follow)
        self.base, self.nodes, self.prev = 0, [], None
        _advance(self)


_recordings: dict[int, Recording] = {}


def join(node: Node) -> int:
    """The place of an operand that is not in the epoch yet: a leaf joins it; pending
    work an earlier sync left (loop state carried across an observation) joins it in
    post-order, as if traced now, so such a step is recorded and taken like any other."""
    ep = EPOCH
    if node.op not in LEAF_OPS:
        base, stack = ep.base, [(node, False)]
        while stack:
            n, ready = stack.pop()
            if n.idx >= base:  # placed already (a shared operand)
                continue
            if ready:
                record(n, tuple([o.idx - base for o in n.operands]))
            elif n.op in LEAF_OPS:
                join(n)
            else:
                stack += [(n, True), *[(o, False) for o in reversed(n.operands)]]
        return node.idx - base
    nodes = ep.nodes
    i = len(nodes)
    node.idx = ep.base + i
    nodes.append(node)
    sig = node.hash
    expected = ep.expected
    if expected is None:
        ep.sigs.append(sig)
    elif expected[i] != sig:
        diverge(i, sig)
    return i


def places(nodes: tuple) -> tuple:
    """The operands' places (the general case of ``trace.call``'s inline code). Leaves
    joining the epoch (a sub-program call's hundreds of parameters) join as one batch."""
    ep = EPOCH
    base = ep.base
    end = base + len(ep.nodes)
    out, fresh = [], []
    for n in nodes:
        p = n.idx - base
        if p < 0:
            if n.op in LEAF_OPS:  # ``join``, batched: consecutive places from ``end``
                n.idx = end + len(fresh)
                p = n.idx - base
                fresh.append(n)
            else:
                p = join(n)  # pending work an earlier sync left
        out.append(p)
    if fresh:
        record_many(fresh, [n.hash for n in fresh])
    return tuple(out)


def record(node: Node, operand_places: tuple) -> None:
    """Add an interior node built outside ``trace.call``'s inline path."""
    ep = EPOCH
    nodes = ep.nodes
    i = len(nodes)
    node.idx = ep.base + i
    nodes.append(node)
    sig = (node.hash, *operand_places)
    expected = ep.expected
    if expected is None:
        ep.sigs.append(sig)
    elif expected[i] != sig:
        diverge(i, sig)


_GETS: dict = {}  # (node hash, place, outputs) -> (tuple_get hashes, attrs, signatures)


def gets(node: Node) -> tuple:
    """``(hashes, attrs, sigs)`` of the ``tuple_get`` nodes of a multi-output ``node``
    recorded at its place: memoized, so a loop's call records N outputs without
    building N hashes and signatures (``Node.__init__``'s hash, ``record``'s sig)."""
    place = node.idx - EPOCH.base
    key = (node.hash, place, len(node.aval))
    entry = _GETS.get(key)
    if entry is None:
        if len(_GETS) >= 4096:
            _GETS.clear()
        attrs = [(("index", i),) for i in range(len(node.aval))]
        hashes = [hash(("tuple_get", attrs_hash(a), (node.hash,))) for a in attrs]
        entry = _GETS[key] = (hashes, attrs, [(h, place) for h in hashes])
    return entry


def record_many(new: list, sigs: list) -> None:
    """Add nodes (their ``idx`` set by the caller) whose signatures are ``sigs``: one
    slice comparison with the recording instead of one per node."""
    ep = EPOCH
    nodes = ep.nodes
    i = len(nodes)
    nodes.extend(new)
    expected = ep.expected
    if expected is None:
        ep.sigs.extend(sigs)
    elif expected[i:i + len(sigs)] != sigs:
        for k, sig in enumerate(sigs):  # the general path, node by node
            expected = ep.expected
            if expected is None:
                ep.sigs.extend(sigs[k:])
                return
            if expected[i + k] != sig:
                diverge(i + k, sig)


def diverge(i: int, sig) -> None:
    """Node ``i`` differs from the recording: try the other recordings known to follow
    the previous epoch's that agree so far, else record this epoch from here on."""
    ep = EPOCH
    rec = ep.rec
    prefix = rec.sigs[:i]
    if ep.prev is not None:
        for other in ep.prev.next:
            if (other is not rec and len(other.sigs) > i and other.sigs[i] == sig
                    and other.sigs[:i] == prefix):
                ep.rec, ep.expected = other, other.expected
                return
    prefix.append(sig)
    ep.rec, ep.expected, ep.sigs = None, None, prefix


def take(roots: list[Node]):
    """``(entry, nodes)`` if the epoch matched a recording with a program for ``roots``
    (``lowering.from_recording`` makes it a ``Program``), else None."""
    ep = EPOCH
    base = ep.base
    for r in roots:  # a root left pending by an earlier sync
        if r.idx < base:
            join(r)
    rec = ep.rec
    if ep.expected is None or len(ep.nodes) != len(rec.sigs):
        return None
    entry = rec.programs.get(tuple([r.idx - base for r in roots]))
    if entry is None:
        return None
    return entry, ep.nodes


def close(roots: list[Node], program, taken: bool) -> None:
    """End the epoch at a sync that runs ``program`` (``taken``: from ``take``)."""
    ep = EPOCH
    if ep.expected is not None:
        n = len(ep.nodes)
        rec = ep.rec if n == len(ep.rec.sigs) else _find(ep.rec.sigs[:n])
    else:
        rec = _find(ep.sigs)
    if not taken:
        _remember(rec, ep, roots, program)
    for key, places in ep.observed:
        _keep(rec.observations, key, places)
    prev = ep.prev
    if prev is not None:
        following = prev.next
        if not following or following[0] is not rec:
            if rec in following:
                following.remove(rec)
            following.insert(0, rec)
            del following[_MAX_NEXT:]
    ep.prev = rec
    _advance(ep)


def _advance(ep: Epoch) -> None:
    """Start the next epoch, expecting what followed ``ep.prev`` (the last recording)."""
    # past every place of this epoch, so no earlier node is ever in a later epoch (small
    # ints: the hot path's arithmetic stays on one-digit ints for 2**30 nodes)
    ep.base += len(ep.nodes) + 1
    ep.nodes, ep.observed = [], []
    prev = ep.prev
    nxt = prev.next[0] if prev is not None and prev.next else None
    ep.rec = nxt
    ep.expected = nxt.expected if nxt is not None else None
    ep.sigs = None if nxt is not None else []


EPOCH = Epoch()


def restart() -> None:
    """Start the epoch afresh at a sync with nothing pending: its nodes were all dropped
    (never computed), so the epoch list must not keep them; the next epoch is compared
    with what followed the last recorded one."""
    if EPOCH.nodes:
        _advance(EPOCH)


def _find(sigs: list) -> Recording:
    """The recording with these signatures (an epoch the same as an earlier one)."""
    key = hash(tuple(sigs))
    rec = _recordings.get(key)
    if rec is not None and rec.sigs == sigs:
        return rec
    if len(_recordings) >= _MAX_RECORDINGS:
        _recordings.clear()
    rec = _recordings[key] = Recording(list(sigs))
    return rec


def _remember(rec: Recording, ep: Epoch, roots: list[Node], program) -> None:
    """Keep ``program`` (built by a walk) as the recording's program for ``roots``."""
    base, nodes, sigs = ep.base, ep.nodes, rec.sigs
    places = [n.idx - base for n in program.nodes]
    n = min(len(nodes), len(sigs))
    for node, p, operands in zip(program.nodes, places, program.operand_positions,
                                 strict=True):
        if not 0 <= p < n or nodes[p] is not node:  # before this epoch, or a race
            return
        # the recording must describe the program as it is (threads racing on the epoch
        # could misplace a signature): checked here, on the walk path only
        sig = node.hash if node.op in LEAF_OPS else (node.hash, *[places[q] for q in operands])
        if sigs[p] != sig:
            return
    _keep(rec.programs, tuple([r.idx - base for r in roots]), _Entry(places, program))


def _keep(table: dict, key, value) -> None:
    if len(table) >= _MAX_PROGRAMS:
        table.clear()
    table[key] = value


# -- observations (``steps``): which live pending values an observation computes --------

def observation_key(observed: list, live_pending: list) -> tuple | None:
    """The places of the observed and of the live pending values (sorted: the live set
    is unordered), or None if one is not in this epoch."""
    base = EPOCH.base
    seen = tuple([t.node.idx - base for t in observed])
    live = sorted([t.node.idx - base for t in live_pending])
    if (seen and min(seen) < 0) or (live and live[0] < 0):
        return None
    return seen, tuple(live)


def observation(key: tuple) -> frozenset | None:
    """The places the same observation computed in an epoch recorded alike so far."""
    ep = EPOCH
    if ep.expected is None:
        return None
    return ep.rec.observations.get(key)


def keep_observation(key: tuple, places: frozenset) -> None:
    """Remember what an observation (decided by a walk) computes, for the recording
    this epoch turns out to be (``close``)."""
    ep = EPOCH
    if ep.expected is not None:
        _keep(ep.rec.observations, key, places)
    else:
        ep.observed.append((key, places))


def reset() -> None:
    """Forget every recording (tests; the next sync walks)."""
    _recordings.clear()
    EPOCH.prev = None
    _advance(EPOCH)

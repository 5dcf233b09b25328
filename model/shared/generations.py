"""Generations renumbered, for liveness checks: a group that rebalances for ever climbs through
generations without end, so its exact states never repeat and no cycle (no lasso) could be found.

Nothing in the model does arithmetic on a generation other than the coordinator's bump to the next one:
every other use compares two generations (equal, older, newer) or asks whether one is 0 (none yet; -1 in a
claim). So renaming the positive generations in use, order-preserving, to 1..k gives a world that behaves
exactly like the original (the renaming commutes with every step, and a bump still makes a generation
newer than every one in use) — a bisimulation, like the member-id renaming of
:mod:`groupcheck.model.shared.symmetry`. A storm is then a cycle: "generation climbs" shows as the same few
numbers coming round again.

Only scenarios that check a liveness property renumber (``Config.renumber_generations``, set by the
scenario loader): elsewhere the trace keeps Kafka's generation numbers, which are easier to follow.
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.shared.state import Broker, Consumer, Link, Log, Msg, World

Claims = tuple[tuple[int, tuple[int, ...], int], ...]


def _msg_gens(m: Msg, out: set[int]) -> None:
    out.add(m.generation)
    for _, _, g in m.claims:
        out.add(g)


def generations_in(w: World) -> set[int]:
    """Every positive generation the world holds."""
    out: set[int] = {w.log.generation, w.hist.max_issued}
    for c in w.consumers:
        out.add(c.generation)
        out.add(c.owned_gen)
        for _, _, g in c.claims:
            out.add(g)
    for b in w.brokers:
        out.add(b.generation)
        for _, _, g in b.claims:
            out.add(g)
    for _, _, g in w.log.claims:
        out.add(g)
    for ln in w.links:
        for m in ln.to_broker:
            _msg_gens(m, out)
        for m in ln.to_consumer:
            _msg_gens(m, out)
    if w.hist.stale_commit is not None:
        out.update(w.hist.stale_commit[2:])
    return {g for g in out if g > 0}


def renumber_generations(w: World) -> World:
    """``w`` with its positive generations renamed, order-preserving, to 1..k (``w`` itself when they are
    already 1..k)."""
    gens = sorted(generations_in(w))
    if not gens or gens[-1] == len(gens):
        return w
    ren = {old: new for new, old in enumerate(gens, start=1)}
    rn = _GenerationRenaming(ren)
    g = rn.g
    log: Log = replace(w.log, generation=g(w.log.generation), claims=rn.claims(w.log.claims))
    hist = replace(w.hist, max_issued=g(w.hist.max_issued))
    if hist.stale_commit is not None:
        c, slot, gen, current = hist.stale_commit
        hist = replace(hist, stale_commit=(c, slot, g(gen), g(current)))
    return replace(
        w,
        consumers=tuple(map(rn.consumer, w.consumers)),
        brokers=tuple(map(rn.broker, w.brokers)),
        log=log,
        links=tuple(map(rn.link, w.links)),
        hist=hist,
    )


class _GenerationRenaming:
    """Each part of a world with its positive generations renamed by ``ren``. A class rather than
    functions nested in :func:`renumber_generations`: compiled (setup.py), nested functions that call one
    another make a reference cycle per call, garbage only the cyclic collector frees."""

    __slots__ = ("ren",)

    def __init__(self, ren: dict[int, int]) -> None:
        self.ren = ren

    def g(self, x: int) -> int:
        return self.ren.get(x, x)

    def claims(self, cs: Claims) -> Claims:
        get = self.ren.get
        return tuple([(m, owned, get(gen, gen)) for m, owned, gen in cs])

    def msg(self, m: Msg) -> Msg:
        if m.generation <= 0 and not m.claims:
            return m
        return replace(m, generation=self.g(m.generation), claims=self.claims(m.claims))

    def consumer(self, c: Consumer) -> Consumer:
        if c.generation <= 0 and c.owned_gen <= 0 and not c.claims:
            return c
        g = self.g
        return replace(c, generation=g(c.generation), owned_gen=g(c.owned_gen), claims=self.claims(c.claims))

    def broker(self, b: Broker) -> Broker:
        return replace(b, generation=self.g(b.generation), claims=self.claims(b.claims))

    def link(self, ln: Link) -> Link:
        if not ln.to_broker and not ln.to_consumer:
            return ln
        msg = self.msg
        return replace(
            ln, to_broker=tuple(map(msg, ln.to_broker)), to_consumer=tuple(map(msg, ln.to_consumer))
        )

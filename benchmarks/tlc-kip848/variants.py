"""KIP-848 with one mechanism removed, for issue 27's side-by-side runs against TLC
(benchmarks/tlc_kip848.py). Each is a plug-in variant of the ``consumer`` protocol (docs/EXTENDING.md):
one replaced handler, nothing in groupcheck's own files changes. The TLA+ side removes the same mechanism
from Vanlightly's spec by a definition override in TLC's configuration (the README in this folder says
which).

    groupcheck check --model benchmarks/tlc-kip848/variants.py:NO_RELEASE_WAIT SCENARIO
    groupcheck check --model benchmarks/tlc-kip848/variants.py:NO_EPOCH_FENCING SCENARIO
    groupcheck check --model benchmarks/tlc-kip848/variants.py:NO_SESSION_EXPIRY SCENARIO

A scenario names the variant in ``protocol``; the benchmark writes such copies of its scenarios itself.
"""

from __future__ import annotations

from groupcheck.checker.fingerprint import replace
from groupcheck.model.actions import lookup
from groupcheck.model.protocols.kip848 import coordinator
from groupcheck.model.protocols.kip848.state import FREE, LEAVE_EPOCH, KCoordinator, KMsg
from groupcheck.model.shared.network import link_index
from groupcheck.model.shared.state import tset


def _held_epochs(br: KCoordinator) -> tuple[int, ...]:
    """Partition epochs as the members' assigned and pending sets give them."""
    pe = [FREE] * len(br.pepochs)
    for _, m in br.members:
        for p in (*m.assigned, *m.pending):
            pe[p] = m.epoch
    return tuple(pe)


def heartbeat_without_release_wait(cfg, w, b, c):  # type: ignore[no-untyped-def]
    """HandleHeartbeat as the consumer protocol has it, except that the reconciliation sees every partition
    as free: a member is granted its target partitions at once, whether or not another member still holds
    them (no UNRELEASED_PARTITIONS, no waiting for the revocation). Partition epochs are then kept from the
    members' sets, as the coordinator would store them."""
    br: KCoordinator = w.brokers[b]
    if not br.up or br.paused:
        return None
    blind = replace(br, pepochs=(FREE,) * len(br.pepochs))
    w2 = coordinator.handle_heartbeat(cfg, replace(w, brokers=tset(w.brokers, b, blind)), b, c)
    if w2 is None:
        return None
    br2 = coordinator.settle(replace(w2.brokers[b], pepochs=_held_epochs(w2.brokers[b])))
    log = coordinator.to_log(br2) if coordinator.serving(w2, b) else w2.log
    return replace(w2, brokers=tset(w2.brokers, b, br2), log=log)


def heartbeat_without_epoch_fencing(cfg, w, b, c):  # type: ignore[no-untyped-def]
    """HandleHeartbeat with no member-epoch validation: a known member's heartbeat whose epoch is neither
    0 (join) nor -1 (leave) is handled as if it carried the member's current epoch, where Kafka answers
    FENCED_MEMBER_EPOCH (Vanlightly's ShouldFence, which also removes the member)."""
    br: KCoordinator = w.brokers[b]
    if not br.up or br.paused:
        return None
    i = link_index(cfg, c, b)
    ln = w.links[i]
    req: KMsg = ln.to_broker[0]
    if coordinator.serving(w, b) and req.epoch not in (0, LEAVE_EPOCH):
        m = coordinator.member_of(br.members, req.member_id)
        if m is not None and req.epoch != m.epoch:
            req = replace(req, epoch=m.epoch)
            ln = replace(ln, to_broker=(req, *ln.to_broker[1:]))
            w = replace(w, links=tset(w.links, i, ln))
    return coordinator.handle_heartbeat(cfg, w, b, c)


NO_RELEASE_WAIT = lookup("consumer").variant(
    "consumer-no-release-wait",
    "KIP-848 whose coordinator grants target partitions at once, without waiting for their release",
    handlers={"HandleHeartbeat": heartbeat_without_release_wait},
)

NO_EPOCH_FENCING = lookup("consumer").variant(
    "consumer-no-epoch-fencing",
    "KIP-848 whose coordinator never answers FENCED_MEMBER_EPOCH: a stale epoch is read as the current one",
    handlers={"HandleHeartbeat": heartbeat_without_epoch_fencing},
)

NO_SESSION_EXPIRY = lookup("consumer").variant(
    "consumer-no-session-expiry",
    "KIP-848 whose coordinator never expires a member's session: a crashed member stays for ever",
    remove=["SessionExpired"],
)
